//! Slicing, indexing and updating along one dimension (JAX's
//! `lax.slice_in_dim`, `index_in_dim`, `dynamic_slice_in_dim`,
//! `dynamic_index_in_dim`, `dynamic_update_slice_in_dim`,
//! `dynamic_update_index_in_dim`), `lax.broadcast` and `lax.reshape` with
//! `dimensions`: each a thin layer over one primitive, with JAX's defaults.

use crate::array::Array;
use crate::error::Error;
use crate::lax;

/// `axis` of `x` counted from the end when negative, or the error array.
#[track_caller]
fn dim(function: &'static str, x: &Array, axis: i64) -> Result<usize, Array> {
    lax::canonical_axis(function, x, axis).map_err(Array::error)
}

/// `x[..., start:limit:stride, ...]` along `axis`, as
/// `jax.lax.slice_in_dim`: negative `start`/`limit` count from the end,
/// `None` is the end.
#[track_caller]
pub fn slice_in_dim(x: &Array, start: i64, limit: Option<i64>, stride: i64, axis: i64) -> Array {
    let axis = match dim("slice_in_dim", x, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let shape = x.shape_or_empty();
    let n = shape[axis];
    let wrap = |i: i64| if i < 0 { i + n } else { i };
    let mut starts = vec![0; shape.len()];
    let mut limits = shape.to_vec();
    let mut strides = vec![1; shape.len()];
    starts[axis] = wrap(start);
    limits[axis] = limit.map_or(n, wrap);
    strides[axis] = stride;
    lax::slice(x, &starts, &limits, Some(&strides))
}

/// Element `index` of `x` along `axis` (negative from the end), the dim
/// kept with size 1 when `keepdims`, as `jax.lax.index_in_dim`. An index
/// out of range is an error, as in JAX.
#[track_caller]
pub fn index_in_dim(x: &Array, index: i64, axis: i64, keepdims: bool) -> Array {
    let axis_usize = match dim("index_in_dim", x, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let n = x.shape_or_empty()[axis_usize];
    let wrapped = if index < 0 { index + n } else { index };
    if !(0..n).contains(&wrapped) {
        return Array::error(Error::Usage {
            function: "index_in_dim",
            message: format!("index {index} is out of bounds for axis {axis} of size {n}"),
            location: oxla_core::Location::from_caller(std::panic::Location::caller()),
        });
    }
    let sliced = slice_in_dim(x, wrapped, Some(wrapped + 1), 1, axis);
    if keepdims {
        sliced
    } else {
        lax::squeeze(&sliced, &[axis_usize as i64])
    }
}

/// The start of every dim: 0, and `start` along `axis`.
fn starts_along(x: &Array, start: &Array, axis: usize) -> Vec<Array> {
    let zero = lax::convert_element_type(&Array::weak_scalar(0i32), start.dtype_or_bool());
    (0..x.ndim_or_zero())
        .map(|d| {
            if d == axis {
                start.clone()
            } else {
                zero.clone()
            }
        })
        .collect()
}

/// `size` elements of `x` from the traced `start` along `axis`, as
/// `jax.lax.dynamic_slice_in_dim` (`start` clamped so the slice fits, as
/// `dynamic_slice` does; negative from the end).
#[track_caller]
pub fn dynamic_slice_in_dim(x: &Array, start: &Array, size: i64, axis: i64) -> Array {
    let axis = match dim("dynamic_slice_in_dim", x, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let starts = starts_along(x, start, axis);
    let refs: Vec<&Array> = starts.iter().collect();
    let mut sizes = x.shape_or_empty().to_vec();
    sizes[axis] = size;
    lax::dynamic_slice(x, &refs, &sizes)
}

/// Element `index` (traced) of `x` along `axis`, as
/// `jax.lax.dynamic_index_in_dim`.
#[track_caller]
pub fn dynamic_index_in_dim(x: &Array, index: &Array, axis: i64, keepdims: bool) -> Array {
    let sliced = dynamic_slice_in_dim(x, index, 1, axis);
    if keepdims {
        return sliced;
    }
    match dim("dynamic_index_in_dim", x, axis) {
        Ok(a) => lax::squeeze(&sliced, &[a as i64]),
        Err(e) => e,
    }
}

/// `x` with `update` written from the traced `start` along `axis`, as
/// `jax.lax.dynamic_update_slice_in_dim`.
#[track_caller]
pub fn dynamic_update_slice_in_dim(x: &Array, update: &Array, start: &Array, axis: i64) -> Array {
    let axis = match dim("dynamic_update_slice_in_dim", x, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let starts = starts_along(x, start, axis);
    let refs: Vec<&Array> = starts.iter().collect();
    lax::dynamic_update_slice(x, update, &refs)
}

/// `x` with `update` (with or without the dim of `axis`) written at the
/// traced `index` along `axis`, as `jax.lax.dynamic_update_index_in_dim`.
#[track_caller]
pub fn dynamic_update_index_in_dim(x: &Array, update: &Array, index: &Array, axis: i64) -> Array {
    let axis_usize = match dim("dynamic_update_index_in_dim", x, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let update = if update.ndim_or_zero() + 1 == x.ndim_or_zero() {
        lax::expand_dims(update, &[axis_usize as i64])
    } else {
        update.clone()
    };
    dynamic_update_slice_in_dim(x, &update, index, axis)
}

/// `x` broadcast to `sizes ++ x.shape` (new leading dims), as
/// `jax.lax.broadcast`.
#[track_caller]
pub fn broadcast(x: &Array, sizes: &[i64]) -> Array {
    let mut shape = sizes.to_vec();
    shape.extend_from_slice(x.shape_or_empty());
    let kept: Vec<i64> = (sizes.len() as i64..shape.len() as i64).collect();
    lax::broadcast_in_dim(x, &shape, &kept)
}

/// `x`'s dims permuted by `dimensions`, then reshaped to `new_sizes`, as
/// `jax.lax.reshape(x, new_sizes, dimensions)`.
#[track_caller]
pub fn reshape_with_dimensions(x: &Array, new_sizes: &[i64], dimensions: &[i64]) -> Array {
    lax::reshape(&lax::transpose(x, dimensions), new_sizes)
}
