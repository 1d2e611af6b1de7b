//! `jax.random`'s samplers that are deterministic functions of
//! [`uniform`], [`normal`] and [`bernoulli`] draws: each computes exactly
//! JAX's formula from the same draws, so the same key gives JAX's values
//! (bit for bit where the formula's ops round alike).

use oxla_core::DType;

use super::{IntoKey, Key, bernoulli, normal, split2, uniform};
use crate::array::Array;
use crate::lax;
use crate::numpy as jnp;

/// A constant of dtype `dtype`.
fn c(value: f64, dtype: DType) -> Array {
    lax::convert_element_type(&Array::weak_scalar(value), dtype)
}

/// Uniform floats in `[minval, 1)`.
fn uniform_from(key: Key, shape: &[i64], dtype: DType, minval: f64) -> Array {
    uniform(key, shape, dtype, &c(minval, dtype), &c(1.0, dtype))
}

/// `x` as `dtype`, broadcast to `shape`.
fn param(x: &Array, dtype: DType, shape: &[i64]) -> Array {
    jnp::broadcast_to(&lax::convert_element_type(x, dtype), shape)
}

/// `jax.random.exponential`: `-log(1 - u)`.
#[track_caller]
pub fn exponential(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let u = uniform_from(key.into_key(), shape, dtype, 0.0);
    lax::neg(&lax::log1p(&lax::neg(&u)))
}

/// `jax.random.laplace`: `sign(u) log(1 - |u|)` with `u` uniform in
/// `(-1, 1)`.
#[track_caller]
pub fn laplace(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let epsneg = dtype.float_info().epsneg();
    let u = uniform_from(key.into_key(), shape, dtype, -1.0 + epsneg);
    lax::mul(&lax::sign(&u), &lax::log1p(&lax::neg(&lax::abs(&u))))
}

/// `jax.random.logistic`: `log(u) - log(1 - u)`.
#[track_caller]
pub fn logistic(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let tiny = dtype.float_info().smallest_normal;
    let u = uniform_from(key.into_key(), shape, dtype, tiny);
    lax::sub(&lax::log(&u), &lax::log1p(&lax::neg(&u)))
}

/// `jax.random.cauchy`: `tan(π (u - 1/2))`.
#[track_caller]
pub fn cauchy(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let eps = dtype.float_info().eps();
    let u = uniform_from(key.into_key(), shape, dtype, eps);
    let centered = lax::sub(&u, &c(0.5, dtype));
    lax::tan(&lax::mul(&c(std::f64::consts::PI, dtype), &centered))
}

/// `jax.random.rademacher`: -1 or 1 with equal chance, as `dtype`.
#[track_caller]
pub fn rademacher(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let half = Array::scalar(0.5f32).unwrap_or_else(Array::error);
    let coin = lax::convert_element_type(&bernoulli(key, &half, Some(shape)), dtype);
    lax::convert_element_type(
        &jnp::subtract(
            &jnp::multiply(&Array::weak_scalar(2i32), &coin),
            &Array::weak_scalar(1i32),
        ),
        dtype,
    )
}

/// `jax.random.rayleigh`: `scale sqrt(-2 log u)`.
#[track_caller]
pub fn rayleigh(key: impl IntoKey, scale: &Array, shape: &[i64], dtype: DType) -> Array {
    let u = uniform_from(key.into_key(), shape, dtype, 0.0);
    let scale = param(scale, dtype, shape);
    lax::mul(
        &scale,
        &lax::sqrt(&lax::mul(&lax::log(&u), &c(-2.0, dtype))),
    )
}

/// `jax.random.pareto`: `exp(e / b)` with `e` exponential.
#[track_caller]
pub fn pareto(key: impl IntoKey, b: &Array, shape: &[i64], dtype: DType) -> Array {
    let e = exponential(key, shape, dtype);
    lax::exp(&jnp::divide(&e, &lax::convert_element_type(b, dtype)))
}

/// `jax.random.weibull_min`: `(-log(1 - u))^(1 / concentration) · scale`.
#[track_caller]
pub fn weibull_min(
    key: impl IntoKey,
    scale: &Array,
    concentration: &Array,
    shape: &[i64],
    dtype: DType,
) -> Array {
    let u = uniform_from(key.into_key(), shape, dtype, 0.0);
    let inverse = jnp::divide(&Array::weak_scalar(1.0f64), concentration);
    jnp::multiply(
        &jnp::power(&jnp::negative(&lax::log1p(&lax::neg(&u))), &inverse),
        scale,
    )
}

/// `jax.random.maxwell`: the length of a standard normal 3-vector.
#[track_caller]
pub fn maxwell(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let mut vector = shape.to_vec();
    vector.push(3);
    let n = normal(key, &vector, dtype);
    lax::sqrt(&jnp::sum(&lax::mul(&n, &n), Some(&[-1]), false))
}

/// `jax.random.double_sided_maxwell`: a [`maxwell`] sample with a random
/// sign, scaled and shifted (`shape` then the parameters' broadcast
/// shape).
#[track_caller]
pub fn double_sided_maxwell(
    key: impl IntoKey,
    loc: &Array,
    scale: &Array,
    shape: &[i64],
    dtype: DType,
) -> Array {
    let params =
        jnp::broadcast_shapes(loc.shape_or_empty(), scale.shape_or_empty()).unwrap_or_default();
    let full: Vec<i64> = match shape.is_empty() {
        true => params.clone(),
        false => shape.iter().chain(&params).copied().collect(),
    };
    let (magnitude_key, sign_key) = split2(key);
    let magnitude = maxwell(magnitude_key, &full, dtype);
    let sign = rademacher(sign_key, &full, dtype);
    jnp::add(
        &jnp::multiply(&jnp::multiply(&sign, &magnitude), scale),
        loc,
    )
}

/// `jax.random.lognormal`: `exp(sigma · n)`.
#[track_caller]
pub fn lognormal(key: impl IntoKey, sigma: &Array, shape: &[i64], dtype: DType) -> Array {
    let n = normal(key, shape, dtype);
    lax::exp(&jnp::multiply(&n, &lax::convert_element_type(sigma, dtype)))
}

/// `jax.random.wald`: the inverse Gaussian by Michael, Schucany and Haas,
/// from a normal and a uniform draw.
#[track_caller]
pub fn wald(key: impl IntoKey, mean: &Array, shape: &[i64], dtype: DType) -> Array {
    let (normal_key, uniform_key) = split2(key);
    let mean = param(mean, dtype, shape);
    let v = normal(normal_key, shape, dtype);
    let z = uniform_from(uniform_key, shape, dtype, 0.0);
    let y = lax::integer_pow(&v, 2);
    let y_sq = lax::integer_pow(&y, 2);
    let mean_sq = lax::integer_pow(&mean, 2);
    let k = |v: f64| c(v, dtype);
    let sqrt_term = lax::sqrt(&lax::add(
        &lax::mul(&lax::mul(&k(4.0), &mean), &y),
        &lax::mul(&mean_sq, &y_sq),
    ));
    let x = lax::sub(
        &lax::add(&mean, &lax::div(&lax::mul(&mean_sq, &y), &k(2.0))),
        &lax::mul(&lax::div(&mean, &k(2.0)), &sqrt_term),
    );
    let accept = lax::le(&z, &lax::div(&mean, &lax::add(&mean, &x)));
    lax::select_n(&accept, &[&lax::div(&mean_sq, &x), &x])
}

/// `jax.random.geometric`: the number of Bernoulli(`p`) trials up to the
/// first success, `floor(log u / log(1 - p)) + 1`, as `dtype`.
#[track_caller]
pub fn geometric(key: impl IntoKey, p: &Array, shape: &[i64], dtype: DType) -> Array {
    let float = match p.dtype_or_bool() {
        d if d.is_float() => d,
        _ => DType::F32,
    };
    let u = uniform_from(key.into_key(), shape, float, 0.0);
    let u = jnp::where_(&lax::eq(&u, &c(0.0, float)), &c(1.0, float), &u);
    let log_one_minus_p = jnp::broadcast_to(
        &lax::log1p(&lax::neg(&lax::convert_element_type(p, float))),
        shape,
    );
    let g = lax::add(
        &lax::floor(&lax::div(&lax::log(&u), &log_one_minus_p)),
        &c(1.0, float),
    );
    lax::convert_element_type(&g, dtype)
}

/// `jax.random.triangular(left, mode, right)`: the inverse CDF of the
/// triangular distribution at a uniform draw.
#[track_caller]
pub fn triangular(
    key: impl IntoKey,
    left: &Array,
    mode: &Array,
    right: &Array,
    shape: &[i64],
    dtype: DType,
) -> Array {
    let (left, mode, right) = (
        param(left, dtype, shape),
        param(mode, dtype, shape),
        param(right, dtype, shape),
    );
    let width = lax::sub(&right, &left);
    let fc = lax::div(&lax::sub(&mode, &left), &width);
    let u = uniform_from(key.into_key(), shape, dtype, 0.0);
    let below = lax::add(
        &left,
        &lax::sqrt(&lax::mul(&lax::mul(&u, &width), &lax::sub(&mode, &left))),
    );
    let rest = lax::sub(&c(1.0, dtype), &u);
    let above = lax::sub(
        &right,
        &lax::sqrt(&lax::mul(
            &lax::mul(&rest, &width),
            &lax::sub(&right, &mode),
        )),
    );
    lax::select_n(&lax::lt(&u, &fc), &[&above, &below])
}
