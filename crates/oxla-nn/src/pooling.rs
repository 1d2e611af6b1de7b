//! Max and average pooling over the spatial axes of NHWC inputs, as Flax's
//! `nn.max_pool` and `nn.avg_pool`.

use oxla::lax::WindowOp;

use oxla::Array;
use oxla::lax::{self, Padding};

/// A pool's window dimensions, strides and (low, high) padding over every
/// axis of its input.
type Window = (Vec<i64>, Vec<i64>, Vec<(i64, i64)>);

/// The window, strides and padding of a pool over `x`'s middle axes
/// (batch and channels untouched): explicit padding names the spatial axes
/// only, one `(low, high)` pair each, as Flax's `pool`, and gets `(0, 0)`
/// for batch and channels; the window, strides and pairs must agree with
/// `x`'s spatial rank (an error naming the pool, the shapes and the line).
#[track_caller]
fn full_window(
    pool: &str,
    x: &Array,
    window: &[i64],
    strides: &[i64],
    padding: &Padding,
) -> Result<Window, Array> {
    let aval = x.aval().map_err(|e| Array::error(e.clone()))?;
    let shape = aval.shape.clone();
    let spatial = shape.len().saturating_sub(2);
    let explicit = match padding {
        Padding::Explicit(pairs) => Some(pairs.len()),
        Padding::Valid | Padding::Same => None,
    };
    if shape.len() < 3
        || window.len() != spatial
        || strides.len() != spatial
        || explicit.is_some_and(|n| n != spatial)
    {
        let location = oxla::Location::from_caller(std::panic::Location::caller());
        let pairs = explicit.map_or(String::new(), |n| format!(", {n} padding pairs"));
        return Err(Array::error(oxla::Error::InvalidArgument(format!(
            "{location}: {pool} of {aval} ([batch, ..spatial, channels]) takes one window \
             size, stride and padding pair per spatial axis ({spatial}); got a window of {}, \
             {} strides{pairs}",
            window.len(),
            strides.len()
        ))));
    }
    let dims: Vec<i64> = [&[1], window, &[1]].concat();
    let steps: Vec<i64> = [&[1], strides, &[1]].concat();
    let pads = match padding {
        Padding::Explicit(pairs) => [&[(0, 0)], pairs.as_slice(), &[(0, 0)]].concat(),
        Padding::Valid | Padding::Same => padding.pairs(&shape, &dims, &steps),
    };
    Ok((dims, steps, pads))
}

/// The maximum over each `window` of `x` `[batch, ..spatial, channels]`
/// moved by `strides` (1 along each axis when empty, as Flax); padding
/// counts as `-inf`.
///
/// ```
/// use oxla::Array;
/// use oxla::lax::Padding;
/// use oxla_nn::max_pool;
/// # fn main() -> oxla::Result<()> {
/// // One 4×4 single-channel image (NHWC), 2×2 windows with stride 2.
/// let x = Array::from_slice(&(0..16).map(|v| v as f32).collect::<Vec<_>>(), &[1, 4, 4, 1])?;
/// let y = max_pool(&x, &[2, 2], &[2, 2], &Padding::Valid);
/// assert_eq!(y.shape(), &[1, 2, 2, 1]);
/// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn max_pool(x: &Array, window: &[i64], strides: &[i64], padding: &Padding) -> Array {
    let ones = vec![1; window.len()];
    let strides = if strides.is_empty() { &ones } else { strides };
    match full_window("max_pool", x, window, strides, padding) {
        Ok((dims, steps, pads)) => lax::reduce_window(x, WindowOp::Max, &dims, &steps, &pads),
        Err(e) => e,
    }
}

/// The mean over each `window` of `x` `[batch, ..spatial, channels]` moved
/// by `strides` (1 along each axis when empty); padded positions count in
/// the divisor, as Flax's default `count_include_pad=True`.
///
/// ```
/// use oxla::Array;
/// use oxla::lax::Padding;
/// use oxla_nn::avg_pool;
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&(0..16).map(|v| v as f32).collect::<Vec<_>>(), &[1, 4, 4, 1])?;
/// let y = avg_pool(&x, &[2, 2], &[2, 2], &Padding::Valid);
/// assert_eq!(y.to_vec::<f32>()?, vec![2.5, 4.5, 10.5, 12.5]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn avg_pool(x: &Array, window: &[i64], strides: &[i64], padding: &Padding) -> Array {
    let ones = vec![1; window.len()];
    let strides = if strides.is_empty() { &ones } else { strides };
    match full_window("avg_pool", x, window, strides, padding) {
        Ok((dims, steps, pads)) => {
            let size: i64 = window.iter().product();
            lax::reduce_window(x, WindowOp::Sum, &dims, &steps, &pads) / size as f64
        }
        Err(e) => e,
    }
}
