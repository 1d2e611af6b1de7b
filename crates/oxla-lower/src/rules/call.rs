//! The lowering rules of the call family (`oxla_core::primitive::call`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::call::Op;
use oxla_core::{Aval, DType, Scalar};

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
        Op::Call { jaxpr, .. }
        | Op::Remat { jaxpr, .. }
        | Op::CustomJvpCall { jaxpr, .. }
        | Op::CustomVjpCall { jaxpr, .. } => crate::body::lower_body(e, jaxpr.jaxpr(), inputs),
        Op::CallExported { function } => {
            e.call_exported(function);
            let mut operands = Vec::with_capacity(inputs.len() + 1);
            if let Some(index) = function.platform_index() {
                let index_aval = Aval::new(DType::I32, &[]);
                operands.push(e.constant(&index_aval, Scalar::Int(i64::from(index)), loc)?);
            }
            operands.extend_from_slice(inputs);
            let dialect = crate::merge::FunctionDialect::of(function.module());
            e.op(
                dialect.call_op(),
                &operands,
                out_avals,
                &[("callee", dialect.symbol_reference(&function.symbol()))],
                loc,
            )
        }
        Op::CustomLin { .. } => Err(LowerError::Mlir(
            "a custom_vjp function cannot be differentiated in forward mode (jvp, jacfwd): its \
             linear part can only be transposed; use custom_jvp, or reverse mode (grad, vjp, \
             jacrev)"
                .into(),
        )),
    }
}
