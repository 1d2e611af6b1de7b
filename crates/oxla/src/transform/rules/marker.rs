//! The jvp, transpose and batching rules of the marker family
//! (`oxla_core::primitive::marker`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{done, same_bdim_unary};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{Jvp, finish, single, zero_jvp};
use crate::transform::support;
use crate::transform::support::{Tangent, bind_all, move_axis, refs};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{for_linear, none, nonlinear};
use oxla_core::Primitive;
use oxla_core::primitive::marker;
use oxla_core::primitive::marker::Op;

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::StopGradient => zero_jvp(primitive, primals)?,
        Op::CheckpointName { .. } => {
            let out = support::bind_one(primitive, &refs(primals))?;
            single(out, tangents.first().cloned().flatten())
        }
        Op::OptimizationBarrier => barrier_jvp(primitive, primals, tangents)?,
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        cts,
        operands,
        ct,
        ..
    } = *input;
    match op {
        Op::StopGradient => nonlinear(primitive, operands),
        Op::CheckpointName { .. } => for_linear(operands, |_, _| Ok(Some(ct.clone()))),
        Op::OptimizationBarrier => optimization_barrier(cts, operands),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    match op {
        Op::StopGradient | Op::CheckpointName { .. } => {
            same_bdim_unary(primitive, args, bdims, size)
        }
        Op::OptimizationBarrier => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| match bd {
                    Some(b) => move_axis(x, b, 0),
                    None => x.clone(),
                })
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            let outs = bind_all(Primitive::Marker(marker::Op::OptimizationBarrier), &refs)?;
            let out_bdims = bdims.iter().map(|bd| bd.map(|_| 0)).collect();
            done(outs, out_bdims)
        }
    }
}

/// `optimization_barrier`: the primals go through one barrier and the
/// nonzero tangents through another, as JAX's `_optimization_barrier_jvp`.
/// Two binds, never one over both: partial evaluation (linearize, the jvp
/// of a call or remat body under linearize) splits the known primals from
/// the unknown tangents, and one barrier holding both would make the
/// primal outputs unknown too, cutting the primal computation's tie to the
/// inputs (reverse-over-reverse through `checkpoint` gave 0).
fn barrier_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let nonzero: Vec<&Array> = tangents.iter().flatten().collect();
    let tangent_outs = if nonzero.is_empty() {
        Vec::new()
    } else {
        support::bind_all(primitive.clone(), &nonzero)?
    };
    let mut tangent_outs = tangent_outs.into_iter();
    let out_tangents = tangents
        .iter()
        .map(|t| t.as_ref().and_then(|_| tangent_outs.next()))
        .collect();
    Ok((outs, out_tangents))
}

/// `optimization_barrier`: the nonzero cotangents of the linear operands
/// go through one barrier of their own (JAX's `_opt_barrier_transpose`).
fn optimization_barrier(cts: &[Tangent], operands: &[Operand]) -> Result<Vec<Tangent>> {
    let live: Vec<(usize, &Array)> = operands
        .iter()
        .zip(cts)
        .enumerate()
        .filter_map(|(i, (operand, ct))| match (operand, ct) {
            (Operand::Linear(_), Some(ct)) => Some((i, ct)),
            (Operand::Linear(_), None) | (Operand::Known(_), _) => None,
        })
        .collect();
    let mut result = none(operands.len());
    if live.is_empty() {
        return Ok(result);
    }
    let inputs: Vec<&Array> = live.iter().map(|&(_, ct)| ct).collect();
    let outs = support::bind_all(Primitive::Marker(marker::Op::OptimizationBarrier), &inputs)?;
    for ((i, _), out) in live.into_iter().zip(outs) {
        result[i] = Some(out);
    }
    Ok(result)
}
