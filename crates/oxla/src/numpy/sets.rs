//! `jnp.unique` and its array-API forms (`unique_all`, `unique_counts`,
//! `unique_inverse`, `unique_values`) and the set operations of 1-D arrays
//! (`union1d`, `intersect1d`, `setdiff1d`, `setxor1d`). Their output sizes
//! depend on the data: with JAX's static `size` they trace (results padded
//! with `fill_value`, by default JAX's: the smallest result), without it the
//! input must be concrete (eager), as in JAX outside jit.

use oxla_core::DType;

use super::usage;
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

fn int() -> DType {
    oxla_core::promotion::default_int(x64_enabled())
}

/// What `jnp.unique` is asked for beyond the array.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueOptions {
    /// Unique slices along this axis; `None` flattens the array first.
    pub axis: Option<i64>,
    /// Whether NaNs count as one value (JAX's default, `true`).
    pub equal_nan: bool,
    /// A static number of results (truncated or padded); `None` needs a
    /// concrete array.
    pub size: Option<i64>,
    /// The padding when `size` exceeds the unique values (default: the
    /// smallest unique value).
    pub fill_value: Option<f64>,
}

impl Default for UniqueOptions {
    fn default() -> Self {
        UniqueOptions {
            axis: None,
            equal_nan: true,
            size: None,
            fill_value: None,
        }
    }
}

/// Everything `jnp.unique` can return.
#[derive(Debug, Clone)]
pub struct UniqueAll {
    /// The sorted unique values (slices along the axis).
    pub values: Array,
    /// Where each value first occurs in the (flattened) input.
    pub indices: Array,
    /// For each input element, the index of its value in `values` (the
    /// input's shape when the axis is `None`).
    pub inverse_indices: Array,
    /// How often each value occurs.
    pub counts: Array,
}

/// The value of a concrete count of the default integer type.
fn concrete_count(count: &Array) -> Option<i64> {
    match count.dtype_or_bool() {
        DType::I64 => count.item::<i64>().ok(),
        _ => count.item::<i32>().ok().map(i64::from),
    }
}

/// The result count `size` or, without one, the concrete `count`.
#[track_caller]
fn static_size(function: &str, size: Option<i64>, count: &Array) -> Result<i64, Array> {
    match size {
        Some(s) if s < 0 => Err(usage(function, format!("size must be >= 0, got {s}"))),
        Some(s) => Ok(s),
        None => match concrete_count(count) {
            Some(n) => Ok(n),
            None => Err(usage(
                function,
                "without a size the input must be concrete (under jit pass a size)".into(),
            )),
        },
    }
}

/// `values` with entries at and past `count` (along axis 0) replaced by
/// `fill`.
fn pad_after(values: &Array, count: &Array, fill: &Array) -> Array {
    let n = values.shape_or_empty().first().copied().unwrap_or(0);
    let mut mask_shape = vec![n];
    mask_shape.extend(std::iter::repeat_n(
        1,
        values.ndim_or_zero().saturating_sub(1),
    ));
    let valid = lax::reshape(
        &lax::lt(
            &super::arange(0.0, n as f64, 1.0, count.dtype_or_bool()),
            count,
        ),
        &mask_shape,
    );
    let valid = super::broadcast_to(&valid, values.shape_or_empty());
    let fill = super::broadcast_to(
        &lax::convert_element_type(fill, values.dtype_or_bool()),
        values.shape_or_empty(),
    );
    lax::select(&valid, values, &fill)
}

/// JAX's `_unique` along axis 0 of `aux`.
#[track_caller]
fn unique_along_first(
    function: &str,
    aux: &Array,
    equal_nan: bool,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Result<UniqueAll, Array> {
    let shape = aux.shape_or_empty().to_vec();
    let n = shape.first().copied().unwrap_or(0);
    let rest: i64 = shape[1..].iter().product();
    if n == 0 {
        let values = match (size, fill_value) {
            (Some(s), Some(f)) if s > 0 => {
                let mut dims = vec![s];
                dims.extend_from_slice(&shape[1..]);
                super::full(&dims, f, aux.dtype_or_bool())
            }
            (Some(s), None) if s > 0 => {
                return Err(usage(
                    function,
                    "for zero-sized input with nonzero size argument, fill_value must be \
                     specified"
                        .into(),
                ));
            }
            _ => aux.clone(),
        };
        let empty = super::zeros(&[0], int());
        return Ok(UniqueAll {
            values,
            indices: empty.clone(),
            inverse_indices: empty.clone(),
            counts: empty,
        });
    }
    if rest == 0 {
        return Err(usage(
            function,
            format!("cannot find unique slices that hold no elements (shape {shape:?})"),
        ));
    }
    let aux = if aux.dtype_or_bool().is_complex() {
        let nan = super::full_like(aux, f64::NAN);
        lax::select(&super::isnan(aux), &nan, aux)
    } else {
        aux.clone()
    };
    let perm = if shape.len() == 1 {
        super::ordering::lexsort(&[&aux], 0)
    } else {
        let rows = lax::reshape(&aux, &[n, rest]);
        let columns: Vec<Array> = (0..rest)
            .rev()
            .map(|j| lax::slice_in_dim(&rows, j, Some(j + 1), 1, 1))
            .map(|c| lax::reshape(&c, &[n]))
            .collect();
        super::ordering::lexsort(&columns.iter().collect::<Vec<_>>(), 0)
    };
    let sorted = super::take(&aux, &perm, Some(0), false);
    let later = lax::slice_in_dim(&sorted, 1, None, 1, 0);
    let earlier = lax::slice_in_dim(&sorted, 0, Some(n - 1), 1, 0);
    let mut differ = lax::ne(&later, &earlier);
    if equal_nan && aux.dtype_or_bool().is_inexact() {
        let both_nan = lax::and(&super::isnan(&later), &super::isnan(&earlier));
        differ = lax::and(&differ, &lax::not(&both_nan));
    }
    let axes: Vec<i64> = (1..shape.len() as i64).collect();
    let differ = if axes.is_empty() {
        differ
    } else {
        super::reductions::any(&differ, Some(&axes), false)
    };
    let mask = super::concatenate(&[&super::full(&[1], 1.0, DType::Bool), &differ], 0);
    let count = super::sum(&lax::convert_element_type(&mask, int()), None, false);
    let size = static_size(function, size, &count)?;
    let ind = super::nonzero(&mask, size, Some(0)).remove(0);
    let mut values = super::take(&sorted, &ind, Some(0), false);
    if let Some(fill) = fill_value {
        values = pad_after(&values, &count, &Array::weak_scalar(fill));
    }
    let indices = super::take(&perm, &ind, None, false);
    let running = lax::sub(
        &super::cumsum(&lax::convert_element_type(&mask, int()), None),
        &lax::convert_element_type(&Array::weak_scalar(1i64), int()),
    );
    let inverse_indices = super::take(&running, &super::argsort(&perm, 0), None, false);
    let bounds = super::nonzero(&mask, size + 1, Some(0)).remove(0);
    let tail = lax::slice_in_dim(&bounds, 1, None, 1, 0);
    let end = lax::convert_element_type(&Array::weak_scalar(n), int());
    let tail = lax::select(
        &lax::ne(&tail, &super::zeros_like(&tail)),
        &tail,
        &super::broadcast_to(&end, tail.shape_or_empty()),
    );
    let head = lax::slice_in_dim(&bounds, 0, Some(1), 1, 0);
    let counts = super::arrays::diff(&super::concatenate(&[&head, &tail], 0), 1, 0);
    Ok(UniqueAll {
        values,
        indices,
        inverse_indices,
        counts,
    })
}

/// `jnp.unique(ar, return_index=True, return_inverse=True,
/// return_counts=True, ...)`: the sorted unique values (or slices along
/// `options.axis`) with where each first occurs, the inverse indices and
/// the counts.
#[track_caller]
pub fn unique_with(ar: &Array, options: &UniqueOptions) -> Result<UniqueAll, Array> {
    unique_for("unique", ar, options)
}

/// [`unique_with`] for `function` (named in errors).
#[track_caller]
fn unique_for(function: &str, ar: &Array, options: &UniqueOptions) -> Result<UniqueAll, Array> {
    let (aux, axis) = match options.axis {
        None => (super::ravel(ar), 0),
        Some(axis) => {
            let ndim = ar.ndim_or_zero() as i64;
            if !(-ndim..ndim).contains(&axis) {
                return Err(usage(
                    function,
                    format!("axis {axis} is out of bounds for an array of rank {ndim}"),
                ));
            }
            (super::moveaxis(ar, axis, 0), axis)
        }
    };
    let mut all = unique_along_first(
        function,
        &aux,
        options.equal_nan,
        options.size,
        options.fill_value,
    )?;
    all.values = super::moveaxis(&all.values, 0, axis);
    if options.axis.is_none() && ar.ndim_or_zero() > 0 && ar.size_or_one() > 0 {
        all.inverse_indices = lax::reshape(&all.inverse_indices, ar.shape_or_empty());
    }
    Ok(all)
}

/// `jnp.unique(ar, axis=..., equal_nan=..., size=..., fill_value=...)`: the
/// sorted unique values (slices along `options.axis`).
#[track_caller]
pub fn unique(ar: &Array, options: &UniqueOptions) -> Array {
    unique_with(ar, options).map_or_else(|e| e, |u| u.values)
}

/// The array-API forms: NaNs are distinct, the array flattened.
#[track_caller]
fn array_api(
    function: &str,
    ar: &Array,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Result<UniqueAll, Array> {
    unique_for(
        function,
        ar,
        &UniqueOptions {
            axis: None,
            equal_nan: false,
            size,
            fill_value,
        },
    )
}

/// `jnp.unique_all(x, size, fill_value)`: values, first indices, inverse
/// indices (of `x`'s shape) and counts, NaNs distinct.
#[track_caller]
pub fn unique_all(
    x: &Array,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Result<UniqueAll, Array> {
    array_api("unique_all", x, size, fill_value)
}

/// `jnp.unique_counts(x, size, fill_value)`: the values and their counts.
#[track_caller]
pub fn unique_counts(x: &Array, size: Option<i64>, fill_value: Option<f64>) -> (Array, Array) {
    match array_api("unique_counts", x, size, fill_value) {
        Ok(u) => (u.values, u.counts),
        Err(e) => (e.clone(), e),
    }
}

/// `jnp.unique_inverse(x, size, fill_value)`: the values and, for each
/// element of `x`, the index of its value.
#[track_caller]
pub fn unique_inverse(x: &Array, size: Option<i64>, fill_value: Option<f64>) -> (Array, Array) {
    match array_api("unique_inverse", x, size, fill_value) {
        Ok(u) => (u.values, u.inverse_indices),
        Err(e) => (e.clone(), e),
    }
}

/// `jnp.unique_values(x, size, fill_value)`: the sorted unique values,
/// NaNs distinct.
#[track_caller]
pub fn unique_values(x: &Array, size: Option<i64>, fill_value: Option<f64>) -> Array {
    array_api("unique_values", x, size, fill_value).map_or_else(|e| e, |u| u.values)
}

/// `jnp.union1d(ar1, ar2, size, fill_value)`: the sorted unique values of
/// both arrays (flattened).
#[track_caller]
pub fn union1d(ar1: &Array, ar2: &Array, size: Option<i64>, fill_value: Option<f64>) -> Array {
    let both = super::concatenate(&[&super::ravel(ar1), &super::ravel(ar2)], 0);
    let options = UniqueOptions {
        size,
        fill_value,
        ..UniqueOptions::default()
    };
    unique_for("union1d", &both, &options).map_or_else(|e| e, |u| u.values)
}

/// The unique values of `x` (flattened), padded to its length, and how
/// many there are: JAX's `_unique(x, size=x.size)`.
#[track_caller]
fn unique_padded(function: &str, x: &Array) -> Result<(Array, Array), Array> {
    let n = x.size_or_one();
    let u = unique_along_first(function, x, true, Some(n), None)?;
    let count = super::sum(
        &lax::convert_element_type(
            &super::greater(&u.counts, &super::zeros_like(&u.counts)),
            int(),
        ),
        None,
        false,
    );
    Ok((u.values, count))
}

/// A set operation's view of the 1-D `x`: its values and which are valid
/// members. Assumed unique, `x` itself, all valid; otherwise its sorted
/// unique values padded to its length, the padding invalid.
#[track_caller]
fn members(function: &str, x: &Array, assume_unique: bool) -> Result<(Array, Array), Array> {
    if assume_unique {
        let n = x.size_or_one();
        return Ok((x.clone(), super::full(&[n], 1.0, DType::Bool)));
    }
    let (u, count) = unique_padded(function, x)?;
    let len = u.size_or_one();
    let valid = lax::lt(&super::arange(0.0, len as f64, 1.0, int()), &count);
    Ok((u, valid))
}

/// Whether each element of `x` equals an element of `y` (1-D both).
fn contained(x: &Array, y: &Array) -> Array {
    if y.size_or_one() == 0 {
        return super::full(x.shape_or_empty(), 0.0, DType::Bool);
    }
    let equal = lax::eq(&super::expand_dims(x, 1), &super::expand_dims(y, 0));
    super::reductions::any(&equal, Some(&[1]), false)
}

/// The `size` entries of the sorted 1-D `candidates` that `keep` selects,
/// padded with `fill_value` or, by default, with the smallest selected
/// entry (0 when none), as JAX's set operations pad; without a size, as
/// many as the concrete `keep` selects.
#[track_caller]
fn select_sorted(
    function: &str,
    candidates: &Array,
    keep: &Array,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Array {
    let count = super::sum(&lax::convert_element_type(keep, int()), None, false);
    let size = match static_size(function, size, &count) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let n = candidates.size_or_one();
    let ind = super::nonzero(keep, size, Some(n)).remove(0);
    let picked = super::take(
        candidates,
        &lax::clamp(
            &super::zeros_like(&ind),
            &ind,
            &lax::convert_element_type(&Array::weak_scalar((n - 1).max(0)), int()),
        ),
        None,
        false,
    );
    let fill = match fill_value {
        Some(f) => Array::weak_scalar(f),
        None => {
            let zero = super::zeros_like(&picked);
            let masked = pad_after(&picked, &count, &zero);
            let largest = super::max(&masked, None, false);
            let masked = pad_after(&masked, &count, &largest);
            super::min(&masked, None, false)
        }
    };
    pad_after(&picked, &count, &fill)
}

/// `jnp.intersect1d(ar1, ar2, assume_unique, size, fill_value)`: the sorted
/// values in both arrays (flattened).
#[track_caller]
pub fn intersect1d(
    ar1: &Array,
    ar2: &Array,
    assume_unique: bool,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Array {
    let v = super::promote_args(&[&super::ravel(ar1), &super::ravel(ar2)]);
    // Unique values are sorted; assumed ones are sorted here, since the
    // intersection comes out in the first array's order.
    let first = if assume_unique {
        super::sort(&v[0], 0)
    } else {
        v[0].clone()
    };
    let ((u1, valid1), (u2, valid2)) = match (
        members("intersect1d", &first, assume_unique),
        members("intersect1d", &v[1], assume_unique),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let in_both = lax::and(&valid1, &contained(&u1, &compress_valid(&u2, &valid2)));
    select_sorted("intersect1d", &u1, &in_both, size, fill_value)
}

/// `u` with its invalid entries replaced by a valid one (its first), so
/// membership tests see only valid values.
fn compress_valid(u: &Array, valid: &Array) -> Array {
    if u.size_or_one() == 0 {
        return u.clone();
    }
    let first = lax::slice_in_dim(u, 0, Some(1), 1, 0);
    lax::select(valid, u, &super::broadcast_to(&first, u.shape_or_empty()))
}

/// `jnp.setdiff1d(ar1, ar2, assume_unique, size, fill_value)`: the sorted
/// unique values of `ar1` not in `ar2` (flattened; in `ar1`'s order when
/// `assume_unique`), padded with `fill_value` (default 0).
#[track_caller]
pub fn setdiff1d(
    ar1: &Array,
    ar2: &Array,
    assume_unique: bool,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Array {
    let (a, b) = (super::ravel(ar1), super::ravel(ar2));
    let fill = fill_value.unwrap_or(0.0);
    if a.size_or_one() == 0 {
        return super::full(&[size.unwrap_or(0)], fill, a.dtype_or_bool());
    }
    let (a, valid) = match members("setdiff1d", &a, assume_unique) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let v = super::promote_args(&[&a, &b]);
    let keep = lax::and(&valid, &lax::not(&contained(&v[0], &v[1])));
    select_sorted("setdiff1d", &a, &keep, size, Some(fill))
}

/// `jnp.setxor1d(ar1, ar2, assume_unique, size, fill_value)`: the sorted
/// values in exactly one of the arrays (flattened).
#[track_caller]
pub fn setxor1d(
    ar1: &Array,
    ar2: &Array,
    assume_unique: bool,
    size: Option<i64>,
    fill_value: Option<f64>,
) -> Array {
    let v = super::promote_args(&[&super::ravel(ar1), &super::ravel(ar2)]);
    let ((u1, valid1), (u2, valid2)) = match (
        members("setxor1d", &v[0], assume_unique),
        members("setxor1d", &v[1], assume_unique),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let only1 = lax::and(
        &valid1,
        &lax::not(&contained(&u1, &compress_valid(&u2, &valid2))),
    );
    let only2 = lax::and(
        &valid2,
        &lax::not(&contained(&u2, &compress_valid(&u1, &valid1))),
    );
    let values = super::concatenate(&[&u1, &u2], 0);
    let keep = super::concatenate(&[&only1, &only2], 0);
    // Kept values first, each group in ascending order.
    let sorted = lax::sort(&[&lax::not(&keep), &values], 0, true, 2);
    let (keep, values) = (lax::not(&sorted[0]), sorted[1].clone());
    select_sorted("setxor1d", &values, &keep, size, fill_value)
}
