//! `jax.random`'s counting samplers: `poisson` (Knuth's method below a
//! rate of 10, Hörmann's transformed rejection above), `binomial` (the
//! inversion method for `n·p ≤ 10`, Hörmann's BTRS above) and
//! `multinomial` (a binomial per category, conditioned on the rest), each
//! with JAX's splits, draws and ops, so the same key gives JAX's values.

use oxla_core::DType;

use super::gamma::{c, usage};
use super::{IntoKey, Key, KeyImpl, key_data, split, split2, uniform};
use crate::array::Array;
use crate::lax;
use crate::numpy as jnp;

/// `key` (its data, a loop carry) as a key.
/// The key of a loop's carried key data (of the loop's key's
/// implementation).
fn wrap(data: &Array, kind: KeyImpl) -> Key {
    Key::from_data_with_impl(data.clone(), kind).unwrap_or_else(Key::error)
}

/// Uniform draws in `[0, 1)` of `shape` and `like`'s dtype.
fn unit(key: Key, shape: &[i64], like: &Array) -> Array {
    uniform(
        key,
        shape,
        like.dtype_or_bool(),
        &c(0.0, like),
        &c(1.0, like),
    )
}

/// A loop's carry, or error arrays of `n` leaves when it failed.
fn or_errors<T>(result: crate::error::Result<T>, errors: impl FnOnce(Array) -> T) -> T {
    result.unwrap_or_else(|e| errors(Array::error(e)))
}

/// JAX's `_poisson_knuth`: counts the uniform draws whose running log
/// product stays above `-lam`, all elements drawing together until every
/// one has stopped.
fn poisson_knuth(key: Key, lam: &Array, shape: &[i64], dtype: DType) -> Array {
    let kind = key.implementation();
    let neg_lam = lax::neg(lam);
    let cond = {
        let neg_lam = neg_lam.clone();
        move |(_, _, log_prod): &(Array, Array, Array)| {
            jnp::any(&lax::gt(log_prod, &neg_lam), None, false)
        }
    };
    let body = {
        let (neg_lam, lam) = (neg_lam.clone(), lam.clone());
        let shape = shape.to_vec();
        move |(k, rng, log_prod): (Array, Array, Array)| {
            let (rng, subkey) = split2(wrap(&rng, kind));
            let k = lax::select(
                &lax::gt(&log_prod, &neg_lam),
                &lax::add(&k, &c(1.0, &k)),
                &k,
            );
            let u = unit(subkey, &shape, &lam);
            (k, key_data(&rng), lax::add(&log_prod, &lax::log(&u)))
        }
    };
    let start = (
        jnp::zeros(shape, dtype),
        key_data(&key),
        jnp::zeros(shape, DType::F32),
    );
    let (k, _, _) = or_errors(crate::control::while_loop(cond, body, start), |e| {
        (e.clone(), e.clone(), e)
    });
    lax::sub(&k, &c(1.0, &k))
}

/// The transformed-rejection loop of JAX's `_poisson_rejection` and
/// `_btrs`: every element draws `u` and `v` (uniform in `[0, 1)`, from the
/// second and third of three keys split each round) until each has
/// accepted a candidate; `propose(u, v)` gives the candidates and which
/// are accepted. Returns the accepted values (as `dtype`).
fn rejection_loop(
    key: Key,
    like: &Array,
    shape: &[i64],
    dtype: DType,
    propose: impl Fn(&Array, &Array) -> (Array, Array),
) -> Array {
    let kind = key.implementation();
    let cond =
        |(_, accepted, _): &(Array, Array, Array)| jnp::any(&lax::not(accepted), None, false);
    let body = |(k_out, accepted, key): (Array, Array, Array)| {
        let keys = split(wrap(&key, kind), 3);
        let u = unit(super::clone(&keys[1]), shape, like);
        let v = unit(super::clone(&keys[2]), shape, like);
        let (k, accept) = propose(&u, &v);
        let k_out = lax::select(&accept, &k, &k_out);
        (k_out, lax::or(&accepted, &accept), key_data(&keys[0]))
    };
    let start = (
        jnp::full(shape, -1.0, like.dtype_or_bool()),
        jnp::full(shape, 0.0, DType::Bool),
        key_data(&key),
    );
    let (k, _, _) = or_errors(crate::control::while_loop(cond, body, start), |e| {
        (e.clone(), e.clone(), e)
    });
    lax::convert_element_type(&k, dtype)
}

/// JAX's `_poisson_rejection`: Hörmann's transformed rejection, every
/// element drawing until each has accepted a sample.
fn poisson_rejection(key: Key, lam: &Array, shape: &[i64], dtype: DType) -> Array {
    let log_lam = lax::log(lam);
    let b = lax::add(&c(0.931, lam), &lax::mul(&c(2.53, lam), &lax::sqrt(lam)));
    let a = lax::add(&c(-0.059, lam), &lax::mul(&c(0.02483, lam), &b));
    let inv_alpha = lax::add(
        &c(1.1239, lam),
        &lax::div(&c(1.1328, lam), &lax::sub(&b, &c(3.4, lam))),
    );
    let v_r = lax::sub(
        &c(0.9277, lam),
        &lax::div(&c(3.6224, lam), &lax::sub(&b, &c(2.0, lam))),
    );
    rejection_loop(key, lam, shape, dtype, |u, v| {
        let u = lax::sub(u, &c(0.5, lam));
        let u_shifted = lax::sub(&c(0.5, lam), &lax::abs(&u));
        let k = lax::floor(&lax::add(
            &lax::add(
                &lax::mul(
                    &lax::add(&lax::div(&lax::mul(&c(2.0, lam), &a), &u_shifted), &b),
                    &u,
                ),
                lam,
            ),
            &c(0.43, lam),
        ));
        let s = lax::log(&lax::div(
            &lax::mul(v, &inv_alpha),
            &lax::add(&lax::div(&a, &lax::mul(&u_shifted, &u_shifted)), &b),
        ));
        let t = lax::sub(
            &lax::add(&lax::neg(lam), &lax::mul(&k, &log_lam)),
            &lax::lgamma(&lax::add(&k, &c(1.0, &k))),
        );
        let accept1 = lax::and(&lax::ge(&u_shifted, &c(0.07, lam)), &lax::le(v, &v_r));
        let reject = lax::or(
            &lax::lt(&k, &c(0.0, &k)),
            &lax::and(
                &lax::lt(&u_shifted, &c(0.013, lam)),
                &lax::gt(v, &u_shifted),
            ),
        );
        let accept2 = lax::le(&s, &t);
        let accept = lax::or(&accept1, &lax::and(&lax::not(&reject), &accept2));
        (k, accept)
    })
}

/// `jax.random.poisson(key, lam, shape, dtype)`: Poisson counts of rates
/// `lam` (broadcast to `shape`, default `lam`'s) as integers of `dtype`.
#[track_caller]
pub fn poisson(key: impl IntoKey, lam: &Array, shape: Option<&[i64]>, dtype: DType) -> Array {
    if !dtype.is_int() {
        return usage(
            "poisson",
            format!("dtype must be an integer dtype, got {dtype}"),
        );
    }
    let dtype = super::canonical(dtype);
    let own = lam.shape_or_empty().to_vec();
    let shape = shape.map_or(own.clone(), <[i64]>::to_vec);
    if jnp::broadcast_shapes(&own, &shape).as_deref() != Some(&shape[..]) {
        return usage(
            "poisson",
            format!("the rates' shape {own:?} does not broadcast to {shape:?}"),
        );
    }
    let key: Key = key.into_key();
    if key.implementation() != KeyImpl::Threefry2x32 {
        return usage(
            "poisson",
            format!(
                "poisson is only implemented for the threefry2x32 RNG, not {} (as in JAX)",
                key.implementation().name()
            ),
        );
    }
    let lam = jnp::broadcast_to(&lax::convert_element_type(lam, DType::F32), &shape);
    let use_knuth = lax::or(&jnp::isnan(&lam), &lax::lt(&lam, &c(10.0, &lam)));
    let lam_knuth = lax::select(&use_knuth, &lam, &jnp::full_like(&lam, 0.0));
    let lam_rejection = lax::select(&use_knuth, &jnp::full_like(&lam, 1e5), &lam);
    let result = lax::select(
        &use_knuth,
        &poisson_knuth(super::clone(&key), &lam_knuth, &shape, dtype),
        &poisson_rejection(key, &lam_rejection, &shape, dtype),
    );
    lax::select(
        &lax::eq(&lam, &c(0.0, &lam)),
        &jnp::zeros_like(&result),
        &result,
    )
}

/// JAX's `_stirling_approx_tail`: the tail of Stirling's series for
/// `ln k!`, tabulated up to 9.
fn stirling_approx_tail(k: &Array) -> Array {
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    let dtype = k.dtype_or_bool();
    let table = lax::convert_element_type(
        &Array::from_slice(&TAIL, &[10]).unwrap_or_else(Array::error),
        dtype,
    );
    let use_tail_values = lax::le(k, &c(9.0, k));
    let k = lax::clamp(&c(0.0, k), k, &c(9.0, k));
    let kp1 = lax::add(&k, &c(1.0, &k));
    let kp1sq = lax::mul(&kp1, &kp1);
    let approx = lax::div(
        &lax::sub(
            &c(1.0 / 12.0, &k),
            &lax::div(
                &lax::sub(&c(1.0 / 360.0, &k), &lax::div(&c(1.0 / 1260.0, &k), &kp1sq)),
                &kp1sq,
            ),
        ),
        &kp1,
    );
    let index = lax::convert_element_type(&lax::floor(&k), DType::I32);
    lax::select(
        &use_tail_values,
        &jnp::take(&table, &index, None, false),
        &approx,
    )
}

/// JAX's `_binomial_inversion`: counts geometric waiting times until
/// they pass `count`.
fn binomial_inversion(key: Key, count: &Array, prob: &Array, shape: &[i64], dtype: DType) -> Array {
    let kind = key.implementation();
    let log1minusprob = lax::log1p(&lax::neg(prob));
    let cond = {
        let count = count.clone();
        move |(_, geom_sum, _): &(Array, Array, Array)| {
            jnp::any(&lax::le(geom_sum, &count), None, false)
        }
    };
    let body = {
        let (count, prob) = (count.clone(), prob.clone());
        let shape = shape.to_vec();
        move |(num_geom, geom_sum, key): (Array, Array, Array)| {
            let (subkey, key) = split2(wrap(&key, kind));
            let num_geom = lax::select(
                &lax::le(&geom_sum, &count),
                &lax::add(&num_geom, &c(1.0, &num_geom)),
                &num_geom,
            );
            let u = unit(subkey, &shape, &prob);
            let geom = lax::ceil(&lax::div(&lax::log(&u), &log1minusprob));
            (num_geom, lax::add(&geom_sum, &geom), key_data(&key))
        }
    };
    let zeros = jnp::zeros(shape, prob.dtype_or_bool());
    let start = (zeros.clone(), zeros, key_data(&key));
    let (k, _, _) = or_errors(crate::control::while_loop(cond, body, start), |e| {
        (e.clone(), e.clone(), e)
    });
    lax::convert_element_type(&lax::sub(&k, &c(1.0, &k)), dtype)
}

/// JAX's `_btrs`: Hörmann's transformed rejection with squeeze for the
/// binomial.
fn btrs(key: Key, count: &Array, prob: &Array, shape: &[i64], dtype: DType) -> Array {
    let one = c(1.0, prob);
    let half = c(0.5, prob);
    let q = lax::sub(&one, prob);
    let stddev = lax::sqrt(&lax::mul(&lax::mul(count, prob), &q));
    let b = lax::add(&c(1.15, prob), &lax::mul(&c(2.53, prob), &stddev));
    let a = lax::add(
        &lax::add(&c(-0.0873, prob), &lax::mul(&c(0.0248, prob), &b)),
        &lax::mul(&c(0.01, prob), prob),
    );
    let cc = lax::add(&lax::mul(count, prob), &half);
    let v_r = lax::sub(&c(0.92, prob), &lax::div(&c(4.2, prob), &b));
    let r = lax::div(prob, &q);
    let alpha = lax::mul(
        &lax::add(&c(2.83, prob), &lax::div(&c(5.1, prob), &b)),
        &stddev,
    );
    let m = lax::floor(&lax::mul(&lax::add(count, &one), prob));
    rejection_loop(key, prob, shape, dtype, |u, v| {
        let u = lax::sub(u, &half);
        let us = lax::sub(&half, &lax::abs(&u));
        let accept1 = lax::and(&lax::ge(&us, &c(0.07, prob)), &lax::le(v, &v_r));
        let k = lax::floor(&lax::add(
            &lax::mul(
                &lax::add(&lax::div(&lax::mul(&c(2.0, prob), &a), &us), &b),
                &u,
            ),
            &cc,
        ));
        let reject = lax::or(&lax::lt(&k, &c(0.0, &k)), &lax::gt(&k, count));
        let v = lax::log(&lax::div(
            &lax::mul(v, &alpha),
            &lax::add(&lax::div(&a, &lax::mul(&us, &us)), &b),
        ));
        let n_m_1 = lax::add(&lax::sub(count, &m), &one);
        let n_k_1 = lax::add(&lax::sub(count, &k), &one);
        // JAX's bound, summed left to right as Python does.
        let added = [
            lax::mul(&lax::add(count, &one), &lax::log(&lax::div(&n_m_1, &n_k_1))),
            lax::mul(
                &lax::add(&k, &half),
                &lax::log(&lax::div(&lax::mul(&r, &n_k_1), &lax::add(&k, &one))),
            ),
            stirling_approx_tail(&m),
            stirling_approx_tail(&lax::sub(count, &m)),
        ];
        let first = lax::mul(
            &lax::add(&m, &half),
            &lax::log(&lax::div(&lax::add(&m, &one), &lax::mul(&r, &n_m_1))),
        );
        let ub = added.iter().fold(first, |acc, term| lax::add(&acc, term));
        let ub = lax::sub(
            &lax::sub(&ub, &stirling_approx_tail(&k)),
            &stirling_approx_tail(&lax::sub(count, &k)),
        );
        let accept2 = lax::le(&v, &ub);
        let accept = lax::or(&accept1, &lax::and(&lax::not(&reject), &accept2));
        (k, accept)
    })
}

/// JAX's `_binomial` on `count` and `prob` already of the float dtype.
fn binomial_impl(key: Key, count: &Array, prob: &Array, shape: &[i64], dtype: DType) -> Array {
    let count = jnp::broadcast_to(
        &lax::convert_element_type(count, prob.dtype_or_bool()),
        shape,
    );
    let prob = jnp::broadcast_to(prob, shape);
    let p_lt_half = lax::lt(&prob, &c(0.5, &prob));
    let q = lax::select(&p_lt_half, &prob, &lax::sub(&c(1.0, &prob), &prob));
    let count_nan_or_neg = lax::or(&jnp::isnan(&count), &lax::lt(&count, &c(0.0, &count)));
    let count_inf = jnp::isinf(&count);
    let q_is_nan = jnp::isnan(&q);
    let q_l_0 = lax::lt(&q, &c(0.0, &q));
    let q = lax::select(&lax::or(&q_is_nan, &q_l_0), &jnp::full_like(&q, 0.01), &q);
    let use_inversion = lax::or(
        &count_nan_or_neg,
        &lax::le(&lax::mul(&count, &q), &c(10.0, &q)),
    );
    let count = lax::floor(&count);
    let count_inv = lax::select(&use_inversion, &count, &jnp::full_like(&count, 0.0));
    let count_btrs = lax::select(&use_inversion, &jnp::full_like(&count, 1e4), &count);
    let q_btrs = lax::select(&use_inversion, &jnp::full_like(&q, 0.5), &q);
    let samples = lax::select(
        &use_inversion,
        &binomial_inversion(super::clone(&key), &count_inv, &q, shape, dtype),
        &btrs(key, &count_btrs, &q_btrs, shape, dtype),
    );
    let invalid = lax::or(&lax::or(&q_l_0, &q_is_nan), &count_nan_or_neg);
    let samples = lax::select(&invalid, &jnp::full_like(&samples, f64::NAN), &samples);
    let samples = lax::select(
        &lax::and(&count_inf, &lax::not(&invalid)),
        &jnp::full_like(&samples, f64::INFINITY),
        &samples,
    );
    let keep = lax::or(
        &lax::or(&p_lt_half, &count_nan_or_neg),
        &lax::or(&q_is_nan, &count_inf),
    );
    lax::select(
        &keep,
        &samples,
        &lax::sub(&lax::convert_element_type(&count, dtype), &samples),
    )
}

/// `jax.random.binomial(key, n, p, shape, dtype)`: successes in `n` trials
/// of probability `p` (broadcast together to `shape`, default their
/// broadcast shape), as floats of `dtype`; NaN for a negative or NaN `n`
/// or an invalid `p`, infinity for an infinite `n`.
#[track_caller]
pub fn binomial(
    key: impl IntoKey,
    n: &Array,
    p: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
) -> Array {
    if !dtype.is_float() {
        return usage(
            "binomial",
            format!("dtype must be a float dtype, got {dtype}"),
        );
    }
    let dtype = super::canonical(dtype);
    let (ns, ps) = (n.shape_or_empty().to_vec(), p.shape_or_empty().to_vec());
    let Some(both) = jnp::broadcast_shapes(&ns, &ps) else {
        return usage(
            "binomial",
            format!("n's shape {ns:?} and p's {ps:?} do not broadcast together"),
        );
    };
    let shape = shape.map_or(both.clone(), <[i64]>::to_vec);
    if jnp::broadcast_shapes(&both, &shape).as_deref() != Some(&shape[..]) {
        return usage(
            "binomial",
            format!("the parameters' shape {both:?} does not broadcast to {shape:?}"),
        );
    }
    let prob = jnp::to_inexact(p);
    binomial_impl(key.into_key(), n, &prob, &shape, dtype)
}

/// `jax.random.multinomial(key, n, p, shape, dtype)`: counts of `n` trials
/// over the outcomes along `p`'s last axis (`shape` the result's shape,
/// outcomes last; default `p`'s), as floats of `dtype`: one binomial per
/// outcome, of the trials left, with the probability conditioned on the
/// outcomes after it, as JAX's scan.
#[track_caller]
pub fn multinomial(
    key: impl IntoKey,
    n: &Array,
    p: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
) -> Array {
    if !dtype.is_float() {
        return usage(
            "multinomial",
            format!("dtype must be a float dtype, got {dtype}"),
        );
    }
    let dtype = super::canonical(dtype);
    let ps = p.shape_or_empty().to_vec();
    if ps.is_empty() {
        return usage(
            "multinomial",
            "p must have an outcome axis (its last)".to_string(),
        );
    }
    let shape = shape.map_or(ps.clone(), <[i64]>::to_vec);
    let batch = &shape[..shape.len().saturating_sub(1)];
    let fits = jnp::broadcast_shapes(&ps, &shape).as_deref() == Some(&shape[..])
        && jnp::broadcast_shapes(n.shape_or_empty(), batch).as_deref() == Some(batch);
    if shape.is_empty() || !fits {
        return usage(
            "multinomial",
            format!(
                "n of shape {:?} and p of shape {ps:?} do not broadcast to {shape:?}",
                n.shape_or_empty()
            ),
        );
    }
    let promoted = jnp::promote_args(&[n, p]);
    let n = jnp::broadcast_to(&jnp::to_inexact(&promoted[0]), batch);
    let p = jnp::broadcast_to(&jnp::to_inexact(&promoted[1]), &shape);
    let p = jnp::moveaxis(&p, -1, 0);
    let remaining = lax::cumsum(&p, 0, true);
    let ratios = lax::div(
        &p,
        &jnp::where_(
            &lax::eq(&remaining, &c(0.0, &remaining)),
            &c(1.0, &remaining),
            &remaining,
        ),
    );
    let outcomes = shape[shape.len() - 1] as usize;
    let key = key.into_key();
    let kind = key.implementation();
    let keys: Vec<Array> = split(key, outcomes).iter().map(key_data).collect();
    let keys = jnp::stack(&keys.iter().collect::<Vec<_>>(), 0);
    let step = |remainder: Array, (ratio, key): (Array, Array)| {
        let clipped = lax::clamp(&c(0.0, &ratio), &ratio, &c(1.0, &ratio));
        let count = binomial_impl(
            wrap(&key, kind),
            &remainder,
            &clipped,
            remainder.shape_or_empty(),
            remainder.dtype_or_bool(),
        );
        (lax::sub(&remainder, &count), count)
    };
    match crate::control::scan(
        step,
        n,
        (ratios, keys),
        crate::control::ScanOptions::default(),
    ) {
        Ok((_, counts)) => lax::convert_element_type(&jnp::moveaxis(&counts, 0, -1), dtype),
        Err(e) => Array::error(e),
    }
}
