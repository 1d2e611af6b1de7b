//! The jvp, transpose and batching rules of the shape family
//! (`oxla_core::primitive::shape`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{
    Batched, axes_to_batched, bdim_after_removing, done, insert_at, operand, to_batched,
};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{finish, linear_jvp, zero_jvp};
use crate::transform::support::{Tangent, batch_at, literal, rule_error};
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{
    self, argsort, broadcast_in_dim, concatenate, for_linear, nonlinear, split,
};
use oxla_core::primitive::shape::Op;
use oxla_core::{Aval, DType};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::Iota { .. } => zero_jvp(primitive, primals)?,
        Op::BroadcastInDim { .. }
        | Op::Reshape { .. }
        | Op::Transpose { .. }
        | Op::Squeeze { .. }
        | Op::Rev { .. }
        | Op::Concatenate { .. }
        | Op::Split { .. }
        | Op::Pad { .. } => linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true)?,
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
        out_avals,
        ct,
        ct_shape,
    } = *input;
    match op {
        Op::Iota { .. } => nonlinear(primitive, operands),
        Op::BroadcastInDim {
            broadcast_dimensions,
            ..
        } => broadcast_in_dim(broadcast_dimensions, ct, operands),
        Op::Reshape { .. } | Op::Squeeze { .. } => {
            for_linear(operands, |_, a| Ok(Some(lax::reshape(ct, &a.shape))))
        }
        Op::Transpose { permutation } => {
            let inverse = argsort(permutation);
            for_linear(operands, |_, _| Ok(Some(lax::transpose(ct, &inverse))))
        }
        Op::Rev { dimensions } => for_linear(operands, |_, _| Ok(Some(lax::rev(ct, dimensions)))),
        Op::Concatenate { dimension } => concatenate(*dimension, ct, ct_shape, operands),
        Op::Split { axis, .. } => split(*axis, cts, operands, out_avals),
        Op::Pad { config } => transpose_rules::pad(config, ct, ct_shape, operands),
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
        Op::Iota { .. } => Err(rule_error(
            "vmap",
            primitive,
            "iota has no operands, so it is never batched",
        )),
        Op::BroadcastInDim {
            shape,
            broadcast_dimensions,
        } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            let mut new_shape = vec![size];
            new_shape.extend_from_slice(shape);
            let mut dims = vec![0];
            dims.extend(broadcast_dimensions.iter().map(|d| d + 1));
            done(
                vec![lax::broadcast_in_dim(&x, &new_shape, &dims)],
                vec![Some(0)],
            )
        }
        Op::Reshape { new_sizes } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            let mut new_shape = vec![size];
            new_shape.extend_from_slice(new_sizes);
            done(vec![lax::reshape(&x, &new_shape)], vec![Some(0)])
        }
        Op::Transpose { permutation } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let mut perm = vec![b as i64];
            perm.extend(permutation.iter().map(|&p| to_batched(p, b)));
            done(vec![lax::transpose(&x, &perm)], vec![Some(0)])
        }
        Op::Squeeze { dimensions } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let dims = axes_to_batched(dimensions, b);
            let out_b = bdim_after_removing(&dims, b);
            done(vec![lax::squeeze(&x, &dims)], vec![Some(out_b)])
        }
        Op::Rev { dimensions } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let dims = axes_to_batched(dimensions, b);
            done(vec![lax::rev(&x, &dims)], vec![Some(b)])
        }
        Op::Split { axis, sizes } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axis = to_batched(*axis as i64, b) as usize;
            let pieces = lax::split(&x, sizes, axis as i64);
            let n = pieces.len();
            done(pieces, vec![Some(b); n])
        }
        Op::Concatenate { dimension } => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| batch_at(x, bd, size, 0))
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            done(vec![lax::concatenate(&refs, dimension + 1)], vec![Some(0)])
        }
        Op::Pad { config } => pad(config, args, bdims, size),
    }
}

/// pad: an unbatched padding value pads the operand with no padding of the
/// batch dim; a batched one (as JAX) pads with zero and selects the value
/// where a mask of the padded positions says so.
fn pad(
    config: &[(i64, i64, i64)],
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (value, value_bdim) = (&args[1], bdims[1]);
    if value_bdim.is_none() {
        let (x, b) = operand(&args[0], bdims[0], size);
        let config: Vec<_> = insert_at(config, b, (0, 0, 0));
        return done(vec![lax::pad(&x, value, &config)], vec![Some(b)]);
    }
    let x = batch_at(&args[0], bdims[0], size, 0);
    let config: Vec<_> = insert_at(config, 0, (0, 0, 0));
    let dtype = x.dtype_or_bool();
    let padded = lax::pad(&x, &literal(0.0, dtype, false), &config);
    padded.check()?;
    let ones = crate::transform::support::full(&Aval::new(DType::Bool, x.shape_or_empty()), 1.0);
    let mask = lax::pad(&ones, &literal(0.0, DType::Bool, false), &config);
    let value = batch_at(value, value_bdim, size, 0);
    let value = lax::broadcast_in_dim(&value, padded.shape_or_empty(), &[0]);
    done(
        vec![lax::select_n(&mask, &[&value, &padded])],
        vec![Some(0)],
    )
}
