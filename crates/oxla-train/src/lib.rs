//! The input pipeline and checkpoints of a training loop, above oxla's
//! array library as Grain and Orbax sit above JAX: [`datasets`] reads the
//! examples' datasets (installed by `ci/setup`, pinned by SHA-256) and cuts
//! them into shuffled batches; [`checkpoint`] saves and restores pytrees of
//! arrays as safetensors files or `.npz` archives (the `safetensors`,
//! `npz` and `checkpoint` features); [`precision`] is mixed precision as
//! DeepMind's `jmp` (dtype policies and loss scaling); [`summary`] counts
//! a model's parameters by module and prints them as a table.
#![warn(missing_docs)]

pub mod checkpoint;
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
