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
        Op::Cholesky => nonlinear(primitive, operands),
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
    }
}
