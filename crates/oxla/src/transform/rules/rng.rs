//! The jvp, transpose and batching rules of the random-number family
//! (`oxla_core::primitive::rng`), as JAX's: `rng_bit_generator` makes
//! integers (zero tangents) and batches a key batch by drawing from its
//! first key (JAX's `_rng_bit_generator_batching_rule`); `rng_uniform` has
//! no derivative in its bounds and no batching rule, as in JAX.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::{BatchArgs, done};
use crate::transform::jvp_rules::{JvpArgs, finish, zero_jvp};
use crate::transform::support::{Tangent, batch_at, bind_all, rule_error};
use crate::transform::transpose_rules::{TransposeArgs, nonlinear};
use oxla_core::Primitive;
use oxla_core::primitive::rng::Op;

/// Primal outputs and output tangents.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    match op {
        Op::RngBitGenerator { .. } => finish(primitive, zero_jvp(primitive, primals)?),
        Op::RngUniform { .. } if tangents.iter().all(Option::is_none) => {
            finish(primitive, zero_jvp(primitive, primals)?)
        }
        Op::RngUniform { .. } => Err(rule_error(
            "jvp",
            primitive,
            "has no derivative in its bounds (as in JAX); draw uniform numbers in [0, 1) and \
             scale them to differentiate in the bounds",
        )),
    }
}

/// Neither primitive is linear in its operands.
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ..
    } = *input;
    match op {
        Op::RngBitGenerator { .. } | Op::RngUniform { .. } => nonlinear(primitive, operands),
    }
}

/// Batched outputs and their batch dims.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size,
    } = *input;
    match op {
        Op::RngBitGenerator {
            shape,
            dtype,
            algorithm,
        } => {
            // The batch's first key draws every example's bits at once;
            // it alone advances, as in JAX.
            let keys = batch_at(&args[0], bdims[0], axis_size, 0);
            let key_shape = keys.shape_or_empty()[1..].to_vec();
            let mut start = vec![0; key_shape.len() + 1];
            let mut limit = vec![1];
            limit.extend_from_slice(&key_shape);
            let first = lax::reshape(&lax::slice(&keys, &start, &limit, None), &key_shape);
            let mut batched_shape = vec![axis_size];
            batched_shape.extend_from_slice(shape);
            let outs = bind_all(
                Primitive::Rng(Op::RngBitGenerator {
                    shape: batched_shape.into_iter().collect(),
                    dtype: *dtype,
                    algorithm: *algorithm,
                }),
                &[&first],
            )?;
            // The first key advanced, the others as they were.
            let new_key = lax::expand_dims(&outs[0], &[0]);
            start[0] = 1;
            let mut end = vec![axis_size];
            end.extend_from_slice(&key_shape);
            let rest = lax::slice(&keys, &start, &end, None);
            let new_keys = lax::concatenate(&[&new_key, &rest], 0);
            done(vec![new_keys, outs[1].clone()], vec![Some(0), Some(0)])
        }
        Op::RngUniform { .. } => Err(rule_error(
            "vmap",
            primitive,
            "takes scalar bounds and has no batching rule (as in JAX); draw the batch's numbers \
             in one call with a leading batch dimension",
        )),
    }
}
