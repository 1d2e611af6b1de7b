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

/// `jax.nn.identity`: `x` itself.
#[track_caller]
pub fn identity(x: &Array) -> Array {
    x.clone()
}

/// `jax.nn.tanh`: the hyperbolic tangent.
#[track_caller]
pub fn tanh(x: &Array) -> Array {
    jnp::tanh(x)
}

/// `jax.nn.swish`: another name of [`silu`].
#[track_caller]
pub fn swish(x: &Array) -> Array {
    silu(x)
}

/// A weakly typed scalar `v` (a Python float in JAX's formulas).
fn w(v: f64) -> Array {
    Array::weak_scalar(v)
}

/// `jax.nn.squareplus`: `(x + sqrt(x² + b)) / 2`.
#[track_caller]
pub fn squareplus(x: &Array, b: f64) -> Array {
    (x + &jnp::sqrt(&(&jnp::square(x) + b))) / 2.0f64
}

/// `jax.nn.softplus`: `log(1 + e^x)`, as `logaddexp(x, 0)`.
#[track_caller]
pub fn softplus(x: &Array) -> Array {
    jnp::logaddexp(x, &w(0.0))
}

/// `jax.nn.sparse_plus`: 0 below -1, `x` above 1, `(x + 1)² / 4` between.
#[track_caller]
pub fn sparse_plus(x: &Array) -> Array {
    let middle = jnp::square(&(x + 1.0f64)) / 4.0f64;
    let upper = jnp::where_(&jnp::greater_equal(x, &w(1.0)), x, &middle);
    jnp::where_(&jnp::less_equal(x, &w(-1.0)), &w(0.0), &upper)
}

/// `jax.nn.soft_sign`: `x / (|x| + 1)`.
#[track_caller]
pub fn soft_sign(x: &Array) -> Array {
    x / &(jnp::abs(x) + 1.0f64)
}

/// `jax.nn.sparse_sigmoid`: `clip(x + 1, 0, 2) / 2`.
#[track_caller]
pub fn sparse_sigmoid(x: &Array) -> Array {
    jnp::clip(&(x + 1.0f64), &w(0.0), &w(2.0)) * 0.5f64
}

/// `jax.nn.mish`: `x tanh(softplus(x))`.
#[track_caller]
pub fn mish(x: &Array) -> Array {
    x * &jnp::tanh(&softplus(x))
}

/// `jax.nn.log_sigmoid`: `-softplus(-x)`.
#[track_caller]
pub fn log_sigmoid(x: &Array) -> Array {
    -softplus(&-x)
}

/// `jax.nn.elu`: `x` where positive, `alpha (e^x - 1)` elsewhere (the
/// exponential of the clamped value, so large positive `x` gives no inf in
/// the unused branch or its gradient).
#[track_caller]
pub fn elu(x: &Array, alpha: f64) -> Array {
    let positive = jnp::greater(x, &w(0.0));
    let safe = jnp::where_(&positive, &w(0.0), x);
    jnp::where_(&positive, x, &(jnp::expm1(&safe) * alpha))
}

/// `jax.nn.leaky_relu`: `x` where non-negative, `negative_slope x`
/// elsewhere.
#[track_caller]
pub fn leaky_relu(x: &Array, negative_slope: f64) -> Array {
    jnp::where_(&jnp::greater_equal(x, &w(0.0)), x, &(x * negative_slope))
}

/// `jax.nn.hard_tanh`: `x` clipped to [-1, 1].
#[track_caller]
pub fn hard_tanh(x: &Array) -> Array {
    let low = jnp::where_(&jnp::less(x, &w(-1.0)), &w(-1.0), x);
    jnp::where_(&jnp::greater(x, &w(1.0)), &w(1.0), &low)
}

/// `jax.nn.celu`: `max(x, 0) + alpha expm1(min(x, 0) / alpha)`.
#[track_caller]
pub fn celu(x: &Array, alpha: f64) -> Array {
    let negative = jnp::expm1(&(jnp::minimum(x, &w(0.0)) / alpha)) * alpha;
    jnp::maximum(x, &w(0.0)) + negative
}

/// `jax.nn.selu`: `scale · elu(x, alpha)` with the self-normalizing
/// constants.
#[track_caller]
pub fn selu(x: &Array) -> Array {
    let alpha = 1.673_263_242_354_377_2_f64;
    let scale = 1.050_700_987_355_480_5_f64;
    elu(x, alpha) * scale
}

/// `jax.nn.gelu` with `approximate=False`: `x erfc(-x / √2) / 2`.
#[track_caller]
pub fn gelu_exact(x: &Array) -> Array {
    let half_sqrt = oxla::lax::convert_element_type(&w(0.5f64.sqrt()), x.dtype_or_bool());
    let cdf = oxla::lax::erfc(&(-x * &half_sqrt));
    x * 0.5f64 * cdf
}

/// `jax.nn.glu`: the first half of `x` along `axis` times the sigmoid of
/// the second (the axis must have even size).
#[track_caller]
pub fn glu(x: &Array, axis: i64) -> Array {
    let halves = jnp::split(x, 2, axis);
    &halves[0] * &sigmoid(&halves[1])
}

/// `jax.nn.logmeanexp`: `logsumexp(x) - log(n)` over `axis` (all axes
/// for `None`), `n` the number of elements reduced.
#[track_caller]
pub fn logmeanexp(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let total = logsumexp(x, axis, keepdims);
    let rank = x.ndim_or_zero() as i64;
    let shape = x.shape_or_empty();
    let count: i64 = match axis {
        Some(axes) => axes
            .iter()
            .map(|&a| {
                shape
                    .get(a.rem_euclid(rank.max(1)) as usize)
                    .copied()
                    .unwrap_or(1)
            })
            .product(),
        None => shape.iter().product(),
    };
    let log_count =
        oxla::lax::convert_element_type(&jnp::log(&w(count as f64)), total.dtype_or_bool());
    total - log_count
}

/// `jax.nn.standardize` with `algorithm="fast"` (its default): `(x - mean)
/// / sqrt(variance + epsilon)` over `axis`, the variance as
/// `mean(x²) - mean²` clipped at 0; `mean` and `variance` are computed
/// when not given.
#[track_caller]
pub fn standardize(
    x: &Array,
    axis: &[i64],
    mean: Option<&Array>,
    variance: Option<&Array>,
    epsilon: f64,
) -> Array {
    let mean = match mean {
        Some(m) => m.clone(),
        None => jnp::mean(x, Some(axis), true),
    };
    let variance = match variance {
        Some(v) => v.clone(),
        None => {
            let raw = jnp::mean(&jnp::square(x), Some(axis), true) - jnp::square(&mean);
            jnp::clip(&raw, &w(0.0), &w(f64::INFINITY))
        }
    };
    (x - &mean) * oxla::lax::rsqrt(&(&variance + epsilon))
}

type UnaryFn = fn((Array,)) -> Array;

/// relu6 with JAX's derivative (0 at 0 and at 6): a `custom_jvp`.
static RELU6: LazyLock<CustomJvp<(Array,), Array, UnaryFn>> =
    LazyLock::new(|| custom_jvp(relu6_value as UnaryFn, relu6_jvp));

fn relu6_value((x,): (Array,)) -> Array {
    jnp::minimum(&jnp::maximum(&x, &w(0.0)), &w(6.0))
}

fn relu6_jvp((x,): (Array,), (t,): (Array,)) -> (Array, Array) {
    let inside = oxla::lax::and(&jnp::greater(&x, &w(0.0)), &jnp::less(&x, &w(6.0)));
    let tangent = jnp::where_(&inside, &t, &jnp::zeros_like(&t));
    (relu6_value((x,)), tangent)
}

/// `jax.nn.relu6`: `min(max(x, 0), 6)`, with derivative 0 at 0 and 6.
#[track_caller]
pub fn relu6(x: &Array) -> Array {
    oxla::at_caller_location(|| RELU6.call((x.clone(),)).unwrap_or_else(Array::error))
}

/// `jax.nn.hard_sigmoid`: `relu6(x + 3) / 6`.
#[track_caller]
pub fn hard_sigmoid(x: &Array) -> Array {
    relu6(&(x + 3.0f64)) / 6.0f64
}

/// `jax.nn.hard_silu`: `x · hard_sigmoid(x)`.
#[track_caller]
pub fn hard_silu(x: &Array) -> Array {
    x * &hard_sigmoid(x)
}

/// `jax.nn.hard_swish`: another name of [`hard_silu`].
#[track_caller]
pub fn hard_swish(x: &Array) -> Array {
    hard_silu(x)
}

/// log1mexp with JAX's derivative `g / expm1(x)`: a `custom_jvp`.
static LOG1MEXP: LazyLock<CustomJvp<(Array,), Array, UnaryFn>> =
    LazyLock::new(|| custom_jvp(log1mexp_value as UnaryFn, log1mexp_jvp));

fn log1mexp_value((x,): (Array,)) -> Array {
    let c = jnp::log(&w(2.0));
    jnp::where_(
        &jnp::less(&x, &c),
        &jnp::log(&-jnp::expm1(&-&x)),
        &jnp::log1p(&-jnp::exp(&-&x)),
    )
}

fn log1mexp_jvp((x,): (Array,), (t,): (Array,)) -> (Array, Array) {
    let tangent = &t / &jnp::expm1(&x);
    (log1mexp_value((x,)), tangent)
}

/// `jax.nn.log1mexp`: `log(1 - e^-x)` for `x > 0`, computed stably (Mächler's
/// split at log 2), with derivative `1 / expm1(x)`.
#[track_caller]
pub fn log1mexp(x: &Array) -> Array {
    oxla::at_caller_location(|| LOG1MEXP.call((x.clone(),)).unwrap_or_else(Array::error))
}
