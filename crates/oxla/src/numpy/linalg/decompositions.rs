//! `jax.numpy.linalg`'s functions built on the decompositions (LU, QR,
//! eigh, SVD, eig): `solve`, `inv`, `det`, `slogdet`, `eigh`, `eigvalsh`,
//! `eig`, `eigvals`, `svd`, `svdvals`, `qr`, `pinv`, `lstsq`,
//! `matrix_rank`, `cond`, `tensorsolve` and `tensorinv`, as JAX builds
//! them (`jax/_src/numpy/linalg.py`).

use oxla_core::DType;

use super::super::{to_inexact, usage};
use crate::array::Array;
use crate::lax;
use crate::lax::linalg::{adjoint, matmul_highest};

/// The shape of `x` if it is a (batch of) square matrices.
fn square(x: &Array) -> Option<(Vec<i64>, i64)> {
    let s = x.shape_or_empty().to_vec();
    let r = s.len();
    (r >= 2 && s[r - 1] == s[r - 2]).then(|| {
        let n = s[r - 1];
        (s, n)
    })
}

/// `jnp.linalg.solve(a, b)`: `x` with `a x = b` for square `a` (by LU
/// with partial pivoting). A 1-D `b` is a vector; otherwise `b`'s last two
/// axes are the matrix of right-hand sides, and batch dimensions
/// broadcast. A singular `a` gives infinities or NaNs, as LAPACK's
/// triangular solves do.
#[track_caller]
pub fn solve(a: &Array, b: &Array) -> Array {
    let (a, b) = (to_inexact(a), to_inexact(b));
    let Some((_, n)) = square(&a) else {
        return usage(
            "linalg.solve",
            format!(
                "a must be (a batch of) square matrices, got shape {:?}",
                a.shape_or_empty()
            ),
        );
    };
    let promoted = crate::numpy::promote_args(&[&a, &b]);
    let (a, b) = (promoted[0].clone(), promoted[1].clone());
    let b_shape = b.shape_or_empty();
    let vector = b_shape.len() == 1;
    if b_shape.is_empty()
        || (!vector && b_shape[b_shape.len() - 2] != n)
        || (vector && b_shape[0] != n)
    {
        return usage(
            "linalg.solve",
            format!(
                "b must have {n} rows to match a {n}×{n} a, got shape {b_shape:?} (a vector b is \
                 1-D; otherwise its last two axes are the right-hand sides)"
            ),
        );
    }
    let (lu, _, permutation) = lax::linalg::lu(&a);
    let b = if vector {
        crate::numpy::expand_dims(&b, -1)
    } else {
        b
    };
    let x = lax::linalg::lu_solve(&lu, &permutation, &b, 0);
    if vector { lax::squeeze(&x, &[-1]) } else { x }
}

/// `jnp.linalg.inv(a)`: the inverse of square matrices, solving against
/// the identity.
#[track_caller]
pub fn inv(a: &Array) -> Array {
    let a = to_inexact(a);
    let Some((shape, n)) = square(&a) else {
        return usage(
            "linalg.inv",
            format!(
                "a must be (a batch of) square matrices, got shape {:?}",
                a.shape_or_empty()
            ),
        );
    };
    let eye = crate::numpy::broadcast_to(&crate::numpy::eye(n, a.dtype_or_bool()), &shape);
    solve(&a, &eye)
}

/// `jnp.linalg.slogdet(a)`: the sign (a unit complex number for complex
/// `a`) and the natural log of the absolute determinant, from the LU
/// factors (closed forms for 1×1 and 2×2, as JAX); `(0, -inf)` for a
/// singular matrix.
#[track_caller]
pub fn slogdet(a: &Array) -> (Array, Array) {
    let a = to_inexact(a);
    let Some((_, n)) = square(&a) else {
        let e = usage(
            "linalg.slogdet",
            format!(
                "a must be (a batch of) square matrices, got shape {:?}",
                a.shape_or_empty()
            ),
        );
        return (e.clone(), e);
    };
    let complex = a.dtype_or_bool().is_complex();
    let log_abs = |d: &Array| crate::numpy::real(&crate::numpy::log(&crate::numpy::abs(d)));
    let sign_of = |d: &Array| crate::numpy::sign(d);
    if n == 1 || n == 2 {
        let at =
            |i: i64, j: i64| lax::index_in_dim(&lax::index_in_dim(&a, i, -2, false), j, -1, false);
        let det = if n == 1 {
            at(0, 0)
        } else {
            lax::sub(
                &lax::mul(&at(0, 0), &at(1, 1)),
                &lax::mul(&at(0, 1), &at(1, 0)),
            )
        };
        return (sign_of(&det), log_abs(&det));
    }
    let (lu, pivots, _) = lax::linalg::lu(&a);
    if let Err(e) = pivots.aval() {
        return (Array::error(e.clone()), Array::error(e));
    }
    let diagonal = crate::numpy::diagonal(&lu, 0, -2, -1);
    let iota = lax::broadcasted_iota(
        oxla_core::DType::I32,
        pivots.shape_or_empty(),
        pivots.ndim_or_zero().saturating_sub(1),
    );
    let swaps = crate::numpy::count_nonzero(&lax::ne(&pivots, &iota), Some(&[-1]), false);
    let zero = crate::numpy::scalar_like(&diagonal, 0.0);
    let is_zero = crate::numpy::any(&lax::eq(&diagonal, &zero), Some(&[-1]), false);
    let (sign, parity) = if complex {
        let unit = lax::div(
            &diagonal,
            &lax::convert_element_type(&crate::numpy::abs(&diagonal), diagonal.dtype_or_bool()),
        );
        (crate::numpy::prod(&unit, Some(&[-1]), false), swaps)
    } else {
        let negative = crate::numpy::count_nonzero(&lax::lt(&diagonal, &zero), Some(&[-1]), false);
        (
            crate::numpy::ones_like(&crate::numpy::sum(&diagonal, Some(&[-1]), false)),
            lax::add(&swaps, &negative),
        )
    };
    let odd = lax::eq(
        &lax::rem(&parity, &crate::numpy::scalar_like(&parity, 2.0)),
        &crate::numpy::scalar_like(&parity, 1.0),
    );
    let flipped = lax::select(&odd, &lax::neg(&sign), &sign);
    let sign = lax::select(&is_zero, &crate::numpy::zeros_like(&flipped), &flipped);
    let logdet = crate::numpy::sum(&log_abs(&diagonal), Some(&[-1]), false);
    let minus_inf = crate::numpy::full_like(&logdet, f64::NEG_INFINITY);
    let logdet = lax::select(&is_zero, &minus_inf, &logdet);
    (sign, logdet)
}

/// `jnp.linalg.det(a)`: the determinant of square matrices, by cofactors
/// for 2×2 and 3×3 and from [`slogdet`] otherwise, as JAX.
#[track_caller]
pub fn det(a: &Array) -> Array {
    let a = to_inexact(a);
    let Some((_, n)) = square(&a) else {
        return usage(
            "linalg.det",
            format!(
                "a must be (a batch of) square matrices, got shape {:?}",
                a.shape_or_empty()
            ),
        );
    };
    let at = |i: i64, j: i64| lax::index_in_dim(&lax::index_in_dim(&a, i, -2, false), j, -1, false);
    let (mul, sub, add) = (lax::mul, lax::sub, lax::add);
    match n {
        2 => sub(&mul(&at(0, 0), &at(1, 1)), &mul(&at(0, 1), &at(1, 0))),
        3 => {
            let minor = |r1: i64, r2: i64, c1: i64, c2: i64| {
                sub(
                    &mul(&at(r1, c1), &at(r2, c2)),
                    &mul(&at(r1, c2), &at(r2, c1)),
                )
            };
            add(
                &sub(
                    &mul(&at(0, 0), &minor(1, 2, 1, 2)),
                    &mul(&at(0, 1), &minor(1, 2, 0, 2)),
                ),
                &mul(&at(0, 2), &minor(1, 2, 0, 1)),
            )
        }
        _ => {
            let det = crate::custom::custom_jvp(
                |a: Array| {
                    let (sign, logdet) = slogdet(&a);
                    lax::mul(
                        &sign,
                        &lax::convert_element_type(
                            &crate::numpy::exp(&logdet),
                            sign.dtype_or_bool(),
                        ),
                    )
                },
                |a: Array, g: Array| {
                    let (y, z) = cofactor_solve(&a, &g);
                    (y, crate::numpy::linalg::trace(&z, 0))
                },
            );
            det.call(a).unwrap_or_else(Array::error)
        }
    }
}

/// JAX's `_cofactor_solve`: `det(a)` and `adj(a) · b`, well defined for
/// matrices of rank n - 1 (whose determinant's gradient is the rank-1
/// adjugate) and zero below: the LU factors with `U`'s last diagonal
/// entry replaced by the inverse of the other entries' product, the
/// solve's last row scaled by the full determinant, and matrices whose
/// `U⁻¹ 1` is not finite (rank below n - 1) given zeros.
fn cofactor_solve(a: &Array, b: &Array) -> (Array, Array) {
    let n = a.shape_or_empty().last().copied().unwrap_or(0);
    if n == 1 {
        let corner = lax::index_in_dim(&lax::index_in_dim(a, 0, -2, false), 0, -1, false);
        return (corner, b.clone());
    }
    let (lu, pivots, permutation) = lax::linalg::lu(a);
    let dtype = a.dtype_or_bool();
    let diagonal = crate::numpy::diagonal(&lu, 0, -2, -1);
    let iota = lax::broadcasted_iota(
        pivots.dtype_or_bool(),
        pivots.shape_or_empty(),
        pivots.ndim_or_zero().saturating_sub(1),
    );
    let parity = crate::numpy::count_nonzero(&lax::ne(&pivots, &iota), Some(&[-1]), false);
    let odd = lax::eq(
        &lax::rem(&parity, &crate::numpy::scalar_like(&parity, 2.0)),
        &crate::numpy::scalar_like(&parity, 1.0),
    );
    let ones = crate::numpy::ones(parity.shape_or_empty(), dtype);
    let sign = lax::select(&odd, &lax::neg(&ones), &ones);
    let partial_det = lax::mul(
        &crate::numpy::cumprod(&diagonal, Some(-1)),
        &crate::numpy::expand_dims(&sign, -1),
    );
    let last = |x: &Array, i: i64| lax::index_in_dim(x, n - i, -1, false);
    // U's last diagonal entry becomes 1 / (the product of the others).
    let shape = lu.shape_or_empty().to_vec();
    let rank = shape.len();
    let corner = lax::and(
        &lax::eq(
            &lax::broadcasted_iota(DType::I32, &shape, rank - 2),
            &crate::numpy::scalar_like(
                &lax::broadcasted_iota(DType::I32, &shape, rank - 2),
                (n - 1) as f64,
            ),
        ),
        &lax::eq(
            &lax::broadcasted_iota(DType::I32, &shape, rank - 1),
            &crate::numpy::scalar_like(
                &lax::broadcasted_iota(DType::I32, &shape, rank - 1),
                (n - 1) as f64,
            ),
        ),
    );
    let inverse = crate::numpy::reciprocal(&last(&partial_det, 2));
    let inverse = crate::numpy::broadcast_to(
        &crate::numpy::expand_dims(&crate::numpy::expand_dims(&inverse, -1), -1),
        &shape,
    );
    let lu = lax::select(&corner, &inverse, &lu);
    let upper = lax::linalg::TriangularSolveOptions {
        left_side: true,
        ..Default::default()
    };
    // Matrices of rank below n - 1: U⁻¹ 1 is not finite.
    let probe =
        lax::linalg::triangular_solve(&lu, &crate::numpy::ones(&shape[..rank - 1], dtype), upper);
    let bad = crate::numpy::any(
        &lax::or(&crate::numpy::isnan(&probe), &crate::numpy::isinf(&probe)),
        Some(&[-1]),
        false,
    );
    let bad = crate::numpy::broadcast_to(
        &crate::numpy::expand_dims(&crate::numpy::expand_dims(&bad, -1), -1),
        b.shape_or_empty(),
    );
    let zeros = crate::numpy::zeros_like(b);
    let x = lax::select(&bad, &zeros, b);
    let x = lax::linalg::permute_rows(&x, &permutation);
    let x = lax::linalg::triangular_solve(
        &lu,
        &x,
        lax::linalg::TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: true,
            ..Default::default()
        },
    );
    let full =
        crate::numpy::expand_dims(&crate::numpy::expand_dims(&last(&partial_det, 1), -1), -1);
    let head = lax::mul(&lax::slice_in_dim(&x, 0, Some(n - 1), 1, -2), &full);
    let tail = lax::slice_in_dim(&x, n - 1, Some(n), 1, -2);
    let x = crate::numpy::concatenate(&[&head, &tail], -2);
    let x = lax::linalg::triangular_solve(&lu, &x, upper);
    let x = lax::select(&bad, &zeros, &x);
    (last(&partial_det, 1), x)
}
/// `jnp.linalg.eigh(a, UPLO, symmetrize_input)`: the eigenvalues
/// (ascending) and eigenvectors (columns) of Hermitian matrices, reading
/// the lower triangle (`upper` false, numpy's `UPLO='L'`) or the upper;
/// with `symmetrize_input` (JAX's default) of `(a + aᴴ) / 2`. Returns
/// `(eigenvalues, eigenvectors)`.
#[track_caller]
pub fn eigh(a: &Array, upper: bool, symmetrize_input: bool) -> (Array, Array) {
    let (v, w) = lax::linalg::eigh(&to_inexact(a), !upper, symmetrize_input, true);
    (w, v)
}

/// `jnp.linalg.eigvalsh(a, UPLO)`: the eigenvalues of Hermitian matrices,
/// ascending.
#[track_caller]
pub fn eigvalsh(a: &Array, upper: bool) -> Array {
    eigh(a, upper, true).0
}

/// `jnp.linalg.eig(a)`: the eigenvalues and right eigenvectors (columns)
/// of general square matrices, both complex. Not differentiable, as in
/// JAX ([`eigvals`] is).
#[track_caller]
pub fn eig(a: &Array) -> (Array, Array) {
    let outs = lax::linalg::eig(&to_inexact(a), false, true);
    (outs[0].clone(), outs[1].clone())
}

/// `jnp.linalg.eigvals(a)`: the (complex) eigenvalues of general square
/// matrices.
#[track_caller]
pub fn eigvals(a: &Array) -> Array {
    lax::linalg::eig(&to_inexact(a), false, false)[0].clone()
}

/// `jnp.linalg.svd(a, full_matrices, compute_uv=True, hermitian)`:
/// `(u, s, vh)` with `a = U diag(s) Vᴴ`, singular values descending. With
/// `hermitian` from the eigendecomposition, as JAX.
#[track_caller]
pub fn svd(a: &Array, full_matrices: bool, hermitian: bool) -> (Array, Array, Array) {
    let a = to_inexact(a);
    if !hermitian {
        return lax::linalg::svd(&a, full_matrices);
    }
    let (vectors, values) = lax::linalg::eigh(&a, true, true, true);
    let (s, order, sign) = hermitian_values(&values);
    let index = crate::numpy::broadcast_to(
        &crate::numpy::expand_dims(&order, -2),
        vectors.shape_or_empty(),
    );
    let u = crate::numpy::take_along_axis(&vectors, &index, -1);
    let vh = adjoint(&lax::mul(
        &u,
        &crate::numpy::expand_dims(&lax::convert_element_type(&sign, u.dtype_or_bool()), -2),
    ));
    (u, s, vh)
}

/// The singular values of a Hermitian matrix from its eigenvalues:
/// magnitudes descending, the order they came in, and their signs.
fn hermitian_values(values: &Array) -> (Array, Array, Array) {
    let magnitude = crate::numpy::abs(values);
    let sign = crate::numpy::sign(values);
    let order = crate::numpy::flip(&crate::numpy::argsort(&magnitude, -1), Some(&[-1]));
    let order = lax::convert_element_type(&order, oxla_core::DType::I32);
    let s = crate::numpy::take_along_axis(&magnitude, &order, -1);
    let sign = crate::numpy::take_along_axis(&sign, &order, -1);
    (s, order, sign)
}

/// `jnp.linalg.svd(a, compute_uv=False, hermitian)` and
/// `jnp.linalg.svdvals(a)`: the singular values, descending.
#[track_caller]
pub fn svdvals(a: &Array, hermitian: bool) -> Array {
    let a = to_inexact(a);
    if hermitian {
        let (_, values) = lax::linalg::eigh(&a, true, true, true);
        return hermitian_values(&values).0;
    }
    lax::linalg::svd_values(&a)
}

/// `jnp.linalg.qr`'s modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrMode {
    /// Q m×k and R k×n (numpy's default).
    Reduced,
    /// Q m×m and R m×n.
    Complete,
    /// R (k×n) only.
    R,
}

/// `jnp.linalg.qr(a, mode)`: `(q, r)` with `a = Q R` (for [`QrMode::R`],
/// `q` is R as well: use [`qr_r`]).
#[track_caller]
pub fn qr(a: &Array, mode: QrMode) -> (Array, Array) {
    let (q, r) = lax::linalg::qr(&to_inexact(a), mode == QrMode::Complete);
    match mode {
        QrMode::R => (r.clone(), r),
        QrMode::Reduced | QrMode::Complete => (q, r),
    }
}

/// `jnp.linalg.qr(a, mode='r')`: R alone.
#[track_caller]
pub fn qr_r(a: &Array) -> Array {
    qr(a, QrMode::R).1
}

/// The machine epsilon of `x`'s (real part's) dtype.
fn epsilon(x: &Array) -> f64 {
    x.dtype_or_bool()
        .real_part()
        .finfo()
        .map_or(f64::EPSILON, |f| f.eps())
}

/// `jnp.linalg.pinv(a, rtol)`: the Moore-Penrose pseudo-inverse, from the
/// SVD, singular values at most `rtol` (default `10 max(m, n) eps`) times
/// the largest treated as zero.
#[track_caller]
pub fn pinv(a: &Array, rtol: Option<f64>) -> Array {
    let a = to_inexact(a);
    let shape = a.shape_or_empty().to_vec();
    let r = shape.len();
    if r < 2 {
        return usage(
            "linalg.pinv",
            format!("needs rank 2 or more, got shape {shape:?}"),
        );
    }
    let (m, n) = (shape[r - 2], shape[r - 1]);
    if m == 0 || n == 0 {
        let mut out = shape.clone();
        out.swap(r - 2, r - 1);
        return crate::numpy::zeros(&out, a.dtype_or_bool());
    }
    let rtol = rtol.unwrap_or(10.0 * m.max(n) as f64 * epsilon(&a));
    let (u, s, vh) = lax::linalg::svd(&crate::numpy::conj(&a), false);
    let largest = lax::slice_in_dim(&s, 0, Some(1), 1, -1);
    let cutoff = lax::mul(&crate::numpy::scalar_like(&s, rtol), &largest);
    let s = lax::select(
        &lax::gt(&s, &cutoff),
        &s,
        &crate::numpy::full_like(&s, f64::INFINITY),
    );
    let scaled = lax::div(
        &crate::numpy::matrix_transpose(&u),
        &lax::convert_element_type(&crate::numpy::expand_dims(&s, -1), u.dtype_or_bool()),
    );
    matmul_highest(&crate::numpy::matrix_transpose(&vh), &scaled)
}

/// `jnp.linalg.lstsq(a, b, rcond)`: the least-squares solution `x` of `a
/// x ≈ b` for a 2-D `a` (a 1-D `b` is one column), the squared residuals
/// per column (one for a 1-D `b`, as JAX), the effective rank, and the singular values; singular
/// values below `rcond` (default `max(m, n) eps`) times the largest are
/// dropped.
#[track_caller]
pub fn lstsq(a: &Array, b: &Array, rcond: Option<f64>) -> (Array, Array, Array, Array) {
    let (a, b) = (to_inexact(a), to_inexact(b));
    let promoted = crate::numpy::promote_args(&[&a, &b]);
    let (a, b) = (promoted[0].clone(), promoted[1].clone());
    let (a_shape, b_shape) = (a.shape_or_empty().to_vec(), b.shape_or_empty().to_vec());
    if a_shape.len() != 2 || !(1..=2).contains(&b_shape.len()) || b_shape[0] != a_shape[0] {
        let e = usage(
            "linalg.lstsq",
            format!(
                "takes a 2-D a and a 1-D or 2-D b with as many rows, got shapes {a_shape:?} and \
                 {b_shape:?}"
            ),
        );
        return (e.clone(), e.clone(), e.clone(), e);
    }
    let (m, n) = (a_shape[0], a_shape[1]);
    let vector = b_shape.len() == 1;
    let b = if vector {
        crate::numpy::expand_dims(&b, -1)
    } else {
        b
    };
    let eps = epsilon(&a);
    let rcond = match rcond {
        None => eps * m.max(n) as f64,
        Some(r) if r < 0.0 => eps,
        Some(r) => r,
    };
    let (u, s, vt) = lax::linalg::svd(&a, false);
    let largest = lax::slice_in_dim(&s, 0, Some(1), 1, -1);
    let zero = crate::numpy::scalar_like(&s, 0.0);
    let mask = lax::and(
        &lax::gt(&s, &zero),
        &lax::ge(
            &s,
            &lax::mul(&crate::numpy::scalar_like(&s, rcond), &largest),
        ),
    );
    let rank = crate::numpy::sum(
        &lax::convert_element_type(&mask, oxla_core::DType::I32),
        None,
        false,
    );
    let safe = lax::select(&mask, &s, &crate::numpy::ones_like(&s));
    let s_inv = lax::select(
        &mask,
        &crate::numpy::reciprocal(&safe),
        &crate::numpy::zeros_like(&s),
    );
    let uhb = matmul_highest(&adjoint(&u), &b);
    let scaled = lax::mul(
        &lax::convert_element_type(&crate::numpy::expand_dims(&s_inv, -1), uhb.dtype_or_bool()),
        &uhb,
    );
    let x = matmul_highest(&adjoint(&vt), &scaled);
    let residual = lax::sub(&b, &matmul_highest(&a, &x));
    let resid = crate::numpy::sum(
        &crate::numpy::real(&lax::mul(&residual, &crate::numpy::conj(&residual))),
        Some(&[0]),
        false,
    );
    // A vector b's solution is a vector; its residual stays one column's.
    let x = if vector { lax::squeeze(&x, &[-1]) } else { x };
    (x, resid, rank, s)
}

/// `jnp.linalg.matrix_rank(m, rtol)`: the number of singular values
/// above the threshold: `rtol` itself when given (as JAX), else the
/// largest singular value times `max(m, n) eps`. Of a vector: whether any
/// element is nonzero.
#[track_caller]
pub fn matrix_rank(x: &Array, rtol: Option<f64>) -> Array {
    let x = to_inexact(x);
    let shape = x.shape_or_empty().to_vec();
    if shape.len() < 2 {
        let nonzero = lax::ne(&x, &crate::numpy::scalar_like(&x, 0.0));
        return lax::convert_element_type(
            &crate::numpy::any(&nonzero, None, false),
            oxla_core::DType::I32,
        );
    }
    let s = lax::linalg::svd_values(&x);
    let threshold = match rtol {
        Some(t) => crate::numpy::scalar_like(&s, t),
        None => {
            let r = shape.len();
            let scale = shape[r - 1].max(shape[r - 2]) as f64 * epsilon(&x);
            lax::mul(
                &crate::numpy::max(&s, Some(&[-1]), true),
                &crate::numpy::scalar_like(&s, scale),
            )
        }
    };
    crate::numpy::sum(
        &lax::convert_element_type(&lax::gt(&s, &threshold), oxla_core::DType::I32),
        Some(&[-1]),
        false,
    )
}

/// `jnp.linalg.cond(x, p)`: the condition number in the norm of order `p`
/// (`None` and `P(2)`: the ratio of the largest to the smallest singular
/// value; `P(-2)` its inverse; other orders `‖x‖ ‖x⁻¹‖` of square
/// matrices). Infinite for a singular matrix with finite entries, except
/// for `None`/`P(2)`, which give JAX's NaN.
#[track_caller]
pub fn cond(x: &Array, p: Option<super::Ord>) -> Array {
    use super::Ord;
    let x = to_inexact(x);
    let shape = x.shape_or_empty().to_vec();
    if shape.len() < 2 || shape.contains(&0) {
        return usage(
            "linalg.cond",
            format!("needs non-empty matrices, got shape {shape:?}"),
        );
    }
    let first_over_last = |s: &Array, reverse: bool| {
        let k = *s.shape_or_empty().last().unwrap_or(&1);
        let first = lax::index_in_dim(s, 0, -1, false);
        let last = lax::index_in_dim(s, k - 1, -1, false);
        if reverse {
            lax::div(&last, &first)
        } else {
            lax::div(&first, &last)
        }
    };
    let r = match p {
        None | Some(Ord::P(2.0)) => return first_over_last(&svdvals(&x, false), false),
        Some(Ord::P(-2.0)) => first_over_last(&svdvals(&x, false), true),
        Some(ord) => {
            if square(&x).is_none() {
                return usage(
                    "linalg.cond",
                    format!("order {ord:?} needs square matrices, got shape {shape:?}"),
                );
            }
            let inverse = inv(&x);
            lax::mul(
                &super::matrix_norm(&x, false, ord),
                &super::matrix_norm(&inverse, false, ord),
            )
        }
    };
    let finite_input = crate::numpy::logical_not(&crate::numpy::any(
        &crate::numpy::isnan(&x),
        Some(&[-2, -1]),
        false,
    ));
    lax::select(
        &lax::and(&crate::numpy::isnan(&r), &finite_input),
        &crate::numpy::full_like(&r, f64::INFINITY),
        &r,
    )
}

/// `jnp.linalg.tensorsolve(a, b, axes)`: `x` with `tensordot(a, x,
/// x.ndim) = b`, `axes` of `a` moved last first.
#[track_caller]
pub fn tensorsolve(a: &Array, b: &Array, axes: Option<&[i64]>) -> Array {
    let mut a = to_inexact(a);
    if let Some(axes) = axes {
        let rank = a.ndim_or_zero() as i64;
        let moved: Vec<i64> = axes.iter().map(|x| x.rem_euclid(rank.max(1))).collect();
        let perm: Vec<i64> = (0..rank)
            .filter(|d| !moved.contains(d))
            .chain(moved.iter().copied())
            .collect();
        a = crate::numpy::transpose(&a, Some(&perm));
    }
    let a_shape = a.shape_or_empty().to_vec();
    let b_shape = b.shape_or_empty().to_vec();
    if b_shape.len() > a_shape.len() || a_shape[..b_shape.len()] != b_shape[..] {
        return usage(
            "linalg.tensorsolve",
            format!("a's leading axes must be b's shape, got {a_shape:?} and {b_shape:?}"),
        );
    }
    let out: Vec<i64> = a_shape[b_shape.len()..].to_vec();
    let rows: i64 = b_shape.iter().product();
    let cols: i64 = out.iter().product();
    let matrix = crate::numpy::reshape(&a, &[rows, cols]);
    crate::numpy::reshape(&solve(&matrix, &crate::numpy::ravel(b)), &out)
}

/// `jnp.linalg.tensorinv(a, ind)`: the inverse of `a` as a matrix of its
/// first `ind` axes by the rest, reshaped back.
#[track_caller]
pub fn tensorinv(a: &Array, ind: usize) -> Array {
    let shape = a.shape_or_empty().to_vec();
    if ind == 0 || ind > shape.len() {
        return usage(
            "linalg.tensorinv",
            format!("ind must be in 1..={}, got {ind}", shape.len()),
        );
    }
    let rows: i64 = shape[..ind].iter().product();
    let cols: i64 = shape[ind..].iter().product();
    let inverse = inv(&crate::numpy::reshape(a, &[rows, cols]));
    let out: Vec<i64> = shape[ind..].iter().chain(&shape[..ind]).copied().collect();
    crate::numpy::reshape(&inverse, &out)
}
