//! The lowering rules of the host family (`oxla_core::primitive::host`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::Aval;
use oxla_core::primitive::host::Op;

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
        Op::HostCallback { callback, .. } => host_callback(e, callback, inputs, out_avals, loc),
    }
}

/// A host callback: `stablehlo.custom_call @oxla_host_callback` (typed XLA
/// FFI) naming the closure by id. An effectful call takes the order value
/// of the block's previous one and makes the next, so XLA keeps the
/// block's effects in program order.
fn host_callback<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    callback: &oxla_core::HostCallback,
    inputs: &[Value<'c, 'a>],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let order = crate::emit::effect_order_aval();
    let mut operands = inputs.to_vec();
    let mut results: Vec<&Aval> = out_avals.to_vec();
    if callback.effectful {
        operands.insert(0, e.effect_order(loc)?);
        results.insert(0, &order);
    }
    let config = format!(
        "{{{} = {} : ui64, {} = {}}}",
        oxla_core::CALLBACK_ID_ATTRIBUTE,
        callback.id,
        oxla_core::ORDERED_ATTRIBUTE,
        callback.effectful
    );
    let mut outs = e.op(
        "stablehlo.custom_call",
        &operands,
        &results,
        &[
            (
                "call_target_name",
                format!("\"{}\"", oxla_core::HOST_CALLBACK_TARGET),
            ),
            ("api_version", "4 : i32".to_string()),
            ("has_side_effect", callback.effectful.to_string()),
            ("backend_config", config),
        ],
        loc,
    )?;
    if callback.effectful {
        let chain = outs.remove(0);
        e.set_effect_chain(chain);
    }
    Ok(outs)
}
