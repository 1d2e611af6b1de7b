//! `Mesh`: devices arranged in a grid with named axes (JAX's
//! `jax.sharding.Mesh` / `jax.make_mesh`).

use std::fmt;
use std::sync::Arc;

use oxla_core::MeshDesc;
use oxla_pjrt::Device;

use crate::error::{Error, Result};
use crate::runtime::client;

/// Devices arranged in a grid whose axes have names (`"data"`, `"model"`).
/// Device `p` of [`devices`](Self::devices) sits at the row-major position
/// `p` of the grid and runs partition `p` of a program on this mesh.
#[derive(Clone)]
pub struct Mesh {
    desc: MeshDesc,
    devices: Arc<[Device]>,
}

impl PartialEq for Mesh {
    fn eq(&self, other: &Self) -> bool {
        self.desc == other.desc
    }
}

impl Eq for Mesh {}

impl Mesh {
    /// A mesh of the default client's first devices with these axes
    /// (`&[("data", 4), ("model", 2)]`), as `jax.make_mesh`.
    #[track_caller]
    pub fn new(axes: &[(&str, usize)]) -> Result<Mesh> {
        let devices = client()?.addressable_devices()?;
        let wanted: usize = axes.iter().map(|(_, n)| n).product();
        if wanted > devices.len() {
            return Err(Error::Sharding {
                message: format!(
                    "a mesh of shape {} needs {wanted} devices, but the {} client has {} \
                     (on the CPU, ask for more with oxla::config::set_cpu_device_count or \
                     OXLA_CPU_DEVICE_COUNT before the first array is made)",
                    axes_text(axes),
                    client()?.platform_name().unwrap_or_default(),
                    devices.len()
                ),
                location: Some(here()),
            });
        }
        Mesh::with_devices(devices[..wanted].to_vec(), axes)
    }

    /// A mesh of exactly these devices, in this (row-major) order.
    #[track_caller]
    pub fn with_devices(devices: Vec<Device>, axes: &[(&str, usize)]) -> Result<Mesh> {
        // Taken here: a closure would report its own line, in this file.
        let location = here();
        let fail = |message: String| Error::Sharding {
            message,
            location: Some(location),
        };
        if axes.is_empty() {
            return Err(fail("a mesh needs at least one axis".into()));
        }
        for (i, (name, size)) in axes.iter().enumerate() {
            if *size == 0 {
                return Err(fail(format!("mesh axis '{name}' has size 0")));
            }
            if axes[..i].iter().any(|(other, _)| other == name) {
                return Err(fail(format!(
                    "mesh axis '{name}' appears twice in {}",
                    axes_text(axes)
                )));
            }
        }
        let size: usize = axes.iter().map(|(_, n)| n).product();
        if size != devices.len() {
            return Err(fail(format!(
                "a mesh of shape {} holds {size} devices, but {} were given",
                axes_text(axes),
                devices.len()
            )));
        }
        let device_ids = devices
            .iter()
            .map(|d| d.id().map(i64::from))
            .collect::<oxla_pjrt::Result<Vec<i64>>>()?;
        for (i, id) in device_ids.iter().enumerate() {
            if device_ids[..i].contains(id) {
                return Err(fail(format!("device {id} appears twice in the mesh")));
            }
        }
        Ok(Mesh {
            desc: MeshDesc::new(
                axes.iter()
                    .map(|(name, size)| (Arc::from(*name), *size))
                    .collect(),
                device_ids.into(),
            ),
            devices: devices.into(),
        })
    }

    /// The same devices and axes with these axis types, one per axis (JAX's
    /// `make_mesh(..., axis_types=...)`): on a mesh with
    /// [`AxisType::Explicit`](oxla_core::AxisType::Explicit) axes, arrays
    /// carry their split over those axes in their types (see
    /// [`crate::sharding::reshard`]).
    #[track_caller]
    pub fn with_axis_types(&self, axis_types: &[oxla_core::AxisType]) -> Result<Mesh> {
        if axis_types.len() != self.desc.axes.len() {
            return Err(Error::Sharding {
                message: format!(
                    "{} axis types given for the {} axes of {self}",
                    axis_types.len(),
                    self.desc.axes.len()
                ),
                location: Some(here()),
            });
        }
        Ok(Mesh {
            desc: self.desc.with_axis_types(axis_types),
            devices: self.devices.clone(),
        })
    }

    /// The type of each axis, major first.
    pub fn axis_types(&self) -> &[oxla_core::AxisType] {
        &self.desc.axis_types
    }

    /// The axes' names, major first.
    pub fn axis_names(&self) -> Vec<&str> {
        self.desc.axes.iter().map(|(n, _)| &**n).collect()
    }

    /// The size of axis `name`, if the mesh has it.
    pub fn axis_size(&self, name: &str) -> Option<usize> {
        self.desc.axis_size(name)
    }

    /// The axes' sizes, major first.
    pub fn shape(&self) -> Vec<usize> {
        self.desc.axes.iter().map(|(_, n)| *n).collect()
    }

    /// Number of devices.
    pub fn size(&self) -> usize {
        self.devices.len()
    }

    /// The devices in mesh order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The devices' ids in mesh order.
    pub fn device_ids(&self) -> &[i64] {
        &self.desc.device_ids
    }

    /// The mesh as the IR records it.
    pub fn desc(&self) -> &MeshDesc {
        &self.desc
    }
}

impl fmt::Debug for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on devices {:?}", self.desc, self.desc.device_ids)
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.desc, f)
    }
}

/// `('data': 4, 'model': 2)`.
fn axes_text(axes: &[(&str, usize)]) -> String {
    let parts: Vec<String> = axes.iter().map(|(n, s)| format!("'{n}': {s}")).collect();
    format!("({})", parts.join(", "))
}

#[track_caller]
pub(crate) fn here() -> oxla_core::Location {
    oxla_core::Location::from_caller(std::panic::Location::caller())
}
