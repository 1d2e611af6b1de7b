//! Linear-algebra primitives (JAX's `jax/_src/lax/linalg.py`): the
//! Cholesky factor and triangular solves, batched over leading
//! dimensions.

use crate::aval::Aval;
use crate::primitive::TypeClass;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity, expect_class};

/// How a triangular solve reads its matrix `a` (JAX's keyword arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TriangularSolveOptions {
    /// Solve `op(a) x = b` (true) or `x op(a) = b` (false).
    pub left_side: bool,
    /// `a` is lower (true) or upper (false) triangular; the other half is
    /// not read.
    pub lower: bool,
    /// `op(a)` transposes `a`.
    pub transpose_a: bool,
    /// `op(a)` conjugates `a` (complex types only).
    pub conjugate_a: bool,
    /// The diagonal of `a` is taken to be ones, and not read.
    pub unit_diagonal: bool,
}

/// A linear-algebra primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// The lower Cholesky factor `L` of a Hermitian positive-definite
    /// matrix, `x = L Lᴴ` (NaNs where `x` is not positive definite).
    Cholesky,
    /// `x` with `op(a) x = b` (or `x op(a) = b`) for a triangular `a`.
    TriangularSolve(TriangularSolveOptions),
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Cholesky => "cholesky",
            Op::TriangularSolve(_) => "triangular_solve",
        }
    }

    /// The parameters as jaxprs print them.
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        use super::print::py_bool;
        match self {
            Op::Cholesky => vec![],
            Op::TriangularSolve(o) => vec![
                format!("conjugate_a={}", py_bool(o.conjugate_a)),
                format!("left_side={}", py_bool(o.left_side)),
                format!("lower={}", py_bool(o.lower)),
                format!("transpose_a={}", py_bool(o.transpose_a)),
                format!("unit_diagonal={}", py_bool(o.unit_diagonal)),
            ],
        }
    }
}

/// An error unless `aval` is a batch of square matrices.
fn expect_square(aval: &Aval, what: &str) -> RuleResult<()> {
    let s = &aval.shape;
    if s.len() < 2 || s[s.len() - 1] != s[s.len() - 2] {
        return Err(ShapeError::Invalid(format!(
            "{what} must be a (batch of) square matrices, got {aval}"
        )));
    }
    Ok(())
}

/// The shape rule: as JAX's `_cholesky_shape_rule` and
/// `_triangular_solve_shape_rule`, with equal batch dimensions.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Cholesky => {
            expect_arity(inputs, 1)?;
            expect_class(TypeClass::Inexact, inputs[0])?;
            expect_square(inputs[0], "the operand")?;
            Ok(vec![inputs[0].with_dtype(inputs[0].dtype)])
        }
        Op::TriangularSolve(o) => {
            expect_arity(inputs, 2)?;
            let (a, b) = (inputs[0], inputs[1]);
            expect_class(TypeClass::Inexact, a)?;
            expect_square(a, "a")?;
            if a.dtype != b.dtype {
                return Err(ShapeError::Invalid(format!(
                    "a and b must have the same dtype, got {a} and {b}"
                )));
            }
            let (ra, rb) = (a.shape.len(), b.shape.len());
            let common = if o.left_side {
                rb.wrapping_sub(2)
            } else {
                rb.wrapping_sub(1)
            };
            if rb != ra
                || a.shape[..ra - 2] != b.shape[..rb - 2]
                || b.shape[common] != a.shape[ra - 1]
            {
                return Err(ShapeError::Invalid(format!(
                    "incompatible shapes {a} and {b} (left_side={}): b must have a's batch \
                     dimensions and a's size along its {} dimension",
                    o.left_side,
                    if o.left_side {
                        "second-to-last"
                    } else {
                        "last"
                    }
                )));
            }
            Ok(vec![b.with_dtype(b.dtype)])
        }
    }
}

/// The sharding rule (see [`crate::sharding_rules`]): the matrix
/// dimensions are whole (a factorization or solve reads all of them);
/// batch dimensions keep their split.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    for x in inputs {
        let rank = x.shape.len();
        for dim in rank.saturating_sub(2)..rank {
            crate::sharding_rules::require_unsplit(
                x,
                dim,
                "a factorization or solve reads the whole matrix",
            )?;
        }
    }
    Ok(match op {
        Op::Cholesky => vec![inputs[0].dim_axes()],
        Op::TriangularSolve(_) => vec![inputs[1].dim_axes()],
    })
}
