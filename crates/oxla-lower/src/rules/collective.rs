//! The lowering rules of the collective family (`oxla_core::primitive::collective`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{Values, first_result};
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::collective::Op;
use oxla_core::{Aval, Primitive};

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    _primitive: &Primitive,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let out = &first_result(out_avals);
    match op {
        // A type change only: the value is the operand.
        Op::Pvary { .. } => Ok(vec![inputs[0]]),
        Op::AllReduce { op, group } => {
            crate::collectives::all_reduce(e, *op, group, inputs[0], out, loc)
        }
        Op::AllGather {
            group, dim, tiled, ..
        } => crate::collectives::all_gather(
            e,
            group,
            (*dim, *tiled),
            inputs[0],
            in_avals[0],
            out,
            loc,
        ),
        Op::ReduceScatter { group, dim, tiled } => crate::collectives::reduce_scatter(
            e,
            group,
            (*dim, *tiled),
            inputs[0],
            in_avals[0],
            out,
            loc,
        ),
        Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => {
            crate::collectives::all_to_all(e, group, (*split_dim, *concat_dim), inputs[0], out, loc)
        }
        Op::Ppermute { group, perm } => {
            crate::collectives::ppermute(e, group, perm, inputs[0], out, loc)
        }
        Op::AxisIndex { group } => crate::collectives::axis_index(e, group, out, loc),
    }
}
