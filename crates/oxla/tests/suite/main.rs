//! oxla's tests against JAX and the real plugin, in one binary (each test
//! binary links all of MLIR).

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "suite") };
    // The suite compares ops with JAX within one ulp (see the function).
    // SAFETY: as above.
    unsafe { oxla_testing::use_reference_plugin() };
}

mod api_coverage;
mod cache;
mod callbacks;
mod checkpoint_manager;
mod checkpoints;
mod complex_numbers;
mod control;
mod conv_layers;
mod data_loader;
mod datasets;
mod debug_print;
mod dispatch;
mod display;
mod donation;
mod einsum_paths;
mod errors;
mod exit;
mod export_to_jax;
mod exports_in_jit;
mod flax_twins;
mod fuzz_jit;
mod general_reduce;
mod higher_order;
mod jaxpr_text;
mod layers_misc;
mod normalization_layers;
mod npy;
mod ops_vs_jax;
mod optimizer_wrappers;
mod optimizers;
mod orbax_checkpoints;
mod parity;
mod portable_linalg;
mod precision_and_summary;
mod profiler;
mod promotion;
mod pytrees;
mod random;
mod recurrent_layers;
mod reference;
mod schedules_and_losses;
mod sets;
mod solves;
mod tensorboard_and_metrics;
mod training;
mod transformation_api;
mod transforms;
mod transforms_ops;
mod vmap_collectives;
