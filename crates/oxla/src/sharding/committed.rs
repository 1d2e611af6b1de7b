//! Where a computation on arrays of one device each runs, as JAX's
//! committed arrays decide: arrays on the client's default device go
//! wherever the computation runs (as JAX's uncommitted arrays), and an
//! array put on another device (`device_put(x, &device)`) takes the
//! computation there; arrays on two different such devices are an error.

use std::sync::OnceLock;

use oxla_core::Location;
use oxla_pjrt::Device;

use crate::array::{Array, BufferRef};
use crate::error::{Error, Result};
use crate::runtime::client;

/// The device a program on `arrays` runs on, when not the default one
/// (`None`: the default device, or arrays over a mesh, which the mesh
/// places). With one device, nothing is looked up.
pub(crate) fn program_device<'a>(
    arrays: impl IntoIterator<Item = &'a Array>,
    location: Location,
) -> Result<Option<Device>> {
    let devices = client_devices()?;
    if devices.count == 1 {
        return Ok(None);
    }
    let default = &devices.default;
    let mut chosen: Option<Device> = None;
    for x in arrays {
        if x.is_traced() || x.sharded().is_some() {
            continue;
        }
        let device = x.buffer_at(location)?.get().device()?;
        if device == *default {
            continue;
        }
        match &chosen {
            Some(other) if *other != device => {
                return Err(Error::Sharding {
                    message: format!(
                        "the arguments are on different devices, {} and {}; device_put them \
                         onto one device",
                        other.id()?,
                        device.id()?
                    ),
                    location: Some(location),
                });
            }
            Some(_) => {}
            None => chosen = Some(device),
        }
    }
    Ok(chosen)
}

/// The buffers of `arrays` for a program on `device` (what
/// [`program_device`] chose): each array's own where it already is, else a
/// copy the plugin makes. With `None` every array is on the default device
/// already, as [`program_device`] found.
pub(crate) fn buffers_on<'a>(
    arrays: impl IntoIterator<Item = &'a Array>,
    device: Option<&Device>,
    location: Location,
) -> Result<Vec<BufferRef<'a>>> {
    arrays
        .into_iter()
        .map(|x| {
            let buffer = x.buffer_at(location)?;
            match device {
                Some(target) if buffer.get().device()? != *target => {
                    Ok(BufferRef::Owned(buffer.get().copy_to_device(target)?))
                }
                Some(_) | None => Ok(buffer),
            }
        })
        .collect()
}

/// The client's default device (its first addressable one) and how many
/// it has.
struct ClientDevices {
    default: Device,
    count: usize,
}

/// The [`ClientDevices`], looked up once.
fn client_devices() -> Result<&'static ClientDevices> {
    static DEVICES: OnceLock<ClientDevices> = OnceLock::new();
    if let Some(devices) = DEVICES.get() {
        return Ok(devices);
    }
    let all = client()?.addressable_devices()?;
    let default = all
        .first()
        .cloned()
        .ok_or_else(|| Error::InvalidArgument("the client has no addressable device".into()))?;
    Ok(DEVICES.get_or_init(|| ClientDevices {
        default,
        count: all.len(),
    }))
}
