//! Arrays over many devices: a [`Mesh`] of devices with named axes, a
//! [`PartitionSpec`] saying which mesh axes split each dimension, and a
//! [`NamedSharding`] joining the two, as in JAX. [`device_put`] splits an
//! array into per-device shards; `jit` compiles functions of sharded
//! arrays as one SPMD program that XLA's Shardy partitioner splits over the
//! mesh (the arguments' shardings, or `Jit::in_shardings`, are the
//! parameters' layouts; results keep the layout XLA chose, or
//! `Jit::out_shardings`); [`with_sharding_constraint`] pins a layout inside
//! a function; [`visualize_sharding`] draws which device holds which block.
//! [`shard_map`] runs a per-device function on the blocks, with the
//! [`collectives`] over mesh axes inside. On a mesh with
//! [`AxisType::Explicit`] axes, arrays carry their split in their types
//! and every op has a sharding rule (JAX's explicit sharding mode; see
//! [`reshard`], [`auto_axes`], [`use_mesh`]).

pub(crate) mod axis_env;
pub mod collectives;
pub(crate) mod committed;
mod explicit;
pub(crate) mod jit_layouts;
mod layouts;
mod mesh;
mod named;
mod placement;
mod pmap;
pub(crate) mod shard_map;
mod shards;
mod spec;
pub(crate) mod spmd;
mod visualize;

pub use explicit::{
    MeshGuard, ShardingTarget, auto_axes, current_mesh, explicit_axes, reshard, set_mesh, use_mesh,
};
pub use jit_layouts::LeafSharding;
pub use layouts::Sharding;
pub use mesh::Mesh;
pub use named::NamedSharding;
/// The descriptions a [`Mesh`] and a [`NamedSharding`] lower to (their
/// `desc`, `hlo` and `from_hlo` take and return them), and the types of
/// mesh axes.
pub use oxla_core::{AxisType, MeshDesc, ShardingDesc};
pub use oxla_pjrt::HloSharding;
pub(crate) use placement::{ShardLayout, Sharded};
pub use placement::{device_put, device_put_tree};
pub use pmap::{Pmap, pmap};
pub use shard_map::{ShardMap, shard_map};
pub use shards::{
    HostShard, Shard, make_array_from_callback, make_array_from_single_device_arrays,
};
pub use spec::{PartitionSpec, SpecEntry};
pub use visualize::visualize_sharding;

use oxla_core::primitive::sharding;
use oxla_core::{Location, Primitive};

use crate::array::Array;

/// `x`, which the partitioner must lay out as `sharding` at this point of
/// the program (JAX's `jax.lax.with_sharding_constraint`). Outside `jit`
/// it runs as a one-op program and returns `x` laid out so. Over a mesh's
/// explicit axes it asserts `x`'s type instead (an error when `x` is split
/// otherwise), as JAX's does: [`reshard`] moves values there.
#[track_caller]
pub fn with_sharding_constraint(x: &Array, sharding: &NamedSharding) -> Array {
    with_sharding_constraint_at(x, sharding, mesh::here())
}

/// [`with_sharding_constraint`] for a use at `location`.
pub(crate) fn with_sharding_constraint_at(
    x: &Array,
    sharding: &NamedSharding,
    location: Location,
) -> Array {
    let aval = match x.aval() {
        Ok(aval) => aval.clone(),
        Err(e) => return Array::error(e),
    };
    if let Err(e) = sharding.check_constraint(&aval, &format!("a value of {aval}"), location) {
        return Array::error(e);
    }
    // Over explicit axes a constraint is an assertion on the type (JAX's
    // rule): moving a value is reshard's job.
    if let Some(wanted) = sharding.desc().explicit_type() {
        let wanted = aval.with_sharding(Some(wanted));
        let mesh = sharding.mesh().desc();
        let names_auto_axes = sharding
            .spec()
            .entries()
            .iter()
            .flat_map(|e| e.names())
            .any(|a| mesh.axis_type(a) == oxla_core::AxisType::Auto);
        match (wanted.dim_axes() == aval.dim_axes(), names_auto_axes) {
            (true, false) => return x.clone(),
            // The auto axes' part still constrains the partitioner.
            (true, true) => {}
            (false, _) => {
                return Array::error(crate::Error::Sharding {
                    message: format!(
                        "with_sharding_constraint acts as an assertion over explicit mesh axes: the \
                 value is {aval}, not {wanted} as {} asks; use oxla::sharding::reshard to move it",
                        sharding.spec()
                    ),
                    location: Some(location),
                });
            }
        }
    }
    let primitive = Primitive::Sharding(sharding::Op::ShardingConstraint {
        sharding: sharding.desc(),
    });
    match crate::ops::bind_at(primitive, &[x], location) {
        Ok(mut outs) => outs.swap_remove(0),
        Err(e) => Array::error(e),
    }
}

impl Array {
    /// The sharding a program taking this array gives its parameter: its
    /// named sharding, or, for a layout no spec expresses, replicated on
    /// its mesh (the blocks are then regathered); `None` off a mesh.
    pub(crate) fn program_sharding(&self) -> Option<oxla_core::ShardingDesc> {
        self.sharded().map(|s| match &s.layout.named {
            Some(named) => named.desc(),
            None => NamedSharding::replicated(&s.layout.mesh).desc(),
        })
    }

    /// The mesh of an array split over one.
    pub(crate) fn mesh(&self) -> Option<&Mesh> {
        self.sharded().map(|s| &s.layout.mesh)
    }

    /// How the array is laid out (JAX's `x.sharding`): on one device, as a
    /// named sharding of its mesh, or, for a tile layout no partition spec
    /// of the mesh expresses, XLA's layout; `None` for a tracer.
    pub fn sharding(&self) -> Option<Sharding> {
        if let Some(s) = self.sharded() {
            return Some(match &s.layout.named {
                Some(named) => Sharding::Named(named.clone()),
                None => Sharding::Gspmd {
                    mesh: s.layout.mesh.clone(),
                    hlo: s.layout.hlo.clone(),
                },
            });
        }
        let buffer = self.buffer().ok()?;
        let device = buffer.get().device().ok()?;
        Some(Sharding::SingleDevice(device))
    }

    /// The named sharding of an array split over a mesh (`None` for an
    /// array on one device, a tracer, or a layout no partition spec of its
    /// mesh expresses).
    pub fn named_sharding(&self) -> Option<NamedSharding> {
        self.sharded().and_then(|s| s.layout.named.clone())
    }

    /// The ids of the devices holding the array, in mesh order for a
    /// sharded array.
    pub fn device_ids(&self) -> crate::Result<Vec<i64>> {
        match self.sharded() {
            Some(s) => Ok(s.layout.mesh.device_ids().to_vec()),
            None => {
                let buffer = self.buffer()?;
                Ok(vec![i64::from(buffer.get().device()?.id()?)])
            }
        }
    }
}
