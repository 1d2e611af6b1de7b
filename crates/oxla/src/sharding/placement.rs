//! Arrays split over a mesh: their shards and layout, `device_put` of a
//! whole array onto a sharding, putting the shards back together on the
//! host, and the per-device buffers a compiled SPMD program takes.

use oxla_core::{Aval, Location};
use oxla_npy::HostArray;
use oxla_pjrt::{Buffer, HloSharding};

use super::mesh::Mesh;
use super::named::{NamedSharding, normalized};
use crate::array::{Array, BufferRef};
use crate::element::element_type;
use crate::error::Result;
use crate::runtime::client;

/// How a sharded array's blocks sit on a mesh: XLA's layout (partition
/// `p` is the mesh's device `p`) and, when a partition spec expresses it,
/// that named sharding.
#[derive(Clone, Debug)]
pub(crate) struct ShardLayout {
    /// The mesh.
    pub mesh: Mesh,
    /// The layout, normalized.
    pub hlo: HloSharding,
    /// The named sharding with this layout, if there is one.
    pub named: Option<NamedSharding>,
}

impl ShardLayout {
    /// The layout of `named` for an array of rank `rank`.
    pub fn of_named(named: &NamedSharding, rank: usize) -> ShardLayout {
        ShardLayout {
            mesh: named.mesh().clone(),
            hlo: normalized(&named.hlo(rank)),
            named: Some(named.clone()),
        }
    }

    /// The layout XLA reports (`hlo`) for an array of rank `rank` on `mesh`.
    pub fn of_hlo(mesh: &Mesh, hlo: &HloSharding, rank: usize) -> ShardLayout {
        ShardLayout {
            mesh: mesh.clone(),
            hlo: normalized(hlo),
            named: NamedSharding::from_hlo(mesh, hlo, rank),
        }
    }
}

/// The value of a sharded array: one buffer per mesh device, in mesh order.
pub(crate) struct Sharded {
    /// `shards[p]` is on the mesh's device `p`.
    pub shards: Vec<Buffer>,
    /// Which block each shard holds.
    pub layout: ShardLayout,
}

impl Sharded {
    /// The whole array on the host, put together from the shards.
    pub fn to_host(&self, aval: &Aval) -> Result<HostArray> {
        let _span = tracing::info_span!(
            "transfer",
            direction = "device-to-host",
            shards = self.shards.len()
        )
        .entered();
        let t = element_type(aval.dtype);
        let dims = aval.shape.to_vec();
        let size = oxla_pjrt::expected_byte_len(t, &dims)?;
        let mut whole = HostArray::new(t, dims.clone(), vec![0; size]);
        let mut filled: Vec<Vec<std::ops::Range<i64>>> = Vec::new();
        for (p, shard) in self.shards.iter().enumerate() {
            let Some(ranges) = self.layout.hlo.block(p as i64, &dims)? else {
                continue;
            };
            if filled.contains(&ranges) {
                continue;
            }
            let (shard_type, shard_dims) = shard.array_type()?;
            let block = HostArray::new(shard_type, shard_dims.to_vec(), shard.to_host_bytes()?);
            whole.put_block(&ranges, &block);
            filled.push(ranges);
        }
        Ok(whole)
    }
}

/// Splits the host array `whole` into the blocks `layout` gives each
/// device of `mesh`, on those devices.
pub(crate) fn scatter(whole: &HostArray, mesh: &Mesh, layout: &HloSharding) -> Result<Vec<Buffer>> {
    let _span = tracing::info_span!(
        "transfer",
        direction = "host-to-device",
        shards = mesh.devices().len()
    )
    .entered();
    let shard_dims = layout.shard_dims(&whole.dims)?;
    mesh.devices()
        .iter()
        .enumerate()
        .map(|(p, device)| {
            let ranges = layout
                .block(p as i64, &whole.dims)?
                .unwrap_or_else(|| whole.dims.iter().map(|_| 0..0).collect());
            let block = whole.block(&ranges, &shard_dims);
            Ok(client()?.buffer_from_bytes(
                &block.bytes,
                block.element_type(),
                &block.dims,
                Some(device),
            )?)
        })
        .collect()
}

/// `x` laid out as `sharding` (checked against its shape). An array
/// already split over the same mesh moves device to device: a program
/// whose result is constrained to `sharding`, in which XLA's partitioner
/// moves the blocks (slices, all-gathers, all-to-alls); the same sharding
/// is the array itself. Otherwise the blocks are copied to their devices
/// from the host. Inside `jit`, a sharding constraint instead (as JAX's
/// `device_put` under `jit`).
#[track_caller]
pub fn device_put(x: &Array, sharding: &NamedSharding) -> Result<Array> {
    device_put_at(x, sharding, super::mesh::here())
}

/// [`device_put`] for a call at `location`.
fn device_put_at(x: &Array, sharding: &NamedSharding, location: Location) -> Result<Array> {
    if x.is_traced() {
        return super::with_sharding_constraint_at(x, sharding, location)
            .check()
            .cloned();
    }
    let aval = x.aval()?.clone();
    sharding.check(&aval, &format!("an array of {aval}"), location)?;
    if x.mesh() == Some(sharding.mesh()) {
        if x.sharding().as_ref() == Some(sharding) {
            return Ok(x.clone());
        }
        let moved = super::with_sharding_constraint_at(x, sharding, location)
            .check()
            .cloned()?;
        if moved.sharding().as_ref() == Some(sharding) {
            return Ok(moved);
        }
    }
    let layout = ShardLayout::of_named(sharding, aval.shape.len());
    let whole = x.to_host()?;
    let shards = scatter(&whole, sharding.mesh(), &layout.hlo)?;
    Ok(Array::wrap_sharded(Sharded { shards, layout }, aval))
}

/// Every leaf of `tree` laid out as `sharding(path, leaf)` says (`path` is
/// the leaf's pytree path, `layers[0].kernel`), as `jax.device_put` of a
/// pytree with a pytree of shardings.
#[track_caller]
pub fn device_put_tree<T: crate::pytree::Pytree>(
    tree: &T,
    sharding: impl Fn(&str, &Array) -> NamedSharding,
) -> Result<T> {
    let location = super::mesh::here();
    let (leaves, def) = tree.flatten();
    let paths = def.leaf_paths();
    let put = leaves
        .iter()
        .zip(&paths)
        .map(|(leaf, path)| {
            device_put_at(
                leaf,
                &sharding(path.trim_start_matches('.'), leaf),
                location,
            )
        })
        .collect::<Result<Vec<Array>>>()?;
    T::unflatten_from(&def, &mut put.into_iter())
}

/// The buffers of `x` for each device of `mesh`, laid out as `layout`:
/// the array's own shards when they already are, else its blocks copied
/// from the host.
pub(crate) fn shards_for<'a>(
    x: &'a Array,
    mesh: &Mesh,
    layout: &HloSharding,
    location: Location,
) -> Result<Vec<BufferRef<'a>>> {
    x.check_not_donated(location)?;
    if let Some(sharded) = x.sharded()
        && sharded.layout.mesh == *mesh
        && sharded.layout.hlo == normalized(layout)
    {
        return Ok(sharded.shards.iter().map(BufferRef::Borrowed).collect());
    }
    let whole = x.to_host()?;
    Ok(scatter(&whole, mesh, layout)?
        .into_iter()
        .map(BufferRef::Owned)
        .collect())
}
