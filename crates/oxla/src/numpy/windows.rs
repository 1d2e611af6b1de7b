//! `jax.numpy`'s window functions (`hamming`, `hanning`, `blackman`,
//! `bartlett`, `kaiser`), computed in the default float type with JAX's
//! formulas and op order.

use oxla_core::DType;

use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// The default float dtype (f32, or f64 with x64).
fn float() -> DType {
    oxla_core::promotion::default_float(x64_enabled())
}

/// A constant of the default float type.
fn c(v: f64) -> Array {
    lax::convert_element_type(&Array::weak_scalar(v), float())
}

/// `0, 1, ..., m - 1` in the default float type, or `None` (the window is
/// all ones) for `m <= 1`.
fn positions(m: i64) -> Option<Array> {
    (m > 1).then(|| lax::iota(float(), &[m], 0))
}

/// `2π n / (m - 1)` (times `scale`), in JAX's order.
fn phase(n: &Array, m: i64, scale: f64) -> Array {
    lax::div(
        &lax::mul(&c(scale * std::f64::consts::PI), n),
        &c((m - 1) as f64),
    )
}

/// `m` ones.
fn ones(m: i64) -> Array {
    crate::numpy::ones(&[m.max(0)], float())
}

/// `jnp.hamming(m)`: `0.54 - 0.46 cos(2πn / (m - 1))`.
#[track_caller]
pub fn hamming(m: i64) -> Array {
    let Some(n) = positions(m) else {
        return ones(m);
    };
    lax::sub(&c(0.54), &lax::mul(&c(0.46), &lax::cos(&phase(&n, m, 2.0))))
}

/// `jnp.hanning(m)`: `0.5 (1 - cos(2πn / (m - 1)))`.
#[track_caller]
pub fn hanning(m: i64) -> Array {
    let Some(n) = positions(m) else {
        return ones(m);
    };
    lax::mul(&c(0.5), &lax::sub(&c(1.0), &lax::cos(&phase(&n, m, 2.0))))
}

/// `jnp.blackman(m)`: `0.42 - 0.5 cos(2πn / (m - 1)) + 0.08 cos(4πn / (m - 1))`.
#[track_caller]
pub fn blackman(m: i64) -> Array {
    let Some(n) = positions(m) else {
        return ones(m);
    };
    let first = lax::sub(&c(0.42), &lax::mul(&c(0.5), &lax::cos(&phase(&n, m, 2.0))));
    lax::add(&first, &lax::mul(&c(0.08), &lax::cos(&phase(&n, m, 4.0))))
}

/// `jnp.bartlett(m)`: the triangular window `1 - |2n + 1 - m| / (m - 1)`.
#[track_caller]
pub fn bartlett(m: i64) -> Array {
    let Some(n) = positions(m) else {
        return ones(m);
    };
    let centered = lax::sub(&lax::add(&lax::mul(&c(2.0), &n), &c(1.0)), &c(m as f64));
    lax::sub(&c(1.0), &lax::div(&lax::abs(&centered), &c((m - 1) as f64)))
}

/// `jnp.kaiser(m, beta)`: `i0(β sqrt(1 - ((n - α) / α)²)) / i0(β)`, `α =
/// (m - 1) / 2`.
#[track_caller]
pub fn kaiser(m: i64, beta: f64) -> Array {
    let Some(n) = positions(m) else {
        return ones(m);
    };
    let alpha = c(0.5 * (m - 1) as f64);
    let ratio = lax::div(&lax::sub(&n, &alpha), &alpha);
    let inner = lax::sqrt(&lax::sub(&c(1.0), &lax::integer_pow(&ratio, 2)));
    lax::div(
        &crate::numpy::i0(&lax::mul(&c(beta), &inner)),
        &crate::numpy::i0(&c(beta)),
    )
}
