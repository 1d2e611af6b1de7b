//! More of `jax.numpy`'s products and comparisons: `inner`, `vdot`,
//! `vecdot`, `matvec`, `vecmat`, `tensordot`, `kron`, `polyval`,
//! `trapezoid`, `isclose`/`allclose`, `array_equal`/`array_equiv`,
//! `select`, `searchsorted`, `digitize` and `interp`, as JAX computes
//! them.

use super::math::{isnan, logical_and, logical_or};
use super::{promote_args, reshape, to_inexact, where_};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// `jnp.tensordot(a, b, (a_axes, b_axes))`: `a` and `b` contracted over
/// the paired axes; the free axes of `a` then of `b`.
#[track_caller]
pub fn tensordot(a: &Array, b: &Array, axes: (&[i64], &[i64])) -> Array {
    let (ra, rb) = (a.ndim_or_zero() as i64, b.ndim_or_zero() as i64);
    let lhs: Vec<i64> = axes.0.iter().map(|&d| d.rem_euclid(ra.max(1))).collect();
    let rhs: Vec<i64> = axes.1.iter().map(|&d| d.rem_euclid(rb.max(1))).collect();
    let v = promote_args(&[a, b]);
    lax::dot_general(&v[0], &v[1], ((&lhs, &rhs), (&[], &[])), None)
}

/// `jnp.tensordot(a, b, n)`: the last `n` axes of `a` contracted with the
/// first `n` of `b`.
#[track_caller]
pub fn tensordot_n(a: &Array, b: &Array, n: usize) -> Array {
    let ra = a.ndim_or_zero() as i64;
    let lhs: Vec<i64> = (ra - n as i64..ra).collect();
    let rhs: Vec<i64> = (0..n as i64).collect();
    tensordot(a, b, (&lhs, &rhs))
}

/// `jnp.inner(a, b)`: contracted over the last axis of each.
#[track_caller]
pub fn inner(a: &Array, b: &Array) -> Array {
    if a.ndim_or_zero() == 0 || b.ndim_or_zero() == 0 {
        return super::multiply(a, b);
    }
    tensordot(a, b, (&[-1], &[-1]))
}

/// `jnp.vdot(a, b)`: the dot product of the flattened arrays, `a`
/// conjugated when complex.
#[track_caller]
pub fn vdot(a: &Array, b: &Array) -> Array {
    let flat = |x: &Array| reshape(x, &[x.size_or_one()]);
    super::dot(&flat(&super::conjugate(a)), &flat(b))
}

/// `jnp.vecdot(a, b, axis)`: products `conj(a) b` summed along `axis`, the other axes
/// broadcast.
#[track_caller]
pub fn vecdot(a: &Array, b: &Array, axis: i64) -> Array {
    super::sum(
        &super::multiply(&super::conjugate(a), b),
        Some(&[axis]),
        false,
    )
}

/// `jnp.matvec(m, v)`: matrix-vector products over broadcast batches.
#[track_caller]
pub fn matvec(m: &Array, v: &Array) -> Array {
    let column = super::expand_dims(v, -1);
    super::squeeze(&super::matmul(m, &column), Some(&[-1]))
}

/// `jnp.vecmat(v, m)`: vector-matrix products over broadcast batches.
#[track_caller]
pub fn vecmat(v: &Array, m: &Array) -> Array {
    let row = super::expand_dims(v, -2);
    super::squeeze(&super::matmul(&row, m), Some(&[-2]))
}

/// `jnp.kron(a, b)`: the Kronecker product.
#[track_caller]
pub fn kron(a: &Array, b: &Array) -> Array {
    let v = promote_args(&[a, b]);
    let rank = v[0].ndim_or_zero().max(v[1].ndim_or_zero());
    let padded = |x: &Array| {
        let mut s = vec![1; rank - x.ndim_or_zero()];
        s.extend_from_slice(x.shape_or_empty());
        reshape(x, &s)
    };
    let (a, b) = (padded(&v[0]), padded(&v[1]));
    let (sa, sb) = (a.shape_or_empty().to_vec(), b.shape_or_empty().to_vec());
    let interleave = |s: &[i64], first: bool| -> Vec<i64> {
        s.iter()
            .flat_map(|&d| if first { [d, 1] } else { [1, d] })
            .collect()
    };
    let product = super::multiply(
        &reshape(&a, &interleave(&sa, true)),
        &reshape(&b, &interleave(&sb, false)),
    );
    let out: Vec<i64> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
    reshape(&product, &out)
}

/// `jnp.polyval(p, x)`: the polynomial with coefficients `p` (highest
/// power first, along `p`'s first axis) at `x`, by Horner's rule.
#[track_caller]
pub fn polyval(p: &Array, x: &Array) -> Array {
    let v = promote_args(&[p, x]);
    let (p, x) = (&v[0], &v[1]);
    let n = p.shape_or_empty().first().copied().unwrap_or(0);
    let mut y = super::zeros_like(x);
    for i in 0..n {
        let coefficient = lax::index_in_dim(p, i, 0, false);
        y = super::add(&super::multiply(&y, x), &coefficient);
    }
    y
}

/// `jnp.trapezoid(y, x, dx, axis)`: the integral of `y` along `axis` by
/// the trapezoidal rule, at the points `x` (1-d) or spaced `dx`.
#[track_caller]
pub fn trapezoid(y: &Array, x: Option<&Array>, dx: f64, axis: i64) -> Array {
    let y = super::moveaxis(&to_inexact(y), axis, -1);
    let n = y.shape_or_empty().last().copied().unwrap_or(0);
    let first = lax::index_in_dim(&y, 0, -1, false);
    let last = lax::index_in_dim(&y, n - 1, -1, false);
    match x {
        None => {
            let inner = super::subtract(
                &super::sum(&y, Some(&[-1]), false),
                &super::multiply(&super::add(&first, &last), &Array::weak_scalar(0.5f64)),
            );
            super::multiply(&inner, &Array::weak_scalar(dx))
        }
        Some(x) => {
            let steps = super::arrays::diff(&to_inexact(x), 1, -1);
            let pairs = super::add(
                &lax::slice_in_dim(&y, 1, Some(n), 1, -1),
                &lax::slice_in_dim(&y, 0, Some(n - 1), 1, -1),
            );
            super::multiply(
                &super::sum(&super::multiply(&steps, &pairs), Some(&[-1]), false),
                &Array::weak_scalar(0.5f64),
            )
        }
    }
}

/// `jnp.isclose(a, b, rtol, atol, equal_nan)`: `|a - b| <= atol + rtol
/// |b|` (equal infinities count; NaN only with `equal_nan`).
#[track_caller]
pub fn isclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Array {
    let v = promote_args(&[a, b]);
    let (a, b) = (to_inexact(&v[0]), to_inexact(&v[1]));
    let c = |value: f64| lax::convert_element_type(&Array::weak_scalar(value), a.dtype_or_bool());
    let within = super::less_equal(
        &lax::abs(&super::subtract(&a, &b)),
        &super::add(&c(atol), &super::multiply(&c(rtol), &lax::abs(&b))),
    );
    let close = logical_or(
        &super::equal(&a, &b),
        &logical_and(&super::isfinite(&b), &within),
    );
    match equal_nan {
        true => logical_or(&close, &logical_and(&isnan(&a), &isnan(&b))),
        false => close,
    }
}

/// `jnp.allclose(a, b, rtol, atol, equal_nan)`: every element
/// [`isclose`].
#[track_caller]
pub fn allclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Array {
    super::reductions::all(&isclose(a, b, rtol, atol, equal_nan), None, false)
}

/// `jnp.array_equal(a, b)`: the same shape and equal elements.
#[track_caller]
pub fn array_equal(a: &Array, b: &Array) -> Array {
    if a.shape_or_empty() != b.shape_or_empty() {
        return Array::scalar(false).unwrap_or_else(Array::error);
    }
    super::reductions::all(&super::equal(a, b), None, false)
}

/// `jnp.array_equiv(a, b)`: broadcastable shapes and equal elements.
#[track_caller]
pub fn array_equiv(a: &Array, b: &Array) -> Array {
    if super::broadcast_shapes(a.shape_or_empty(), b.shape_or_empty()).is_none() {
        return Array::scalar(false).unwrap_or_else(Array::error);
    }
    super::reductions::all(&super::equal(a, b), None, false)
}

/// `jnp.select(conditions, choices, default)`: the choice of the first
/// true condition, else `default`.
#[track_caller]
pub fn select(conditions: &[&Array], choices: &[&Array], default: &Array) -> Array {
    conditions
        .iter()
        .zip(choices)
        .rev()
        .fold(default.clone(), |otherwise, (c, x)| {
            where_(c, x, &otherwise)
        })
}

/// `jnp.searchsorted(sorted, v, side)`: where each of `v` would go in the
/// sorted 1-d array to keep it sorted: before equal elements for
/// `"left"`, after them for `"right"` (i32, or i64 with x64).
#[track_caller]
pub fn searchsorted(sorted: &Array, v: &Array, side: &str) -> Array {
    let column = super::expand_dims(v, -1);
    let before = match side {
        "right" => super::less_equal(sorted, &column),
        _ => super::less(sorted, &column),
    };
    let int = oxla_core::promotion::default_int(x64_enabled());
    super::sum(&lax::convert_element_type(&before, int), Some(&[-1]), false)
}

/// `jnp.digitize(x, bins, right)`: the index of the bin of each `x`
/// (bins increasing or decreasing).
#[track_caller]
pub fn digitize(x: &Array, bins: &Array, right: bool) -> Array {
    let side = if right { "left" } else { "right" };
    let n = bins.size_or_one();
    let increasing = super::greater_equal(
        &lax::index_in_dim(bins, n - 1, 0, false),
        &lax::index_in_dim(bins, 0, 0, false),
    );
    let up = searchsorted(bins, x, side);
    let down = super::subtract(
        &Array::weak_scalar(n as i32),
        &searchsorted(&super::arrays::flip(bins, None), x, side),
    );
    where_(&increasing, &up, &down)
}

/// `jnp.interp(x, xp, fp, left, right)`: the piecewise-linear function
/// through `(xp, fp)` (xp increasing) at `x`, `left`/`right` (default the
/// end values) outside.
#[track_caller]
pub fn interp(x: &Array, xp: &Array, fp: &Array, left: Option<f64>, right: Option<f64>) -> Array {
    let v = promote_args(&[x, xp, fp]);
    let (x, xp, fp) = (to_inexact(&v[0]), to_inexact(&v[1]), to_inexact(&v[2]));
    let n = xp.size_or_one();
    let i = super::clip(
        &searchsorted(&xp, &x, "right"),
        &Array::weak_scalar(1i32),
        &Array::weak_scalar((n - 1) as i32),
    );
    let at = |a: &Array, idx: &Array| super::take(a, idx, Some(0), false);
    let before = super::subtract(&i, &Array::weak_scalar(1i32));
    let (x0, x1) = (at(&xp, &before), at(&xp, &i));
    let (y0, y1) = (at(&fp, &before), at(&fp, &i));
    let dx = super::subtract(&x1, &x0);
    let c = |value: f64| lax::convert_element_type(&Array::weak_scalar(value), dx.dtype_or_bool());
    // A step no wider than the smallest subnormal (JAX's
    // `spacing(finfo.eps)`) is flat, so its gradient is not NaN.
    let flat = super::less_equal(&lax::abs(&dx), &c(f64::from(f32::from_bits(1))));
    let safe_dx = where_(&flat, &c(1.0), &dx);
    let delta = super::subtract(&x, &x0);
    let linear = super::add(
        &y0,
        &super::multiply(&super::divide(&delta, &safe_dx), &super::subtract(&y1, &y0)),
    );
    let f = where_(&flat, &y0, &linear);
    let first_x = lax::index_in_dim(&xp, 0, 0, false);
    let last_x = lax::index_in_dim(&xp, n - 1, 0, false);
    let left = left.map_or_else(|| lax::index_in_dim(&fp, 0, 0, false), c);
    let right = right.map_or_else(|| lax::index_in_dim(&fp, n - 1, 0, false), c);
    let f = where_(&super::less(&x, &first_x), &left, &f);
    where_(&super::greater(&x, &last_x), &right, &f)
}
