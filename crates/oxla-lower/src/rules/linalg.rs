//! The lowering rules of the linear-algebra family
//! (`oxla_core::primitive::linalg`) to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::linalg::Op;

/// The StableHLO of a primitive of this family: `stablehlo.cholesky` and
/// `stablehlo.triangular_solve`, as JAX lowers them on GPUs and TPUs (its
/// CPU lowering calls LAPACK through jaxlib's FFI handlers instead, which
/// the standalone plugins do not have; XLA expands these ops on the CPU).
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
        ..
    } = *input;
    let out = &*first_result(out_avals);
    match op {
        Op::Cholesky => e.op(
            "stablehlo.cholesky",
            inputs,
            &[out],
            &[("lower", "true".to_string())],
            loc,
        ),
        Op::TriangularSolve(o) => {
            let mut a = inputs[0];
            let mut conjugate_a = o.conjugate_a;
            // As JAX's `_triangular_solve_lowering`: a conjugate without a
            // transpose is applied to `a` first.
            if conjugate_a && !o.transpose_a {
                a = super::elementwise::conj(e, a, in_avals[0], loc)?;
                conjugate_a = false;
            }
            let transpose = match (o.transpose_a, conjugate_a) {
                (false, _) => "NO_TRANSPOSE",
                (true, true) => "ADJOINT",
                (true, false) => "TRANSPOSE",
            };
            e.op(
                "stablehlo.triangular_solve",
                &[a, inputs[1]],
                &[out],
                &[
                    ("left_side", o.left_side.to_string()),
                    ("lower", o.lower.to_string()),
                    ("unit_diagonal", o.unit_diagonal.to_string()),
                    ("transpose_a", format!("#stablehlo<transpose {transpose}>")),
                ],
                loc,
            )
        }
    }
}
