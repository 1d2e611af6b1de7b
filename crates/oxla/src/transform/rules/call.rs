//! The jvp, transpose and batching rules of the call family
//! (`oxla_core::primitive::call`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::transform::batch_rules::per_example;
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::{finish, zero_jvp};
use crate::transform::support;
use crate::transform::support::Tangent;
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::nonlinear;
use oxla_core::primitive::call::Op;
use oxla_core::{Aval, Primitive};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let result = match op {
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => {
            return crate::transform::calls::jvp(primitive, primals, tangents, ctx);
        }
        Op::CallExported { function } => {
            if tangents.iter().any(Option::is_some) {
                return Err(support::rule_error(
                    "jvp",
                    primitive,
                    format!(
                        "{} can only be differentiated in reverse mode (grad, vjp, jacrev), \
                         through the vjp it was exported with: an export carries no jvp",
                        function.name()
                    ),
                ));
            }
            zero_jvp(primitive, primals)?
        }
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(
    op: &Op,
    primitive: &Primitive,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
    _ct: &Array,
    _ct_shape: &[i64],
) -> Result<Vec<Tangent>> {
    match op {
        Op::CallExported { .. } => nonlinear(primitive, operands),
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => {
            crate::transform::calls::transpose(primitive, cts, operands, out_avals)
        }
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(
    op: &Op,
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    match op {
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => crate::transform::calls::batch(primitive, args, bdims, axis_size),
        Op::CallExported { .. } => per_example(primitive, args, bdims),
    }
}
