//! `jax.lax.linalg`: the Cholesky factor, triangular solves, LU (with
//! its pivots, permutation and solves), QR, the Hermitian and general
//! eigendecompositions and the SVD, batched over leading dimensions, with
//! JAX's jvp, transpose and batching rules (in `transform/rules/linalg.rs`
//! and `decompositions.rs`).

pub use oxla_core::primitive::linalg::TriangularSolveOptions;
use oxla_core::primitive::linalg::{self, Op};
use oxla_core::{Precision, Primitive};

use crate::array::Array;
use crate::lax;
use crate::ops::bind;

/// The conjugate transpose of the last two axes (JAX's `_H`).
pub(crate) fn adjoint(x: &Array) -> Array {
    let rank = x.ndim_or_zero() as i64;
    let mut perm: Vec<i64> = (0..rank).collect();
    if rank >= 2 {
        perm.swap(rank as usize - 1, rank as usize - 2);
    }
    let t = lax::transpose(x, &perm);
    if t.dtype_or_bool().is_complex() {
        lax::conj(&t)
    } else {
        t
    }
}

/// `lax.linalg.cholesky(x, symmetrize_input)`: the lower Cholesky factor
/// `L` of Hermitian positive-definite matrices, `x = L Lᴴ`, over the last
/// two axes; NaNs where `x` is not positive definite. With
/// `symmetrize_input` the factor is of `(x + xᴴ) / 2`, as JAX's default.
#[track_caller]
pub fn cholesky(x: &Array, symmetrize_input: bool) -> Array {
    let shape = x.shape_or_empty();
    let square = shape.len() >= 2 && shape[shape.len() - 1] == shape[shape.len() - 2];
    // A non-square operand goes straight to the primitive, whose shape
    // rule names the problem.
    let x = if symmetrize_input && square {
        lax::div(
            &lax::add(x, &adjoint(x)),
            &crate::numpy::scalar_like(x, 2.0),
        )
    } else {
        x.clone()
    };
    crate::numpy::tril(&bind(Primitive::Linalg(Op::Cholesky), &[&x]), 0)
}

/// `lax.linalg.triangular_solve(a, b, ..)`: `x` with `op(a) x = b`
/// (`left_side`) or `x op(a) = b`, for triangular `a`. A `b` of one rank
/// less than `a` is a batch of vectors. `conjugate_a` applies to complex
/// types only.
#[track_caller]
pub fn triangular_solve(a: &Array, b: &Array, options: TriangularSolveOptions) -> Array {
    let mut options = options;
    options.conjugate_a = options.conjugate_a && a.dtype_or_bool().is_complex();
    let singleton = b.ndim_or_zero() + 1 == a.ndim_or_zero();
    let axis = if options.left_side { -1 } else { -2 };
    let b = if singleton {
        lax::expand_dims(b, &[axis])
    } else {
        b.clone()
    };
    let out = bind(
        Primitive::Linalg(linalg::Op::TriangularSolve(options)),
        &[a, &b],
    );
    if singleton {
        lax::squeeze(&out, &[axis])
    } else {
        out
    }
}

/// `a @ b` over batches of matrices at the highest precision, as JAX's
/// linear-algebra rules compute their products.
pub(crate) fn matmul_highest(a: &Array, b: &Array) -> Array {
    let rank = a.ndim_or_zero() as i64;
    let batch: Vec<i64> = (0..rank - 2).collect();
    lax::dot_general_with_precision(
        a,
        b,
        ((&[rank - 1], &[rank - 2]), (&batch, &batch)),
        None,
        Some(Precision::Highest),
    )
}

/// An error array for `lax.linalg.{function}`, naming the caller's line.
#[track_caller]
fn usage(function: &str, message: String) -> Array {
    Array::error(lax::usage_error(&format!("linalg.{function}"), message))
}

/// The matrix dimensions `(m, n)` of `x`'s last two axes (0 for a rank
/// below two, which the primitives' shape rules then name).
fn matrix_dims(x: &Array) -> (i64, i64) {
    let s = x.shape_or_empty();
    match s.len() {
        0 | 1 => (0, 0),
        r => (s[r - 2], s[r - 1]),
    }
}

/// `lax.linalg.lu(x)`: LU with partial pivoting over the last two axes,
/// `P x = L U`. Returns the factors packed in one matrix (`L` strictly
/// below the diagonal with its unit diagonal implied, `U` on and above),
/// the 0-based row swaps LAPACK made (`pivots`, int32 `[..., min(m, n)]`)
/// and the permutation they amount to (int32 `[..., m]`; `x[perm] = L U`).
/// A singular matrix factors with zeros on `U`'s diagonal. On the CPU
/// (LAPACK's `getrf`).
#[track_caller]
pub fn lu(x: &Array) -> (Array, Array, Array) {
    let outs = crate::ops::bind_n(Primitive::Linalg(Op::Lu), &[x], 2);
    let (m, _) = matrix_dims(x);
    let permutation = lu_pivots_to_permutation(&outs[1], m);
    (outs[0].clone(), outs[1].clone(), permutation)
}

/// `lax.linalg.lu_pivots_to_permutation(pivots, permutation_size)`: the
/// permutation of `0..permutation_size` that the row swaps `pivots`
/// (int32 `[..., k]`, swap row `i` with row `pivots[i]`, in order) make,
/// as JAX's generic rule: a loop over the swaps.
#[track_caller]
pub fn lu_pivots_to_permutation(pivots: &Array, permutation_size: i64) -> Array {
    let shape = pivots.shape_or_empty();
    let rank = shape.len();
    let k = shape.last().copied().unwrap_or(0);
    let mut out_shape = shape[..rank.saturating_sub(1)].to_vec();
    out_shape.push(permutation_size);
    let last = out_shape.len() - 1;
    let iota = lax::broadcasted_iota(oxla_core::DType::I32, &out_shape, last);
    if permutation_size == 0 || k == 0 {
        return iota;
    }
    let body = |i: Array, permutation: Array| {
        // Row i trades places with row pivots[..., i]: one-hot selections
        // over the last axis, the same for every batch element.
        let at_i = crate::numpy::equal(&iota, &i);
        let j = lax::dynamic_slice_in_dim(pivots, &i, 1, -1);
        let at_j = crate::numpy::equal(&iota, &j);
        let pick = |mask: &Array| {
            let picked = lax::select(mask, &permutation, &crate::numpy::zeros_like(&permutation));
            let total = crate::numpy::sum(&picked, Some(&[-1]), true);
            lax::convert_element_type(&total, oxla_core::DType::I32)
        };
        let (x, y) = (pick(&at_i), pick(&at_j));
        lax::select(
            &at_i,
            &crate::numpy::broadcast_to(&y, &out_shape),
            &lax::select(
                &at_j,
                &crate::numpy::broadcast_to(&x, &out_shape),
                &permutation,
            ),
        )
    };
    crate::control::fori_loop(0, k, body, iota.clone()).unwrap_or_else(Array::error)
}

/// The rows of (a batch of) matrices `x` in the order of `permutation`
/// (`x[..., permutation, :]`, the permutation batched as `x`).
pub(crate) fn permute_rows(x: &Array, permutation: &Array) -> Array {
    let index = crate::numpy::broadcast_to(
        &crate::numpy::expand_dims(permutation, -1),
        x.shape_or_empty(),
    );
    crate::numpy::take_along_axis(x, &index, -2)
}

/// `lax.linalg.lu_solve(lu, permutation, b, trans)`: `x` with `A x = b`
/// (`trans` 0), `Aᵀ x = b` (1) or `Aᴴ x = b` (2), from `A`'s LU factors
/// and permutation ([`lu`]). `b` of one rank less than `lu` is a batch of
/// vectors; batch dimensions broadcast.
#[track_caller]
pub fn lu_solve(lu: &Array, permutation: &Array, b: &Array, trans: u8) -> Array {
    for operand in [lu, permutation, b] {
        if let Err(e) = operand.aval() {
            return Array::error(e);
        }
    }
    let lu_rank = lu.ndim_or_zero();
    let vector = lu_rank == b.ndim_or_zero() + 1;
    let b = if vector {
        crate::numpy::expand_dims(b, -1)
    } else {
        b.clone()
    };
    let (lu_shape, b_shape) = (lu.shape_or_empty(), b.shape_or_empty());
    if lu_shape.len() < 2 || lu_shape[lu_shape.len() - 1] != lu_shape[lu_shape.len() - 2] {
        return usage(
            "lu_solve",
            format!("the LU factors must be (a batch of) square matrices, got shape {lu_shape:?}"),
        );
    }
    let n = lu_shape[lu_shape.len() - 1];
    if b_shape.len() < 2 || b_shape[b_shape.len() - 2] != n {
        return usage(
            "lu_solve",
            format!("b's rows must match the {n}×{n} factors, got shape {b_shape:?}"),
        );
    }
    let p_shape = permutation.shape_or_empty();
    let Some(batch) = crate::numpy::broadcast_shapes(
        &lu_shape[..lu_shape.len() - 2],
        &b_shape[..b_shape.len() - 2],
    )
    .and_then(|s| crate::numpy::broadcast_shapes(&s, &p_shape[..p_shape.len().saturating_sub(1)])) else {
        return usage(
            "lu_solve",
            format!(
                "batch dimensions of {lu_shape:?}, {p_shape:?} and {b_shape:?} do not broadcast"
            ),
        );
    };
    let with = |tail: &[i64]| [batch.as_slice(), tail].concat();
    let lu = crate::numpy::broadcast_to(lu, &with(&[n, n]));
    let permutation = crate::numpy::broadcast_to(permutation, &with(&[n]));
    let b = crate::numpy::broadcast_to(&b, &with(&b_shape[b_shape.len() - 2..]));
    let unit_lower = TriangularSolveOptions {
        left_side: true,
        lower: true,
        unit_diagonal: true,
        ..TriangularSolveOptions::default()
    };
    let upper = TriangularSolveOptions {
        left_side: true,
        ..TriangularSolveOptions::default()
    };
    let x = if trans == 0 {
        let x = permute_rows(&b, &permutation);
        let x = triangular_solve(&lu, &x, unit_lower);
        triangular_solve(&lu, &x, upper)
    } else {
        let conjugate_a = trans == 2;
        let x = triangular_solve(
            &lu,
            &b,
            TriangularSolveOptions {
                transpose_a: true,
                conjugate_a,
                ..upper
            },
        );
        let x = triangular_solve(
            &lu,
            &x,
            TriangularSolveOptions {
                transpose_a: true,
                conjugate_a,
                ..unit_lower
            },
        );
        let inverse = crate::numpy::argsort(&permutation, -1);
        permute_rows(
            &x,
            &lax::convert_element_type(&inverse, oxla_core::DType::I32),
        )
    };
    if vector { lax::squeeze(&x, &[-1]) } else { x }
}

/// `lax.linalg.qr(x, full_matrices)`: `x = Q R` over the last two axes,
/// `Q` with orthonormal columns and `R` upper triangular; with
/// `full_matrices` Q is m×m and R m×n, else m×k and k×n (k = min(m, n)).
/// On the CPU (LAPACK's `geqrf` and `orgqr`/`ungqr`).
#[track_caller]
pub fn qr(x: &Array, full_matrices: bool) -> (Array, Array) {
    let outs = crate::ops::bind_n(Primitive::Linalg(Op::Qr { full_matrices }), &[x], 2);
    (outs[0].clone(), outs[1].clone())
}

/// `lax.linalg.eigh(x, lower, symmetrize_input, sort_eigenvalues)`: the
/// eigenvectors (columns of `v`) and real eigenvalues (`w`, ascending) of
/// Hermitian matrices, reading the `lower` triangle (or the upper); with
/// `symmetrize_input` of `(x + xᴴ) / 2`. Returns `(v, w)`. NaNs where
/// LAPACK does not converge. On the CPU (`syevd`/`heevd`).
#[track_caller]
pub fn eigh(
    x: &Array,
    lower: bool,
    symmetrize_input: bool,
    sort_eigenvalues: bool,
) -> (Array, Array) {
    let (m, n) = matrix_dims(x);
    let x = if symmetrize_input && m == n && x.ndim_or_zero() >= 2 {
        lax::div(
            &lax::add(x, &adjoint(x)),
            &crate::numpy::scalar_like(x, 2.0),
        )
    } else {
        x.clone()
    };
    let op = Op::Eigh {
        lower,
        sort_eigenvalues,
    };
    let outs = crate::ops::bind_n(Primitive::Linalg(op), &[&x], 2);
    (outs[0].clone(), outs[1].clone())
}

/// `lax.linalg.svd(x, full_matrices, compute_uv=True)`: `x = U diag(s)
/// Vᴴ` with the singular values `s` descending; returns `(u, s, vh)`, U
/// m×m and Vᴴ n×n with `full_matrices`, else m×k and k×n. On the CPU
/// (`gesdd`). [`svd_values`] is `compute_uv=False`.
#[track_caller]
pub fn svd(x: &Array, full_matrices: bool) -> (Array, Array, Array) {
    let op = Op::Svd {
        full_matrices,
        compute_uv: true,
    };
    let outs = crate::ops::bind_n(Primitive::Linalg(op), &[x], 3);
    (outs[1].clone(), outs[0].clone(), outs[2].clone())
}

/// `lax.linalg.svd(x, compute_uv=False)`: the singular values,
/// descending.
#[track_caller]
pub fn svd_values(x: &Array) -> Array {
    let op = Op::Svd {
        full_matrices: true,
        compute_uv: false,
    };
    bind(Primitive::Linalg(op), &[x])
}

/// `lax.linalg.eig(x, compute_left_eigenvectors, compute_right_eigenvectors)`:
/// the (complex) eigenvalues of general square matrices, then their left
/// and right eigenvectors (complex columns, each of unit norm with its
/// largest component real) when asked for. NaNs where LAPACK does not
/// converge or `x` has a non-finite entry. On the CPU (`geev`).
#[track_caller]
pub fn eig(
    x: &Array,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
) -> Vec<Array> {
    let op = Op::Eig {
        compute_left_eigenvectors,
        compute_right_eigenvectors,
    };
    let n = 1 + usize::from(compute_left_eigenvectors) + usize::from(compute_right_eigenvectors);
    crate::ops::bind_n(Primitive::Linalg(op), &[x], n)
}
