//! The jvp, transpose and batching rules of the collective family
//! (`oxla_core::primitive::collective`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::transform::batch_rules::same_bdim_unary;
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::{finish, refs, single};
use crate::transform::support;
use crate::transform::support::Tangent;
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::for_linear;
use oxla_core::primitive::collective;
use oxla_core::primitive::collective::Op;
use oxla_core::{Aval, Primitive};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    _ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let result = match op {
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => {
            return crate::transform::collective_rules::jvp(primitive, primals, tangents);
        }
        // Linear: the tangent is laid out (or varies) as the value does.
        Op::Pvary { .. } => {
            let out = support::bind_one(primitive, &refs(primals))?;
            let tangent = match tangents.first().cloned().flatten() {
                Some(t) => Some(support::bind_one(primitive, &[&t])?),
                None => None,
            };
            single(out, tangent)
        }
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(
    op: &Op,
    primitive: &Primitive,
    _cts: &[Tangent],
    operands: &[Operand],
    _out_avals: &[Aval],
    ct: &Array,
    _ct_shape: &[i64],
) -> Result<Vec<Tangent>> {
    match op {
        // JAX's pvary transpose: the cotangent summed over the axes the
        // value was made to vary over.
        Op::Pvary { group } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(
                Primitive::Collective(collective::Op::AllReduce {
                    op: oxla_core::ReduceOp::Sum,
                    group: group.clone(),
                }),
                &[ct],
            )))
        }),
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => {
            crate::transform::collective_rules::transpose(primitive, ct, operands)
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
    let size = axis_size;
    match op {
        Op::Pvary { .. } => same_bdim_unary(primitive, args, bdims, size),
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => {
            crate::transform::collective_rules::batch(primitive, args, bdims, size)
        }
    }
}
