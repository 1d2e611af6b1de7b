//! The lowering rules of the random-number family
//! (`oxla_core::primitive::rng`) to StableHLO, as JAX lowers them.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::rng::Op;
use oxla_core::{Aval, DType};

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
    } = *input;
    match op {
        Op::RngBitGenerator {
            shape, algorithm, ..
        } => {
            // The plugin's op takes a u64[2] key: a u32[4] key is viewed as
            // two u64 words and back, as JAX's lowering does.
            let key_aval = in_avals[0];
            let wide = Aval::new(DType::U64, &[2]);
            let pairs = Aval::new(DType::U32, &[2, 2]);
            let narrow_key = key_aval.dtype == DType::U32;
            let key = match narrow_key {
                true => {
                    let pairs_value =
                        e.op("stablehlo.reshape", &inputs[..1], &[&pairs], &[], loc)?;
                    e.op(
                        "stablehlo.bitcast_convert",
                        &pairs_value,
                        &[&wide],
                        &[],
                        loc,
                    )?[0]
                }
                false => inputs[0],
            };
            let bits = out_avals[1];
            let outs = e.op(
                "stablehlo.rng_bit_generator",
                &[key],
                &[&wide, &Aval::new(bits.dtype, shape)],
                &[(
                    "rng_algorithm",
                    format!("#stablehlo<rng_algorithm {}>", algorithm.stablehlo_name()),
                )],
                loc,
            )?;
            let new_key = match narrow_key {
                true => {
                    let pairs_value =
                        e.op("stablehlo.bitcast_convert", &outs[..1], &[&pairs], &[], loc)?;
                    e.op("stablehlo.reshape", &pairs_value, &[key_aval], &[], loc)?[0]
                }
                false => outs[0],
            };
            Ok(vec![new_key, outs[1]])
        }
        Op::RngUniform { shape } => {
            let dims = Aval::new(DType::I64, &[shape.len() as i64]);
            let bytes: Vec<u8> = shape.iter().flat_map(|d| d.to_le_bytes()).collect();
            let dims = e.embedded_constant(&dims, &bytes, loc)?;
            e.op(
                "stablehlo.rng",
                &[inputs[0], inputs[1], dims],
                &[out_avals[0]],
                &[(
                    "rng_distribution",
                    "#stablehlo<rng_distribution UNIFORM>".into(),
                )],
                loc,
            )
        }
    }
}
