//! More of `jax.numpy`'s elementwise functions: aliases, angle and log
//! conversions, rounding, floating-point predicates and manipulation
//! (`signbit`, `copysign`, `frexp`, `ldexp`, `nextafter`), `hypot`,
//! `sinc`, `heaviside`, `i0`, NaN-aware extrema, and the logical and
//! bitwise families, each computed as JAX computes it.

use std::sync::LazyLock;

use oxla_core::DType;

use super::{broadcast_ranks, promote_args, scalar_like, to_inexact, where_, zeros_like};
use crate::array::Array;
use crate::custom::{CustomJvp, custom_jvp};
use crate::lax;

/// `promote_args_inexact`: the operands promoted together, integers and
/// bools made floats, ranks aligned.
fn inexact(xs: &[&Array]) -> Vec<Array> {
    let promoted = promote_args(xs);
    broadcast_ranks(promoted.iter().map(to_inexact).collect())
}

macro_rules! alias1 {
    ($($name:ident => $target:path: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array) -> Array {
            $target(x)
        }
    )*};
}

macro_rules! alias2 {
    ($($name:ident => $target:path: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            $target(x, y)
        }
    )*};
}

alias1! {
    absolute => super::abs: "`jnp.absolute`: [`abs`](super::abs).";
    acos => super::arccos: "`jnp.acos`: [`arccos`](super::arccos).";
    acosh => super::arccosh: "`jnp.acosh`: [`arccosh`](super::arccosh).";
    asin => super::arcsin: "`jnp.asin`: [`arcsin`](super::arcsin).";
    asinh => super::arcsinh: "`jnp.asinh`: [`arcsinh`](super::arcsinh).";
    atan => super::arctan: "`jnp.atan`: [`arctan`](super::arctan).";
    atanh => super::arctanh: "`jnp.atanh`: [`arctanh`](super::arctanh).";
    radians => deg2rad: "`jnp.radians`: [`deg2rad`].";
    degrees => rad2deg: "`jnp.degrees`: [`rad2deg`].";
    around => rint: "`jnp.around` with no decimals: [`rint`].";
    invert => bitwise_not: "`jnp.invert`: [`bitwise_not`].";
    bitwise_invert => bitwise_not: "`jnp.bitwise_invert`: [`bitwise_not`].";
}

/// `jnp.bitwise_count`: the set bits of each integer's absolute value
/// (NumPy's definition), as u8.
#[track_caller]
pub fn bitwise_count(x: &Array) -> Array {
    let magnitude = match x.dtype_or_bool() {
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => lax::abs(x),
        _ => x.clone(),
    };
    lax::convert_element_type(&lax::population_count(&magnitude), DType::U8)
}

alias2! {
    atan2 => super::arctan2: "`jnp.atan2`: [`arctan2`](super::arctan2).";
    pow => super::power: "`jnp.pow`: [`power`](super::power).";
    true_divide => super::divide: "`jnp.true_divide`: [`divide`](super::divide).";
    r#mod => super::remainder: "`jnp.mod`: [`remainder`](super::remainder).";
    bitwise_left_shift => left_shift: "`jnp.bitwise_left_shift`: [`left_shift`].";
    bitwise_right_shift => right_shift: "`jnp.bitwise_right_shift`: [`right_shift`].";
}

/// `jnp.positive`: `x` (a copy).
#[track_caller]
pub fn positive(x: &Array) -> Array {
    x.clone()
}

/// `jnp.fabs`: the absolute value, integers as floats.
#[track_caller]
pub fn fabs(x: &Array) -> Array {
    lax::abs(&to_inexact(x))
}

/// `jnp.deg2rad`: `x π / 180`.
#[track_caller]
pub fn deg2rad(x: &Array) -> Array {
    let x = to_inexact(x);
    lax::mul(&x, &scalar_like(&x, std::f64::consts::PI / 180.0))
}

/// `jnp.rad2deg`: `x 180 / π`.
#[track_caller]
pub fn rad2deg(x: &Array) -> Array {
    let x = to_inexact(x);
    lax::mul(&x, &scalar_like(&x, 180.0 / std::f64::consts::PI))
}

/// `jnp.log10`: `log(x) · (1 / ln 10)`.
#[track_caller]
pub fn log10(x: &Array) -> Array {
    let x = to_inexact(x);
    lax::mul(&lax::log(&x), &scalar_like(&x, std::f64::consts::LOG10_E))
}

/// `jnp.log2`: `log(x) / log(2)`.
#[track_caller]
pub fn log2(x: &Array) -> Array {
    let x = to_inexact(x);
    lax::div(&lax::log(&x), &lax::log(&scalar_like(&x, 2.0)))
}

/// `jnp.rint`: round half to even; integers and bools become the default
/// float.
#[track_caller]
pub fn rint(x: &Array) -> Array {
    match x.dtype_or_bool() {
        d if d.is_float() => lax::round_nearest_even(x),
        _ => to_inexact(&lax::convert_element_type_weak(x, x.dtype_or_bool(), false)),
    }
}

/// `jnp.round(x, decimals)`: round half to even at `decimals` decimal
/// places (negative: tens, hundreds); integers are returned as they are
/// (JAX rejects negative decimals for them, and so does oxla).
#[track_caller]
pub fn round(x: &Array, decimals: i32) -> Array {
    if !x.dtype_or_bool().is_float() {
        if decimals < 0 {
            return Array::error(crate::Error::InvalidArgument(format!(
                "{}: round of integers is not implemented for decimals < 0 (got {decimals}), as \
                 in JAX",
                crate::ops::current_location(std::panic::Location::caller())
            )));
        }
        return x.clone();
    }
    if decimals == 0 {
        return lax::round_nearest_even(x);
    }
    let factor = scalar_like(x, 10f64.powi(decimals));
    lax::div(&lax::round_nearest_even(&lax::mul(x, &factor)), &factor)
}

/// `jnp.trunc`: toward zero; integers as they are.
#[track_caller]
pub fn trunc(x: &Array) -> Array {
    if !x.dtype_or_bool().is_float() {
        return x.clone();
    }
    where_(
        &lax::lt(x, &scalar_like(x, 0.0)),
        &lax::ceil(x),
        &lax::floor(x),
    )
}

/// `jnp.reciprocal`: `1 / x` as `integer_pow(x, -1)`, integers as floats.
#[track_caller]
pub fn reciprocal(x: &Array) -> Array {
    lax::integer_pow(&to_inexact(x), -1)
}

/// `jnp.float_power`: `x ** y` in floats.
#[track_caller]
pub fn float_power(x: &Array, y: &Array) -> Array {
    let v = inexact(&[x, y]);
    lax::pow(&v[0], &v[1])
}

/// `jnp.isnan`: `x != x` for floats and complex numbers, false for
/// integers.
#[track_caller]
pub fn isnan(x: &Array) -> Array {
    match x.dtype_or_bool().is_inexact() {
        true => lax::ne(x, x),
        false => super::full_like(&lax::convert_element_type(x, DType::Bool), 0.0),
    }
}

/// `jnp.isinf`: `|x| == inf` for floats (either part for complex
/// numbers), false for integers.
#[track_caller]
pub fn isinf(x: &Array) -> Array {
    if x.dtype_or_bool().is_complex() {
        return lax::or(&isinf(&lax::real(x)), &isinf(&lax::imag(x)));
    }
    match x.dtype_or_bool().is_float() {
        true => lax::eq(&lax::abs(x), &scalar_like(x, f64::INFINITY)),
        false => super::full_like(&lax::convert_element_type(x, DType::Bool), 0.0),
    }
}

/// `jnp.isposinf`: `x == +inf`.
#[track_caller]
pub fn isposinf(x: &Array) -> Array {
    signed_infinity(x, f64::INFINITY)
}

/// `jnp.isneginf`: `x == -inf`.
#[track_caller]
pub fn isneginf(x: &Array) -> Array {
    signed_infinity(x, f64::NEG_INFINITY)
}

fn signed_infinity(x: &Array, infinity: f64) -> Array {
    match x.dtype_or_bool().is_float() {
        true => lax::eq(x, &scalar_like(x, infinity)),
        false => super::full_like(&lax::convert_element_type(x, DType::Bool), 0.0),
    }
}

/// `jnp.nan_to_num(x, nan, posinf, neginf)`: NaN replaced by `nan`, +inf
/// by `posinf` (default the dtype's largest value), -inf by `neginf`
/// (default its lowest); integers as they are.
#[track_caller]
pub fn nan_to_num(x: &Array, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Array {
    let dtype = x.dtype_or_bool();
    if !dtype.is_float() {
        return x.clone();
    }
    let posinf = posinf.unwrap_or(dtype.float_info().max);
    let neginf = neginf.unwrap_or(dtype.float_info().min());
    let out = where_(&isnan(x), &scalar_like(x, nan), x);
    let out = where_(&isposinf(&out), &scalar_like(x, posinf), &out);
    where_(&isneginf(&out), &scalar_like(x, neginf), &out)
}

/// `jnp.signbit`: whether the sign bit is set (so `-0.0` and `-nan` count
/// as negative); `x < 0` for integers, false for bools.
#[track_caller]
pub fn signbit(x: &Array) -> Array {
    let dtype = x.dtype_or_bool();
    let (int, bits) = match dtype {
        DType::F16 | DType::BF16 => (DType::I16, 16),
        DType::F32 => (DType::I32, 32),
        DType::F64 => (DType::I64, 64),
        DType::Bool => return super::full_like(x, 0.0),
        _ => return lax::lt(x, &scalar_like(x, 0.0)),
    };
    let as_int = lax::bitcast_convert_type(x, int);
    let shift = lax::convert_element_type(&Array::weak_scalar((bits - 1) as i64), int);
    lax::convert_element_type(
        &lax::shift_right_logical(
            &as_int,
            &super::broadcast_to(&shift, as_int.shape_or_empty()),
        ),
        DType::Bool,
    )
}

/// `jnp.copysign`: `|x|` with the sign bit of `y`.
#[track_caller]
pub fn copysign(x: &Array, y: &Array) -> Array {
    let v = inexact(&[x, y]);
    let magnitude = lax::abs(&v[0]);
    where_(&signbit(&v[1]), &lax::neg(&magnitude), &magnitude)
}

/// `jnp.nextafter`: the next representable value after `x` toward `y`.
#[track_caller]
pub fn nextafter(x: &Array, y: &Array) -> Array {
    let v = inexact(&[x, y]);
    let (a, b) = full_pair(&v[0], &v[1]);
    lax::nextafter(&a, &b)
}

/// The operands broadcast to one shape (for primitives that need equal
/// shapes).
fn full_pair(x: &Array, y: &Array) -> (Array, Array) {
    match super::broadcast_shapes(x.shape_or_empty(), y.shape_or_empty()) {
        Some(shape) => (
            super::broadcast_to(x, &shape),
            super::broadcast_to(y, &shape),
        ),
        None => (x.clone(), y.clone()),
    }
}

/// `jnp.hypot`: `sqrt(x² + y²)` without overflow: the larger magnitude
/// times `sqrt(1 + (smaller / larger)²)`, +inf where either is +inf.
#[track_caller]
pub fn hypot(x: &Array, y: &Array) -> Array {
    let v = inexact(&[x, y]);
    let (a, b) = (lax::abs(&v[0]), lax::abs(&v[1]));
    let infinite = lax::or(&isposinf(&a), &isposinf(&b));
    let (big, small) = (super::maximum(&a, &b), super::minimum(&a, &b));
    let zero = lax::eq(&big, &scalar_like(&big, 0.0));
    let safe = where_(&zero, &super::ones_like(&big), &big);
    let ratio = lax::div(&small, &safe);
    let scaled = lax::mul(&big, &lax::sqrt(&(&lax::square(&ratio) + 1.0f64)));
    let out = where_(&zero, &big, &scaled);
    where_(&infinite, &scalar_like(&out, f64::INFINITY), &out)
}

/// `jnp.heaviside(x, h0)`: 0 for negative `x`, 1 for positive, `h0` at
/// zero, NaN at NaN.
#[track_caller]
pub fn heaviside(x: &Array, h0: &Array) -> Array {
    let v = inexact(&[x, h0]);
    let zero = scalar_like(&v[0], 0.0);
    let at_zero = where_(&isnan(&v[0]), &v[0], &v[1]);
    let positive = where_(&lax::gt(&v[0], &zero), &scalar_like(&v[0], 1.0), &at_zero);
    where_(&lax::lt(&v[0], &zero), &zero, &positive)
}

/// `jnp.fmax`: the larger, ignoring a NaN in `y` (`x` where `x > y` or `y`
/// is NaN).
#[track_caller]
pub fn fmax(x: &Array, y: &Array) -> Array {
    let keep_x = lax::or(&super::greater(x, y), &isnan(y));
    where_(&keep_x, x, y)
}

/// `jnp.fmin`: the smaller, ignoring a NaN in `y`.
#[track_caller]
pub fn fmin(x: &Array, y: &Array) -> Array {
    let keep_x = lax::or(&super::less(x, y), &isnan(y));
    where_(&keep_x, x, y)
}

type UnaryFn = fn((Array,)) -> Array;

/// sinc with JAX's derivative at 0 (the Maclaurin series' terms): a
/// `custom_jvp` on `pi x`'s function, as `_sinc_maclaurin`.
static SINC_AT_ZERO: LazyLock<CustomJvp<(Array,), Array, UnaryFn>> = LazyLock::new(|| {
    custom_jvp(
        (|(x,): (Array,)| super::ones_like(&x)) as UnaryFn,
        // The first derivative of sin(x)/x at 0 is 0.
        |(x,): (Array,), (t,): (Array,)| (super::ones_like(&x), lax::mul(&t, &zeros_like(&x))),
    )
});

/// `jnp.sinc`: `sin(πx) / (πx)`, 1 at 0 (with derivative 0 there).
#[track_caller]
pub fn sinc(x: &Array) -> Array {
    let x = to_inexact(x);
    let at_zero = lax::eq(&x, &scalar_like(&x, 0.0));
    let pi_x = lax::mul(&scalar_like(&x, std::f64::consts::PI), &x);
    let safe = where_(&at_zero, &scalar_like(&x, 1.0), &pi_x);
    let one = SINC_AT_ZERO
        .call((pi_x.clone(),))
        .unwrap_or_else(Array::error);
    where_(&at_zero, &one, &lax::div(&lax::sin(&safe), &safe))
}

/// i0 with JAX's derivative `i1e(x) e^|x|` (as `_i0_jvp`).
static I0: LazyLock<CustomJvp<(Array,), Array, UnaryFn>> = LazyLock::new(|| {
    custom_jvp(
        (|(x,): (Array,)| i0_value(&x)) as UnaryFn,
        |(x,): (Array,), (t,): (Array,)| {
            let slope = lax::mul(&lax::bessel_i1e(&x), &lax::exp(&lax::abs(&x)));
            (i0_value(&x), lax::mul(&t, &slope))
        },
    )
});

fn i0_value(x: &Array) -> Array {
    lax::mul(&lax::exp(&lax::abs(x)), &lax::bessel_i0e(x))
}

/// `jnp.i0`: the modified Bessel function of the first kind of order 0,
/// `e^|x| i0e(x)`.
#[track_caller]
pub fn i0(x: &Array) -> Array {
    I0.call((to_inexact(x),)).unwrap_or_else(Array::error)
}

/// `jnp.logaddexp2`: `log2(2^x + 2^y)` without overflow.
#[track_caller]
pub fn logaddexp2(x: &Array, y: &Array) -> Array {
    let v = inexact(&[x, y]);
    let ln2 = std::f64::consts::LN_2;
    // log2(2^x + 2^y) = logaddexp(x ln2, y ln2) / ln2, as JAX's formula
    // `max + log1p(2^-|x-y|) / ln 2` (with its NaN rule) computes.
    let delta = lax::sub(&v[0], &v[1]);
    let spread = lax::add(
        &lax::max(&v[0], &v[1]),
        &lax::mul(
            &scalar_like(&v[0], 1.0 / ln2),
            &lax::log1p(&lax::exp2(&lax::neg(&lax::abs(&delta)))),
        ),
    );
    where_(&isnan(&delta), &lax::add(&v[0], &v[1]), &spread)
}

/// `jnp.frexp`: `(mantissa, exponent)` with `x = mantissa · 2^exponent`,
/// `|mantissa|` in [0.5, 1) (0, inf and NaN give themselves and 0), as
/// JAX computes it from the bits.
#[track_caller]
pub fn frexp(x: &Array) -> (Array, Array) {
    FREXP
        .call((to_inexact(x),))
        .unwrap_or_else(|e| (Array::error(e.clone()), Array::error(e)))
}

type FrexpFn = fn((Array,)) -> (Array, Array);

/// frexp with JAX's derivative: the mantissa's tangent is `t · 2^-e`.
static FREXP: LazyLock<CustomJvp<(Array,), (Array, Array), FrexpFn>> = LazyLock::new(|| {
    custom_jvp(
        (|(x,): (Array,)| frexp_compiled(&x)) as FrexpFn,
        |(x,): (Array,), (t,): (Array,)| {
            let (m, e) = frexp_compiled(&x);
            let scale = lax::exp2(&lax::neg(&lax::convert_element_type(&e, x.dtype_or_bool())));
            let tangent = lax::mul(&t, &scale);
            ((m, e.clone()), (tangent, zeros_like(&e)))
        },
    )
});

/// [`frexp_bits`] as one compiled program (as JAX's `jnp.frexp` is
/// jitted): run op by op, XLA's CPU kernels flush the subnormal inputs
/// it scales to zero.
fn frexp_compiled(x: &Array) -> (Array, Array) {
    type Bits = fn(Array) -> (Array, Array);
    static COMPILED: LazyLock<crate::jit::Jit<Array, (Array, Array), Bits>> =
        LazyLock::new(|| crate::jit::jit((|x: Array| frexp_bits(&x)) as Bits));
    COMPILED
        .call(x.clone())
        .unwrap_or_else(|e| (Array::error(e.clone()), Array::error(e)))
}

/// frexp from the bits (see [`frexp`]).
fn frexp_bits(x: &Array) -> (Array, Array) {
    let x = x.clone();
    let dtype = x.dtype_or_bool();
    let (int, mantissa_bits, exponent_bias): (DType, i64, i64) = match dtype {
        DType::F16 => (DType::I16, 10, 15),
        DType::BF16 => (DType::I16, 7, 127),
        DType::F64 => (DType::I64, 52, 1023),
        _ => (DType::I32, 23, 127),
    };
    let shape = x.shape_or_empty().to_vec();
    let int_const = |v: i64| {
        super::broadcast_to(
            &lax::convert_element_type(&Array::weak_scalar(v), int),
            &shape,
        )
    };
    let bits_of = |v: &Array| lax::bitcast_convert_type(v, int);
    // Subnormals: scale up by 2^mantissa_bits first.
    let tiny = lax::lt(
        &lax::abs(&x),
        &scalar_like(&x, dtype.float_info().smallest_normal),
    );
    let scaled = where_(
        &tiny,
        &lax::mul(&x, &scalar_like(&x, 2f64.powi(mantissa_bits as i32))),
        &x,
    );
    let bits = bits_of(&scaled);
    let exponent_mask =
        int_const(((1i64 << (bits_width(int) - 1 - mantissa_bits)) - 1) << mantissa_bits);
    let biased =
        lax::shift_right_logical(&lax::and(&bits, &exponent_mask), &int_const(mantissa_bits));
    let exponent = lax::sub(&biased, &int_const(exponent_bias - 1));
    let exponent = where_(
        &tiny,
        &lax::sub(&exponent, &int_const(mantissa_bits)),
        &exponent,
    );
    let cleared = lax::and(&bits, &lax::not(&exponent_mask));
    let half_exponent = int_const((exponent_bias - 1) << mantissa_bits);
    let mantissa = lax::bitcast_convert_type(&lax::or(&cleared, &half_exponent), dtype);
    let special = lax::or(
        &lax::or(&isinf(&x), &isnan(&x)),
        &lax::eq(&x, &scalar_like(&x, 0.0)),
    );
    let mantissa = where_(&special, &x, &mantissa);
    let exponent = where_(&special, &zeros_like(&exponent), &exponent);
    (mantissa, lax::convert_element_type(&exponent, DType::I32))
}

fn bits_width(int: DType) -> i64 {
    match int {
        DType::I16 => 16,
        DType::I64 => 64,
        _ => 32,
    }
}

/// `jnp.spacing(x)`: the distance from `x` to the next value away from
/// zero (the smallest subnormal, signed, where that distance is zero), as
/// JAX computes it; float16 toward +inf.
#[track_caller]
pub fn spacing(x: &Array) -> Array {
    let x = to_inexact(x);
    let dtype = x.dtype_or_bool();
    if dtype.is_complex() {
        return super::usage("spacing", "is not defined for complex inputs".into());
    }
    let inf = scalar_like(&x, f64::INFINITY);
    if dtype == DType::F16 {
        return lax::sub(
            &lax::nextafter(&x, &super::full_like(&x, f64::INFINITY)),
            &x,
        );
    }
    let info = dtype.float_info();
    let smallest_subnormal = info.smallest_normal * info.eps();
    let result = lax::sub(&lax::nextafter(&x, &copysign(&inf, &x)), &x);
    where_(
        &lax::eq(&result, &scalar_like(&result, 0.0)),
        &copysign(&scalar_like(&x, smallest_subnormal), &x),
        &result,
    )
}

/// `jnp.ldexp(x, exponent)`: `x · 2^exponent` (an integer exponent), as
/// JAX computes it through `frexp`.
#[track_caller]
pub fn ldexp(x: &Array, exponent: &Array) -> Array {
    let x = to_inexact(x);
    let (m, e) = frexp(&x);
    let total = lax::convert_element_type(
        &super::add(
            &lax::convert_element_type(&e, exponent.dtype_or_bool()),
            exponent,
        ),
        x.dtype_or_bool(),
    );
    let positive = lax::gt(&total, &scalar_like(&total, 0.0));
    let m = where_(&positive, &lax::mul(&m, &scalar_like(&m, 2.0)), &m);
    let total = where_(
        &positive,
        &lax::sub(&total, &scalar_like(&total, 1.0)),
        &total,
    );
    let scaled = super::multiply(&m, &lax::exp2(&total));
    let keep = lax::or(&isinf(&x), &lax::eq(&x, &scalar_like(&x, 0.0)));
    where_(&keep, &x, &scaled)
}

macro_rules! logical {
    ($($name:ident => $lax:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let v = broadcast_ranks(vec![
                lax::convert_element_type(x, DType::Bool),
                lax::convert_element_type(y, DType::Bool),
            ]);
            let (a, b) = full_pair(&v[0], &v[1]);
            lax::$lax(&a, &b)
        }
    )*};
}

logical! {
    logical_and => and: "`jnp.logical_and`: both true (operands as bools).";
    logical_or => or: "`jnp.logical_or`: either true (operands as bools).";
    logical_xor => xor: "`jnp.logical_xor`: exactly one true (operands as bools).";
}

macro_rules! bitwise {
    ($($name:ident => $lax:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let v = broadcast_ranks(promote_args(&[x, y]));
            let (a, b) = full_pair(&v[0], &v[1]);
            lax::$lax(&a, &b)
        }
    )*};
}

bitwise! {
    bitwise_and => and: "`jnp.bitwise_and` of integers or bools.";
    bitwise_or => or: "`jnp.bitwise_or` of integers or bools.";
    bitwise_xor => xor: "`jnp.bitwise_xor` of integers or bools.";
    left_shift => shift_left: "`jnp.left_shift` of integers.";
}

/// `jnp.right_shift`: arithmetic for signed integers, logical for
/// unsigned.
#[track_caller]
pub fn right_shift(x: &Array, y: &Array) -> Array {
    let v = broadcast_ranks(promote_args(&[x, y]));
    let (a, b) = full_pair(&v[0], &v[1]);
    match a.dtype_or_bool() {
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => lax::shift_right_logical(&a, &b),
        _ => lax::shift_right_arithmetic(&a, &b),
    }
}

/// `jnp.bitwise_not`: each bit flipped (logical not for bools).
#[track_caller]
pub fn bitwise_not(x: &Array) -> Array {
    lax::not(x)
}
