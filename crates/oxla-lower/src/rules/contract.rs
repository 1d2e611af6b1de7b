//! The lowering rules of the contract family (`oxla_core::primitive::contract`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use oxla_core::primitive::contract::Op;

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
    let out = &*first_result(out_avals);
    match op {
        Op::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers: dn,
            feature_group_count,
            batch_group_count,
            precision,
            ..
        } => {
            let spatial = |spec: &[i64]| attrs::i64_list(&spec[2..]);
            let numbers = format!(
                "#stablehlo.conv<raw input_batch_dimension = {}, input_feature_dimension = {},                  input_spatial_dimensions = {}, kernel_input_feature_dimension = {},                  kernel_output_feature_dimension = {}, kernel_spatial_dimensions = {},                  output_batch_dimension = {}, output_feature_dimension = {}, output_spatial_dimensions = {}>",
                dn.lhs_spec[0],
                dn.lhs_spec[1],
                spatial(&dn.lhs_spec),
                dn.rhs_spec[1],
                dn.rhs_spec[0],
                spatial(&dn.rhs_spec),
                dn.out_spec[0],
                dn.out_spec[1],
                spatial(&dn.out_spec)
            );
            let mut attributes = vec![
                ("window_strides", attrs::i64_array(window_strides)),
                ("padding", attrs::padding_pairs(padding)),
                ("lhs_dilation", attrs::i64_array(lhs_dilation)),
                ("rhs_dilation", attrs::i64_array(rhs_dilation)),
                ("dimension_numbers", numbers),
                ("feature_group_count", attrs::i64_attr(*feature_group_count)),
                ("batch_group_count", attrs::i64_attr(*batch_group_count)),
            ];
            attributes.extend(precision_config(*precision));
            e.op("stablehlo.convolution", inputs, &[out], &attributes, loc)
        }
        Op::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            precision,
            ..
        } => {
            let mut attributes = vec![(
                "dot_dimension_numbers",
                format!(
                    "#stablehlo.dot<lhs_batching_dimensions = {}, rhs_batching_dimensions = {}, \
                     lhs_contracting_dimensions = {}, rhs_contracting_dimensions = {}>",
                    attrs::i64_list(lhs_batch),
                    attrs::i64_list(rhs_batch),
                    attrs::i64_list(lhs_contracting),
                    attrs::i64_list(rhs_contracting)
                ),
            )];
            attributes.extend(precision_config(*precision));
            e.op("stablehlo.dot_general", inputs, &[out], &attributes, loc)
        }
    }
}

/// The `precision_config` attribute of a contraction whose operands both
/// have `precision` (none when unset: the plugin's default).
fn precision_config(precision: Option<oxla_core::Precision>) -> Option<(&'static str, String)> {
    precision.map(|p| {
        let one = format!("#stablehlo<precision {}>", p.name());
        ("precision_config", format!("[{one}, {one}]"))
    })
}
