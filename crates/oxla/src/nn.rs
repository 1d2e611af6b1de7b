//! `oxla::nn`: activation and normalization functions of `jax.nn`.

use oxla_core::DType;

use crate::array::Array;
use crate::numpy as jnp;

/// max(x, 0).
#[track_caller]
pub fn relu(x: &Array) -> Array {
    jnp::maximum(x, &Array::weak_scalar(0.0f32))
}

/// 1 / (1 + e^-x).
#[track_caller]
pub fn sigmoid(x: &Array) -> Array {
    crate::lax::logistic(x)
}

/// x * sigmoid(x).
#[track_caller]
pub fn silu(x: &Array) -> Array {
    x * &sigmoid(x)
}

/// GELU with the tanh approximation (JAX's default, `approximate=True`).
#[track_caller]
pub fn gelu(x: &Array) -> Array {
    let c = (2.0f64 / std::f64::consts::PI).sqrt();
    let inner = (x + &(&jnp::power(x, &Array::weak_scalar(3.0f64)) * 0.044715f64)) * c;
    x * 0.5f64 * (jnp::tanh(&inner) + 1.0f64)
}

/// log(sum(exp(x))) over `axis`, stable.
#[track_caller]
pub fn logsumexp(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let m = jnp::max(x, axis, true);
    let shifted = jnp::exp(&(x - &m));
    let s = jnp::log(&jnp::sum(&shifted, axis, true)) + &m;
    if keepdims { s } else { jnp::squeeze(&s, axis) }
}

/// x - logsumexp(x) over the last axis (or `axis`).
#[track_caller]
pub fn log_softmax(x: &Array, axis: Option<&[i64]>) -> Array {
    let axis = axis.unwrap_or(&[-1]);
    x - &logsumexp(x, Some(axis), true)
}

/// exp(x) / sum(exp(x)) over the last axis (or `axis`).
#[track_caller]
pub fn softmax(x: &Array, axis: Option<&[i64]>) -> Array {
    let axis = axis.unwrap_or(&[-1]);
    let e = jnp::exp(&(x - &jnp::max(x, Some(axis), true)));
    &e / &jnp::sum(&e, Some(axis), true)
}

/// One-hot encoding of integer classes, as f32.
#[track_caller]
pub fn one_hot(x: &Array, num_classes: i64) -> Array {
    jnp::one_hot(x, num_classes, DType::F32)
}
