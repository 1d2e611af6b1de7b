//! The lowering rules of the marker family (`oxla_core::primitive::marker`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::marker::Op;

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        out_avals,
        loc,
        ..
    } = *input;
    match op {
        Op::StopGradient | Op::CheckpointName { .. } => Ok(vec![inputs[0]]),
        Op::OptimizationBarrier => e.op(
            "stablehlo.optimization_barrier",
            inputs,
            out_avals,
            &[],
            loc,
        ),
    }
}
