//! `lax.rng_bit_generator` and `lax.rng_uniform`: XLA's own generators.

use oxla_core::primitive::rng;
use oxla_core::{DType, Primitive};

pub use oxla_core::primitive::rng::RngAlgorithm;

use crate::array::Array;
use crate::ops::{bind, bind_n};

/// `lax.rng_bit_generator(key, shape, dtype, algorithm)`: `(new_key, bits)`,
/// unsigned integers of `dtype` (u8, u16, u32, or u64 with x64) and
/// `shape` from XLA's stateless bit generator, a function of the key
/// (`u32[4]`, or `u64[2]`); what JAX's `rbg` PRNG keys draw with. The bits
/// depend on the platform's algorithm, so they match JAX's on the same
/// plugin. Under vmap a batch of keys draws from its first key, as in JAX.
#[track_caller]
pub fn rng_bit_generator(
    key: &Array,
    shape: &[i64],
    dtype: DType,
    algorithm: RngAlgorithm,
) -> (Array, Array) {
    let mut outs = bind_n(
        Primitive::Rng(rng::Op::RngBitGenerator {
            shape: shape.iter().copied().collect(),
            dtype: crate::random::canonical(dtype),
            algorithm,
        }),
        &[key],
        2,
    )
    .into_iter();
    let new_key = outs.next().unwrap_or_else(missing_output);
    let bits = outs.next().unwrap_or_else(missing_output);
    (new_key, bits)
}

fn missing_output() -> Array {
    Array::error(crate::Error::Internal(
        "rng_bit_generator returned fewer than two outputs".into(),
    ))
}

/// `lax.rng_uniform(a, b, shape)`: numbers of `shape` uniform in `[a, b)`
/// (scalars of one integer or real float type) from the backend's hidden
/// generator state, so successive calls differ and nothing reproduces
/// them; undefined when `b <= a`. Use `random::uniform` for reproducible
/// numbers.
#[track_caller]
pub fn rng_uniform(a: &Array, b: &Array, shape: &[i64]) -> Array {
    bind(
        Primitive::Rng(rng::Op::RngUniform {
            shape: shape.iter().copied().collect(),
        }),
        &[a, b],
    )
}
