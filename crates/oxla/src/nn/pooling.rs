//! Max and average pooling over the spatial axes of NHWC inputs, as Flax's
//! `nn.max_pool` and `nn.avg_pool`.

use oxla_core::WindowOp;

use crate::array::Array;
use crate::lax::{self, Padding};

/// The window, strides and padding of a pool over `x`'s middle axes
/// (batch and channels untouched).
fn full_window(
    x: &Array,
    window: &[i64],
    strides: &[i64],
    padding: &Padding,
) -> (Vec<i64>, Vec<i64>, Vec<(i64, i64)>) {
    let dims: Vec<i64> = [&[1], window, &[1]].concat();
    let steps: Vec<i64> = [&[1], strides, &[1]].concat();
    let pads = padding.pairs(x.shape(), &dims, &steps);
    (dims, steps, pads)
}

/// The maximum over each `window` of `x` `[batch, ..spatial, channels]`
/// moved by `strides` (1 along each axis when empty, as Flax); padding
/// counts as `-inf`.
#[track_caller]
pub fn max_pool(x: &Array, window: &[i64], strides: &[i64], padding: &Padding) -> Array {
    let ones = vec![1; window.len()];
    let strides = if strides.is_empty() { &ones } else { strides };
    let (dims, steps, pads) = full_window(x, window, strides, padding);
    lax::reduce_window(x, WindowOp::Max, &dims, &steps, &pads)
}

/// The mean over each `window` of `x` `[batch, ..spatial, channels]` moved
/// by `strides` (1 along each axis when empty); padded positions count in
/// the divisor, as Flax's default `count_include_pad=True`.
#[track_caller]
pub fn avg_pool(x: &Array, window: &[i64], strides: &[i64], padding: &Padding) -> Array {
    let ones = vec![1; window.len()];
    let strides = if strides.is_empty() { &ones } else { strides };
    let (dims, steps, pads) = full_window(x, window, strides, padding);
    let size: i64 = window.iter().product();
    lax::reduce_window(x, WindowOp::Sum, &dims, &steps, &pads) / size as f64
}
