//! Division with Python's rounding, as `jax.numpy` computes it:
//! [`remainder`] (`%` on arrays: the sign of the divisor), [`fmod`] (the
//! sign of the dividend, C's `fmod`), [`floor_divide`] (`//`) and
//! [`divmod`]. [`lax::rem`] stays the truncated remainder.
//!
//! Integer division by zero follows JAX: the remainder is 0 (`remainder`
//! and `fmod` divide by 1 where the divisor is 0), and `floor_divide` gives
//! what XLA's integer division gives (-1 for a positive dividend, as JAX).

use oxla_core::DType;
use oxla_core::promotion::default_int;

use super::{broadcast_ranks, ones_like, promote_args, where_, zeros_like};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// The operands promoted together as `promote_args_numeric` does (booleans
/// become the default integer) and brought to one rank.
#[track_caller]
fn numeric(x: &Array, y: &Array) -> (Array, Array) {
    let mut v = promote_args(&[x, y]);
    if matches!(v[0].aval().map(|a| a.dtype), Ok(DType::Bool)) {
        let int = default_int(x64_enabled());
        v = v
            .iter()
            .map(|a| lax::convert_element_type_weak(a, int, a.weak_type()))
            .collect();
    }
    let mut v = broadcast_ranks(v).into_iter();
    match (v.next(), v.next()) {
        (Some(x), Some(y)) => (x, y),
        _ => unreachable!("two operands in, two out"),
    }
}

/// The kind of number both (promoted) operands are.
fn dtype_of(x: &Array) -> Option<DType> {
    x.aval().ok().map(|a| a.dtype)
}

fn is_integer(x: &Array) -> bool {
    dtype_of(x).is_some_and(|d| d.is_int() || d.is_unsigned_int())
}

/// `y` with its zeros replaced by ones (integer divisors only).
#[track_caller]
fn nonzero_divisor(y: &Array) -> Array {
    where_(&lax::eq(y, &zeros_like(y)), &ones_like(y), y)
}

/// `jnp.remainder(x, y)` (`x % y` on arrays): `x - floor(x / y) * y`, with
/// the sign of `y`, as Python's `%`.
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[-3.5f32, 1.25, 7.0], &[3])?;
/// assert_eq!(jnp::remainder(&x, &Array::scalar(2.0f32)?).to_vec::<f32>()?, vec![0.5, 1.25, 1.0]);
/// assert_eq!((&x % -2.0).to_vec::<f32>()?, vec![-1.5, -0.75, -1.0]);
/// let i = Array::from_slice(&[-7i32, 7, 5], &[3])?;
/// assert_eq!((&i % 3).to_vec::<i32>()?, vec![2, 1, 2]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn remainder(x: &Array, y: &Array) -> Array {
    let (x, y) = numeric(x, y);
    let y = if is_integer(&y) {
        nonzero_divisor(&y)
    } else {
        y
    };
    let trunc = lax::rem(&x, &y);
    let zero = zeros_like(&trunc);
    let signs_differ = lax::ne(&lax::lt(&trunc, &zero), &lax::lt(&y, &zeros_like(&y)));
    let shift = lax::and(&signs_differ, &lax::ne(&trunc, &zero));
    where_(&shift, &lax::add(&trunc, &y), &trunc)
}

/// `jnp.fmod(x, y)`: the remainder with the sign of `x` (C's `fmod`,
/// [`lax::rem`] after promotion).
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[-3.5f32, 1.25], &[2])?;
/// assert_eq!(jnp::fmod(&x, &Array::scalar(2.0f32)?).to_vec::<f32>()?, vec![-1.5, 1.25]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn fmod(x: &Array, y: &Array) -> Array {
    let (x, y) = numeric(x, y);
    let y = if is_integer(&y) {
        nonzero_divisor(&y)
    } else {
        y
    };
    lax::rem(&x, &y)
}

/// `jnp.floor_divide(x, y)` (Python's `//`): the quotient rounded toward
/// negative infinity.
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[-7i32, 7], &[2])?;
/// assert_eq!(jnp::floor_divide(&x, &Array::scalar(2i32)?).to_vec::<i32>()?, vec![-4, 3]);
/// let f = Array::from_slice(&[-3.5f32, 1.25], &[2])?;
/// assert_eq!(jnp::floor_divide(&f, &Array::scalar(2.0f32)?).to_vec::<f32>()?, vec![-2.0, 0.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn floor_divide(x: &Array, y: &Array) -> Array {
    let (x, y) = numeric(x, y);
    match dtype_of(&x) {
        Some(d) if d.is_unsigned_int() => lax::div(&x, &y),
        Some(d) if d.is_int() => {
            let quotient = lax::div(&x, &y);
            let signs_differ = lax::ne(&lax::sign(&x), &lax::sign(&y));
            let inexact = lax::ne(&lax::rem(&x, &y), &zeros_like(&quotient));
            let down = lax::and(&signs_differ, &inexact);
            where_(
                &down,
                &lax::sub(&quotient, &ones_like(&quotient)),
                &quotient,
            )
        }
        _ => float_divmod(&x, &y).0,
    }
}

/// `jnp.divmod(x, y)`: `(floor_divide(x, y), remainder(x, y))`.
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let (q, r) = jnp::divmod(&Array::scalar(-7.5f32)?, &Array::scalar(2.0f32)?);
/// assert_eq!((q.item::<f32>()?, r.item::<f32>()?), (-4.0, 0.5));
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn divmod(x: &Array, y: &Array) -> (Array, Array) {
    let (x, y) = numeric(x, y);
    if is_integer(&x) {
        (floor_divide(&x, &y), remainder(&x, &y))
    } else {
        float_divmod(&x, &y)
    }
}

/// Floating-point floor division and remainder together, as CPython's
/// `float_divmod` (and JAX's `_float_divmod`): the quotient of `x - mod`
/// (of `x` where `y` is 0, so that 0 divides into ±inf or NaN), moved down
/// by one where the remainder's sign differs from the divisor's, rounded.
#[track_caller]
fn float_divmod(x: &Array, y: &Array) -> (Array, Array) {
    let modulo = lax::rem(x, y);
    let dividend = where_(&lax::eq(y, &zeros_like(y)), x, &lax::sub(x, &modulo));
    let quotient = lax::div(&dividend, y);
    let zero = zeros_like(&modulo);
    let shift = lax::and(
        &lax::ne(&modulo, &zero),
        &lax::ne(&lax::sign(y), &lax::sign(&modulo)),
    );
    let modulo = where_(&shift, &lax::add(&modulo, y), &modulo);
    let quotient = where_(
        &shift,
        &lax::sub(&quotient, &ones_like(&quotient)),
        &quotient,
    );
    (lax::round(&quotient), modulo)
}
