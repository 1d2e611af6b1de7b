//! The lowering rules of the marker family (`oxla_core::primitive::marker`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::Values;
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::marker::Op;
use oxla_core::{Aval, Primitive};

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    _primitive: &Primitive,
    inputs: &[Value<'c, 'a>],
    _in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
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
