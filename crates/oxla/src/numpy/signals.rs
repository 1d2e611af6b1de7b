//! `jax.numpy`'s 1-d convolutions and polynomial arithmetic: `convolve`,
//! `correlate` (modes `full`, `same`, `valid`), `polyadd`, `polysub`,
//! `polymul`, `polyder` and `polyint`, as JAX computes them.

use super::{arrays, concatenate, promote_args, to_inexact, usage};
use crate::array::Array;
use crate::lax;

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

/// `count` consecutive values from `start`, in `dtype`.
fn range(start: i64, count: i64, dtype: oxla_core::DType) -> Array {
    super::arange(start as f64, (start + count) as f64, 1.0, dtype)
}

/// `jnp.polyder(p, m)`: the `m`-th derivative's coefficients (JAX's
/// products of falling ranges, computed in `p`'s dtype).
#[track_caller]
pub fn polyder(p: &Array, m: usize) -> Array {
    let p = to_inexact(p);
    let (len, m) = (p.size_or_one(), m as i64);
    if m == 0 {
        return p;
    }
    if m >= len {
        return super::zeros(&[0], p.dtype_or_bool());
    }
    let dtype = p.dtype_or_bool();
    let grid = super::subtract(
        &super::reshape(&range(m, len - m, dtype), &[1, len - m]),
        &super::reshape(&range(0, m, dtype), &[m, 1]),
    );
    let coefficients = super::prod(&grid, Some(&[0]), false);
    super::multiply(
        &lax::slice_in_dim(&p, 0, Some(len - m), 1, 0),
        &arrays::flip(&coefficients, None),
    )
}

/// `jnp.polyint(p, m, k)`: the `m`-th antiderivative's coefficients, each
/// integration constant `k` (JAX's divisors, computed in `p`'s dtype).
#[track_caller]
pub fn polyint(p: &Array, m: usize, k: f64) -> Array {
    let p = to_inexact(p);
    if m == 0 {
        return p;
    }
    let (len, m) = (p.size_or_one(), m as i64);
    let dtype = p.dtype_or_bool();
    let constants = super::full(&[m], k, dtype);
    let extended = concatenate(&[&p, &constants], 0);
    let grid = super::subtract(
        &super::reshape(&range(0, len + m, dtype), &[1, len + m]),
        &super::reshape(&range(0, m, dtype), &[m, 1]),
    );
    let divisors = super::prod(
        &super::maximum(&Array::weak_scalar(1.0f64), &grid),
        Some(&[0]),
        false,
    );
    super::divide(&extended, &arrays::flip(&divisors, None))
}

/// `jnp.poly(seq_of_zeros)`: the coefficients (highest power first) of
/// the monic polynomial with these roots (of a square matrix: its
/// eigenvalues).
#[track_caller]
pub fn poly(seq_of_zeros: &Array) -> Array {
    let zeros = super::atleast_1d(&super::to_inexact(seq_of_zeros));
    let shape = zeros.shape_or_empty().to_vec();
    let zeros = if shape.len() == 2 && shape[0] == shape[1] && shape[0] != 0 {
        super::linalg::eigvals(&zeros)
    } else {
        zeros
    };
    if zeros.ndim_or_zero() != 1 {
        return super::usage(
            "poly",
            "input must be 1d or non-empty square 2d array".into(),
        );
    }
    let dtype = zeros.dtype_or_bool();
    let n = zeros.shape_or_empty()[0];
    if n == 0 {
        return super::ones(&[], dtype);
    }
    (0..n).fold(super::ones(&[1], dtype), |a, k| {
        let root = lax::index_in_dim(&zeros, k, 0, true);
        let factor = lax::concatenate(&[&super::ones(&[1], dtype), &lax::neg(&root)], 0);
        convolve(&a, &factor, "full")
    })
}
