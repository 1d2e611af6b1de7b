//! `jax.numpy`'s `cov`, `corrcoef`, `gradient` and `unwrap`, and the
//! static-size index searches `nonzero`, `argwhere` and `flatnonzero`, as
//! JAX computes them.

use oxla_core::DType;

use super::{arrays, concatenate, to_inexact, where_};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// `jnp.cov(m, rowvar, bias)`: the covariance matrix of the variables in
/// `m`'s rows (columns when not `rowvar`), normalized by `n - 1` (`n` with
/// `bias`); a scalar for one variable.
#[track_caller]
pub fn cov(m: &Array, rowvar: bool, bias: bool) -> Array {
    let m = to_inexact(m);
    let mut x = arrays::atleast_2d(&m);
    if !rowvar && m.ndim_or_zero() != 1 {
        x = super::transpose(&x, None);
    }
    let n = x.shape_or_empty().get(1).copied().unwrap_or(0);
    let ddof = if bias { 0 } else { 1 };
    let centered = super::subtract(&x, &super::mean(&x, Some(&[1]), true));
    let product = super::dot(&centered, &super::transpose(&centered, None));
    let scaled = super::divide(&product, &Array::weak_scalar((n - ddof) as f64));
    super::squeeze(&scaled, None)
}

/// `jnp.corrcoef(x, rowvar)`: the correlation coefficients, the
/// covariances divided by both standard deviations and clipped to
/// [-1, 1].
#[track_caller]
pub fn corrcoef(x: &Array, rowvar: bool) -> Array {
    let c = cov(x, rowvar, false);
    if c.ndim_or_zero() == 0 {
        return super::divide(&c, &c);
    }
    let stddev = super::sqrt(&arrays::diag(&c, 0));
    let normalized = super::divide(
        &super::divide(&c, &super::expand_dims(&stddev, 1)),
        &super::expand_dims(&stddev, 0),
    );
    super::clip(
        &normalized,
        &Array::weak_scalar(-1.0f64),
        &Array::weak_scalar(1.0f64),
    )
}

/// `jnp.gradient(f, axis)` with unit spacing: central differences inside,
/// one-sided ones at the edges, along `axis` (one array per axis of `f`
/// for `None`).
#[track_caller]
pub fn gradient(f: &Array, axis: Option<i64>) -> Vec<Array> {
    let f = to_inexact(f);
    let rank = f.ndim_or_zero() as i64;
    let axes: Vec<i64> = match axis {
        Some(a) => vec![a.rem_euclid(rank.max(1))],
        None => (0..rank).collect(),
    };
    axes.iter()
        .map(|&axis| {
            let n = f.shape_or_empty()[axis as usize];
            let slice = |start: i64, stop: i64| lax::slice_in_dim(&f, start, Some(stop), 1, axis);
            let upper = super::subtract(&slice(1, 2), &slice(0, 1));
            let lower = super::subtract(&slice(n - 1, n), &slice(n - 2, n - 1));
            let inner = super::multiply(
                &super::subtract(&slice(2, n), &slice(0, n - 2)),
                &Array::weak_scalar(0.5f64),
            );
            concatenate(&[&upper, &inner, &lower], axis)
        })
        .collect()
}

/// `jnp.unwrap(p, axis, period)`: phases with jumps larger than half a
/// `period` replaced by their complement, along `axis`.
#[track_caller]
pub fn unwrap(p: &Array, axis: i64, period: f64) -> Array {
    let p = to_inexact(p);
    let n = p
        .shape_or_empty()
        .get(axis.rem_euclid(p.ndim_or_zero().max(1) as i64) as usize)
        .copied()
        .unwrap_or(0);
    if n == 0 {
        return p;
    }
    let c = |v: f64| lax::convert_element_type(&Array::weak_scalar(v), p.dtype_or_bool());
    let interval = c(period / 2.0);
    let discont = c(period / 2.0);
    let dd = arrays::diff(&p, 1, axis);
    let ddmod = super::subtract(
        &super::remainder(&super::add(&dd, &interval), &c(period)),
        &interval,
    );
    let at_boundary = lax::and(
        &super::equal(&ddmod, &super::negative(&interval)),
        &super::greater(&dd, &c(0.0)),
    );
    let ddmod = where_(&at_boundary, &interval, &ddmod);
    let correction = where_(
        &super::less(&super::abs(&dd), &discont),
        &c(0.0),
        &super::subtract(&ddmod, &dd),
    );
    let first = lax::slice_in_dim(&p, 0, Some(1), 1, axis);
    let rest = lax::slice_in_dim(&p, 1, None, 1, axis);
    concatenate(
        &[
            &first,
            &super::add(&rest, &super::cumsum(&correction, Some(axis))),
        ],
        axis,
    )
}

/// `jnp.nonzero(x, size, fill_value)`: per axis, the coordinates of the
/// first `size` nonzero elements in row-major order; missing ones are
/// `fill_value` (default 0).
#[track_caller]
pub fn nonzero(x: &Array, size: i64, fill_value: Option<i64>) -> Vec<Array> {
    let shape = x.shape_or_empty().to_vec();
    let int = oxla_core::promotion::default_int(x64_enabled());
    let mask = match x.dtype_or_bool() {
        DType::Bool => x.clone(),
        _ => lax::ne(x, &super::zeros_like(x)),
    };
    let running = super::cumsum(&mask, None);
    let flat = super::cumsum(&super::bincount(&running, None, size), None);
    let count = super::sum(&lax::convert_element_type(&mask, int), None, false);
    let missing = super::greater_equal(&super::arange(0.0, size as f64, 1.0, int), &count);
    let mut stride: i64 = shape.iter().product();
    shape
        .iter()
        .map(|&n| {
            stride /= n.max(1);
            let coordinate = super::remainder(
                &super::floor_divide(
                    &flat,
                    &lax::convert_element_type(&Array::weak_scalar(stride), int),
                ),
                &lax::convert_element_type(&Array::weak_scalar(n), int),
            );
            match fill_value {
                Some(fill) => where_(
                    &missing,
                    &lax::convert_element_type(&Array::weak_scalar(fill), int),
                    &coordinate,
                ),
                None => coordinate,
            }
        })
        .collect()
}

/// `jnp.argwhere(x, size, fill_value)`: the coordinates of the nonzero
/// elements as rows `[size, ndim]`.
#[track_caller]
pub fn argwhere(x: &Array, size: i64, fill_value: Option<i64>) -> Array {
    let coordinates = nonzero(&arrays::atleast_1d(x), size, fill_value);
    super::stack(&coordinates.iter().collect::<Vec<_>>(), 1)
}

/// `jnp.flatnonzero(x, size, fill_value)`: the flat indices of the nonzero
/// elements.
#[track_caller]
pub fn flatnonzero(x: &Array, size: i64, fill_value: Option<i64>) -> Array {
    nonzero(&arrays::ravel(x), size, fill_value).swap_remove(0)
}
