//! `jax.lax`'s conveniences over its primitives: filled arrays and iotas,
//! `collapse`, `broadcast_to_rank`, `dot` and `batch_matmul`, `select`,
//! the scatter family by combiner, `sort_key_val`, `stack`/`unstack`,
//! `tile`, `optimization_barrier`, `conv` and `conv_with_general_padding`,
//! and `padtype_to_pads`, as JAX defines them.

use oxla_core::primitive::marker;
use oxla_core::{DType, Primitive, ScatterDimensionNumbers, ScatterOp};

use super::{ConvOptions, Padding, dot_general, iota, neg, reshape, scatter, select_n, sort};
use crate::array::Array;

/// `lax.full(shape, fill_value, dtype)`.
#[track_caller]
pub fn full(shape: &[i64], fill_value: f64, dtype: DType) -> Array {
    crate::numpy::full(shape, fill_value, dtype)
}

/// `lax.full_like(x, fill_value, dtype)`: `x`'s shape (and dtype unless
/// given), filled.
#[track_caller]
pub fn full_like(x: &Array, fill_value: f64, dtype: Option<DType>) -> Array {
    let dtype = dtype.unwrap_or(x.dtype_or_bool());
    crate::numpy::full(x.shape_or_empty(), fill_value, dtype)
}

/// `lax.broadcasted_iota(dtype, shape, dimension)`: [`iota`].
#[track_caller]
pub fn broadcasted_iota(dtype: DType, shape: &[i64], dimension: usize) -> Array {
    iota(dtype, shape, dimension)
}

/// `lax.collapse(x, start, stop)`: dimensions `start..stop` merged into
/// one.
#[track_caller]
pub fn collapse(x: &Array, start: usize, stop: usize) -> Array {
    let shape = x.shape_or_empty();
    let stop = stop.min(shape.len());
    let start = start.min(stop);
    let merged: i64 = shape[start..stop].iter().product();
    let new: Vec<i64> = shape[..start]
        .iter()
        .copied()
        .chain([merged])
        .chain(shape[stop..].iter().copied())
        .collect();
    reshape(x, &new)
}

/// `lax.broadcast_to_rank(x, rank)`: leading size-1 dimensions up to
/// `rank`.
#[track_caller]
pub fn broadcast_to_rank(x: &Array, rank: usize) -> Array {
    let shape = x.shape_or_empty();
    if shape.len() >= rank {
        return x.clone();
    }
    let mut new = vec![1; rank - shape.len()];
    new.extend_from_slice(shape);
    reshape(x, &new)
}

/// `lax.reciprocal(x)`: `1 / x`.
#[track_caller]
pub fn reciprocal(x: &Array) -> Array {
    super::integer_pow(x, -1)
}

/// `lax.dot(lhs, rhs)`: vector or matrix product, the last axis of `lhs`
/// contracted with the first of `rhs`.
#[track_caller]
pub fn dot(lhs: &Array, rhs: &Array, preferred_element_type: Option<DType>) -> Array {
    let last = lhs.ndim_or_zero().saturating_sub(1) as i64;
    dot_general(
        lhs,
        rhs,
        ((&[last], &[0]), (&[], &[])),
        preferred_element_type,
    )
}

/// `lax.batch_matmul(lhs, rhs)`: matrix products over equal leading batch
/// dimensions.
#[track_caller]
pub fn batch_matmul(lhs: &Array, rhs: &Array, preferred_element_type: Option<DType>) -> Array {
    let rank = lhs.ndim_or_zero();
    let batch: Vec<i64> = (0..rank.saturating_sub(2) as i64).collect();
    dot_general(
        lhs,
        rhs,
        ((&[rank as i64 - 1], &[rank as i64 - 2]), (&batch, &batch)),
        preferred_element_type,
    )
}

/// `lax.select(pred, on_true, on_false)`: [`select_n`] with the cases in
/// the other order.
#[track_caller]
pub fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    select_n(pred, &[on_false, on_true])
}

macro_rules! scatter_by {
    ($($name:ident => $op:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(
            operand: &Array,
            indices: &Array,
            updates: &Array,
            dimension_numbers: ScatterDimensionNumbers,
        ) -> Array {
            scatter(operand, indices, updates, ScatterOp::$op, dimension_numbers)
        }
    )*};
}

scatter_by! {
    scatter_add => Add: "`lax.scatter_add`: the updates added at the indexed windows.";
    scatter_mul => Mul: "`lax.scatter_mul`: the windows multiplied by the updates.";
    scatter_min => Min: "`lax.scatter_min`: the minimum of window and update.";
    scatter_max => Max: "`lax.scatter_max`: the maximum of window and update.";
}

/// `lax.scatter_sub`: the updates subtracted at the indexed windows.
#[track_caller]
pub fn scatter_sub(
    operand: &Array,
    indices: &Array,
    updates: &Array,
    dimension_numbers: ScatterDimensionNumbers,
) -> Array {
    scatter_add(operand, indices, &neg(updates), dimension_numbers)
}

/// `lax.sort_key_val(keys, values, dimension, is_stable)`: `values`
/// reordered as `keys` sort.
#[track_caller]
pub fn sort_key_val(
    keys: &Array,
    values: &Array,
    dimension: i64,
    is_stable: bool,
) -> (Array, Array) {
    let mut sorted = sort(&[keys, values], dimension, is_stable, 1).into_iter();
    let error = || {
        Array::error(crate::Error::InvalidArgument(
            "sort_key_val: sort returned fewer results".into(),
        ))
    };
    let keys = sorted.next().unwrap_or_else(error);
    let values = sorted.next().unwrap_or_else(error);
    (keys, values)
}

/// `lax.stack(arrays, axis)`: [`jnp.stack`](crate::numpy::stack).
#[track_caller]
pub fn stack(arrays: &[&Array], axis: i64) -> Array {
    crate::numpy::stack(arrays, axis)
}

/// `lax.unstack(x, axis)`: the slices along `axis`.
#[track_caller]
pub fn unstack(x: &Array, axis: i64) -> Vec<Array> {
    crate::numpy::unstack(x, axis)
}

/// `lax.tile(x, reps)`: [`jnp.tile`](crate::numpy::tile).
#[track_caller]
pub fn tile(x: &Array, reps: &[i64]) -> Array {
    crate::numpy::tile(x, reps)
}

/// `lax.optimization_barrier(operands)`: the operands, which XLA may not
/// move computations across.
#[track_caller]
pub fn optimization_barrier(operands: &[&Array]) -> Vec<Array> {
    let location = crate::ops::current_location(std::panic::Location::caller());
    crate::ops::bind_at(
        Primitive::Marker(marker::Op::OptimizationBarrier),
        operands,
        location,
    )
    .unwrap_or_else(|e| vec![Array::error(e); operands.len()])
}

/// `lax.conv(lhs, rhs, window_strides, padding)`: a convolution in
/// `NCHW` / `OIHW` layout.
#[track_caller]
pub fn conv(lhs: &Array, rhs: &Array, window_strides: &[i64], padding: &Padding) -> Array {
    conv_with_general_padding(lhs, rhs, window_strides, padding, &[], &[])
}

/// `lax.conv_with_general_padding`: [`conv`] with input and kernel
/// dilations.
#[track_caller]
pub fn conv_with_general_padding(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: &Padding,
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Array {
    let spatial = window_strides.len();
    let letters = &"HWDEFGJKL"[..spatial.min(9)];
    let (lhs_layout, rhs_layout) = (format!("NC{letters}"), format!("OI{letters}"));
    super::conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        (&lhs_layout, &rhs_layout, &lhs_layout),
        &ConvOptions {
            lhs_dilation: lhs_dilation.to_vec(),
            rhs_dilation: rhs_dilation.to_vec(),
            ..ConvOptions::default()
        },
    )
}

/// `lax.padtype_to_pads(in_shape, window_shape, window_strides, padding)`:
/// the `(low, high)` padding of each spatial dimension.
pub fn padtype_to_pads(
    in_shape: &[i64],
    window_shape: &[i64],
    window_strides: &[i64],
    padding: &Padding,
) -> Vec<(i64, i64)> {
    padding.pairs(in_shape, window_shape, window_strides)
}
