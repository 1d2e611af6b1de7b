//! Flax's `_compute_stats` and `_normalize`, shared by [`BatchNorm`],
//! [`GroupNorm`] and [`InstanceNorm`] (feature axis last).
//!
//! [`BatchNorm`]: crate::BatchNorm
//! [`GroupNorm`]: crate::GroupNorm
//! [`InstanceNorm`]: crate::InstanceNorm

use oxla::numpy as jnp;
use oxla::{Array, DType, Error, lax};

/// The mean and variance of `x` over `axes` (not kept), in `x`'s dtype
/// promoted to at least f32, as Flax's `_compute_stats`: with
/// `fast_variance`, `E[x²] - E[x]²` clipped at 0; else `E[(x - E[x])²]`.
pub(crate) fn compute_stats(x: &Array, axes: &[i64], fast_variance: bool) -> (Array, Array) {
    let dtype = jnp::promote_types(x.dtype_or_bool(), DType::F32);
    let x = if x.dtype_or_bool() == dtype {
        x.clone()
    } else {
        x.astype(dtype)
    };
    let mean = jnp::mean(&x, Some(axes), false);
    let var = if fast_variance {
        let mean2 = jnp::mean(&jnp::square(&x), Some(axes), false);
        jnp::maximum(&Array::weak_scalar(0.0f32), &(mean2 - &jnp::square(&mean)))
    } else {
        let centered = &x - &lax::expand_dims(&mean, axes);
        jnp::mean(&jnp::square(&centered), Some(axes), false)
    };
    (mean, var)
}

/// `(x - mean) * rsqrt(var + epsilon) * scale + bias`, the statistics
/// widened back over `reduction_axes`, in the dtype `x`, `scale` and `bias`
/// promote to, as Flax's `_normalize`.
pub(crate) fn normalize(
    x: &Array,
    (mean, var): (&Array, &Array),
    reduction_axes: &[i64],
    epsilon: f64,
    scale: Option<&Array>,
    bias: Option<&Array>,
) -> Array {
    let mean = lax::expand_dims(mean, reduction_axes);
    let var = lax::expand_dims(var, reduction_axes);
    let mut mul = lax::rsqrt(&(var + epsilon));
    if let Some(s) = scale {
        mul = mul * s;
    }
    let mut y = (x - &mean) * &mul;
    if let Some(b) = bias {
        y = y + b;
    }
    let args: Vec<&Array> = std::iter::once(x).chain(scale).chain(bias).collect();
    let dtype = jnp::result_type(&args);
    if y.dtype_or_bool() == dtype {
        y
    } else {
        y.astype(dtype)
    }
}

/// The error array of `method` (`"BatchNorm.apply_train"`) given `x`:
/// names the method, `x`'s type, what it expected and the caller's line.
#[track_caller]
pub(crate) fn input_error(method: &str, x: &Array, expected: &str) -> Array {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    let got = x.aval().map(ToString::to_string).unwrap_or_default();
    Array::error(Error::InvalidArgument(format!(
        "{location}: {method} of {got}: {expected}"
    )))
}

/// An error array when `x` has fewer than `min_rank` axes or its last
/// dimension is not `features` (when known).
#[track_caller]
pub(crate) fn check_input(
    method: &str,
    x: &Array,
    min_rank: usize,
    features: Option<i64>,
) -> Option<Array> {
    let aval = match x.aval() {
        Err(e) => return Some(Array::error(e)),
        Ok(a) => a,
    };
    if aval.shape.len() < min_rank {
        return Some(input_error(
            method,
            x,
            &format!("the layer takes inputs of rank {min_rank} or more"),
        ));
    }
    match features {
        Some(f) if aval.shape.last() != Some(&f) => Some(input_error(
            method,
            x,
            &format!("the layer takes inputs whose last dimension is {f}"),
        )),
        _ => None,
    }
}

/// The error array of a layer whose parameter `name` is not `[features]`.
#[track_caller]
pub(crate) fn check_parameter(
    method: &str,
    name: &str,
    parameter: Option<&Array>,
    features: i64,
) -> Option<Array> {
    let p = parameter?;
    if p.shape_or_empty() == [features] {
        return None;
    }
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    let got = p.aval().map(ToString::to_string).unwrap_or_default();
    Some(Array::error(Error::InvalidArgument(format!(
        "{location}: {method}: the layer's {name} is {got}, not [{features}] like its other \
         parameters"
    ))))
}

/// An error array naming `constructor` and the caller's line.
#[track_caller]
pub(crate) fn constructor_error(constructor: &str, message: &str) -> Array {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    Array::error(Error::InvalidArgument(format!(
        "{location}: {constructor}: {message}"
    )))
}

/// The error of a layer that scales and shifts per channel (`GroupNorm`,
/// `InstanceNorm`) or of its input, first found: the layer's own, then
/// `x`'s (rank at least `min_rank`, last dimension the parameters' size),
/// then the scale's and the bias's sizes.
#[track_caller]
pub(crate) fn check_scaled_layer<L: oxla::Pytree>(
    method: &str,
    layer: &L,
    scale: Option<&Array>,
    bias: Option<&Array>,
    x: &Array,
    min_rank: usize,
) -> Option<Array> {
    if let Some(e) = super::own_error(layer) {
        return Some(e);
    }
    let features = scale
        .or(bias)
        .and_then(|p| p.shape_or_empty().first().copied());
    if let Some(e) = check_input(method, x, min_rank, features) {
        return Some(e);
    }
    let f = features?;
    // Not `or_else`: a closure would hide the caller's line.
    [
        check_parameter(method, "scale", scale, f),
        check_parameter(method, "bias", bias, f),
    ]
    .into_iter()
    .flatten()
    .next()
}
