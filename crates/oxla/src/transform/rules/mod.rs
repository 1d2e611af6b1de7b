//! The transformation rules, one file per primitive family, mirroring
//! `oxla_core::primitive` (ops and shape rules) and oxla-lower's `rules`
//! (lowering). The dispatchers are `jvp_rules::jvp`,
//! `transpose_rules::transpose` and `batch_rules::batch`.

pub(crate) mod call;
pub(crate) mod collective;
pub(crate) mod contract;
pub(crate) mod control;
pub(crate) mod decompositions;
pub(crate) mod elementwise;
pub(crate) mod fft;
pub(crate) mod host;
pub(crate) mod index;
pub(crate) mod linalg;
pub(crate) mod marker;
pub(crate) mod reduce;
pub(crate) mod rng;
pub(crate) mod shape;
pub(crate) mod sharding;

#[cfg(test)]
mod golden;
