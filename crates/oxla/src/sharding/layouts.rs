//! [`Sharding`]: every way an array can be laid out, as JAX's `Sharding`
//! classes: whole on one device (`SingleDeviceSharding`), over a mesh as
//! a partition spec says (`NamedSharding`), or over a mesh in a tile
//! layout no partition spec expresses (`GSPMDSharding`).

use std::fmt;

use oxla_pjrt::{Device, HloSharding};

use super::mesh::Mesh;
use super::named::NamedSharding;
use super::spec::PartitionSpec;
use crate::error::Result;

/// How an array is laid out over devices; what
/// [`Array::sharding`](crate::Array::sharding) gives and
/// [`device_put`](super::device_put) takes.
#[derive(Clone, PartialEq)]
pub enum Sharding {
    /// The whole array on one device (JAX's `SingleDeviceSharding`).
    SingleDevice(Device),
    /// Over a mesh as a partition spec says (JAX's `NamedSharding`).
    Named(NamedSharding),
    /// Over a mesh in a tile layout no partition spec of it expresses (as
    /// XLA may choose for a result; JAX's `GSPMDSharding`).
    Gspmd {
        /// The mesh whose devices hold the tiles.
        mesh: Mesh,
        /// XLA's tile layout over the mesh's devices (in mesh order).
        hlo: HloSharding,
    },
}

impl Sharding {
    /// The named sharding, when the layout is one.
    pub fn named(&self) -> Option<&NamedSharding> {
        match self {
            Sharding::Named(named) => Some(named),
            Sharding::SingleDevice(_) | Sharding::Gspmd { .. } => None,
        }
    }

    /// The partition spec of a named sharding.
    pub fn spec(&self) -> Option<&PartitionSpec> {
        self.named().map(NamedSharding::spec)
    }

    /// The devices holding the array (JAX's `device_set`), in mesh order.
    pub fn devices(&self) -> Vec<Device> {
        match self {
            Sharding::SingleDevice(device) => vec![device.clone()],
            Sharding::Named(named) => named.mesh().devices().to_vec(),
            Sharding::Gspmd { mesh, .. } => mesh.devices().to_vec(),
        }
    }

    /// Whether every device holds the whole array (JAX's
    /// `is_fully_replicated`; true on one device).
    pub fn is_fully_replicated(&self) -> bool {
        match self {
            Sharding::SingleDevice(_) => true,
            Sharding::Named(named) => {
                (0..named.spec().entries().len()).all(|d| named.tiles(d) == 1)
            }
            Sharding::Gspmd { hlo, .. } => matches!(hlo, HloSharding::Replicated),
        }
    }

    /// The shape of each device's block of an array of `global_shape`
    /// (JAX's `shard_shape`).
    #[track_caller]
    pub fn shard_shape(&self, global_shape: &[i64]) -> Result<Vec<i64>> {
        match self {
            Sharding::SingleDevice(_) => Ok(global_shape.to_vec()),
            Sharding::Named(named) => named.shard_shape(global_shape),
            Sharding::Gspmd { hlo, .. } => Ok(hlo.shard_dims(global_shape)?),
        }
    }
}

impl fmt::Display for Sharding {
    /// As JAX prints them: `SingleDeviceSharding(device=3)`,
    /// `NamedSharding(mesh=..., spec=P('data'))`, `GSPMDSharding(...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::SingleDevice(device) => match device.id() {
                Ok(id) => write!(f, "SingleDeviceSharding(device={id})"),
                Err(_) => write!(f, "SingleDeviceSharding(device=?)"),
            },
            Sharding::Named(named) => write!(f, "{named}"),
            Sharding::Gspmd { mesh, hlo } => {
                write!(f, "GSPMDSharding({hlo:?}, devices={:?})", mesh.device_ids())
            }
        }
    }
}

impl fmt::Debug for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<NamedSharding> for Sharding {
    fn from(named: NamedSharding) -> Self {
        Sharding::Named(named)
    }
}

impl From<&NamedSharding> for Sharding {
    fn from(named: &NamedSharding) -> Self {
        Sharding::Named(named.clone())
    }
}

impl From<Device> for Sharding {
    fn from(device: Device) -> Self {
        Sharding::SingleDevice(device)
    }
}

impl From<&Device> for Sharding {
    fn from(device: &Device) -> Self {
        Sharding::SingleDevice(device.clone())
    }
}

impl From<&Sharding> for Sharding {
    fn from(sharding: &Sharding) -> Self {
        sharding.clone()
    }
}
