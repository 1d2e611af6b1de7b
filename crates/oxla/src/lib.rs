#![doc = include_str!("../docs/guide.md")]
#![warn(missing_docs)]

// `#[derive(Pytree)]` names `::oxla`; inside this crate that is itself.
extern crate self as oxla;

mod array;
mod autodiff;
pub mod callback;
pub mod config;
mod control;
pub mod custom;
pub mod debug;
pub mod distributed;
mod element;
mod error;
mod eval_shape;
mod export;
pub mod index;
mod jit;
pub mod lax;
pub mod memory;
mod methods;
pub mod numpy;
mod operators;
mod ops;
pub mod profiler;
pub mod pytree;
pub mod random;
mod runtime;
pub mod sharding;
mod trace;
mod transform;
mod vmap;

pub use array::Array;
pub use autodiff::{
    Grad, Linearized, ValueAndGrad, Vjp, grad, hessian, jacfwd, jacobian, jacrev, jvp,
    linear_transpose, linearize, value_and_grad, vjp, vjp_with_aux,
};
pub use callback::{io_callback, pure_callback};
pub use config::{enable_x64, x64_enabled};
pub use custom::{
    Checkpoint, CustomJvp, CustomVjp, LeafJvp, checkpoint, checkpoint_name, custom_jvp,
    custom_jvp_symbolic, custom_jvps, custom_vjp,
};
pub use element::Element;
pub use error::{Error, Result};
pub use eval_shape::{OutputTypes, eval_shape};
pub use export::{ExportOptions, ExportedFn};
pub use index::{IndexItem, NEW_AXIS};
pub use jit::{CacheKey, CompileReport, Jit, Traced, jit, make_jaxpr};
pub use operators::WeakScalar;
pub use ops::{at_caller_location, eager_cache_size, set_eager_cache_capacity};
pub use oxla_cache::Source as CompileSource;
/// The persistent compile cache ([`disk_cache`] returns it).
pub use oxla_cache::{CacheKey as CacheSecret, DiskCache, Sharing as CacheSharing};
pub use oxla_core::RematPolicy;
pub use oxla_core::VmapMethod;
pub use oxla_core::{Aval, DType, Jaxpr, Location};
pub use oxla_derive::Pytree;
pub use oxla_export::Exported;
pub use oxla_npy::HostArray;
/// The PJRT objects behind arrays and compiled programs ([`client`],
/// [`Array`]'s buffers, [`Jit`]'s executables and memory statistics).
pub use oxla_pjrt::{Buffer, Client, CompiledMemoryStats, Device, LoadedExecutable, oxla_home};
pub use pytree::{
    Pytree, Static, TreeDef, tree_leaves, tree_map, tree_map_n, tree_map_named, tree_map2,
    tree_map3, tree_reduce, tree_structure, tree_unflatten, tree_zip,
};
pub use runtime::{
    client, compile_jaxpr, disk_cache, set_compile_cache, set_compile_cache_dir,
    set_cpu_device_count,
};
pub use sharding::{Mesh, NamedSharding, PartitionSpec, device_put, with_sharding_constraint};
pub use vmap::{Vmap, vmap};

fn promotion_default_float() -> DType {
    oxla_core::promotion::default_float(x64_enabled())
}

fn promotion_default_int() -> DType {
    oxla_core::promotion::default_int(x64_enabled())
}
