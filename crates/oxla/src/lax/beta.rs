//! `lax.betainc`: the regularized incomplete beta function I_x(a, b), as
//! JAX's `regularized_incomplete_beta_impl` computes it: the continued
//! fraction of DLMF 8.17.22 by the modified Lentz method (XLA's
//! `LentzThompsonBarnettAlgorithm`, a `while_loop` until every element has
//! converged or 200 iterations in f32, 600 in f64), on the side of the
//! symmetry `I_x(a, b) = 1 − I_{1−x}(b, a)` where it converges fast, with
//! JAX's answers at the edges. Differentiable in `x` only, as in JAX.

use oxla_core::DType;

use super::special::up_and_broadcast_all;
use crate::array::Array;
use crate::lax;

/// A constant of `like`'s dtype and shape.
fn c(value: f64, like: &Array) -> Array {
    crate::numpy::full_like(like, value)
}

/// The `n`-th partial numerator of the continued fraction (DLMF 8.17.23):
/// 1 for the first, then alternating even and odd terms.
fn partial_numerator(iteration: &Array, a: &Array, b: &Array, x: &Array) -> Array {
    let shape = a.shape_or_empty().to_vec();
    let it = crate::numpy::broadcast_to(iteration, &shape);
    let int_like = |v: i64| crate::numpy::full_like(&it, v as f64);
    let is_even = lax::eq(&lax::rem(&it, &int_like(2)), &int_like(0));
    let is_one = lax::eq(&it, &int_like(1));
    let m = crate::numpy::floor_divide(&lax::sub(&it, &int_like(1)), &int_like(2));
    let m_is_zero = lax::eq(&m, &int_like(0));
    let m = lax::convert_element_type(&m, a.dtype_or_bool());
    let (one, two) = (c(1.0, a), c(2.0, a));
    let a_2m = lax::add(a, &lax::mul(&two, &m));
    let zero_numerator = lax::div(&lax::mul(&lax::neg(&lax::add(a, b)), x), &lax::add(a, &one));
    let even_numerator = lax::select(
        &m_is_zero,
        &zero_numerator,
        &lax::div(
            &lax::mul(
                &lax::mul(&lax::neg(&lax::add(a, &m)), &lax::add(&lax::add(a, b), &m)),
                x,
            ),
            &lax::mul(&a_2m, &lax::add(&a_2m, &one)),
        ),
    );
    let odd_numerator = lax::div(
        &lax::mul(&lax::mul(&m, &lax::sub(b, &m)), x),
        &lax::mul(&lax::sub(&a_2m, &one), &a_2m),
    );
    let numerator = lax::select(&is_even, &even_numerator, &odd_numerator);
    lax::select(&is_one, &c(1.0, x), &numerator)
}

/// The `n`-th partial denominator: 0 for the first, then 1.
fn partial_denominator(iteration: &Array, x: &Array) -> Array {
    let it = crate::numpy::broadcast_to(iteration, x.shape_or_empty());
    let zero = crate::numpy::full_like(&it, 0.0);
    lax::select(&lax::eq(&it, &zero), &c(0.0, x), &c(1.0, x))
}

/// XLA's `LentzThompsonBarnettAlgorithm` for the incomplete beta's
/// continued fraction.
fn continued_fraction(a: &Array, b: &Array, x: &Array, dtype: DType) -> Array {
    let eps = dtype.float_info().eps();
    let iterations = if dtype == DType::F64 { 600 } else { 200 };
    let small = c(eps / 2.0, x);
    let threshold = c(eps / 2.0, x);
    let first = partial_denominator(&Array::weak_scalar(0i64), x);
    let h = lax::select(&lax::lt(&lax::abs(&first), &small), &small, &first);
    let start = (
        lax::convert_element_type(&Array::weak_scalar(1i64), DType::I32),
        Array::from_slice(&[true], &[]).unwrap_or_else(Array::error),
        h.clone(),
        c(0.0, &h),
        h,
    );
    let limit = lax::convert_element_type(&Array::weak_scalar(iterations as i64), DType::I32);
    let cond = move |(i, unconverged, _, _, _): &(Array, Array, Array, Array, Array)| {
        lax::and(&lax::lt(i, &limit), unconverged)
    };
    let body = |(i, _, c0, d0, h0): (Array, Array, Array, Array, Array)| {
        let numerator = partial_numerator(&i, a, b, x);
        let denominator = partial_denominator(&i, x);
        let cc = lax::add(&denominator, &lax::div(&numerator, &c0));
        let cc = lax::select(&lax::lt(&lax::abs(&cc), &small), &small, &cc);
        let d = lax::add(&denominator, &lax::mul(&numerator, &d0));
        let d = lax::select(&lax::lt(&lax::abs(&d), &small), &small, &d);
        let d = lax::div(&c(1.0, &d), &d);
        let delta = lax::mul(&cc, &d);
        let h = lax::mul(&h0, &delta);
        let far = lax::ge(&lax::abs(&lax::sub(&delta, &c(1.0, &delta))), &threshold);
        let next = lax::add(
            &i,
            &lax::convert_element_type(&Array::weak_scalar(1i64), DType::I32),
        );
        (next, crate::numpy::any(&far, None, false), cc, d, h)
    };
    match crate::control::while_loop(cond, body, start) {
        Ok((_, _, _, _, h)) => h,
        Err(e) => Array::error(e),
    }
}

/// JAX's `regularized_incomplete_beta_impl` on broadcast operands of one
/// float dtype.
fn betainc_value(a: &Array, b: &Array, x: &Array) -> Array {
    let dtype = a.dtype_or_bool();
    let (zero, one, inf) = (c(0.0, a), c(1.0, a), c(f64::INFINITY, a));
    let a_is_zero = lax::or(&lax::eq(a, &zero), &lax::eq(b, &inf));
    let b_is_zero = lax::or(&lax::eq(b, &zero), &lax::eq(a, &inf));
    let x_is_zero = lax::eq(x, &zero);
    let x_is_one = lax::eq(x, &one);
    let is_nan = lax::or(&lax::or(&lax::ne(a, a), &lax::ne(b, b)), &lax::ne(x, x));
    let result_is_zero = lax::or(
        &lax::and(&b_is_zero, &lax::not(&x_is_one)),
        &lax::and(&a_is_zero, &x_is_zero),
    );
    let result_is_one = lax::or(
        &lax::and(&a_is_zero, &lax::not(&x_is_zero)),
        &lax::and(&b_is_zero, &x_is_one),
    );
    let negative = lax::or(
        &lax::or(&lax::lt(a, &zero), &lax::lt(b, &zero)),
        &lax::or(&lax::lt(x, &zero), &lax::gt(x, &one)),
    );
    let result_is_nan = lax::or(
        &negative,
        &lax::or(&lax::and(&a_is_zero, &b_is_zero), &is_nan),
    );
    let converges_rapidly = lax::lt(
        x,
        &lax::div(&lax::add(a, &one), &lax::add(&lax::add(a, b), &c(2.0, b))),
    );
    let (a, b, x) = (
        lax::select(&converges_rapidly, a, b),
        lax::select(&converges_rapidly, b, a),
        lax::select(&converges_rapidly, x, &lax::sub(&one, x)),
    );
    let fraction = continued_fraction(&a, &b, &x, dtype);
    let very_small = c(dtype.float_info().smallest_normal * 2.0, &a);
    let lbeta_small_a = lax::sub(&lax::lgamma(&b), &lax::lgamma(&lax::add(&a, &b)));
    let lbeta = lax::add(&lax::lgamma(&a), &lbeta_small_a);
    let log1m_x = lax::log1p(&lax::neg(&x));
    let factor = lax::select(
        &lax::lt(&a, &very_small),
        &lax::exp(&lax::sub(&lax::mul(&log1m_x, &b), &lbeta_small_a)),
        &lax::div(
            &lax::exp(&lax::sub(
                &lax::add(&lax::mul(&lax::log(&x), &a), &lax::mul(&log1m_x, &b)),
                &lbeta,
            )),
            &a,
        ),
    );
    let result = lax::mul(&fraction, &factor);
    let result = lax::select(&converges_rapidly, &result, &lax::sub(&one, &result));
    let result = lax::select(&result_is_zero, &zero, &result);
    let result = lax::select(&result_is_one, &one, &result);
    lax::select(&result_is_nan, &c(f64::NAN, &a), &result)
}

/// JAX's `betainc_gradx`: ∂I_x(a, b)/∂x = x^(a−1) (1−x)^(b−1) / B(a, b).
fn betainc_dx(a: &Array, b: &Array, x: &Array) -> Array {
    let lbeta = lax::sub(
        &lax::add(&lax::lgamma(a), &lax::lgamma(b)),
        &lax::lgamma(&lax::add(a, b)),
    );
    let one = c(1.0, a);
    lax::exp(&lax::sub(
        &lax::add(
            &lax::mul(&lax::sub(b, &one), &lax::log1p(&lax::neg(x))),
            &lax::mul(&lax::sub(a, &one), &lax::log(x)),
        ),
        &lbeta,
    ))
}

/// `lax.betainc(a, b, x)`: the regularized incomplete beta function
/// I_x(a, b), elementwise over the broadcast operands (f16 and bf16
/// computed in f32). NaN outside `a, b ≥ 0`, `0 ≤ x ≤ 1`. Its derivative in
/// `x` is JAX's; in `a` or `b` it is an error, as in JAX.
#[track_caller]
pub fn betainc(a: &Array, b: &Array, x: &Array) -> Array {
    up_and_broadcast_all("betainc", &[a, b, x], |v| {
        let f = crate::custom::custom_jvp_symbolic(
            |(a, b, x): (Array, Array, Array)| betainc_value(&a, &b, &x),
            |(a, b, x): (Array, Array, Array), t: Vec<Option<Array>>| {
                let value = betainc_value(&a, &b, &x);
                let tangent = if t[0].is_some() || t[1].is_some() {
                    Some(Array::error(crate::error::Error::InvalidArgument(
                        "lax.betainc: the gradient with respect to a and b is not supported (as \
                         in JAX)"
                            .into(),
                    )))
                } else {
                    t[2].as_ref()
                        .map(|tx| lax::mul(tx, &betainc_dx(&a, &b, &x)))
                };
                (value, vec![tangent])
            },
        );
        f.call((v[0].clone(), v[1].clone(), v[2].clone()))
            .unwrap_or_else(Array::error)
    })
}
