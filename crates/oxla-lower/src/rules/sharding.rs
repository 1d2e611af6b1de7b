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
            let symbol = e.mesh_symbol(&sharding.mesh)?;
            e.op(
                "sdy.sharding_constraint",
                inputs,
                out_avals,
                &[(
                    "sharding",
                    sharding.sdy_attribute(&symbol, out_avals[0].shape.len()),
                )],
                loc,
            )
        }
    }
}
