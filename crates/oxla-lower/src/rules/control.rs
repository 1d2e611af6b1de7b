//! The lowering rules of the control family (`oxla_core::primitive::control`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::Values;
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::control::Op;
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
    match op {
        Op::Cond { branches } => crate::control::cond(e, branches, inputs, out_avals, loc),
        Op::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => crate::control::while_loop(
            e,
            cond_jaxpr.jaxpr(),
            body_jaxpr.jaxpr(),
            *cond_nconsts,
            *body_nconsts,
            inputs,
            in_avals,
            loc,
        ),
        Op::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => crate::control::scan(
            e,
            &crate::control::ScanParams {
                body: jaxpr.jaxpr(),
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            inputs,
            in_avals,
            out_avals,
            loc,
        ),
    }
}
