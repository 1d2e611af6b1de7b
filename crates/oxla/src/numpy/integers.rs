//! `jax.numpy`'s integer and index utilities: `gcd`, `lcm`, `modf`,
//! `bincount` (with a static length), `isin`, `unravel_index`, as JAX
//! computes them.

use oxla_core::{DType, ScatterDimensionNumbers, ScatterOp};

use super::{broadcast_arrays, promote_args, to_inexact, where_};
use crate::array::Array;
use crate::lax;

/// `jnp.gcd`: the greatest common divisor by Euclid's algorithm (a
/// `while_loop` until every remainder is zero), of the magnitudes.
#[track_caller]
pub fn gcd(x: &Array, y: &Array) -> Array {
    let v = promote_args(&[x, y]);
    let v = broadcast_arrays(&[&v[0], &v[1]]);
    let zero = |a: &Array| super::zeros_like(a);
    let start = (lax::abs(&v[0]), lax::abs(&v[1]));
    let result = lax::while_loop(
        |(_, b): &(Array, Array)| super::reductions::any(&lax::ne(b, &zero(b)), None, false),
        |(a, b): (Array, Array)| {
            let nonzero = lax::ne(&b, &zero(&b));
            let safe = where_(&nonzero, &b, &super::ones_like(&b));
            (
                where_(&nonzero, &b, &a),
                where_(&nonzero, &lax::rem(&a, &safe), &zero(&b)),
            )
        },
        start,
    );
    match result {
        Ok((g, _)) => g,
        Err(e) => Array::error(e),
    }
}

/// `jnp.lcm`: the least common multiple of the magnitudes (0 when either
/// is 0).
#[track_caller]
pub fn lcm(x: &Array, y: &Array) -> Array {
    let v = promote_args(&[x, y]);
    let (a, b) = (lax::abs(&v[0]), lax::abs(&v[1]));
    let d = gcd(&a, &b);
    let is_zero = lax::eq(&d, &super::zeros_like(&d));
    let safe = where_(&is_zero, &super::ones_like(&d), &d);
    where_(
        &is_zero,
        &super::zeros_like(&d),
        &super::multiply(&a, &super::floor_divide(&b, &safe)),
    )
}

/// `jnp.modf`: `(fractional part, integral part)`, both with `x`'s sign.
#[track_caller]
pub fn modf(x: &Array) -> (Array, Array) {
    let x = to_inexact(x);
    let zero = super::zeros_like(&x);
    let whole = where_(&lax::ge(&x, &zero), &lax::floor(&x), &lax::ceil(&x));
    (lax::sub(&x, &whole), whole)
}

/// `jnp.bincount(x, weights, length=length)`: how often each of
/// `0..length` occurs in the 1-d integer `x` (or the sum of its
/// `weights`); negative values count as 0 and values past the end are
/// dropped.
#[track_caller]
pub fn bincount(x: &Array, weights: Option<&Array>, length: i64) -> Array {
    let x = match x.dtype_or_bool() {
        DType::Bool => lax::convert_element_type(x, DType::I32),
        _ => x.clone(),
    };
    let weights = match weights {
        Some(w) => w.clone(),
        None => super::ones_like(&lax::convert_element_type(
            &x,
            oxla_core::promotion::default_int(crate::config::x64_enabled()),
        )),
    };
    let clipped = super::maximum(&x, &Array::weak_scalar(0i32));
    let indices = super::reshape(&clipped, &[clipped.size_or_one(), 1]);
    let numbers = ScatterDimensionNumbers {
        update_window_dims: Default::default(),
        inserted_window_dims: [0].into_iter().collect(),
        scatter_dims_to_operand_dims: [0].into_iter().collect(),
    };
    let zeros = super::zeros(&[length], weights.dtype_or_bool());
    lax::scatter_with_mode(
        &zeros,
        &indices,
        &weights,
        ScatterOp::Add,
        numbers,
        oxla_core::GatherMode::Fill,
    )
}

/// `jnp.isin(element, test_elements, invert)`: whether each element
/// occurs among `test_elements`.
#[track_caller]
pub fn isin(element: &Array, test_elements: &Array, invert: bool) -> Array {
    let flat = super::arrays::ravel(test_elements);
    let equal = super::equal(&super::expand_dims(element, -1), &flat);
    let found = super::reductions::any(&equal, Some(&[-1]), false);
    match invert {
        true => lax::not(&found),
        false => found,
    }
}

/// `jnp.unravel_index(indices, shape)`: the coordinates of flat indices in
/// an array of `shape` (out-of-range indices clamped, as JAX does).
#[track_caller]
pub fn unravel_index(indices: &Array, shape: &[i64]) -> Vec<Array> {
    let mut rest = indices.clone();
    let mut coordinates = vec![Array::weak_scalar(0i32); shape.len()];
    for (i, &s) in shape.iter().enumerate().rev() {
        let size = Array::weak_scalar(s as i32);
        let (quotient, remainder) = super::divmod(&rest, &size);
        coordinates[i] = remainder;
        rest = quotient;
    }
    let past_end = lax::gt(&rest, &super::zeros_like(&rest));
    let before_start = lax::lt(&rest, &super::full_like(&rest, -1.0));
    shape
        .iter()
        .zip(coordinates)
        .map(|(&s, i)| {
            let last = super::full_like(&i, (s - 1) as f64);
            where_(
                &past_end,
                &last,
                &where_(&before_start, &super::zeros_like(&i), &i),
            )
        })
        .collect()
}
