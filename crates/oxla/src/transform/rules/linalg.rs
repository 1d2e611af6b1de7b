//! The jvp, transpose and batching rules of the linear-algebra family
//! (`oxla_core::primitive::linalg`), as JAX's `jax/_src/lax/linalg.py`.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::lax::linalg::{TriangularSolveOptions, matmul_highest, triangular_solve};
use crate::numpy::{tril, triu};
use crate::transform::batch_rules::{BatchArgs, done};
use crate::transform::jvp_rules::{JvpArgs, finish, single};
use crate::transform::support::{self, Tangent, add_tangents, batch_at, refs};
use crate::transform::transpose_rules::{TransposeArgs, known_at, nonlinear};
use oxla_core::primitive::linalg::Op;

use super::decompositions::{eig_jvp, eigh_jvp, qr_jvp, svd_jvp};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::Cholesky => {
            let l = tril(&support::bind_one(primitive, &refs(primals))?, 0);
            let tangent = match tangents.first().cloned().flatten() {
                Some(t) => Some(cholesky_tangent(&l, &t)?),
                None => None,
            };
            single(l, tangent)
        }
        Op::Lu => {
            let outs = support::bind_all(primitive.clone(), &refs(primals))?;
            let tangent = match tangents.first().cloned().flatten() {
                Some(a_dot) => Some(lu_tangent(&outs[0], &outs[1], &a_dot)?),
                None => None,
            };
            (outs, vec![tangent, None])
        }
        Op::Qr { full_matrices } => qr_jvp(primitive, primals, tangents, *full_matrices)?,
        Op::Eigh { .. } => eigh_jvp(primitive, primals, tangents)?,
        Op::Svd {
            full_matrices,
            compute_uv,
        } => svd_jvp(primitive, primals, tangents, *full_matrices, *compute_uv)?,
        Op::Eig {
            compute_left_eigenvectors,
            compute_right_eigenvectors,
        } => eig_jvp(
            primitive,
            primals,
            tangents,
            *compute_left_eigenvectors,
            *compute_right_eigenvectors,
        )?,
        Op::TriangularSolve(o) => {
            let ans = support::bind_one(primitive, &refs(primals))?;
            let (a, b) = (&primals[0], &primals[1]);
            let from_a = match &tangents[0] {
                Some(g_a) => Some(solve_tangent_a(g_a, &ans, a, b, *o)?),
                None => None,
            };
            let from_b = tangents[1]
                .as_ref()
                .map(|g_b| support::bind_one(primitive, &[a, g_b]))
                .transpose()?;
            single(ans, add_tangents(from_a, from_b))
        }
    };
    finish(primitive, result)
}

/// JAX's `_cholesky_jvp_rule`: `L φ(L⁻¹ Σ̇ L⁻ᴴ)`, where φ keeps the lower
/// triangle with the diagonal halved.
fn cholesky_tangent(l: &Array, sigma_dot: &Array) -> Result<Array> {
    let phi = |x: &Array| -> Result<Array> {
        let n = *x.aval()?.shape.last().unwrap_or(&0);
        let halving = lax::add(
            &crate::numpy::scalar_like(x, 1.0),
            &crate::numpy::eye(n, x.dtype_or_bool()),
        );
        Ok(crate::numpy::divide(&tril(x, 0), &halving))
    };
    let tmp = triangular_solve(
        l,
        sigma_dot,
        TriangularSolveOptions {
            left_side: false,
            transpose_a: true,
            conjugate_a: true,
            lower: true,
            unit_diagonal: false,
        },
    );
    let inner = triangular_solve(
        l,
        &tmp,
        TriangularSolveOptions {
            left_side: true,
            transpose_a: false,
            lower: true,
            ..TriangularSolveOptions::default()
        },
    );
    Ok(matmul_highest(l, &phi(&inner)?))
}

/// JAX's `_triangular_solve_jvp_rule_a`: the tangent from `a`'s, through
/// the triangle of `g_a` the solve reads, with the cheaper association.
fn solve_tangent_a(
    g_a: &Array,
    ans: &Array,
    a: &Array,
    b: &Array,
    o: TriangularSolveOptions,
) -> Result<Array> {
    let shape = b.aval()?.shape.to_vec();
    let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let k = i64::from(o.unit_diagonal);
    let g_a = if o.lower { tril(g_a, -k) } else { triu(g_a, k) };
    let g_a = lax::neg(&g_a);
    let g_a = if o.transpose_a {
        crate::numpy::matrix_transpose(&g_a)
    } else {
        g_a
    };
    let g_a = if o.conjugate_a { lax::conj(&g_a) } else { g_a };
    let a_inverse = |rhs: &Array| triangular_solve(a, rhs, o);
    Ok(match (o.left_side, m > n, m < n) {
        (true, true, _) => a_inverse(&matmul_highest(&g_a, ans)),
        (true, false, _) => matmul_highest(&a_inverse(&g_a), ans),
        (false, _, true) => a_inverse(&matmul_highest(ans, &g_a)),
        (false, _, false) => matmul_highest(ans, &a_inverse(&g_a)),
    })
}

/// Cotangents of the operands: a triangular solve is linear in `b`, its
/// transpose the solve with `a` transposed (JAX's
/// `_triangular_solve_transpose_rule`); the Cholesky factor is not linear.
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ct,
        ..
    } = *input;
    match op {
        Op::Cholesky
        | Op::Lu
        | Op::Qr { .. }
        | Op::Eigh { .. }
        | Op::Svd { .. }
        | Op::Eig { .. } => nonlinear(primitive, operands),
        Op::TriangularSolve(o) => {
            let a = known_at(primitive, operands, 0)?;
            let options = TriangularSolveOptions {
                transpose_a: !o.transpose_a,
                ..*o
            };
            Ok(vec![None, Some(triangular_solve(a, ct, options))])
        }
    }
}

/// Batched outputs: the batch dimensions moved first (an unbatched operand
/// broadcast), where the matrix ops treat them as batch dimensions.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    let front: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, &bd)| batch_at(x, bd, size, 0))
        .collect();
    match op {
        Op::Cholesky | Op::TriangularSolve(_) => done(
            vec![support::bind_one(primitive, &refs(&front))?],
            vec![Some(0)],
        ),
        Op::Lu | Op::Qr { .. } | Op::Eigh { .. } | Op::Svd { .. } | Op::Eig { .. } => {
            let outs = support::bind_all(primitive.clone(), &refs(&front))?;
            let bdims = vec![Some(0); outs.len()];
            done(outs, bdims)
        }
    }
}

/// JAX's `_lu_jvp_inner`, batched: with `L` (m×m, unit diagonal) and `U`
/// (n×n, identity below the k×k block) from the packed factors, the
/// tangent of the factors is `L tril(X, -1) + triu(X) U` for
/// `X = L⁻¹ (P ȧ) U⁻¹` (De Hoog, Anderssen and Lukas).
fn lu_tangent(lu: &Array, pivots: &Array, a_dot: &Array) -> Result<Array> {
    let shape = lu.aval()?.shape.to_vec();
    let rank = shape.len();
    let (m, n) = (shape[rank - 2], shape[rank - 1]);
    let k = m.min(n);
    let dtype = lu.dtype_or_bool();
    let permutation = crate::lax::linalg::lu_pivots_to_permutation(pivots, m);
    let x = crate::lax::linalg::permute_rows(a_dot, &permutation);
    let zero = crate::numpy::scalar_like(lu, 0.0);
    let pad = |x: &Array, rows_after: i64, cols_after: i64| {
        let mut config = vec![(0, 0, 0); rank];
        config[rank - 2] = (0, rows_after, 0);
        config[rank - 1] = (0, cols_after, 0);
        lax::pad(x, &zero, &config)
    };
    let l = crate::numpy::add(
        &pad(
            &tril(&lax::slice_in_dim(lu, 0, Some(k), 1, -1), -1),
            0,
            m - k,
        ),
        &crate::numpy::eye(m, dtype),
    );
    let u_eye = {
        let mut config = vec![(0, 0, 0); 2];
        config[0] = (k, 0, 0);
        config[1] = (k, 0, 0);
        lax::pad(
            &crate::numpy::eye(n - k, dtype),
            &crate::numpy::scalar_like(lu, 0.0),
            &config,
        )
    };
    let u = crate::numpy::add(
        &pad(
            &triu(&lax::slice_in_dim(lu, 0, Some(k), 1, -2), 0),
            n - k,
            0,
        ),
        &u_eye,
    );
    let la = triangular_solve(
        &l,
        &x,
        TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: true,
            ..TriangularSolveOptions::default()
        },
    );
    let lau = triangular_solve(
        &u,
        &la,
        TriangularSolveOptions {
            left_side: false,
            lower: false,
            ..TriangularSolveOptions::default()
        },
    );
    Ok(lax::add(
        &matmul_highest(&l, &tril(&lau, -1)),
        &matmul_highest(&triu(&lau, 0), &u),
    ))
}
