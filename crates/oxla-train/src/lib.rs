//! The input pipeline and checkpoints of a training loop, above oxla's
//! array library as Grain and Orbax sit above JAX: [`datasets`] reads the
//! examples' datasets (installed by `ci/setup`, pinned by SHA-256) and cuts
//! them into shuffled batches; [`checkpoint`] saves and restores pytrees of
//! arrays as safetensors files or `.npz` archives (the `safetensors`,
//! `npz` and `checkpoint` features).
#![warn(missing_docs)]

pub mod checkpoint;
pub mod datasets;
