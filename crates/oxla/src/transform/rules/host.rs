//! The jvp, transpose and batching rules of the host family
//! (`oxla_core::primitive::host`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{Batched, per_example};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{finish, zero_jvp};
use crate::transform::support;
use crate::transform::support::{Tangent, bind_all, move_axis};
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::nonlinear;
use oxla_core::primitive::host;
use oxla_core::primitive::host::Op;
use oxla_core::{Aval, Primitive, VmapMethod};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::HostCallback { callback, results } => {
            // A callback without results (debug::print) runs on the primals;
            // one with results has no derivative unless the user gives it
            // one (JAX: "Pure callbacks do not support JVP").
            if !results.is_empty() && tangents.iter().any(Option::is_some) {
                return Err(support::rule_error(
                    "jvp",
                    primitive,
                    format!(
                        "the host callback {callback} has no derivative: give it one with \
                         custom_jvp or custom_vjp around the call"
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
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ..
    } = *input;
    match op {
        Op::HostCallback { .. } => nonlinear(primitive, operands),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size,
    } = *input;
    match op {
        Op::HostCallback { callback, results } => match callback.vmap_method {
            VmapMethod::Sequential => per_example(primitive, args, bdims),
            VmapMethod::ExpandDims | VmapMethod::BroadcastAll => {
                host_callback_batched(callback, results, args, bdims, axis_size)
            }
        },
    }
}

/// A host callback called once on the whole batch (`vmap_method`
/// `expand_dims` or `broadcast_all`): the batched operands with the batch
/// leading, the others with a leading axis of 1 (`expand_dims`) or
/// broadcast to the batch (`broadcast_all`); the callback returns results
/// with the batch leading.
fn host_callback_batched(
    callback: &oxla_core::HostCallback,
    results: &[Aval],
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<Batched> {
    let operands: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, bd)| match (bd, callback.vmap_method) {
            (Some(d), _) => Ok(move_axis(x, *d, 0)),
            (None, VmapMethod::BroadcastAll) => {
                let aval = x.aval()?;
                let mut shape = vec![axis_size];
                shape.extend_from_slice(&aval.shape);
                let dims: Vec<i64> = (1..shape.len() as i64).collect();
                Ok(lax::broadcast_in_dim(x, &shape, &dims))
            }
            (None, _) => Ok(lax::expand_dims(x, &[0])),
        })
        .collect::<Result<_>>()?;
    let batched_results = results
        .iter()
        .map(|a| {
            let mut shape = vec![axis_size];
            shape.extend_from_slice(&a.shape);
            Aval::new(a.dtype, &shape)
        })
        .collect();
    let primitive = Primitive::Host(host::Op::HostCallback {
        callback: callback.clone(),
        results: batched_results,
    });
    let refs: Vec<&Array> = operands.iter().collect();
    let outs = bind_all(primitive, &refs)?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}
