//! `jax.lax.linalg`: the Cholesky factor and triangular solves, batched
//! over leading dimensions, with JAX's jvp, transpose and batching rules
//! (in `transform/rules/linalg.rs`).

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
