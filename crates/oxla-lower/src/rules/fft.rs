//! The lowering rules of the Fourier-transform family
//! (`oxla_core::primitive::fft`) to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::fft::Op;

/// The StableHLO of a primitive of this family: `stablehlo.fft`, as JAX
/// lowers `lax.fft` on every platform.
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
    let out = &*first_result(out_avals);
    match op {
        Op::Fft {
            fft_type,
            fft_lengths,
        } => e.op(
            "stablehlo.fft",
            inputs,
            &[out],
            &[
                (
                    "fft_type",
                    format!("#stablehlo<fft_type {}>", fft_type.stablehlo_name()),
                ),
                ("fft_length", attrs::i64_array(fft_lengths)),
            ],
            loc,
        ),
    }
}
