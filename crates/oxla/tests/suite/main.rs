//! oxla's tests against JAX and the real plugin, in one binary (each test
//! binary links all of MLIR).

/// Tests compile into a cache of their own, not the user's.
#[ctor::ctor(unsafe)]
fn isolated_compile_cache() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::isolate_compile_cache(env!("CARGO_TARGET_TMPDIR"), "suite") };
}

mod cache;
mod checkpoints;
mod control;
mod datasets;
mod dispatch;
mod display;
mod donation;
mod errors;
mod jaxpr_text;
mod npy;
mod ops_vs_jax;
mod parity;
mod promotion;
mod pytrees;
mod random;
mod reference;
mod training;
mod transforms;
mod transforms_ops;
