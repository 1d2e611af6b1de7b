//! The lowering rules of the sharding family (`oxla_core::primitive::sharding`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::sharding::Op;
use oxla_core::primitive::sharding::ShardMapParams;

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
    match op {
        Op::ShardMap(ShardMapParams {
            jaxpr,
            in_shardings,
            out_shardings,
            ..
        }) => crate::rules::collective::shard_map(
            e,
            jaxpr.jaxpr(),
            (in_shardings, out_shardings),
            inputs,
            in_avals,
            out_avals,
            loc,
        ),
        Op::ShardingConstraint { sharding } => {
            Ok(vec![constrain(e, inputs[0], out_avals[0], sharding, loc)?])
        }
        Op::Reshard { sharding } => match sharding {
            Some(sharding) => {
                let pinned = sharding.type_constraint(out_avals[0].rank());
                Ok(vec![constrain(e, inputs[0], out_avals[0], &pinned, loc)?])
            }
            // Into auto axes: the partitioner chooses.
            None => Ok(inputs.to_vec()),
        },
    }
}

/// `value` (of type `aval`), which the partitioner must lay out as
/// `sharding` here: an `sdy.sharding_constraint`.
pub(crate) fn constrain<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    value: melior::ir::Value<'c, 'a>,
    aval: &oxla_core::Aval,
    sharding: &oxla_core::ShardingDesc,
    loc: melior::ir::Location<'c>,
) -> Result<melior::ir::Value<'c, 'a>, LowerError> {
    let symbol = e.mesh_symbol(&sharding.mesh)?;
    Ok(e.op(
        "sdy.sharding_constraint",
        &[value],
        &[aval],
        &[("sharding", sharding.sdy_attribute(&symbol, aval.rank()))],
        loc,
    )?[0])
}
