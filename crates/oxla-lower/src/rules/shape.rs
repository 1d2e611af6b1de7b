//! The lowering rules of the shape family (`oxla_core::primitive::shape`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::shape::Op;

/// The StableHLO of a primitive of this family.
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
        Op::Iota { dimension, .. } => e.op(
            "stablehlo.iota",
            &[],
            &[out],
            &[("iota_dimension", attrs::i64_attr(*dimension as i64))],
            loc,
        ),
        Op::BroadcastInDim {
            broadcast_dimensions,
            ..
        } => e.op(
            "stablehlo.broadcast_in_dim",
            inputs,
            &[out],
            &[(
                "broadcast_dimensions",
                attrs::i64_array(broadcast_dimensions),
            )],
            loc,
        ),
        Op::Reshape { .. } | Op::Squeeze { .. } => {
            e.op("stablehlo.reshape", inputs, &[out], &[], loc)
        }
        Op::Transpose { permutation } => e.op(
            "stablehlo.transpose",
            inputs,
            &[out],
            &[("permutation", attrs::i64_array(permutation))],
            loc,
        ),
        Op::Rev { dimensions } => e.op(
            "stablehlo.reverse",
            inputs,
            &[out],
            &[("dimensions", attrs::i64_array(dimensions))],
            loc,
        ),
        // One slice per piece (StableHLO has no split op; XLA fuses them).
        Op::Split { axis, sizes } => {
            let shape = &in_avals[0].shape;
            let mut pieces = Vec::with_capacity(sizes.len());
            let mut offset = 0;
            for (size, piece) in sizes.iter().zip(out_avals) {
                let mut start = vec![0; shape.len()];
                let mut limit = shape.to_vec();
                start[*axis] = offset;
                limit[*axis] = offset + size;
                offset += size;
                pieces.extend(e.op(
                    "stablehlo.slice",
                    inputs,
                    &[piece],
                    &[
                        ("start_indices", attrs::i64_array(&start)),
                        ("limit_indices", attrs::i64_array(&limit)),
                        ("strides", attrs::i64_array(&vec![1; shape.len()])),
                    ],
                    loc,
                )?);
            }
            Ok(pieces)
        }
        Op::Concatenate { dimension } => e.op(
            "stablehlo.concatenate",
            inputs,
            &[out],
            &[("dimension", attrs::i64_attr(*dimension as i64))],
            loc,
        ),
        Op::Pad { config } => {
            let low: Vec<i64> = config.iter().map(|c| c.0).collect();
            let high: Vec<i64> = config.iter().map(|c| c.1).collect();
            let interior: Vec<i64> = config.iter().map(|c| c.2).collect();
            e.op(
                "stablehlo.pad",
                inputs,
                &[out],
                &[
                    ("edge_padding_low", attrs::i64_array(&low)),
                    ("edge_padding_high", attrs::i64_array(&high)),
                    ("interior_padding", attrs::i64_array(&interior)),
                ],
                loc,
            )
        }
    }
}
