//! More of `jax.numpy`'s reductions: `all`/`any`, `amax`/`amin`, `ptp`,
//! `count_nonzero`, `average`, the NaN-ignoring family (`nansum`,
//! `nanmean`, `nanmax`, `nanargmax`, ...), the cumulative ones with an
//! initial value, and `median`/`quantile`/`percentile` with linear
//! interpolation, as JAX computes them.

use oxla_core::DType;

use super::math::isnan;
use super::{axes_of, finish_reduction, scalar_like, to_inexact, where_};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// `jnp.all(x, axis, keepdims)`: whether every element is nonzero.
#[track_caller]
pub fn all(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let truth = lax::convert_element_type(x, DType::Bool);
    finish_reduction(lax::reduce_and(&truth, &axes), x, &axes, keepdims)
}

/// `jnp.any(x, axis, keepdims)`: whether some element is nonzero.
#[track_caller]
pub fn any(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let truth = lax::convert_element_type(x, DType::Bool);
    finish_reduction(lax::reduce_or(&truth, &axes), x, &axes, keepdims)
}

/// `jnp.amax`: [`max`](super::max).
#[track_caller]
pub fn amax(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::max(x, axis, keepdims)
}

/// `jnp.amin`: [`min`](super::min).
#[track_caller]
pub fn amin(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::min(x, axis, keepdims)
}

/// `jnp.ptp`: the range, `max - min`.
#[track_caller]
pub fn ptp(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::subtract(
        &super::max(x, axis, keepdims),
        &super::min(x, axis, keepdims),
    )
}

/// `jnp.count_nonzero`: how many elements are nonzero, in the default
/// int.
#[track_caller]
pub fn count_nonzero(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let nonzero = lax::ne(x, &scalar_like(x, 0.0));
    let int = oxla_core::promotion::default_int(x64_enabled());
    super::sum(&lax::convert_element_type(&nonzero, int), axis, keepdims)
}

/// `jnp.average(x, axis, weights)`: the mean, or `sum(x w) / sum(w)` with
/// `weights` of `x`'s shape.
#[track_caller]
pub fn average(x: &Array, axis: Option<&[i64]>, weights: Option<&Array>) -> Array {
    match weights {
        None => super::mean(x, axis, false),
        Some(w) => {
            let x = to_inexact(x);
            let total = super::sum(&super::multiply(&x, w), axis, false);
            super::divide(&total, &super::sum(w, axis, false))
        }
    }
}

/// `x` with NaN replaced by `value`.
fn nan_as(x: &Array, value: f64) -> Array {
    if !x.dtype_or_bool().is_float() {
        return x.clone();
    }
    where_(&isnan(x), &scalar_like(x, value), x)
}

/// `jnp.nansum`: the sum, NaN counted as 0.
#[track_caller]
pub fn nansum(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::sum(&nan_as(x, 0.0), axis, keepdims)
}

/// `jnp.nanprod`: the product, NaN counted as 1.
#[track_caller]
pub fn nanprod(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::prod(&nan_as(x, 1.0), axis, keepdims)
}

/// `jnp.nanmax`: the maximum ignoring NaN (NaN where every element is).
#[track_caller]
pub fn nanmax(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    nan_extreme(x, axis, keepdims, f64::NEG_INFINITY, super::max)
}

/// `jnp.nanmin`: the minimum ignoring NaN (NaN where every element is).
#[track_caller]
pub fn nanmin(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    nan_extreme(x, axis, keepdims, f64::INFINITY, super::min)
}

fn nan_extreme(
    x: &Array,
    axis: Option<&[i64]>,
    keepdims: bool,
    neutral: f64,
    reduce: fn(&Array, Option<&[i64]>, bool) -> Array,
) -> Array {
    if !x.dtype_or_bool().is_float() {
        return reduce(x, axis, keepdims);
    }
    let out = reduce(&nan_as(x, neutral), axis, keepdims);
    let every_nan = all(&isnan(x), axis, keepdims);
    where_(&every_nan, &scalar_like(&out, f64::NAN), &out)
}

/// How many elements are not NaN, as `x`'s inexact dtype.
fn count_numbers(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    let numbers = lax::convert_element_type(&lax::eq(&x, &x), x.dtype_or_bool());
    super::sum(&numbers, axis, keepdims)
}

/// `jnp.nanmean`: the mean of the elements that are not NaN.
#[track_caller]
pub fn nanmean(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    super::divide(
        &nansum(&x, axis, keepdims),
        &count_numbers(&x, axis, keepdims),
    )
}

/// `jnp.nanvar`: the variance (ddof = 0) of the elements that are not NaN.
#[track_caller]
pub fn nanvar(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    // Zero where NaN before squaring (as JAX does), so the gradient there
    // is 0, not 0 · NaN.
    let centered = nan_as(&super::subtract(&x, &nanmean(&x, axis, true)), 0.0);
    let squares = super::square(&centered);
    super::divide(
        &super::sum(&squares, axis, keepdims),
        &count_numbers(&x, axis, keepdims),
    )
}

/// `jnp.nanstd`: the square root of [`nanvar`].
#[track_caller]
pub fn nanstd(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    super::sqrt(&nanvar(x, axis, keepdims))
}

/// `jnp.nanargmax`: the index of the maximum ignoring NaN (-1 where every
/// element is NaN).
#[track_caller]
pub fn nanargmax(x: &Array, axis: Option<i64>) -> Array {
    nan_arg(x, axis, f64::NEG_INFINITY, super::argmax)
}

/// `jnp.nanargmin`: the index of the minimum ignoring NaN (-1 where every
/// element is NaN).
#[track_caller]
pub fn nanargmin(x: &Array, axis: Option<i64>) -> Array {
    nan_arg(x, axis, f64::INFINITY, super::argmin)
}

fn nan_arg(
    x: &Array,
    axis: Option<i64>,
    neutral: f64,
    arg: fn(&Array, Option<i64>) -> Array,
) -> Array {
    if !x.dtype_or_bool().is_float() {
        return arg(x, axis);
    }
    let index = arg(&nan_as(x, neutral), axis);
    let axes = axis.map(|a| vec![a]);
    let every_nan = all(&isnan(x), axes.as_deref(), false);
    where_(&every_nan, &scalar_like(&index, -1.0), &index)
}

/// `jnp.cumulative_sum(x, axis, include_initial)`: the running sum along
/// `axis` (needed for arrays of rank above 1), after a leading 0 when
/// `include_initial`.
#[track_caller]
pub fn cumulative_sum(x: &Array, axis: Option<i64>, include_initial: bool) -> Array {
    with_initial(
        &super::cumsum(x, Some(axis.unwrap_or(0))),
        axis,
        include_initial,
        0.0,
    )
}

/// `jnp.cumulative_prod(x, axis, include_initial)`: the running product,
/// after a leading 1 when `include_initial`.
#[track_caller]
pub fn cumulative_prod(x: &Array, axis: Option<i64>, include_initial: bool) -> Array {
    with_initial(
        &super::cumprod(x, Some(axis.unwrap_or(0))),
        axis,
        include_initial,
        1.0,
    )
}

fn with_initial(running: &Array, axis: Option<i64>, include_initial: bool, initial: f64) -> Array {
    if !include_initial {
        return running.clone();
    }
    let rank = running.ndim_or_zero() as i64;
    let axis = axis.unwrap_or(0).rem_euclid(rank.max(1)) as usize;
    let mut config = vec![(0, 0, 0); running.ndim_or_zero()];
    config[axis] = (1, 0, 0);
    lax::pad(running, &scalar_like(running, initial), &config)
}

/// `jnp.nancumsum`: the running sum, NaN counted as 0.
#[track_caller]
pub fn nancumsum(x: &Array, axis: Option<i64>) -> Array {
    super::cumsum(&nan_as(x, 0.0), axis)
}

/// `jnp.nancumprod`: the running product, NaN counted as 1.
#[track_caller]
pub fn nancumprod(x: &Array, axis: Option<i64>) -> Array {
    super::cumprod(&nan_as(x, 1.0), axis)
}

/// `jnp.quantile(x, q, axis, keepdims)` with JAX's default `linear`
/// method: along `axis` (the flattened array for `None`), the sorted
/// values interpolated at `q (n - 1)`; `q` is a scalar or a 1-d array,
/// whose axis leads the result.
#[track_caller]
pub fn quantile(x: &Array, q: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    let (flat, axis, flattened) = match axis {
        None => (lax::reshape(&x, &[x.size_or_one()]), 0usize, true),
        Some(a) => match lax::canonical_axis("quantile", &x, a) {
            Ok(a) => (x.clone(), a, false),
            Err(e) => return Array::error(e),
        },
    };
    let n = flat.shape_or_empty()[axis];
    let sorted = lax::sort(&[&flat], axis as i64, true, 1).swap_remove(0);
    let q = lax::convert_element_type(q, x.dtype_or_bool());
    let position = super::multiply(&q, &scalar_like(&x, (n - 1) as f64));
    let low = lax::floor(&position);
    let high = lax::ceil(&position);
    let weight = super::subtract(&position, &low);
    let take = |index: &Array| {
        let index = lax::convert_element_type(index, DType::I32);
        let picked = super::take(&sorted, &index, Some(axis as i64), false);
        // The q axes (where `take` put them, at `axis`) go first.
        let q_rank = index.ndim_or_zero();
        let moved: Vec<i64> = (axis..axis + q_rank)
            .chain(0..axis)
            .chain(axis + q_rank..picked.ndim_or_zero())
            .map(|d| d as i64)
            .collect();
        super::transpose(&picked, Some(&moved))
    };
    let (below, above) = (take(&low), take(&high));
    let q_rank = q.ndim_or_zero();
    let weight = lax::reshape(
        &weight,
        &[
            weight.shape_or_empty(),
            &vec![1; below.ndim_or_zero() - q_rank][..],
        ]
        .concat(),
    );
    let out = super::add(
        &super::multiply(
            &below,
            &super::subtract(&scalar_like(&weight, 1.0), &weight),
        ),
        &super::multiply(&above, &weight),
    );
    if !keepdims {
        return out;
    }
    let mut shape = out.shape_or_empty().to_vec();
    match flattened {
        true => shape.splice(q_rank.., vec![1; x.ndim_or_zero()]),
        false => shape.splice(q_rank + axis..q_rank + axis, vec![1]),
    };
    lax::reshape(&out, &shape)
}

/// `jnp.nanquantile(x, q, axis, keepdims)`: [`quantile`] ignoring NaNs,
/// as JAX computes it: NaNs sorted last, each row interpolated at
/// `q (count - 1)` over its `count` numbers (NaN for a row of NaNs).
#[track_caller]
pub fn nanquantile(x: &Array, q: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    let rank = x.ndim_or_zero();
    let (a, axis) = match axis {
        None => (lax::reshape(&x, &[x.size_or_one()]), 0usize),
        Some(a) => match lax::canonical_axis("nanquantile", &x, a) {
            Ok(a) => (x.clone(), a),
            Err(e) => return Array::error(e),
        },
    };
    if q.ndim_or_zero() > 1 {
        return super::usage(
            "nanquantile",
            format!("q must have rank <= 1, got {}", q.ndim_or_zero()),
        );
    }
    let q = lax::convert_element_type(q, x.dtype_or_bool());
    let q_shape = q.shape_or_empty().to_vec();
    let q_rank = q_shape.len();
    // NaNs made positive, so they sort last.
    let a = where_(&isnan(&a), &scalar_like(&a, f64::NAN), &a);
    let a = lax::sort(&[&a], axis as i64, true, 1).swap_remove(0);
    let numbers = lax::convert_element_type(&lax::not(&isnan(&a)), q.dtype_or_bool());
    let counts = super::sum(&numbers, Some(&[axis as i64]), true);
    let a_shape = a.shape_or_empty().to_vec();
    // q's axes lead; the reduced axis is kept (size 1) until the end.
    let lead = |y: &Array| {
        let shape: Vec<i64> = vec![1; q_rank]
            .into_iter()
            .chain(y.shape_or_empty().iter().copied())
            .collect();
        lax::reshape(y, &shape)
    };
    let counts = lead(&counts);
    let q = lax::reshape(
        &q,
        &q_shape
            .iter()
            .copied()
            .chain(vec![1; a_shape.len()])
            .collect::<Vec<i64>>(),
    );
    let position = super::multiply(&q, &super::subtract(&counts, &scalar_like(&counts, 1.0)));
    let low = lax::floor(&position);
    let high = lax::ceil(&position);
    let high_weight = super::subtract(&position, &low);
    let low_weight = super::subtract(&scalar_like(&high_weight, 1.0), &high_weight);
    let last = super::subtract(&counts, &scalar_like(&counts, 1.0));
    let clamp = |i: &Array| {
        let i = super::maximum(&scalar_like(i, 0.0), &super::minimum(i, &last));
        lax::convert_element_type(&i, DType::I32)
    };
    let out_shape: Vec<i64> = q_shape
        .iter()
        .copied()
        .chain(
            a_shape
                .iter()
                .enumerate()
                .map(|(d, &n)| if d == axis { 1 } else { n }),
        )
        .collect();
    let full_a: Vec<i64> = q_shape
        .iter()
        .copied()
        .chain(a_shape.iter().copied())
        .collect();
    let a = super::broadcast_to(&lead(&a), &full_a);
    let pick = |i: &Array| {
        let index = super::broadcast_to(&clamp(i), &out_shape);
        super::take_along_axis(&a, &index, (q_rank + axis) as i64)
    };
    let out = super::add(
        &super::multiply(&pick(&low), &low_weight),
        &super::multiply(&pick(&high), &high_weight),
    );
    let reduced = (q_rank + axis) as i64;
    match (keepdims, x.ndim_or_zero() == a_shape.len()) {
        (false, _) => super::squeeze(&out, Some(&[reduced])),
        (true, true) => out,
        // The flattened array's result, kept as [q..., 1, 1, ...].
        (true, false) => lax::reshape(
            &out,
            &q_shape
                .iter()
                .copied()
                .chain(vec![1; rank])
                .collect::<Vec<i64>>(),
        ),
    }
}

/// `jnp.nanpercentile(x, q, ...)`: [`nanquantile`] at `q / 100`.
#[track_caller]
pub fn nanpercentile(x: &Array, q: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    let q = super::divide(&to_inexact(q), &Array::weak_scalar(100.0f64));
    nanquantile(x, &q, axis, keepdims)
}

/// `jnp.nanmedian(x, axis, keepdims)`: [`nanquantile`] at 0.5.
#[track_caller]
pub fn nanmedian(x: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    nanquantile(x, &Array::weak_scalar(0.5f64), axis, keepdims)
}

/// `jnp.percentile(x, q, ...)`: [`quantile`] at `q / 100`.
#[track_caller]
pub fn percentile(x: &Array, q: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    let q = super::divide(&to_inexact(q), &Array::weak_scalar(100.0f64));
    quantile(x, &q, axis, keepdims)
}

/// `jnp.median(x, axis, keepdims)`: [`quantile`] at 0.5.
#[track_caller]
pub fn median(x: &Array, axis: Option<i64>, keepdims: bool) -> Array {
    quantile(x, &Array::weak_scalar(0.5f64), axis, keepdims)
}
