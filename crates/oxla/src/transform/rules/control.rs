//! The jvp, transpose and batching rules of the control family
//! (`oxla_core::primitive::control`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::refs;
use crate::transform::support;
use crate::transform::support::Tangent;
use crate::transform::transpose::Operand;
use oxla_core::primitive::control::Op;
use oxla_core::{Aval, Primitive};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    match op {
        Op::Cond { branches } => {
            crate::transform::control::cond_jvp(branches, primals, tangents, ctx)
        }
        Op::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            crate::transform::control::while_jvp(
                primitive,
                cond_jaxpr,
                body_jaxpr,
                *cond_nconsts,
                *body_nconsts,
                primals,
                tangents,
                ctx,
            )
        }
        Op::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            let spec = crate::transform::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            };
            crate::transform::control::scan_jvp(&spec, primals, tangents, ctx)
        }
    }
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
        Op::Cond { branches } => {
            crate::transform::control::cond_transpose(branches, cts, operands, out_avals)
        }
        Op::While { .. } => Err(crate::transform::control::while_reverse_error(primitive)),
        Op::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => crate::transform::control::scan_transpose(
            &crate::transform::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            cts,
            operands,
            out_avals,
        ),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(
    op: &Op,
    _primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    match op {
        Op::Cond { branches } => {
            crate::transform::control::cond_batch(branches, args, bdims, axis_size)
        }
        Op::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => crate::transform::control::while_batch(
            cond_jaxpr,
            body_jaxpr,
            *cond_nconsts,
            *body_nconsts,
            args,
            bdims,
            axis_size,
        ),
        Op::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => crate::transform::control::scan_batch(
            &crate::transform::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            args,
            bdims,
            axis_size,
        ),
    }
}
