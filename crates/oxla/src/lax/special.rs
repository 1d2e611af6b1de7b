//! The regularized incomplete gamma functions and their derivatives
//! (`lax.igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`), as
//! JAX's `lax/special.py` computes them: a power series below the
//! diagonal `x = a` and a continued fraction above it, each a
//! `while_loop` that runs until every element has converged, with JAX's
//! ops in JAX's order. `igamma` and `igammac` carry JAX's derivatives
//! (in `x` in closed form, in `a` by `igamma_grad_a`).

use oxla_core::DType;

use crate::array::Array;
use crate::lax;

/// What a series or continued fraction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The function's value.
    Value,
    /// Its derivative in `a`.
    Derivative,
    /// The derivative of a gamma sample in its shape parameter.
    SampleDerivative,
}

/// A constant of `like`'s dtype.
fn c(value: f64, like: &Array) -> Array {
    crate::numpy::full_like(like, value)
}

/// Whether any element of `predicate` is true.
fn any(predicate: &Array) -> Array {
    crate::numpy::any(predicate, None, false)
}

/// `x` of `dtype`'s machine epsilon and largest finite value.
fn eps_and_max(dtype: DType) -> (f64, f64) {
    let info = dtype.float_info();
    (info.eps(), info.max)
}

/// JAX's `_igamma_series`.
fn igamma_series(ax: &Array, x: &Array, a: &Array, enabled: &Array, mode: Mode) -> Array {
    let (eps, _) = eps_and_max(a.dtype_or_bool());
    let body = |v: Vec<Array>| -> Vec<Array> {
        let (enabled, r0, c0, ans0, x0, dc0, dans0) =
            (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]);
        let r = lax::add(r0, &c(1.0, r0));
        let dc_da = lax::sub(
            &lax::mul(dc0, &lax::div(x0, &r)),
            &lax::div(&lax::mul(c0, x0), &lax::mul(&r, &r)),
        );
        let dans_da = lax::add(dans0, &dc_da);
        let cc = lax::mul(c0, &lax::div(x0, &r));
        let ans = lax::add(ans0, &cc);
        let conditional = match mode {
            Mode::Value => lax::and(enabled, &lax::gt(&lax::div(&cc, &ans), &c(eps, &cc))),
            Mode::Derivative | Mode::SampleDerivative => lax::and(
                enabled,
                &lax::gt(&lax::abs(&lax::div(&dc_da, &dans_da)), &c(eps, &dc_da)),
            ),
        };
        vec![
            conditional,
            lax::select(enabled, &r, r0),
            lax::select(enabled, &cc, c0),
            lax::select(enabled, &ans, ans0),
            lax::select(enabled, x0, x0),
            lax::select(enabled, &dc_da, dc0),
            lax::select(enabled, &dans_da, dans0),
        ]
    };
    let init = vec![
        enabled.clone(),
        a.clone(),
        c(1.0, a),
        c(1.0, a),
        x.clone(),
        c(0.0, a),
        c(0.0, a),
    ];
    let vals = match crate::control::while_loop(|v: &Vec<Array>| any(&v[0]), body, init) {
        Ok(v) => v,
        Err(e) => return Array::error(e),
    };
    let (ans, dans_da) = (&vals[3], &vals[6]);
    if mode == Mode::Value {
        return lax::div(&lax::mul(ans, ax), a);
    }
    let dlogax_da = lax::sub(&lax::log(x), &lax::digamma(&lax::add(a, &c(1.0, a))));
    match mode {
        Mode::Derivative => lax::div(
            &lax::mul(ax, &lax::add(&lax::mul(ans, &dlogax_da), dans_da)),
            a,
        ),
        Mode::SampleDerivative | Mode::Value => lax::div(
            &lax::mul(&lax::neg(&lax::add(dans_da, &lax::mul(ans, &dlogax_da))), x),
            a,
        ),
    }
}

/// JAX's `_igammac_continued_fraction`.
fn igammac_continued_fraction(
    ax: &Array,
    x: &Array,
    a: &Array,
    enabled: &Array,
    mode: Mode,
) -> Array {
    let (eps, _) = eps_and_max(a.dtype_or_bool());
    let body = |v: Vec<Array>| -> Vec<Array> {
        let enabled = &v[0];
        let cc = lax::add(&v[5], &c(1.0, &v[5]));
        let y = lax::add(&v[3], &c(1.0, &v[3]));
        let z = lax::add(&v[4], &c(2.0, &v[4]));
        // `c` is a scalar (JAX's `_const(x, 0)`), the rest arrays.
        let yc = crate::numpy::multiply(&y, &cc);
        let (pkm1, qkm1, pkm2, qkm2) = (&v[6], &v[7], &v[8], &v[9]);
        let (dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) =
            (&v[10], &v[11], &v[12], &v[13], &v[14]);
        let pk = lax::sub(&lax::mul(pkm1, &z), &lax::mul(pkm2, &yc));
        let qk = lax::sub(&lax::mul(qkm1, &z), &lax::mul(qkm2, &yc));
        let qk_is_nonzero = lax::ne(&qk, &c(0.0, &qk));
        let r = lax::div(&pk, &qk);
        let t = lax::select(
            &qk_is_nonzero,
            &lax::abs(&lax::div(&lax::sub(&v[1], &r), &r)),
            &c(1.0, &r),
        );
        let ans = lax::select(&qk_is_nonzero, &r, &v[1]);
        let dpk_da = lax::add(
            &lax::sub(
                &lax::sub(&lax::mul(dpkm1_da, &z), pkm1),
                &lax::mul(dpkm2_da, &yc),
            ),
            &crate::numpy::multiply(pkm2, &cc),
        );
        let dqk_da = lax::add(
            &lax::sub(
                &lax::sub(&lax::mul(dqkm1_da, &z), qkm1),
                &lax::mul(dqkm2_da, &yc),
            ),
            &crate::numpy::multiply(qkm2, &cc),
        );
        let dans_da_new = lax::select(
            &qk_is_nonzero,
            &lax::div(&lax::sub(&dpk_da, &lax::mul(&ans, &dqk_da)), &qk),
            dans_da,
        );
        let grad_conditional = lax::select(
            &qk_is_nonzero,
            &lax::abs(&lax::sub(&dans_da_new, dans_da)),
            &c(1.0, dans_da),
        );
        let rescale = lax::gt(&lax::abs(&pk), &crate::numpy::reciprocal(&c(eps, &pk)));
        let scaled = |value: &Array| lax::select(&rescale, &lax::mul(value, &c(eps, value)), value);
        let (npkm2, npkm1, nqkm2, nqkm1) = (scaled(pkm1), scaled(&pk), scaled(qkm1), scaled(&qk));
        let (ndpkm2, ndqkm2, ndpkm1, ndqkm1) = (
            scaled(dpkm1_da),
            scaled(dqkm1_da),
            scaled(&dpk_da),
            scaled(&dqk_da),
        );
        let conditional = match mode {
            Mode::Value => lax::and(enabled, &lax::gt(&t, &c(eps, &t))),
            Mode::Derivative | Mode::SampleDerivative => lax::and(
                enabled,
                &lax::gt(&grad_conditional, &c(eps, &grad_conditional)),
            ),
        };
        let keep = |new: &Array, old: &Array| lax::select(enabled, new, old);
        vec![
            conditional,
            keep(&ans, &v[1]),
            keep(&t, &v[2]),
            keep(&y, &v[3]),
            keep(&z, &v[4]),
            cc,
            keep(&npkm1, &v[6]),
            keep(&nqkm1, &v[7]),
            keep(&npkm2, &v[8]),
            keep(&nqkm2, &v[9]),
            keep(&ndpkm2, &v[10]),
            keep(&ndqkm2, &v[11]),
            keep(&ndpkm1, &v[12]),
            keep(&ndqkm1, &v[13]),
            keep(&dans_da_new, &v[14]),
        ]
    };
    let y = lax::sub(&c(1.0, a), a);
    let z = lax::add(&lax::add(x, &y), &c(1.0, x));
    let pkm1 = lax::add(x, &c(1.0, x));
    let qkm1 = lax::mul(&z, x);
    let ans = lax::div(&pkm1, &qkm1);
    let dqkm1_da = lax::neg(x);
    let dans_da = lax::div(&lax::sub(&c(0.0, x), &lax::mul(&ans, &dqkm1_da)), &qkm1);
    let init = vec![
        enabled.clone(),
        ans,
        c(1.0, x),
        y,
        z,
        crate::numpy::scalar_like(x, 0.0),
        pkm1,
        qkm1,
        c(1.0, x),
        x.clone(),
        c(0.0, x),
        c(0.0, x),
        c(0.0, x),
        dqkm1_da,
        dans_da,
    ];
    let cond = |v: &Vec<Array>| lax::and(&lax::lt(&v[5], &c(2000.0, &v[5])), &any(&v[0]));
    let vals = match crate::control::while_loop(cond, body, init) {
        Ok(v) => v,
        Err(e) => return Array::error(e),
    };
    let ans = &vals[1];
    if mode == Mode::Value {
        return lax::mul(ans, ax);
    }
    let dans_da = &vals[14];
    let dlogax_da = lax::sub(&lax::log(x), &lax::digamma(a));
    match mode {
        Mode::Derivative => lax::mul(ax, &lax::add(&lax::mul(ans, &dlogax_da), dans_da)),
        Mode::SampleDerivative | Mode::Value => {
            lax::mul(&lax::neg(&lax::add(dans_da, &lax::mul(ans, &dlogax_da))), x)
        }
    }
}

/// `a` and `x` promoted to a common float type (f32 for f16 and bf16, as
/// JAX's `_up_and_broadcast`) and broadcast; `f` on them; the result in
/// the operands' type.
#[track_caller]
fn up_and_broadcast(
    function: &str,
    a: &Array,
    x: &Array,
    f: impl Fn(&Array, &Array) -> Array,
) -> Array {
    up_and_broadcast_all(function, &[a, x], |v| f(&v[0], &v[1]))
}

/// [`up_and_broadcast`] of any number of operands.
#[track_caller]
pub(super) fn up_and_broadcast_all(
    function: &str,
    operands: &[&Array],
    f: impl Fn(&[Array]) -> Array,
) -> Array {
    let promoted = crate::numpy::promote_args(operands);
    let dtype = promoted[0].dtype_or_bool();
    if !dtype.is_float() {
        return Array::error(super::usage_error(
            function,
            format!("takes floating-point operands, got {dtype}"),
        ));
    }
    let wide = if matches!(dtype, DType::F16 | DType::BF16) {
        DType::F32
    } else {
        dtype
    };
    let shape = promoted.iter().try_fold(Vec::new(), |acc: Vec<i64>, p| {
        crate::numpy::broadcast_shapes(&acc, p.shape_or_empty())
    });
    let Some(shape) = shape else {
        let shapes: Vec<&[i64]> = promoted.iter().map(Array::shape_or_empty).collect();
        return Array::error(super::usage_error(
            function,
            format!("shapes {shapes:?} do not broadcast"),
        ));
    };
    let prepared: Vec<Array> = promoted
        .iter()
        .map(|v| crate::numpy::broadcast_to(&lax::convert_element_type(v, wide), &shape))
        .collect();
    lax::convert_element_type(&f(&prepared), dtype)
}

/// The common start of the four functions: `ax = exp(a log x - x -
/// lgamma(a))` and whether it underflowed.
fn ax_and_underflow(a: &Array, x: &Array) -> (Array, Array) {
    let (_, max) = eps_and_max(a.dtype_or_bool());
    let ax = lax::sub(&lax::sub(&lax::mul(a, &lax::log(x)), x), &lax::lgamma(a));
    let underflow = lax::lt(&ax, &lax::neg(&lax::log(&c(max, &ax))));
    (lax::exp(&ax), underflow)
}

/// Whether either operand is NaN.
fn either_nan(a: &Array, x: &Array) -> Array {
    lax::or(&lax::ne(a, a), &lax::ne(x, x))
}

/// JAX's `igamma_impl`.
fn igamma_value(a: &Array, x: &Array) -> Array {
    let is_nan = either_nan(a, x);
    let x_is_infinity = lax::eq(x, &c(f64::INFINITY, x));
    let a_is_zero = lax::eq(a, &c(0.0, a));
    let x_is_zero = lax::eq(x, &c(0.0, x));
    let domain_error = [
        lax::lt(x, &c(0.0, x)),
        lax::lt(a, &c(0.0, a)),
        lax::and(&a_is_zero, &x_is_zero),
        is_nan,
    ]
    .into_iter()
    .reduce(|p, q| lax::or(&p, &q))
    .unwrap_or_else(|| c(0.0, x));
    let use_igammac = lax::and(&lax::ge(x, &c(1.0, x)), &lax::gt(x, a));
    let (ax, underflow) = ax_and_underflow(a, x);
    let disabled = [
        x_is_zero.clone(),
        domain_error.clone(),
        underflow,
        x_is_infinity.clone(),
    ]
    .into_iter()
    .reduce(|p, q| lax::or(&p, &q))
    .unwrap_or_else(|| c(0.0, x));
    let enabled = lax::not(&disabled);
    let output = lax::select(
        &use_igammac,
        &lax::sub(
            &c(1.0, a),
            &igammac_continued_fraction(&ax, x, a, &lax::and(&enabled, &use_igammac), Mode::Value),
        ),
        &igamma_series(
            &ax,
            x,
            a,
            &lax::and(&enabled, &lax::not(&use_igammac)),
            Mode::Value,
        ),
    );
    let output = lax::select(&x_is_zero, &c(0.0, a), &output);
    let output = lax::select(&x_is_infinity, &c(1.0, a), &output);
    lax::select(&domain_error, &c(f64::NAN, a), &output)
}

/// JAX's `igammac_impl`.
fn igammac_value(a: &Array, x: &Array) -> Array {
    let is_nan = either_nan(a, x);
    let a_is_zero = lax::eq(a, &c(0.0, a));
    let x_is_zero = lax::eq(x, &c(0.0, x));
    let x_is_infinity = lax::eq(x, &c(f64::INFINITY, x));
    let domain_error = [
        lax::lt(x, &c(0.0, x)),
        lax::lt(a, &c(0.0, a)),
        lax::and(&a_is_zero, &x_is_zero),
        is_nan,
    ]
    .into_iter()
    .reduce(|p, q| lax::or(&p, &q))
    .unwrap_or_else(|| c(0.0, x));
    let use_igamma = lax::or(&lax::lt(x, &c(1.0, x)), &lax::lt(x, a));
    let (ax, underflow) = ax_and_underflow(a, x);
    let disabled = [
        domain_error.clone(),
        underflow,
        x_is_infinity.clone(),
        a_is_zero.clone(),
    ]
    .into_iter()
    .reduce(|p, q| lax::or(&p, &q))
    .unwrap_or_else(|| c(0.0, x));
    let enabled = lax::not(&disabled);
    let series = igamma_series(&ax, x, a, &lax::and(&enabled, &use_igamma), Mode::Value);
    let fraction = igammac_continued_fraction(
        &ax,
        x,
        a,
        &lax::and(&enabled, &lax::not(&use_igamma)),
        Mode::Value,
    );
    let output = lax::select(&use_igamma, &lax::sub(&c(1.0, a), &series), &fraction);
    let output = lax::select(
        &lax::or(&x_is_infinity, &a_is_zero),
        &c(0.0, &output),
        &output,
    );
    lax::select(&domain_error, &c(f64::NAN, a), &output)
}

/// JAX's `igamma_grad_a_impl` and `random_gamma_grad_impl`: the same
/// branches in `Derivative` or `SampleDerivative` mode.
fn grad_a(a: &Array, x: &Array, mode: Mode) -> Array {
    let is_nan = either_nan(a, x);
    let x_is_zero = lax::eq(x, &c(0.0, x));
    let domain_error = lax::or(&lax::lt(x, &c(0.0, x)), &lax::le(a, &c(0.0, a)));
    let use_igammac = lax::and(&lax::gt(x, &c(1.0, x)), &lax::gt(x, a));
    let (ax, underflow) = ax_and_underflow(a, x);
    let disabled = lax::or(
        &lax::or(&lax::or(&x_is_zero, &domain_error), &underflow),
        &is_nan,
    );
    let enabled = lax::not(&disabled);
    let output = lax::select(
        &use_igammac,
        &lax::neg(&igammac_continued_fraction(
            &ax,
            x,
            a,
            &lax::and(&enabled, &use_igammac),
            mode,
        )),
        &igamma_series(
            &ax,
            x,
            a,
            &lax::and(&enabled, &lax::not(&use_igammac)),
            mode,
        ),
    );
    let output = lax::select(&x_is_zero, &c(0.0, &output), &output);
    lax::select(&lax::or(&domain_error, &is_nan), &c(f64::NAN, a), &output)
}

/// `∂P(a, x)/∂x = exp(-x + (a - 1) log x - lgamma(a))`.
fn igamma_dx(a: &Array, x: &Array) -> Array {
    let log_density = lax::sub(
        &lax::add(
            &lax::neg(x),
            &lax::mul(&lax::sub(a, &c(1.0, a)), &lax::log(x)),
        ),
        &lax::lgamma(a),
    );
    lax::exp(&log_density)
}

/// `lax.igamma(a, x)`: the regularized lower incomplete gamma function
/// P(a, x), differentiable in both operands as JAX's.
#[track_caller]
pub fn igamma(a: &Array, x: &Array) -> Array {
    up_and_broadcast("igamma", a, x, |a, x| {
        let f = crate::custom::custom_jvp(
            |(a, x): (Array, Array)| igamma_value(&a, &x),
            |(a, x): (Array, Array), (ta, tx): (Array, Array)| {
                let value = igamma_value(&a, &x);
                let tangent = lax::add(
                    &lax::mul(&ta, &grad_a(&a, &x, Mode::Derivative)),
                    &lax::mul(&tx, &igamma_dx(&a, &x)),
                );
                (value, tangent)
            },
        );
        f.call((a.clone(), x.clone())).unwrap_or_else(Array::error)
    })
}

/// `lax.igammac(a, x)`: the regularized upper incomplete gamma function
/// Q(a, x) = 1 - P(a, x), differentiable in both operands as JAX's.
#[track_caller]
pub fn igammac(a: &Array, x: &Array) -> Array {
    up_and_broadcast("igammac", a, x, |a, x| {
        let f = crate::custom::custom_jvp(
            |(a, x): (Array, Array)| igammac_value(&a, &x),
            |(a, x): (Array, Array), (ta, tx): (Array, Array)| {
                let value = igammac_value(&a, &x);
                let tangent = lax::neg(&lax::add(
                    &lax::mul(&ta, &grad_a(&a, &x, Mode::Derivative)),
                    &lax::mul(&tx, &igamma_dx(&a, &x)),
                ));
                (value, tangent)
            },
        );
        f.call((a.clone(), x.clone())).unwrap_or_else(Array::error)
    })
}

/// `lax.igamma_grad_a(a, x)`: ∂P(a, x)/∂a.
#[track_caller]
pub fn igamma_grad_a(a: &Array, x: &Array) -> Array {
    up_and_broadcast("igamma_grad_a", a, x, |a, x| grad_a(a, x, Mode::Derivative))
}

/// `lax.random_gamma_grad(a, x)`: the derivative of a gamma sample `x` of
/// shape `a` in `a` (implicit reparameterization), as JAX's.
#[track_caller]
pub fn random_gamma_grad(a: &Array, x: &Array) -> Array {
    up_and_broadcast("random_gamma_grad", a, x, |a, x| {
        grad_a(a, x, Mode::SampleDerivative)
    })
}
