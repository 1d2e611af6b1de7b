//! `jnp.compress` and `jnp.extract`: the slices or elements a condition
//! selects, with JAX's static `size` (padded with `fill_value`) or,
//! without it, as many as a concrete condition selects.

use super::usage;
use crate::array::Array;
use crate::lax;

/// `jnp.compress(condition, a, axis, size, fill_value)`: the slices of `a`
/// along `axis` (of the flattened `a` when `None`) where the 1-D
/// `condition` is true, in order; with `size`, exactly that many (the rest
/// `fill_value`), else as many as the concrete `condition` selects.
#[track_caller]
pub fn compress(
    condition: &Array,
    a: &Array,
    axis: Option<i64>,
    size: Option<i64>,
    fill_value: f64,
) -> Array {
    if condition.ndim_or_zero() != 1 {
        return usage("compress", "condition must be a 1D array".into());
    }
    let (arr, axis) = match axis {
        None => (super::ravel(a), 0),
        Some(axis) => (super::moveaxis(a, axis, 0), axis),
    };
    let length = arr.shape_or_empty().first().copied().unwrap_or(0);
    let condition = lax::ne(condition, &super::scalar_like(condition, 0.0));
    let c_len = condition.shape_or_empty()[0];
    let (condition, extra) = (
        lax::slice_in_dim(&condition, 0, Some(c_len.min(length)), 1, 0),
        lax::slice_in_dim(&condition, c_len.min(length), Some(c_len), 1, 0),
    );
    let arr = lax::slice_in_dim(&arr, 0, Some(c_len.min(length)), 1, 0);
    let size = match size {
        Some(s) if s < 0 || s > length => {
            return usage(
                "compress",
                format!("size must be positive and not greater than the axis's {length}, got {s}"),
            );
        }
        Some(s) => s,
        None => {
            let (Ok(selected), Ok(beyond)) = (condition.to_vec::<bool>(), extra.to_vec::<bool>())
            else {
                return usage(
                    "compress",
                    "without a size the condition must be concrete (under jit pass a size)".into(),
                );
            };
            if beyond.iter().any(|&b| b) {
                return usage(
                    "compress",
                    "condition contains entries that are out of bounds".into(),
                );
            }
            selected.iter().filter(|&&b| b).count() as i64
        }
    };
    let mask_shape: Vec<i64> = arr
        .shape_or_empty()
        .iter()
        .enumerate()
        .map(|(i, &d)| if i == 0 { d } else { 1 })
        .collect();
    let mask = lax::reshape(&condition, &mask_shape);
    let fill = super::broadcast_to(
        &lax::convert_element_type(&Array::weak_scalar(fill_value), arr.dtype_or_bool()),
        arr.shape_or_empty(),
    );
    let arr = lax::select(
        &super::broadcast_to(&mask, arr.shape_or_empty()),
        &arr,
        &fill,
    );
    // Selected rows first, in order: a stable sort on "not selected".
    let key = lax::convert_element_type(&lax::not(&condition), oxla_core::DType::I32);
    let order = super::argsort(&key, 0);
    let picked = super::take(&arr, &order, Some(0), false);
    let out = lax::slice_in_dim(&picked, 0, Some(size), 1, 0);
    super::moveaxis(&out, 0, axis)
}

/// `jnp.extract(condition, arr, size, fill_value)`: the elements of `arr`
/// where `condition` is true, both flattened ([`compress`]).
#[track_caller]
pub fn extract(condition: &Array, arr: &Array, size: Option<i64>, fill_value: f64) -> Array {
    compress(
        &super::ravel(condition),
        &super::ravel(arr),
        None,
        size,
        fill_value,
    )
}
