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

/// `jnp.polydiv(u, v)`: the quotient and remainder of the polynomial
/// division `u / v` (coefficients highest power first), by JAX's long
/// division; the remainder keeps `u`'s length.
#[track_caller]
pub fn polydiv(u: &Array, v: &Array) -> (Array, Array) {
    if u.ndim_or_zero() != 1 || v.ndim_or_zero() != 1 {
        let e = usage("polydiv", "takes 1-d coefficient arrays".into());
        return (e.clone(), e);
    }
    let promoted = promote_args(&[u, v]);
    let (mut u, v) = (to_inexact(&promoted[0]), to_inexact(&promoted[1]));
    let (m, n) = (u.size_or_one() - 1, v.size_or_one() - 1);
    if n < 0 {
        let e = usage("polydiv", "the divisor has no coefficients".into());
        return (e.clone(), e);
    }
    let one = super::ones_like(&lax::slice_in_dim(&v, 0, Some(1), 1, 0));
    let scale = lax::div(&one, &lax::slice_in_dim(&v, 0, Some(1), 1, 0));
    let mut q = super::zeros(&[(m - n + 1).max(1)], u.dtype_or_bool());
    for k in 0..=(m - n) {
        let d = lax::mul(&scale, &lax::slice_in_dim(&u, k, Some(k + 1), 1, 0));
        q = lax::dynamic_update_slice_in_dim(&q, &d, &Array::weak_scalar(k), 0);
        let head = lax::slice_in_dim(&u, k, Some(k + n + 1), 1, 0);
        let updated = lax::sub(&head, &lax::mul(&d, &v));
        u = lax::dynamic_update_slice_in_dim(&u, &updated, &Array::weak_scalar(k), 0);
    }
    (q, u)
}

/// `jnp.roots(p, strip_zeros)`: the roots of the polynomial `p` (highest
/// power first) as the eigenvalues of its companion matrix (complex).
/// With `strip_zeros`, leading zero coefficients are dropped, which needs
/// a concrete `p`; without, they make as many roots NaN (so it traces).
#[track_caller]
pub fn roots(p: &Array, strip_zeros: bool) -> Array {
    let p = to_inexact(&arrays::atleast_1d(p));
    if p.ndim_or_zero() != 1 {
        return usage("roots", "input must be a rank-1 array".into());
    }
    let n = p.size_or_one();
    let complex = p.dtype_or_bool().complex_of().unwrap_or(p.dtype_or_bool());
    if n < 2 {
        return super::zeros(&[0], complex);
    }
    let is_zero = lax::eq(&p, &super::zeros_like(&p));
    let all_zero = super::all(&is_zero, None, false);
    let first_nonzero = super::argmin(
        &lax::convert_element_type(&is_zero, oxla_core::DType::I32),
        Some(0),
    );
    let leading = lax::select(
        &all_zero,
        &super::full_like(&first_nonzero, n as f64),
        &first_nonzero,
    );
    if strip_zeros {
        let count = lax::convert_element_type(&leading, oxla_core::DType::I32).item::<i32>();
        let Ok(count) = count else {
            return usage(
                "roots",
                "strip_zeros needs a concrete p (under jit pass strip_zeros=false: leading zeros \
                 then make as many roots NaN)"
                    .into(),
            );
        };
        return roots_without_zeros(&lax::slice_in_dim(&p, i64::from(count), None, 1, 0));
    }
    let p = lax::select(
        &super::broadcast_to(
            &lax::eq(&leading, &super::full_like(&leading, n as f64)),
            &[n],
        ),
        &super::ones_like(&p),
        &p,
    );
    let positions = super::remainder(
        &lax::add(
            &lax::iota(leading.dtype_or_bool(), &[n], 0),
            &super::broadcast_to(&leading, &[n]),
        ),
        &super::full_like(&leading, n as f64),
    );
    let rolled = super::take(&p, &positions, None, false);
    let found = roots_without_zeros(&rolled);
    let is_zero_root = lax::eq(&found, &super::zeros_like(&found));
    let sorted = lax::sort(&[&is_zero_root, &found], 0, true, 1);
    let found = sorted[1].clone();
    let m = found.size_or_one();
    let valid = lax::lt(
        &lax::iota(leading.dtype_or_bool(), &[m], 0),
        &super::broadcast_to(
            &lax::sub(&super::full_like(&leading, m as f64), &leading),
            &[m],
        ),
    );
    let nan = super::full_like(&found, f64::NAN);
    lax::select(
        &valid,
        &found,
        &lax::complex(&lax::real(&nan), &lax::real(&nan)),
    )
}

/// JAX's `_roots_no_zeros`: the eigenvalues of the companion matrix.
fn roots_without_zeros(p: &Array) -> Array {
    let n = p.size_or_one();
    let complex = p.dtype_or_bool().complex_of().unwrap_or(p.dtype_or_bool());
    if n < 2 {
        return super::zeros(&[0], complex);
    }
    let sub = arrays::diag(&super::ones(&[n - 1 - 1], p.dtype_or_bool()), -1);
    let lead = lax::slice_in_dim(p, 0, Some(1), 1, 0);
    let first_row = lax::neg(&lax::div(
        &lax::slice_in_dim(p, 1, None, 1, 0),
        &super::broadcast_to(&lead, &[n - 1]),
    ));
    let companion = lax::dynamic_update_slice_in_dim(
        &sub,
        &lax::reshape(&first_row, &[1, n - 1]),
        &Array::weak_scalar(0i64),
        0,
    );
    super::linalg::eigvals(&companion)
}

/// `jnp.polyfit(x, y, deg, rcond, w)`: the least-squares polynomial of
/// degree `deg` through the points (one fit per column of a 2-d `y`),
/// coefficients highest power first, with JAX's column scaling of the
/// Vandermonde matrix and default `rcond` (`len(x)·eps`); `w` weights the
/// points. [`polyfit_full`] also returns the fit's diagnostics.
#[track_caller]
pub fn polyfit(x: &Array, y: &Array, deg: i64, rcond: Option<f64>, w: Option<&Array>) -> Array {
    polyfit_full(x, y, deg, rcond, w).0
}

/// [`polyfit`] with `lstsq`'s diagnostics: the coefficients, the residual
/// sums of squares, the rank and the singular values of the scaled
/// Vandermonde matrix (JAX's `full=True`, less the `rcond` it echoes).
#[track_caller]
pub fn polyfit_full(
    x: &Array,
    y: &Array,
    deg: i64,
    rcond: Option<f64>,
    w: Option<&Array>,
) -> (Array, Array, Array, Array) {
    let fail = |message: String| {
        let e = usage("polyfit", message);
        (e.clone(), e.clone(), e.clone(), e)
    };
    if deg < 0 {
        return fail("expected deg >= 0".into());
    }
    if x.ndim_or_zero() != 1 || x.size_or_one() == 0 {
        return fail("expected a non-empty 1-d x".into());
    }
    if !(1..=2).contains(&y.ndim_or_zero()) {
        return fail("expected a 1-d or 2-d y".into());
    }
    let n = x.shape_or_empty()[0];
    if y.shape_or_empty()[0] != n {
        return fail("expected x and y to have the same length".into());
    }
    let promoted = promote_args(&[x, y]);
    let (x, mut rhs) = (to_inexact(&promoted[0]), to_inexact(&promoted[1]));
    let rcond = rcond.unwrap_or(n as f64 * x.dtype_or_bool().float_info().eps());
    let mut lhs = arrays::vander(&x, Some(deg + 1), false);
    if let Some(w) = w {
        if w.ndim_or_zero() != 1 || w.shape_or_empty()[0] != n {
            return fail("expected 1-d weights of y's length".into());
        }
        let w = lax::convert_element_type(&to_inexact(w), x.dtype_or_bool());
        let column = super::expand_dims(&w, 1);
        lhs = super::multiply(&lhs, &column);
        rhs = if rhs.ndim_or_zero() == 2 {
            super::multiply(&rhs, &column)
        } else {
            super::multiply(&rhs, &w)
        };
    }
    let scale = lax::sqrt(&super::sum(&super::multiply(&lhs, &lhs), Some(&[0]), false));
    let lhs = super::divide(&lhs, &super::expand_dims(&scale, 0));
    let (c, resids, rank, s) = super::linalg::lstsq(&lhs, &rhs, Some(rcond));
    let c = if c.ndim_or_zero() > 1 {
        super::divide(&c, &super::expand_dims(&scale, 1))
    } else {
        super::divide(&c, &scale)
    };
    (c, resids, rank, s)
}
