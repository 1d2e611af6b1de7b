//! `jax.numpy`'s 1-d convolutions and polynomial arithmetic: `convolve`,
//! `correlate` (modes `full`, `same`, `valid`), `polyadd`, `polysub`,
//! `polymul`, `polyder` and `polyint`, as JAX computes them.

use super::{arrays, concatenate, promote_args, to_inexact};
use crate::array::Array;
use crate::lax;

/// An error array naming the function and the caller's line.
#[track_caller]
fn usage(function: &str, message: String) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    Array::error(crate::Error::InvalidArgument(format!(
        "{location}: jnp.{function}: {message}"
    )))
}

/// JAX's `_conv`: `x` and `y` 1-d, the longer one slid over by the
/// shorter (flipped for a convolution), as one `conv_general_dilated`.
#[track_caller]
fn conv1d(x: &Array, y: &Array, mode: &str, convolve: bool) -> Array {
    let name = if convolve { "convolve" } else { "correlate" };
    if x.ndim_or_zero() != 1 || y.ndim_or_zero() != 1 {
        return usage(name, "only 1-d inputs are supported, as in JAX".into());
    }
    let v = promote_args(&[x, y]);
    let (mut x, mut y) = (to_inexact(&v[0]), to_inexact(&v[1]));
    let mut reverse = false;
    if x.size_or_one() < y.size_or_one() {
        std::mem::swap(&mut x, &mut y);
        reverse = !convolve;
    }
    if convolve {
        y = arrays::flip(&y, None);
    }
    let n = y.size_or_one();
    let padding = match mode {
        "valid" => (0, 0),
        "same" => (n / 2, n - n / 2 - 1),
        "full" => (n - 1, n - 1),
        other => {
            return usage(
                name,
                format!("mode must be full, same or valid, got {other}"),
            );
        }
    };
    let lhs = super::reshape(&x, &[1, 1, x.size_or_one()]);
    let rhs = super::reshape(&y, &[1, 1, n]);
    let out = lax::conv_general_dilated(
        &lhs,
        &rhs,
        &[1],
        &lax::Padding::Explicit(vec![padding]),
        ("NCH", "OIH", "NCH"),
        &lax::ConvOptions::default(),
    );
    let out = super::reshape(&out, &[out.size_or_one()]);
    if reverse {
        arrays::flip(&out, None)
    } else {
        out
    }
}

/// `jnp.convolve(x, y, mode)`: the discrete linear convolution of 1-d
/// arrays.
#[track_caller]
pub fn convolve(x: &Array, y: &Array, mode: &str) -> Array {
    conv1d(x, y, mode, true)
}

/// `jnp.correlate(x, y, mode)`: the cross-correlation of 1-d arrays.
#[track_caller]
pub fn correlate(x: &Array, y: &Array, mode: &str) -> Array {
    conv1d(x, y, mode, false)
}

/// The longer polynomial with the shorter one's coefficients combined into
/// its last entries by `combine`.
fn align(a: &Array, b: &Array, combine: fn(&Array, &Array) -> Array) -> Array {
    let v = promote_args(&[a, b]);
    let (la, lb) = (v[0].size_or_one(), v[1].size_or_one());
    let pad = |p: &Array, to: i64| {
        let zero = super::zeros_like(&lax::index_in_dim(p, 0, 0, false));
        lax::pad(p, &zero, &[(to - p.size_or_one(), 0, 0)])
    };
    let n = la.max(lb);
    combine(&pad(&v[0], n), &pad(&v[1], n))
}

/// `jnp.polyadd(a, b)`: the sum of two polynomials (highest power first).
#[track_caller]
pub fn polyadd(a: &Array, b: &Array) -> Array {
    align(a, b, super::add)
}

/// `jnp.polysub(a, b)`: the difference of two polynomials.
#[track_caller]
pub fn polysub(a: &Array, b: &Array) -> Array {
    align(a, b, super::subtract)
}

/// `jnp.polymul(a, b)`: the product of two polynomials (their full
/// convolution).
#[track_caller]
pub fn polymul(a: &Array, b: &Array) -> Array {
    convolve(a, b, "full")
}

/// `jnp.polyder(p, m)`: the `m`-th derivative's coefficients.
#[track_caller]
pub fn polyder(p: &Array, m: usize) -> Array {
    let p = to_inexact(p);
    let len = p.size_or_one();
    let m = m as i64;
    if m == 0 {
        return p;
    }
    if m >= len {
        return super::zeros(&[0], p.dtype_or_bool());
    }
    // coefficient of x^k (k = len-1-i) after m derivatives: k (k-1) ... (k-m+1).
    let factors: Vec<f64> = (0..len - m)
        .map(|i| {
            let k = len - 1 - i;
            (0..m).map(|j| (k - j) as f64).product()
        })
        .collect();
    let coefficients = Array::from_slice(&factors, &[len - m]).unwrap_or_else(Array::error);
    super::multiply(
        &lax::slice_in_dim(&p, 0, Some(len - m), 1, 0),
        &lax::convert_element_type(&coefficients, p.dtype_or_bool()),
    )
}

/// `jnp.polyint(p, m, k)`: the `m`-th antiderivative's coefficients, each
/// integration constant `k`.
#[track_caller]
pub fn polyint(p: &Array, m: usize, k: f64) -> Array {
    let p = to_inexact(p);
    if m == 0 {
        return p;
    }
    let len = p.size_or_one();
    let m = m as i64;
    let constants = super::full(&[m], k, p.dtype_or_bool());
    let extended = concatenate(&[&p, &constants], 0);
    // Divide the coefficient of x^j (after integrating) by j (j-1) ... (j-m+1), at least 1 each.
    let divisors: Vec<f64> = (0..len + m)
        .rev()
        .map(|top| (0..m).map(|j| ((top - j) as f64).max(1.0)).product())
        .collect();
    let divisors = Array::from_slice(&divisors, &[len + m]).unwrap_or_else(Array::error);
    super::divide(
        &extended,
        &lax::convert_element_type(&divisors, p.dtype_or_bool()),
    )
}
