//! The per-shard view of sharded arrays, what per-host data loading is
//! written with (JAX's `Array.addressable_shards`, `Sharding.shard_shape`,
//! `devices_indices_map`, `jax.make_array_from_callback` and
//! `jax.make_array_from_single_device_arrays`). Every device of a mesh is
//! addressable in one process; a multi-process program makes the same
//! calls, each process giving only the blocks of its own devices.

use oxla_pjrt::ElementType;
use std::ops::Range;

use oxla_core::Aval;
use oxla_pjrt::Device;

use super::named::NamedSharding;
use super::placement::{ShardLayout, Sharded};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::runtime::client;

/// One device's block of an array (JAX's `Shard`).
pub struct Shard {
    /// The device holding it.
    pub device: Device,
    /// Which elements of the whole array it holds, per dimension.
    pub index: Vec<Range<i64>>,
    /// Its values, an array on `device`.
    pub data: Array,
}

impl NamedSharding {
    /// The shape of each device's block of an array of `global_shape`
    /// (JAX's `sharding.shard_shape`); an error if the sharding does not
    /// fit the shape.
    #[track_caller]
    pub fn shard_shape(&self, global_shape: &[i64]) -> Result<Vec<i64>> {
        let location = super::mesh::here();
        let aval = Aval::new(oxla_core::DType::F32, global_shape);
        self.check(
            &aval,
            &format!("an array of shape {global_shape:?}"),
            location,
        )?;
        Ok(self.hlo(global_shape.len()).shard_dims(global_shape)?)
    }

    /// Each device of the mesh (in mesh order) with the block of an array
    /// of `global_shape` it holds (JAX's `devices_indices_map`).
    #[track_caller]
    pub fn devices_indices_map(
        &self,
        global_shape: &[i64],
    ) -> Result<Vec<(Device, Vec<Range<i64>>)>> {
        self.shard_shape(global_shape)?;
        let hlo = self.hlo(global_shape.len());
        self.mesh()
            .devices()
            .iter()
            .enumerate()
            .map(|(p, device)| {
                let index = hlo
                    .block(p as i64, global_shape)?
                    .unwrap_or_else(|| global_shape.iter().map(|_| 0..0).collect());
                Ok((device.clone(), index))
            })
            .collect()
    }
}

impl Array {
    /// Every device's block of this array, with its device and index
    /// (JAX's `addressable_shards`): one per mesh device for a sharded
    /// array (replicated blocks repeat), the whole array for one on a
    /// single device. Each block is copied into an array of its own.
    pub fn addressable_shards(&self) -> Result<Vec<Shard>> {
        let aval = self.aval()?.clone();
        let Some(sharded) = self.sharded() else {
            let buffer = self.buffer()?;
            let device = buffer.get().device()?;
            return Ok(vec![Shard {
                device,
                index: aval.shape.iter().map(|&d| 0..d).collect(),
                data: self.clone(),
            }]);
        };
        let devices = sharded.layout.mesh.devices();
        sharded
            .shards
            .iter()
            .zip(devices)
            .enumerate()
            .map(|(p, (buffer, device))| {
                let index = sharded
                    .layout
                    .hlo
                    .block(p as i64, &aval.shape)?
                    .unwrap_or_else(|| aval.shape.iter().map(|_| 0..0).collect());
                let (t, dims) = buffer.array_type()?;
                let copy =
                    client()?.buffer_from_bytes(&buffer.to_host_bytes()?, t, dims, Some(device))?;
                let block = aval.with_shape(dims);
                Ok(Shard {
                    device: device.clone(),
                    index,
                    data: Array::wrap_buffer(copy, block),
                })
            })
            .collect()
    }
}

/// One distinct block of an array, copied to the host (see
/// [`Array::host_shards`]).
pub struct HostShard {
    /// Which elements of the whole array it holds, per dimension.
    pub index: Vec<Range<i64>>,
    /// Its values.
    pub data: oxla_npy::HostArray,
}

impl Array {
    /// Each distinct block of this array copied to the host with its index
    /// (what a checkpoint writes, as Orbax does, without gathering the
    /// array on one device): a block that several devices replicate comes
    /// once, and an array on one device is one block, the whole array.
    #[track_caller]
    pub fn host_shards(&self) -> Result<Vec<HostShard>> {
        self.host_shards_reusing(&mut |_| None)
    }

    /// [`host_shards`](Self::host_shards), copying each block into the
    /// buffer `reuse(size)` gives, when it gives one of exactly `size`
    /// bytes (a buffer of an earlier copy, whose pages the process already
    /// has: a repeated checkpoint then costs a copy, not fresh memory).
    #[track_caller]
    pub fn host_shards_reusing(
        &self,
        reuse: &mut dyn FnMut(usize) -> Option<Vec<u8>>,
    ) -> Result<Vec<HostShard>> {
        let location = oxla_core::Location::from_caller(std::panic::Location::caller());
        let aval = self.aval()?.clone();
        self.check_not_donated(location)?;
        let element_type = ElementType::from(aval.dtype);
        let copy = |buffer: &oxla_pjrt::Buffer,
                    dims: Vec<i64>,
                    reuse: &mut dyn FnMut(usize) -> Option<Vec<u8>>|
         -> Result<oxla_npy::HostArray> {
            let _span = tracing::info_span!("transfer", direction = "device-to-host").entered();
            let size = aval.dtype.byte_size() * dims.iter().product::<i64>() as usize;
            let bytes = match reuse(size).filter(|b| b.len() == size) {
                Some(mut bytes) => {
                    buffer.block_until_ready()?;
                    buffer.copy_to_host(&mut bytes)?;
                    bytes
                }
                None => buffer.to_host_bytes()?,
            };
            Ok(oxla_npy::HostArray::new(element_type, dims, bytes))
        };
        let Some(sharded) = self.sharded() else {
            let buffer = self.buffer()?;
            return Ok(vec![HostShard {
                index: aval.shape.iter().map(|&d| 0..d).collect(),
                data: copy(buffer.get(), aval.shape.to_vec(), reuse)?,
            }]);
        };
        let mut blocks: Vec<HostShard> = Vec::new();
        for (p, buffer) in sharded.shards.iter().enumerate() {
            let Some(index) = sharded.layout.hlo.block(p as i64, &aval.shape)? else {
                continue;
            };
            if blocks.iter().any(|b| b.index == index) {
                continue;
            }
            let dims = index.iter().map(|r| r.end - r.start).collect();
            blocks.push(HostShard {
                data: copy(buffer, dims, reuse)?,
                index,
            });
        }
        Ok(blocks)
    }
}

/// An array of `global_shape` laid out as `sharding`, each device's block
/// made by `data(index)` (JAX's `jax.make_array_from_callback`): `index`
/// is the block's range per dimension, and the callback gives its values
/// (any array of the block's shape). Every block must have one dtype.
#[track_caller]
pub fn make_array_from_callback(
    global_shape: &[i64],
    sharding: &NamedSharding,
    data: impl Fn(&[Range<i64>]) -> Result<Array>,
) -> Result<Array> {
    let location = super::mesh::here();
    let blocks = sharding
        .devices_indices_map(global_shape)?
        .into_iter()
        .map(|(_, index)| data(&index))
        .collect::<Result<Vec<_>>>()?;
    assemble(
        global_shape,
        sharding,
        blocks,
        "make_array_from_callback",
        location,
    )
}

/// An array of `global_shape` laid out as `sharding` from one block per
/// mesh device, in mesh order (JAX's
/// `jax.make_array_from_single_device_arrays`); each block must have the
/// shard shape, and is moved to its device if it is elsewhere.
#[track_caller]
pub fn make_array_from_single_device_arrays(
    global_shape: &[i64],
    sharding: &NamedSharding,
    arrays: Vec<Array>,
) -> Result<Array> {
    let location = super::mesh::here();
    let devices = sharding.mesh().devices().len();
    if arrays.len() != devices {
        return Err(Error::Sharding {
            message: format!(
                "make_array_from_single_device_arrays got {} arrays for the {devices} devices of {}",
                arrays.len(),
                sharding.mesh()
            ),
            location: Some(location),
        });
    }
    assemble(
        global_shape,
        sharding,
        arrays,
        "make_array_from_single_device_arrays",
        location,
    )
}

/// The sharded array whose block on mesh device `p` is `blocks[p]`.
fn assemble(
    global_shape: &[i64],
    sharding: &NamedSharding,
    blocks: Vec<Array>,
    what: &str,
    location: oxla_core::Location,
) -> Result<Array> {
    let shard_shape = sharding.shard_shape(global_shape)?;
    let fail = |message: String| Error::Sharding {
        message: format!("{what}: {message}"),
        location: Some(location),
    };
    let dtype = match blocks.first() {
        Some(b) => b.aval()?.dtype,
        None => return Err(fail("no blocks".into())),
    };
    let devices = sharding.mesh().devices();
    let shards = blocks
        .iter()
        .zip(devices)
        .enumerate()
        .map(|(p, (block, device))| {
            let aval = block.aval()?;
            if aval.dtype != dtype || aval.shape.as_slice() != shard_shape.as_slice() {
                return Err(fail(format!(
                    "the block for device {p} is {aval}, but each must be {}",
                    Aval::new(dtype, &shard_shape)
                )));
            }
            let host = block.to_host()?;
            Ok(client()?.buffer_from_bytes(
                &host.bytes,
                ElementType::from(dtype),
                &shard_shape,
                Some(device),
            )?)
        })
        .collect::<Result<Vec<_>>>()?;
    let layout = ShardLayout::of_named(sharding, global_shape.len());
    Ok(Array::wrap_sharded(
        Sharded { shards, layout },
        Aval::new(dtype, global_shape),
    ))
}
