//! Arrays split over a mesh: their shards and layout, `device_put` of a
//! whole array onto a sharding, putting the shards back together on the
//! host, and the per-device buffers a compiled SPMD program takes.

use oxla_core::{Aval, Location};
use oxla_npy::HostArray;
use oxla_pjrt::ElementType;
use oxla_pjrt::{Buffer, Device, HloSharding};

use super::layouts::Sharding;
use super::mesh::Mesh;
use super::named::{NamedSharding, normalized};
use crate::array::{Array, BufferRef};
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

    /// The explicit sharding type of an array so laid out: its split over
    /// the mesh's explicit axes (`None` on a mesh without them; a layout no
    /// spec expresses shows as unsplit).
    pub fn explicit_type(&self) -> Option<oxla_core::ShardingDesc> {
        match &self.named {
            Some(named) => named.desc().explicit_type(),
            None => NamedSharding::replicated(&self.mesh).desc().explicit_type(),
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
        let t = ElementType::from(aval.dtype);
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

/// `x` laid out as `sharding` (a [`NamedSharding`], a device, or any
/// [`Sharding`]), as JAX's `jax.device_put`. To a named sharding (checked
/// against the shape): an array already split over the same mesh moves
/// device to device, in a program whose result is constrained to
/// `sharding`, where XLA's partitioner moves the blocks (slices,
/// all-gathers, all-to-alls); the same sharding is the array itself;
/// otherwise the blocks are copied to their devices from the host. To one
/// device: an array on another device is copied there by the plugin, one
/// split over a mesh is gathered there. Inside `jit`, a named sharding is
/// a sharding constraint (as JAX's `device_put` under `jit`) and a device
/// changes nothing.
#[track_caller]
pub fn device_put(x: &Array, sharding: impl Into<Sharding>) -> Result<Array> {
    put_at(x, sharding.into(), super::mesh::here())
}

/// [`device_put`] for a call at `location`.
fn put_at(x: &Array, sharding: Sharding, location: Location) -> Result<Array> {
    match sharding {
        Sharding::Named(named) => device_put_at(x, &named, location),
        Sharding::SingleDevice(device) => to_device(x, &device, location),
        Sharding::Gspmd { .. } if x.is_traced() => Ok(x.clone()),
        Sharding::Gspmd { mesh, hlo } => {
            let layout = ShardLayout::of_hlo(&mesh, &hlo, x.ndim_or_zero());
            from_host(x, layout)
        }
    }
}

/// `x`'s value copied from the host to the devices of `layout`.
fn from_host(x: &Array, layout: ShardLayout) -> Result<Array> {
    let aval = x.aval()?.clone();
    let shards = scatter(&x.to_host()?, &layout.mesh, &layout.hlo)?;
    Ok(Array::wrap_sharded(Sharded { shards, layout }, aval))
}

/// `x` whole on `device`.
fn to_device(x: &Array, device: &Device, location: Location) -> Result<Array> {
    if x.is_traced() {
        return Ok(x.clone());
    }
    x.check_not_donated(location)?;
    let aval = x.aval()?.clone();
    if x.sharded().is_none() {
        let buffer = x.buffer_at(location)?;
        if buffer.get().device()? == *device {
            return Ok(x.clone());
        }
        let copy = buffer.get().copy_to_device(device)?;
        return Ok(Array::wrap_buffer(copy, aval));
    }
    let whole = x.to_host()?;
    let buffer = client()?.buffer_from_bytes(
        &whole.bytes,
        whole.element_type(),
        &whole.dims,
        Some(device),
    )?;
    Ok(Array::wrap_buffer(buffer, aval))
}

/// [`device_put`] to a named sharding, for a call at `location`.
fn device_put_at(x: &Array, sharding: &NamedSharding, location: Location) -> Result<Array> {
    // On a mesh with explicit axes a move changes the type: a reshard (as
    // JAX's device_put inside jit); elsewhere a sharding constraint.
    let relayout = |x: &Array| match sharding.desc().explicit_type() {
        Some(typed) => super::explicit::cast(x, Some(typed), location),
        None => super::with_sharding_constraint_at(x, sharding, location),
    };
    if x.is_traced() {
        return relayout(x).check().cloned();
    }
    let aval = x.aval()?.clone();
    sharding.check(&aval, &format!("an array of {aval}"), location)?;
    if x.mesh() == Some(sharding.mesh()) {
        if x.named_sharding().as_ref() == Some(sharding) {
            return Ok(x.clone());
        }
        let moved = relayout(x).check().cloned()?;
        if moved.named_sharding().as_ref() == Some(sharding) {
            return Ok(moved);
        }
    }
    from_host(x, ShardLayout::of_named(sharding, aval.shape.len()))
}

/// Every leaf of `tree` laid out as `sharding(path, leaf)` says (`path` is
/// the leaf's pytree path, `layers[0].kernel`), as `jax.device_put` of a
/// pytree with a pytree of shardings.
#[track_caller]
pub fn device_put_tree<T: crate::pytree::Pytree, S: Into<Sharding>>(
    tree: &T,
    sharding: impl Fn(&str, &Array) -> S,
) -> Result<T> {
    let location = super::mesh::here();
    let (leaves, def) = tree.flatten();
    let paths = def.leaf_paths();
    let put = leaves
        .iter()
        .zip(&paths)
        .map(|(leaf, path)| {
            put_at(
                leaf,
                sharding(path.trim_start_matches('.'), leaf).into(),
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
