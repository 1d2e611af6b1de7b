//! `jax.random`'s gamma sampler and what JAX builds on it (`loggamma`,
//! `beta`, `dirichlet`, `chisquare`, `f`, `t`, `generalized_normal`,
//! `ball`): Marsaglia and Tsang's rejection method, per element with its
//! own key, exactly as JAX's `_gamma_one` (the same splits, draws and
//! ops, so the same key gives JAX's values).
//!
//! Samples are differentiable in their shape parameters by JAX's implicit
//! reparameterization (`lax::random_gamma_grad`).

use oxla_core::DType;

use super::{IntoKey, Key, KeyImpl, exponential, key_data, normal, split, split2, uniform};
use crate::array::Array;
use crate::lax;
use crate::numpy as jnp;

/// An error array for `random::{function}`, naming the caller's line.
#[track_caller]
pub(super) fn usage(function: &str, message: String) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    Array::error(crate::error::Error::InvalidArgument(format!(
        "{location}: random::{function}: {message}"
    )))
}

/// A constant of `like`'s dtype.
pub(super) fn c(value: f64, like: &Array) -> Array {
    jnp::scalar_like(like, value)
}

/// One standard gamma sample of shape `alpha` (a scalar) from `key`
/// (its data), in log space or not: JAX's `_gamma_one`.
fn gamma_one(key: Array, kind: KeyImpl, alpha: Array, log_space: bool) -> Array {
    let dtype = alpha.dtype_or_bool();
    let (zero, one) = (c(0.0, &alpha), c(1.0, &alpha));
    let boost_mask = lax::ge(&alpha, &one);
    let alpha_orig = alpha.clone();
    let alpha = lax::select(&boost_mask, &alpha, &lax::add(&alpha, &one));
    let one_over_three = c(1.0 / 3.0, &alpha);
    let d = lax::sub(&alpha, &one_over_three);
    let cc = lax::div(&one_over_three, &lax::sqrt(&d));
    let wrap = |k: &Array| Key::from_data_with_impl(k.clone(), kind).unwrap_or_else(Key::error);
    let keys2 = |k: &Array| {
        let (a, b) = split2(wrap(k));
        (key_data(&a), key_data(&b))
    };

    let cond = {
        let (one, d) = (one.clone(), d.clone());
        move |(_, x, v, u): &(Array, Array, Array, Array)| {
            let squeeze = lax::sub(&one, &lax::mul(&c(0.0331, &one), &lax::mul(x, x)));
            let log_terms = lax::add(
                &lax::mul(x, &c(0.5, &one)),
                &lax::mul(&d, &lax::add(&lax::sub(&one, v), &lax::log(v))),
            );
            lax::and(&lax::ge(u, &squeeze), &lax::ge(&lax::log(u), &log_terms))
        }
    };
    let body = {
        let (zero, one, cc) = (zero.clone(), one.clone(), cc.clone());
        move |(key, _, _, _): (Array, Array, Array, Array)| {
            let three = split(wrap(&key), 3);
            let (key, x_key, u_key) = (
                key_data(&three[0]),
                key_data(&three[1]),
                key_data(&three[2]),
            );
            let next = |(k, _, _): (Array, Array, Array)| {
                let (k, sub) = keys2(&k);
                let x = normal(wrap(&sub), &[], dtype);
                let v = lax::add(&one, &lax::mul(&x, &cc));
                (k, x, v)
            };
            let start = (x_key, zero.clone(), c(-1.0, &zero));
            let (_, x, v) = crate::control::while_loop(
                |(_, _, v): &(Array, Array, Array)| lax::le(v, &zero),
                next,
                start,
            )
            .unwrap_or_else(|e| {
                (
                    Array::error(e.clone()),
                    Array::error(e.clone()),
                    Array::error(e),
                )
            });
            let big_x = lax::mul(&x, &x);
            let big_v = lax::mul(&lax::mul(&v, &v), &v);
            let u = uniform(wrap(&u_key), &[], dtype, &zero, &one);
            (key, big_x, big_v, u)
        }
    };
    let (key, subkey) = keys2(&key);
    let start = (key, zero.clone(), one.clone(), c(2.0, &alpha));
    let v = match crate::control::while_loop(cond, body, start) {
        Ok((_, _, v, _)) => v,
        Err(e) => return Array::error(e),
    };
    if log_space {
        let log_samples = lax::neg(&exponential(wrap(&subkey), &[], dtype));
        let no_boost = lax::or(&boost_mask, &lax::eq(&log_samples, &zero));
        let log_boost = lax::select(
            &no_boost,
            &zero,
            &lax::mul(&log_samples, &lax::div(&one, &alpha_orig)),
        );
        lax::add(&lax::add(&lax::log(&d), &lax::log(&v)), &log_boost)
    } else {
        let samples = lax::sub(&one, &uniform(wrap(&subkey), &[], dtype, &zero, &one));
        let boost = lax::select(
            &boost_mask,
            &one,
            &lax::pow(&samples, &lax::div(&one, &alpha_orig)),
        );
        lax::mul(&lax::mul(&d, &v), &boost)
    }
}

/// JAX's `_gamma_grad`: the derivative of gamma samples in their shape
/// parameters (of log samples, that of the samples over the samples, a
/// sample that rounded to 0 taken as the smallest normal).
fn gamma_grad(sample: &Array, a: &Array, log_space: bool) -> Array {
    if !log_space {
        return lax::random_gamma_grad(a, sample);
    }
    let samples = lax::exp(sample);
    let tiny = jnp::full_like(
        &samples,
        samples.dtype_or_bool().float_info().smallest_normal,
    );
    let zero = jnp::zeros_like(&samples);
    let samples = lax::select(&lax::eq(&samples, &zero), &tiny, &samples);
    lax::div(&lax::random_gamma_grad(a, &samples), &samples)
}

/// Gamma samples of shapes `a` (already of the output's shape and dtype):
/// one key per element split from `key`, each element's sample by
/// [`gamma_one`] (JAX's `_gamma_impl`, vmapped as its CPU lowering does),
/// differentiable in `a` as JAX's ([`gamma_grad`]).
#[track_caller]
fn gamma_impl(key: Key, a: &Array, log_space: bool) -> Array {
    let shape = a.shape_or_empty().to_vec();
    let n: i64 = shape.iter().product();
    let kind = key.implementation();
    let keys = key_data(&super::split_batched(key, &[n]));
    let alphas = jnp::ravel(&lax::stop_gradient(a));
    let one = move |(k, alpha): (Array, Array)| gamma_one(k, kind, alpha, log_space);
    // As JAX: vmapped for threefry keys, a loop over the elements for the
    // others (whose bits under vmap would all come from the first key).
    let samples = match kind {
        KeyImpl::Threefry2x32 => crate::vmap::vmap(one).call((keys, alphas)),
        KeyImpl::Rbg | KeyImpl::UnsafeRbg => crate::control::map(one, (keys, alphas)),
    }
    .unwrap_or_else(Array::error);
    let samples = lax::reshape(&samples, &shape);
    // JAX's implicit reparameterization: ∂sample/∂a from
    // `random_gamma_grad` (of the sample; in log space, over it).
    let reparameterized = crate::custom::custom_jvp_symbolic(
        |(s, _a): (Array, Array)| s,
        move |(s, a): (Array, Array), t: Vec<Option<Array>>| {
            let tangent = t[1]
                .as_ref()
                .map(|ta| lax::mul(ta, &gamma_grad(&s, &a, log_space)));
            (s, vec![tangent])
        },
    );
    reparameterized
        .call((samples, a.clone()))
        .unwrap_or_else(Array::error)
}

/// `a` as `dtype`, broadcast to `shape` (default `a`'s), or an error
/// naming `function` when the shapes do not fit.
#[track_caller]
fn shaped(
    function: &str,
    a: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
) -> Result<(Array, Vec<i64>), Array> {
    if !dtype.is_float() {
        return Err(usage(
            function,
            format!("dtype must be a float dtype, got {dtype}"),
        ));
    }
    let own = a.shape_or_empty().to_vec();
    let shape = shape.map_or(own.clone(), <[i64]>::to_vec);
    if jnp::broadcast_shapes(&own, &shape).as_deref() != Some(&shape[..]) {
        return Err(usage(
            function,
            format!("the parameters' shape {own:?} does not broadcast to {shape:?}"),
        ));
    }
    Ok((
        jnp::broadcast_to(&lax::convert_element_type(a, dtype), &shape),
        shape,
    ))
}

/// `jax.random.gamma(key, a, shape, dtype)`: standard gamma samples of
/// shape parameters `a` (broadcast to `shape`, default `a`'s).
#[track_caller]
pub fn gamma(key: impl IntoKey, a: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    match shaped("gamma", a, shape, dtype) {
        Ok((a, _)) => gamma_impl(key.into_key(), &a, false),
        Err(e) => e,
    }
}

/// `jax.random.loggamma(key, a, shape, dtype)`: the logs of gamma
/// samples, computed in log space (accurate for small `a`).
#[track_caller]
pub fn loggamma(key: impl IntoKey, a: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    match shaped("loggamma", a, shape, dtype) {
        Ok((a, _)) => gamma_impl(key.into_key(), &a, true),
        Err(e) => e,
    }
}

/// `jax.random.beta(key, a, b, shape, dtype)`: `G_a / (G_a + G_b)` from
/// two log-gamma samples, scaled by their maximum.
#[track_caller]
pub fn beta(key: impl IntoKey, a: &Array, b: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    let joint = jnp::broadcast_shapes(a.shape_or_empty(), b.shape_or_empty()).unwrap_or_default();
    let shape = shape.map_or(joint, <[i64]>::to_vec);
    let (key_a, key_b) = split2(key.into_key());
    let log_a = loggamma(key_a, a, Some(&shape), dtype);
    let log_b = loggamma(key_b, b, Some(&shape), dtype);
    let log_max = lax::max(&log_a, &log_b);
    let scaled_a = lax::exp(&lax::sub(&log_a, &log_max));
    let scaled_b = lax::exp(&lax::sub(&log_b, &log_max));
    lax::div(&scaled_a, &lax::add(&scaled_a, &scaled_b))
}

/// `jax.random.dirichlet(key, alpha, shape, dtype)`: the softmax of
/// log-gamma samples of `alpha` (its last axis the categories; `shape` the
/// batch).
#[track_caller]
pub fn dirichlet(key: impl IntoKey, alpha: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    let own = alpha.shape_or_empty().to_vec();
    if own.is_empty() {
        return usage("dirichlet", "alpha needs rank 1 or more".into());
    }
    let batch = shape.map_or(own[..own.len() - 1].to_vec(), <[i64]>::to_vec);
    let full = [batch.as_slice(), &own[own.len() - 1..]].concat();
    let log_samples = loggamma(key, alpha, Some(&full), dtype);
    // jax.nn.softmax over the last axis.
    let largest = jnp::max(&log_samples, Some(&[-1]), true);
    let unnormalized = jnp::exp(&jnp::subtract(&log_samples, &lax::stop_gradient(&largest)));
    jnp::divide(&unnormalized, &jnp::sum(&unnormalized, Some(&[-1]), true))
}

/// `jax.random.chisquare(key, df, shape, dtype)`: `2 exp(loggamma(df/2))`.
#[track_caller]
pub fn chisquare(key: impl IntoKey, df: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    let df = lax::convert_element_type(df, dtype);
    let two = c(2.0, &df);
    let log_g = loggamma(key, &lax::div(&df, &two), shape, dtype);
    lax::mul(&lax::exp(&log_g), &two)
}

/// `jax.random.f(key, dfnum, dfden, shape, dtype)`: the ratio of two
/// chi-squared samples, each over its degrees of freedom.
#[track_caller]
pub fn f(
    key: impl IntoKey,
    dfnum: &Array,
    dfden: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
) -> Array {
    let joint =
        jnp::broadcast_shapes(dfnum.shape_or_empty(), dfden.shape_or_empty()).unwrap_or_default();
    let shape = shape.map_or(joint, <[i64]>::to_vec);
    let (dfnum, dfden) = (
        lax::convert_element_type(dfnum, dtype),
        lax::convert_element_type(dfden, dtype),
    );
    let (key_dfd, key_dfn) = split2(key.into_key());
    let chi2_num = chisquare(key_dfn, &dfnum, Some(&shape), dtype);
    let chi2_den = chisquare(key_dfd, &dfden, Some(&shape), dtype);
    lax::div(&lax::div(&chi2_num, &dfnum), &lax::div(&chi2_den, &dfden))
}

/// `jax.random.t(key, df, shape, dtype)`: Student's t, a normal sample
/// times `sqrt((df/2) / gamma(df/2))`.
#[track_caller]
pub fn t(key: impl IntoKey, df: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    let shape = shape.map_or(df.shape_or_empty().to_vec(), <[i64]>::to_vec);
    let df = lax::convert_element_type(df, dtype);
    let (key_n, key_g) = split2(key.into_key());
    let n = normal(key_n, &shape, dtype);
    let half_df = lax::div(&df, &c(2.0, &n));
    let g = gamma(key_g, &half_df, Some(&shape), dtype);
    jnp::multiply(&n, &jnp::sqrt(&jnp::divide(&half_df, &g)))
}

/// `jax.random.generalized_normal(key, p, shape, dtype)`: samples of
/// density ∝ `exp(-|x|^p)`: a random sign times `gamma(1/p)^(1/p)`.
#[track_caller]
pub fn generalized_normal(key: impl IntoKey, p: f64, shape: &[i64], dtype: DType) -> Array {
    let (k0, k1) = split2(key.into_key());
    let inverse = lax::convert_element_type(&Array::weak_scalar(1.0 / p), dtype);
    let g = gamma(k0, &inverse, Some(shape), dtype);
    let r = super::rademacher(k1, shape, dtype);
    jnp::multiply(&r, &jnp::power(&g, &inverse))
}

/// `jax.random.ball(key, d, p, shape, dtype)`: points uniform in the unit
/// `p`-norm ball of dimension `d` (shape `[*shape, d]`).
#[track_caller]
pub fn ball(key: impl IntoKey, d: i64, p: f64, shape: &[i64], dtype: DType) -> Array {
    let (k1, k2) = split2(key.into_key());
    let g = generalized_normal(k1, p, &[shape, &[d]].concat(), dtype);
    let e = exponential(k2, shape, dtype);
    let p_array = lax::convert_element_type(&Array::weak_scalar(p), dtype);
    let total = jnp::add(
        &jnp::sum(&jnp::power(&jnp::abs(&g), &p_array), Some(&[-1]), false),
        &e,
    );
    let radius = jnp::power(
        &total,
        &lax::convert_element_type(&Array::weak_scalar(1.0 / p), dtype),
    );
    jnp::divide(&g, &jnp::expand_dims(&radius, -1))
}
