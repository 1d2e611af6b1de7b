//! The lowering rules of the index family (`oxla_core::primitive::index`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::index::Op;
use oxla_core::{Aval, DType, Scalar};

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
    let out = &*first_result(out_avals);
    match op {
        Op::Slice {
            start_indices,
            limit_indices,
            strides,
        } => e.op(
            "stablehlo.slice",
            inputs,
            &[out],
            &[
                ("start_indices", attrs::i64_array(start_indices)),
                ("limit_indices", attrs::i64_array(limit_indices)),
                ("strides", attrs::i64_array(strides)),
            ],
            loc,
        ),
        Op::DynamicSlice { slice_sizes } => e.op(
            "stablehlo.dynamic_slice",
            inputs,
            &[out],
            &[("slice_sizes", attrs::i64_array(slice_sizes))],
            loc,
        ),
        Op::DynamicUpdateSlice => e.op("stablehlo.dynamic_update_slice", inputs, &[out], &[], loc),
        Op::Gather {
            dimension_numbers: d,
            slice_sizes,
            mode,
            fill_value,
        } => gather(
            e,
            d,
            slice_sizes,
            mode,
            fill_value,
            inputs,
            in_avals,
            out,
            loc,
        ),
        Op::Scatter {
            op,
            dimension_numbers: d,
        } => {
            let indices = in_avals[1];
            let numbers = format!(
                "#stablehlo.scatter<update_window_dims = {}, inserted_window_dims = {}, scatter_dims_to_operand_dims = {}, index_vector_dim = {}>",
                attrs::i64_list(&d.update_window_dims),
                attrs::i64_list(&d.inserted_window_dims),
                attrs::i64_list(&d.scatter_dims_to_operand_dims),
                indices.rank() as i64 - 1
            );
            let scalar = Aval::new(out.dtype, &[]);
            let combine = match op {
                oxla_core::ScatterOp::Set => None,
                oxla_core::ScatterOp::Add => Some("stablehlo.add"),
                oxla_core::ScatterOp::Mul => Some("stablehlo.multiply"),
                oxla_core::ScatterOp::Min => Some("stablehlo.minimum"),
                oxla_core::ScatterOp::Max => Some("stablehlo.maximum"),
            };
            let body = e.region(&[&scalar, &scalar], loc, |e, args| match combine {
                Some(name) => e.op(name, args, &[&scalar], &[], loc),
                None => Ok(vec![args[1]]),
            })?;
            e.op_with_regions(
                "stablehlo.scatter",
                inputs,
                &[out],
                &[
                    ("scatter_dimension_numbers", numbers),
                    ("indices_are_sorted", "false".into()),
                    ("unique_indices", "false".into()),
                ],
                vec![body],
                loc,
            )
        }
    }
}

/// `stablehlo.gather`, with a select on an in-bounds mask in fill mode.
#[allow(clippy::too_many_arguments)]
fn gather<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    d: &oxla_core::GatherDimensionNumbers,
    slice_sizes: &oxla_core::Dims,
    mode: &oxla_core::GatherMode,
    fill_value: &oxla_core::ScalarKey,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let (x, indices) = (in_avals[0], in_avals[1]);
    let index_vector_dim = indices.rank() as i64 - 1;
    let numbers = format!(
        "#stablehlo.gather<offset_dims = {}, collapsed_slice_dims = {}, start_index_map = {}, index_vector_dim = {index_vector_dim}>",
        attrs::i64_list(&d.offset_dims),
        attrs::i64_list(&d.collapsed_slice_dims),
        attrs::i64_list(&d.start_index_map)
    );
    let gathered = e.op(
        "stablehlo.gather",
        inputs,
        &[out],
        &[
            ("dimension_numbers", numbers),
            ("slice_sizes", attrs::i64_array(slice_sizes)),
            ("indices_are_sorted", "false".into()),
        ],
        loc,
    )?[0];
    match mode {
        oxla_core::GatherMode::Clip | oxla_core::GatherMode::PromiseInBounds => Ok(vec![gathered]),
        oxla_core::GatherMode::Fill => {
            // In bounds: 0 <= index <= dim - slice size, for every component.
            let bounds: Vec<i64> = d
                .start_index_map
                .iter()
                .map(|&o| x.shape[o as usize] - slice_sizes[o as usize])
                .collect();
            let components = *indices.shape.last().unwrap_or(&0);
            let bound_aval = Aval::new(indices.dtype, &[components]);
            let bound_literal = format!(
                "dense<{}> : {}",
                attrs::i64_list(&bounds),
                bound_aval.mlir_type()
            );
            let bound = if components == 0 {
                e.constant(&bound_aval, Scalar::Int(0), loc)?
            } else {
                e.op(
                    "stablehlo.constant",
                    &[],
                    &[&bound_aval],
                    &[("value", bound_literal)],
                    loc,
                )?[0]
            };
            let last = [index_vector_dim];
            let bound = e.op(
                "stablehlo.broadcast_in_dim",
                &[bound],
                &[indices],
                &[("broadcast_dimensions", attrs::i64_array(&last))],
                loc,
            )?[0];
            let zero = e.constant(indices, Scalar::Int(0), loc)?;
            let flags = indices.with_dtype(DType::Bool);
            let direction = |dir: &str| {
                vec![
                    (
                        "comparison_direction",
                        format!("#stablehlo<comparison_direction {dir}>"),
                    ),
                    (
                        "compare_type",
                        attrs::compare_type(indices.dtype).to_string(),
                    ),
                ]
            };
            let above = e.op(
                "stablehlo.compare",
                &[inputs[1], zero],
                &[&flags],
                &direction("GE"),
                loc,
            )?[0];
            let below = e.op(
                "stablehlo.compare",
                &[inputs[1], bound],
                &[&flags],
                &direction("LE"),
                loc,
            )?[0];
            let both = e.op("stablehlo.and", &[above, below], &[&flags], &[], loc)?[0];
            let batch_shape: Vec<i64> = indices.shape[..indices.rank() - 1].to_vec();
            let batch_aval = Aval::new(DType::Bool, &batch_shape);
            let scalar_bool = Aval::new(DType::Bool, &[]);
            let truth = e.constant(&scalar_bool, Scalar::Bool(true), loc)?;
            let body = e.binary_region("stablehlo.and", &scalar_bool, loc)?;
            let in_bounds = e.op_with_regions(
                "stablehlo.reduce",
                &[both, truth],
                &[&batch_aval],
                &[("dimensions", attrs::i64_array(&last))],
                vec![body],
                loc,
            )?[0];
            let batch_positions: Vec<i64> = (0..out.rank() as i64)
                .filter(|p| !d.offset_dims.contains(p))
                .collect();
            let mask_aval = out.with_dtype(DType::Bool);
            let mask = e.op(
                "stablehlo.broadcast_in_dim",
                &[in_bounds],
                &[&mask_aval],
                &[("broadcast_dimensions", attrs::i64_array(&batch_positions))],
                loc,
            )?[0];
            let fill = e.constant(out, fill_value.value(), loc)?;
            e.op(
                "stablehlo.select",
                &[mask, gathered, fill],
                &[out],
                &[],
                loc,
            )
        }
    }
}
