//! Activation and normalization functions of `jax.nn`.

use std::sync::LazyLock;

use oxla::DType;

use oxla::custom::{CustomJvp, custom_jvp};

use oxla::Array;
use oxla::numpy as jnp;

type ReluFn = fn((Array,)) -> Array;

/// relu with JAX's derivative (0 at 0): a `custom_jvp`, as `jax.nn.relu`.
static RELU: LazyLock<CustomJvp<(Array,), Array, ReluFn>> =
    LazyLock::new(|| custom_jvp(relu_value as ReluFn, relu_jvp));

fn relu_value((x,): (Array,)) -> Array {
    jnp::maximum(&x, &Array::weak_scalar(0.0f32))
}

fn relu_jvp((x,): (Array,), (t,): (Array,)) -> (Array, Array) {
    let positive = oxla::lax::gt(&x, &Array::weak_scalar(0.0f32));
    let tangent = jnp::where_(&positive, &t, &jnp::zeros_like(&t));
    (relu_value((x,)), tangent)
}

/// max(x, 0); its derivative is 0 at 0, as in JAX.
#[track_caller]
pub fn relu(x: &Array) -> Array {
    oxla::at_caller_location(|| RELU.call((x.clone(),)).unwrap_or_else(Array::error))
}

/// 1 / (1 + e^-x).
#[track_caller]
pub fn sigmoid(x: &Array) -> Array {
    oxla::lax::logistic(x)
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

/// log(sum(exp(x))) over `axis`, stable, as `jax.nn.logsumexp`: the
/// maximum it shifts by is a constant to differentiation (stop_gradient)
/// and is replaced by 0 where it is not finite, so a slice of `-inf` gives
/// `-inf` (not NaN) and its gradient is finite.
#[track_caller]
pub fn logsumexp(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let m = jnp::max(x, axis, true);
    let finite = jnp::isfinite(&m);
    let m = oxla::lax::stop_gradient(&jnp::where_(&finite, &m, &jnp::zeros_like(&m)));
    let shifted = jnp::exp(&(x - &m));
    let s = jnp::log(&jnp::sum(&shifted, axis, true)) + &m;
    if keepdims { s } else { jnp::squeeze(&s, axis) }
}

/// x - logsumexp(x) over the last axis (or `axis`), as `jax.nn.log_softmax`
/// (shifted by the stopped-gradient maximum).
#[track_caller]
pub fn log_softmax(x: &Array, axis: Option<&[i64]>) -> Array {
    let axis = axis.unwrap_or(&[-1]);
    let shifted = x - &oxla::lax::stop_gradient(&jnp::max(x, Some(axis), true));
    let total = jnp::log(&jnp::sum(&jnp::exp(&shifted), Some(axis), true));
    shifted - total
}

/// exp(x) / sum(exp(x)) over the last axis (or `axis`), shifted by the
/// stopped-gradient maximum.
#[track_caller]
pub fn softmax(x: &Array, axis: Option<&[i64]>) -> Array {
    let axis = axis.unwrap_or(&[-1]);
    let m = oxla::lax::stop_gradient(&jnp::max(x, Some(axis), true));
    let e = jnp::exp(&(x - &m));
    &e / &jnp::sum(&e, Some(axis), true)
}

/// One-hot encoding of integer classes, as f32.
#[track_caller]
pub fn one_hot(x: &Array, num_classes: i64) -> Array {
    jnp::one_hot(x, num_classes, DType::F32)
}
