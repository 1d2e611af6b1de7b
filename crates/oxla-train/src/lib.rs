//! The input pipeline, checkpoints and bookkeeping of a training loop,
//! above oxla's array library as Grain, Orbax, clu and jmp sit above JAX:
//! [`data`] is a Grain-style loader (random-access sources, deterministic
//! sharded shuffling, transforms in worker threads, batching, prefetch onto
//! the device, resumable iterator state); [`datasets`] reads the examples'
//! datasets (installed by `ci/setup`, pinned by SHA-256); [`checkpoint`]
//! saves and restores pytrees as safetensors files or `.npz` archives,
//! loads other programs' weights through a name mapping, and manages step
//! directories with asynchronous, sharded saves (the `safetensors`, `npz`
//! and `checkpoint` features); [`tensorboard`] writes TensorBoard event
//! files (the `tensorboard` feature); [`metrics`] accumulates metrics in
//! the manner of `clu.metrics`; [`precision`] is mixed precision as
//! DeepMind's `jmp` (dtype policies and loss scaling); [`summary`] counts
//! a model's parameters by module and prints them as a table.
#![warn(missing_docs)]

pub mod checkpoint;
pub mod data;
pub mod datasets;
pub mod metrics;
pub mod precision;
pub mod summary;
#[cfg(feature = "tensorboard")]
pub mod tensorboard;

pub use precision::{
    DynamicLossScale, LossScale, NoOpLossScale, Policy, StaticLossScale, all_finite, select_tree,
};
pub use summary::{ModuleSummary, ParamInfo, Summary, parameter_bytes, parameter_count};
