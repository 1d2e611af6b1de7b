//! `jax.numpy`'s conversions and spaced ranges: `array`, `asarray`,
//! `astype`, `copy`, `logspace`, `geomspace`, `rollaxis`,
//! `diag_indices_from`, `promote_types` and `result_type`.

use oxla_core::DType;

use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// `jnp.array(x)`: a copy of `x`.
#[track_caller]
pub fn array(x: &Array) -> Array {
    x.clone()
}

/// `jnp.asarray(x)`: `x` itself.
#[track_caller]
pub fn asarray(x: &Array) -> Array {
    x.clone()
}

/// `jnp.copy(x)`: a copy of `x`.
#[track_caller]
pub fn copy(x: &Array) -> Array {
    x.clone()
}

/// `jnp.astype(x, dtype)`: `x` converted to `dtype`.
#[track_caller]
pub fn astype(x: &Array, dtype: DType) -> Array {
    lax::convert_element_type(x, dtype)
}

/// `jnp.logspace(start, stop, num, base)`: `base` to the powers of
/// [`linspace`](super::linspace)`(start, stop, num)`, in the default float
/// type.
#[track_caller]
pub fn logspace(start: f64, stop: f64, num: i64, base: f64) -> Array {
    let float = oxla_core::promotion::default_float(x64_enabled());
    let exponents = super::linspace(start, stop, num, float);
    super::power(&Array::weak_scalar(base), &exponents)
}

/// `jnp.geomspace(start, stop, num)`: `num` numbers from `start` to
/// `stop` spaced evenly on a log scale (both of one sign).
#[track_caller]
pub fn geomspace(start: f64, stop: f64, num: i64) -> Array {
    let sign = start.signum();
    let values = logspace((start / sign).log10(), (stop / sign).log10(), num, 10.0);
    super::multiply(&Array::weak_scalar(sign), &values)
}

/// `jnp.rollaxis(x, axis, start)`: `axis` moved before position `start`.
#[track_caller]
pub fn rollaxis(x: &Array, axis: i64, start: i64) -> Array {
    let rank = x.ndim_or_zero() as i64;
    let axis = axis.rem_euclid(rank.max(1));
    let start = if start < 0 { start + rank } else { start };
    let destination = if axis < start { start - 1 } else { start };
    super::moveaxis(x, axis, destination)
}

/// `jnp.diag_indices_from(x)`: the diagonal's indices of a square `x`.
#[track_caller]
pub fn diag_indices_from(x: &Array) -> Vec<Array> {
    let n = x.shape_or_empty().first().copied().unwrap_or(0);
    super::arrays::diag_indices(n, x.ndim_or_zero())
}

/// `jnp.promote_types(a, b)`: the dtype JAX promotes `a` and `b` to.
pub fn promote_types(a: DType, b: DType) -> DType {
    oxla_core::promotion::promote(a, false, b, false, x64_enabled()).0
}

/// `jnp.result_type(arrays)`: the dtype the arrays promote to together
/// (weak types included, as JAX's).
pub fn result_type(arrays: &[&Array]) -> DType {
    super::promoted_type(arrays).0
}
