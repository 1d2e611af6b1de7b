//! The transpose rule of every linear primitive: cotangents of the linear
//! operands from the cotangents of the outputs (JAX's
//! `ad.primitive_transposes`).
#![deny(clippy::wildcard_enum_match_arm)]

use oxla_core::{
    Aval, BinaryOp, ConvDimensionNumbers, CumulativeOp, DType, GatherDimensionNumbers, GatherMode,
    Precision, Primitive, ReduceOp, Scalar, ScatterDimensionNumbers, ScatterOp, UnaryOp, WindowOp,
};

use super::support::{self, Tangent};
use super::transpose::Operand;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::lax;

/// Cotangents of `operands` (`None` for zero, and for every known operand).
pub(crate) fn transpose(
    primitive: &Primitive,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    for ct in cts.iter().flatten() {
        ct.aval()?;
    }
    // Single-output primitives: this is the cotangent of their output
    // (split, with several, reads them all).
    let Some(ct) = cts.iter().flatten().next() else {
        return Ok(none(operands.len()));
    };
    let ct_shape = ct.shape_or_empty().to_vec();
    let cts_in = match primitive {
        Primitive::Unary(op) => unary(primitive, *op, ct, operands),
        Primitive::Binary(op) => binary(primitive, *op, ct, operands),
        Primitive::Compare(_)
        | Primitive::IntegerPow { .. }
        | Primitive::Clamp
        | Primitive::Iota { .. }
        | Primitive::BitcastConvertType { .. }
        | Primitive::ArgMinMax { .. }
        | Primitive::Sort { .. }
        | Primitive::ReduceWith { .. }
        | Primitive::TopK { .. }
        | Primitive::StopGradient
        | Primitive::CallExported { .. }
        | Primitive::HostCallback { .. } => nonlinear(primitive, operands),
        Primitive::SelectN => select_n(primitive, ct, operands),
        Primitive::ConvertElementType { new_dtype, .. } => {
            convert_element_type(*new_dtype, ct, operands)
        }
        Primitive::BroadcastInDim {
            broadcast_dimensions,
            ..
        } => broadcast_in_dim(broadcast_dimensions, ct, operands),
        Primitive::Reshape { .. } | Primitive::Squeeze { .. } => {
            for_linear(operands, |_, a| Ok(Some(lax::reshape(ct, &a.shape))))
        }
        Primitive::Transpose { permutation } => {
            let inverse = argsort(permutation);
            for_linear(operands, |_, _| Ok(Some(lax::transpose(ct, &inverse))))
        }
        Primitive::Rev { dimensions } => {
            for_linear(operands, |_, _| Ok(Some(lax::rev(ct, dimensions))))
        }
        Primitive::Concatenate { dimension } => concatenate(*dimension, ct, &ct_shape, operands),
        Primitive::Split { axis, .. } => split(*axis, cts, operands, out_avals),
        Primitive::Pad { config } => pad(config, ct, &ct_shape, operands),
        Primitive::Slice {
            start_indices,
            strides,
            ..
        } => slice(start_indices, strides, ct, &ct_shape, operands),
        Primitive::Reduce { op, axes } => reduce(primitive, *op, axes, ct, operands),
        Primitive::DynamicSlice { .. } => dynamic_slice(primitive, ct, operands),
        Primitive::DynamicUpdateSlice => dynamic_update_slice(primitive, ct, operands),
        Primitive::Cumulative { op, axis, reverse } => match op {
            CumulativeOp::Sum => {
                for_linear(operands, |_, _| Ok(Some(lax::cumsum(ct, *axis, !reverse))))
            }
            CumulativeOp::Prod | CumulativeOp::Max | CumulativeOp::Min => {
                nonlinear(primitive, operands)
            }
        },
        Primitive::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => match op {
            WindowOp::Sum => {
                let window = Window {
                    dimensions: window_dimensions,
                    strides: window_strides,
                    padding,
                    base_dilation,
                    window_dilation,
                };
                reduce_window_sum(&window, ct, &ct_shape, operands)
            }
            WindowOp::Max | WindowOp::Min => nonlinear(primitive, operands),
        },
        Primitive::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            let ones = vec![1; window_dimensions.len()];
            let window = Window {
                dimensions: window_dimensions,
                strides: window_strides,
                padding,
                base_dilation: &ones,
                window_dilation: &ones,
            };
            select_and_scatter_add(primitive, &window, ct, operands)
        }
        Primitive::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers,
            feature_group_count,
            batch_group_count,
            preferred_element_type,
        } => {
            let conv = Conv {
                window_strides,
                padding,
                lhs_dilation,
                rhs_dilation,
                dn: dimension_numbers,
                feature_group_count: *feature_group_count,
                batch_group_count: *batch_group_count,
                preferred_element_type: *preferred_element_type,
            };
            conv_general_dilated(primitive, &conv, ct, &ct_shape, operands)
        }
        Primitive::Gather {
            dimension_numbers,
            slice_sizes,
            mode,
            ..
        } => gather(
            primitive,
            dimension_numbers,
            slice_sizes,
            *mode,
            ct,
            operands,
        ),
        Primitive::Scatter {
            op,
            dimension_numbers,
        } => scatter(primitive, *op, dimension_numbers, ct, &ct_shape, operands),
        Primitive::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            preferred_element_type,
            precision,
        } => {
            let dot = Dot {
                x_contract: lhs_contracting,
                y_contract: rhs_contracting,
                x_batch: lhs_batch,
                y_batch: rhs_batch,
                preferred_element_type: *preferred_element_type,
                precision: *precision,
            };
            dot_general(primitive, &dot, ct, operands)
        }
        Primitive::CheckpointName { .. } => for_linear(operands, |_, _| Ok(Some(ct.clone()))),
        // The cotangent is laid out as the value was (as JAX transposes it).
        Primitive::ShardingConstraint { .. } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(primitive.clone(), &[ct])))
        }),
        // JAX's pvary transpose: the cotangent summed over the axes the
        // value was made to vary over.
        Primitive::Pvary { group } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(
                Primitive::AllReduce {
                    op: oxla_core::ReduceOp::Sum,
                    group: group.clone(),
                },
                &[ct],
            )))
        }),
        Primitive::OptimizationBarrier => optimization_barrier(cts, operands),
        Primitive::Call { .. }
        | Primitive::Remat { .. }
        | Primitive::CustomJvpCall { .. }
        | Primitive::CustomVjpCall { .. }
        | Primitive::CustomLin { .. } => {
            super::calls::transpose(primitive, cts, operands, out_avals)
        }
        Primitive::Cond { branches } => {
            super::control::cond_transpose(branches, cts, operands, out_avals)
        }
        Primitive::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => super::shard_map_rules::transpose(
            &super::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            },
            cts,
            operands,
            out_avals,
        ),
        Primitive::AllReduce { .. }
        | Primitive::AllGather { .. }
        | Primitive::ReduceScatter { .. }
        | Primitive::AllToAll { .. }
        | Primitive::Ppermute { .. }
        | Primitive::AxisIndex { .. } => {
            super::collective_rules::transpose(primitive, ct, operands)
        }
        Primitive::While { .. } => Err(super::control::while_reverse_error(primitive)),
        Primitive::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => super::control::scan_transpose(
            &super::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            cts,
            operands,
            out_avals,
        ),
    }?;
    finish(primitive, operands, cts_in)
}

// ---------------------------------------------------------------------------
// Operands, errors and results.

/// `n` symbolic zeros.
fn none(n: usize) -> Vec<Tangent> {
    vec![None; n]
}

/// The error of a primitive whose operand `index` is linear but which is
/// not linear in it.
fn not_linear(primitive: &Primitive, index: usize) -> Error {
    support::rule_error(
        "transpose",
        primitive,
        format!(
            "is not linear in operand {index}, so it cannot be transposed (reverse-mode \
             differentiation reached a non-linear use of a tangent)"
        ),
    )
}

/// The rule of a primitive that is linear in none of its operands: an
/// error naming the first linear operand.
fn nonlinear(primitive: &Primitive, operands: &[Operand]) -> Result<Vec<Tangent>> {
    match operands
        .iter()
        .position(|o| matches!(o, Operand::Linear(_)))
    {
        Some(i) => Err(not_linear(primitive, i)),
        None => Ok(none(operands.len())),
    }
}

/// The value of operand `index`, which must be known (a residual).
fn known_at<'a>(primitive: &Primitive, operands: &'a [Operand], index: usize) -> Result<&'a Array> {
    match operands.get(index) {
        Some(Operand::Known(x)) => Ok(x),
        Some(Operand::Linear(_)) => Err(not_linear(primitive, index)),
        None => Err(support::rule_error(
            "transpose",
            primitive,
            format!("internal: operand {index} is missing"),
        )),
    }
}

/// The values of the operands from `start` on, which must all be known.
fn known_from<'a>(
    primitive: &Primitive,
    operands: &'a [Operand],
    start: usize,
) -> Result<Vec<&'a Array>> {
    (start..operands.len())
        .map(|i| known_at(primitive, operands, i))
        .collect()
}

/// The type of operand `index`, linear or known.
fn aval_at(primitive: &Primitive, operands: &[Operand], index: usize) -> Result<Aval> {
    match operands.get(index) {
        Some(Operand::Linear(a)) => Ok(a.clone()),
        Some(Operand::Known(x)) => Ok(x.aval()?.clone()),
        None => Err(support::rule_error(
            "transpose",
            primitive,
            format!("internal: operand {index} is missing"),
        )),
    }
}

/// One cotangent per operand: `rule(index, aval)` for the linear ones,
/// `None` for the known ones.
fn for_linear(
    operands: &[Operand],
    mut rule: impl FnMut(usize, &Aval) -> Result<Tangent>,
) -> Result<Vec<Tangent>> {
    operands
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Operand::Linear(a) => rule(i, a),
            Operand::Known(_) => Ok(None),
        })
        .collect()
}

/// Checks each cotangent against its operand's type: errors carried by
/// the arrays are raised, operands without tangents (integers, bools) get
/// `None`, and a cotangent of another float dtype is converted.
fn finish(primitive: &Primitive, operands: &[Operand], cts: Vec<Tangent>) -> Result<Vec<Tangent>> {
    if cts.len() != operands.len() {
        return Err(support::rule_error(
            "transpose",
            primitive,
            format!(
                "internal: the rule gave {} cotangents for {} operands",
                cts.len(),
                operands.len()
            ),
        ));
    }
    operands
        .iter()
        .zip(cts)
        .enumerate()
        .map(|(i, (operand, ct))| match (operand, ct) {
            (Operand::Linear(aval), Some(ct)) => {
                let ct_aval = ct.aval()?;
                if !support::has_tangent(aval.dtype) {
                    return Ok(None);
                }
                if ct_aval.shape != aval.shape {
                    return Err(support::rule_error(
                        "transpose",
                        primitive,
                        format!(
                            "internal: made a cotangent {ct_aval} for operand {i} of type {aval}"
                        ),
                    ));
                }
                if ct_aval.dtype != aval.dtype {
                    return Ok(Some(lax::convert_element_type_weak(
                        &ct,
                        aval.dtype,
                        aval.weak_type,
                    )));
                }
                Ok(Some(ct))
            }
            (Operand::Linear(_), None) | (Operand::Known(_), _) => Ok(None),
        })
        .collect()
}

/// Applies `primitive` through the current trace; its first output.
#[track_caller]
fn bind_one(primitive: Primitive, inputs: &[&Array]) -> Result<Array> {
    let name = primitive.clone();
    support::bind_all(primitive, inputs)?
        .into_iter()
        .next()
        .ok_or_else(|| support::rule_error("transpose", &name, "internal: no output"))
}

/// Strongly typed zeros of `shape` with the cotangent's dtype.
#[track_caller]
fn zeros_like_ct(ct: &Array, shape: &[i64]) -> Array {
    support::zeros(&Aval::new(ct.dtype_or_bool(), shape))
}

/// A zero literal of the cotangent's dtype (a padding value).
fn zero_of(ct: &Array) -> Array {
    support::literal(0.0, ct.dtype_or_bool(), false)
}

/// Zero as a scalar parameter of `dtype` (a gather's fill value).
fn zero_scalar(dtype: DType) -> Scalar {
    if dtype == DType::Bool {
        Scalar::Bool(false)
    } else if dtype.is_float() {
        Scalar::Float(0.0)
    } else if dtype.is_unsigned_int() {
        Scalar::UInt(0)
    } else {
        Scalar::Int(0)
    }
}

/// The positions that sort `values` (the inverse of a permutation).
fn argsort(values: &[i64]) -> Vec<i64> {
    let mut order: Vec<i64> = (0..values.len() as i64).collect();
    order.sort_by_key(|&i| values[i as usize]);
    order
}

/// `x` transposed by `permutation`, without an equation if it is the identity.
#[track_caller]
fn transpose_if_needed(x: &Array, permutation: &[i64]) -> Array {
    if permutation.iter().enumerate().all(|(i, &p)| p == i as i64) {
        x.clone()
    } else {
        lax::transpose(x, permutation)
    }
}

/// `x` converted to `dtype` (keeping `weak_type`) if it has another dtype.
#[track_caller]
fn convert_if_needed(x: &Array, dtype: DType, weak_type: bool) -> Array {
    if x.dtype_or_bool() == dtype {
        x.clone()
    } else {
        lax::convert_element_type_weak(x, dtype, weak_type)
    }
}

// ---------------------------------------------------------------------------
// Elementwise primitives.

/// Unary ops: only `neg` is linear (its transpose is `-ct`).
fn unary(
    primitive: &Primitive,
    op: UnaryOp,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        UnaryOp::Neg => for_linear(operands, |_, _| Ok(Some(lax::neg(ct)))),
        UnaryOp::Sign
        | UnaryOp::Abs
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::Exp
        | UnaryOp::Exp2
        | UnaryOp::Expm1
        | UnaryOp::Log
        | UnaryOp::Log1p
        | UnaryOp::Sqrt
        | UnaryOp::Rsqrt
        | UnaryOp::Cbrt
        | UnaryOp::Tanh
        | UnaryOp::Logistic
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Asin
        | UnaryOp::Acos
        | UnaryOp::Atan
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh
        | UnaryOp::Erf
        | UnaryOp::Erfc
        | UnaryOp::ErfInv
        | UnaryOp::Lgamma
        | UnaryOp::Digamma
        | UnaryOp::Square
        | UnaryOp::IsFinite
        | UnaryOp::Not
        | UnaryOp::PopulationCount
        | UnaryOp::CountLeadingZeros
        | UnaryOp::BesselI0e
        | UnaryOp::BesselI1e => nonlinear(primitive, operands),
    }
}

/// Binary ops: `add` and `sub` in both operands, `mul` in one of them,
/// `div` in its numerator (JAX's `_add_transpose`, `_sub_transpose`,
/// `_mul_transpose_*`, `_div_transpose_rule`); cotangents are summed down
/// to operands that were implicitly broadcast.
fn binary(
    primitive: &Primitive,
    op: BinaryOp,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        BinaryOp::Add => for_linear(operands, |_, a| Ok(Some(support::unbroadcast(ct, a)))),
        BinaryOp::Sub => for_linear(operands, |i, a| {
            Ok(Some(if i == 0 {
                support::unbroadcast(ct, a)
            } else {
                support::unbroadcast(&lax::neg(ct), a)
            }))
        }),
        BinaryOp::Mul => match operands {
            [Operand::Linear(x), Operand::Known(y)] => {
                Ok(vec![Some(support::unbroadcast(&lax::mul(ct, y), x)), None])
            }
            [Operand::Known(x), Operand::Linear(y)] => {
                Ok(vec![None, Some(support::unbroadcast(&lax::mul(x, ct), y))])
            }
            [Operand::Linear(_), Operand::Linear(_)] => Err(not_linear(primitive, 1)),
            _ => nonlinear(primitive, operands),
        },
        BinaryOp::Div => {
            let y = known_at(primitive, operands, 1)?;
            for_linear(operands, |_, a| {
                Ok(Some(support::unbroadcast(&lax::div(ct, y), a)))
            })
        }
        BinaryOp::Rem
        | BinaryOp::Polygamma
        | BinaryOp::Pow
        | BinaryOp::Max
        | BinaryOp::Min
        | BinaryOp::Atan2
        | BinaryOp::NextAfter
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => nonlinear(primitive, operands),
    }
}

/// `select_n` with a known selector: each linear case gets the cotangent
/// where it was selected and zeros elsewhere (JAX's `_select_transpose_rule`).
fn select_n(primitive: &Primitive, ct: &Array, operands: &[Operand]) -> Result<Vec<Tangent>> {
    let which = known_at(primitive, operands, 0)?;
    let zeros = zeros_like_ct(ct, ct.shape_or_empty());
    let cases = operands.len() - 1;
    for_linear(operands, |i, a| {
        let picked: Vec<&Array> = (1..=cases)
            .map(|j| if j == i { ct } else { &zeros })
            .collect();
        Ok(Some(support::unbroadcast(
            &lax::select_n(which, &picked),
            a,
        )))
    })
}

/// `convert_element_type` between float types: the cotangent converted
/// back to the operand's dtype and weak type; conversions from or to a
/// type without tangents have a zero cotangent.
fn convert_element_type(
    new_dtype: DType,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    for_linear(operands, |_, a| {
        Ok((a.dtype.is_float() && new_dtype.is_float())
            .then(|| lax::convert_element_type_weak(ct, a.dtype, a.weak_type)))
    })
}

// ---------------------------------------------------------------------------
// Structural primitives.

/// `broadcast_in_dim`: the cotangent summed over the added dimensions and
/// over the size-1 dimensions that were expanded, reshaped to the operand.
fn broadcast_in_dim(
    broadcast_dimensions: &[i64],
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let ct_rank = ct.ndim_or_zero() as i64;
    for_linear(operands, |_, a| {
        let kept: Vec<i64> = broadcast_dimensions
            .iter()
            .zip(&a.shape)
            .filter(|(_, size)| **size != 1)
            .map(|(&d, _)| d)
            .collect();
        let axes: Vec<i64> = (0..ct_rank).filter(|d| !kept.contains(d)).collect();
        let summed = if axes.is_empty() {
            ct.clone()
        } else {
            lax::reduce_sum(ct, &axes)
        };
        Ok(Some(if kept.len() == a.rank() {
            summed
        } else {
            lax::reshape(&summed, &a.shape)
        }))
    })
}

/// `reduce_sum`: the cotangent broadcast back over the reduced axes; the
/// other reductions are not linear.
fn reduce(
    primitive: &Primitive,
    op: ReduceOp,
    axes: &[i64],
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        ReduceOp::Sum => for_linear(operands, |_, a| {
            let kept: Vec<i64> = (0..a.rank() as i64).filter(|d| !axes.contains(d)).collect();
            Ok(Some(lax::broadcast_in_dim(ct, &a.shape, &kept)))
        }),
        ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min | ReduceOp::And | ReduceOp::Or => {
            nonlinear(primitive, operands)
        }
    }
}

/// `concatenate`: each linear operand's slice of the cotangent.
fn concatenate(
    dimension: usize,
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let mut offset = 0;
    let mut cts = Vec::with_capacity(operands.len());
    for operand in operands {
        let size = match operand {
            Operand::Linear(a) => a.shape[dimension],
            Operand::Known(x) => x.aval()?.shape[dimension],
        };
        cts.push(match operand {
            Operand::Linear(_) => {
                let mut start = vec![0; ct_shape.len()];
                let mut limit = ct_shape.to_vec();
                start[dimension] = offset;
                limit[dimension] = offset + size;
                Some(lax::slice(ct, &start, &limit, None))
            }
            Operand::Known(_) => None,
        });
        offset += size;
    }
    Ok(cts)
}

/// `split` (JAX's `_split_transpose`): the pieces' cotangents joined, zeros
/// for the pieces without one.
fn split(
    axis: usize,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    if cts.iter().all(Option::is_none) {
        return Ok(none(operands.len()));
    }
    let pieces: Vec<Array> = cts
        .iter()
        .zip(out_avals)
        .map(|(ct, aval)| support::instantiate(ct, aval))
        .collect();
    let refs: Vec<&Array> = pieces.iter().collect();
    for_linear(operands, |_, _| Ok(Some(lax::concatenate(&refs, axis))))
}

/// `pad` (JAX's `_pad_transpose`): the operand's cotangent is the
/// cotangent un-padded (padding with the negated low/high, which also
/// restores what negative padding cut off) then strided past the interior
/// padding; the padding value's is the sum of the rest.
fn pad(
    config: &[(i64, i64, i64)],
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let unpad: Vec<(i64, i64, i64)> = config.iter().map(|&(lo, hi, _)| (-lo, -hi, 0)).collect();
    let unpadded = lax::pad(ct, &zero_of(ct), &unpad);
    let unpadded_shape: Vec<i64> = ct_shape
        .iter()
        .zip(config)
        .map(|(&d, &(lo, hi, _))| d - lo - hi)
        .collect();
    let strides: Vec<i64> = config
        .iter()
        .map(|&(_, _, interior)| interior + 1)
        .collect();
    let starts = vec![0; config.len()];
    let operand_ct = lax::slice(&unpadded, &starts, &unpadded_shape, Some(&strides));
    let all: Vec<i64> = (0..config.len() as i64).collect();
    for_linear(operands, |i, _| {
        Ok(Some(if i == 0 {
            operand_ct.clone()
        } else {
            lax::sub(
                &lax::reduce_sum(ct, &all),
                &lax::reduce_sum(&operand_ct, &all),
            )
        }))
    })
}

/// `slice` (JAX's `_slice_transpose_rule`): the cotangent padded with zeros
/// back to the operand's shape, strides becoming interior padding.
fn slice(
    start: &[i64],
    strides: &[i64],
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    for_linear(operands, |_, a| {
        let config: Vec<(i64, i64, i64)> = (0..a.rank())
            .map(|d| {
                let extent = if ct_shape[d] == 0 {
                    0
                } else {
                    1 + (ct_shape[d] - 1) * strides[d]
                };
                (start[d], a.shape[d] - (start[d] + extent), strides[d] - 1)
            })
            .collect();
        Ok(Some(lax::pad(ct, &zero_of(ct), &config)))
    })
}

/// `dynamic_slice` with known indices: the cotangent written into zeros
/// at the same (already normalized) start.
fn dynamic_slice(primitive: &Primitive, ct: &Array, operands: &[Operand]) -> Result<Vec<Tangent>> {
    let indices = known_from(primitive, operands, 1)?;
    for_linear(operands, |_, a| {
        let zeros = zeros_like_ct(ct, &a.shape);
        let mut inputs = vec![&zeros, ct];
        inputs.extend(indices.iter().copied());
        Ok(Some(bind_one(Primitive::DynamicUpdateSlice, &inputs)?))
    })
}

/// `dynamic_update_slice` with known indices: the operand's cotangent is
/// the cotangent with the updated window zeroed, the update's is that
/// window of the cotangent.
fn dynamic_update_slice(
    primitive: &Primitive,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let indices = known_from(primitive, operands, 2)?;
    let update_shape = aval_at(primitive, operands, 1)?.shape;
    for_linear(operands, |i, _| {
        let ct = if i == 0 {
            let zeros = zeros_like_ct(ct, &update_shape);
            let mut inputs = vec![ct, &zeros];
            inputs.extend(indices.iter().copied());
            bind_one(Primitive::DynamicUpdateSlice, &inputs)?
        } else {
            let mut inputs = vec![ct];
            inputs.extend(indices.iter().copied());
            bind_one(
                Primitive::DynamicSlice {
                    slice_sizes: update_shape.clone(),
                },
                &inputs,
            )?
        };
        Ok(Some(ct))
    })
}

// ---------------------------------------------------------------------------
// Gather and scatter.

/// `gather` with known indices (JAX's `_gather_transpose_rule`): the
/// cotangent scatter-added into zeros. Scatter drops out-of-bounds
/// windows, as `Fill` mode's gather reads its fill value for them; `Clip`
/// mode's indices are clamped first, as its gather does.
fn gather(
    primitive: &Primitive,
    numbers: &GatherDimensionNumbers,
    slice_sizes: &[i64],
    mode: GatherMode,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let indices = known_at(primitive, operands, 1)?;
    for_linear(operands, |_, a| {
        let indices = match mode {
            GatherMode::Clip => {
                clamp_indices(indices, &a.shape, slice_sizes, &numbers.start_index_map)?
            }
            GatherMode::Fill | GatherMode::PromiseInBounds => indices.clone(),
        };
        let scatter_numbers = ScatterDimensionNumbers {
            update_window_dims: numbers.offset_dims.clone(),
            inserted_window_dims: numbers.collapsed_slice_dims.clone(),
            scatter_dims_to_operand_dims: numbers.start_index_map.clone(),
        };
        let zeros = zeros_like_ct(ct, &a.shape);
        Ok(Some(lax::scatter(
            &zeros,
            &indices,
            ct,
            ScatterOp::Add,
            scatter_numbers,
        )))
    })
}

/// `indices` (last dim the index vector) clamped so that each slice of
/// `slice_sizes` fits the operand, as a `Clip` gather clamps them (JAX's
/// `_clamp_scatter_indices`).
fn clamp_indices(
    indices: &Array,
    operand_shape: &[i64],
    slice_sizes: &[i64],
    start_index_map: &[i64],
) -> Result<Array> {
    let aval = indices.aval()?;
    let Some((_, batch)) = aval.shape.split_last() else {
        return Ok(indices.clone());
    };
    if start_index_map.is_empty() {
        return Ok(indices.clone());
    }
    let mut piece = batch.to_vec();
    piece.push(1);
    let piece = Aval::new(aval.dtype, &piece);
    let bounds: Vec<Array> = start_index_map
        .iter()
        .map(|&o| {
            let o = o as usize;
            support::full(&piece, (operand_shape[o] - slice_sizes[o]) as f64)
        })
        .collect();
    let upper = match bounds.as_slice() {
        [one] => one.clone(),
        many => lax::concatenate(&many.iter().collect::<Vec<_>>(), batch.len()),
    };
    let zero = support::literal(0.0, aval.dtype, false);
    Ok(lax::clamp(&zero, indices, &upper))
}

/// `scatter` with known indices. Add (JAX's `_scatter_add_transpose_rule`):
/// the operand's cotangent is the cotangent, the updates' is the
/// cotangent gathered at the indices (zero for dropped updates). Set
/// (`_scatter_transpose_rule`, exact for unique indices): the same, with
/// the overwritten positions of the operand's cotangent zeroed. Mul with
/// known updates (`_scatter_mul_transpose_rule`): the cotangent
/// scatter-multiplied by the updates. Min and max are not linear.
fn scatter(
    primitive: &Primitive,
    op: ScatterOp,
    numbers: &ScatterDimensionNumbers,
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let indices = known_at(primitive, operands, 1)?;
    let updates_shape = aval_at(primitive, operands, 2)?.shape;
    let gathered = || {
        let mut window = numbers.update_window_dims.iter();
        let slice_sizes: Vec<i64> = (0..ct_shape.len() as i64)
            .map(|d| {
                if numbers.inserted_window_dims.contains(&d) {
                    1
                } else {
                    window.next().map_or(1, |&u| updates_shape[u as usize])
                }
            })
            .collect();
        let gather_numbers = GatherDimensionNumbers {
            offset_dims: numbers.update_window_dims.clone(),
            collapsed_slice_dims: numbers.inserted_window_dims.clone(),
            start_index_map: numbers.scatter_dims_to_operand_dims.clone(),
        };
        lax::gather(
            ct,
            indices,
            gather_numbers,
            &slice_sizes,
            GatherMode::Fill,
            zero_scalar(ct.dtype_or_bool()),
        )
    };
    match op {
        ScatterOp::Add => for_linear(operands, |i, _| {
            Ok(Some(if i == 0 { ct.clone() } else { gathered() }))
        }),
        ScatterOp::Set => for_linear(operands, |i, _| {
            Ok(Some(if i == 0 {
                let zeros = zeros_like_ct(ct, &updates_shape);
                lax::scatter(ct, indices, &zeros, ScatterOp::Set, numbers.clone())
            } else {
                gathered()
            }))
        }),
        ScatterOp::Mul => {
            let updates = known_at(primitive, operands, 2)?;
            for_linear(operands, |_, _| {
                Ok(Some(lax::scatter(
                    ct,
                    indices,
                    updates,
                    ScatterOp::Mul,
                    numbers.clone(),
                )))
            })
        }
        ScatterOp::Min | ScatterOp::Max => nonlinear(primitive, operands),
    }
}

// ---------------------------------------------------------------------------
// Windowed primitives.

/// The window of a `reduce_window` or `select_and_scatter_add`.
struct Window<'a> {
    /// Window size per dimension.
    dimensions: &'a [i64],
    /// Step per dimension.
    strides: &'a [i64],
    /// (low, high) padding per dimension.
    padding: &'a [(i64, i64)],
    /// Dilation of the operand per dimension.
    base_dilation: &'a [i64],
    /// Dilation of the window per dimension.
    window_dilation: &'a [i64],
}

/// `max(0, 1 + dilation * (d - 1))`: the extent of `d` points `dilation` apart.
fn dilate(d: i64, dilation: i64) -> i64 {
    if d == 0 { 0 } else { 1 + dilation * (d - 1) }
}

/// JAX's `_conv_general_vjp_lhs_padding`: the padding of the output
/// cotangent that a window pass over it needs to give the input's
/// cotangent.
fn vjp_lhs_padding(
    in_shape: &[i64],
    window: &[i64],
    strides: &[i64],
    out_shape: &[i64],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Vec<(i64, i64)> {
    (0..in_shape.len())
        .map(|d| {
            let lhs = dilate(in_shape[d], lhs_dilation[d]);
            let rhs = dilate(window[d], rhs_dilation[d]);
            let out = dilate(out_shape[d], strides[d]);
            let before = rhs - padding[d].0 - 1;
            (before, lhs + rhs - 1 - out - before)
        })
        .collect()
}

/// JAX's `_conv_general_vjp_rhs_padding`: the padding of the input for
/// the convolution that gives the kernel's cotangent.
fn vjp_rhs_padding(
    in_shape: &[i64],
    window: &[i64],
    strides: &[i64],
    out_shape: &[i64],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Vec<(i64, i64)> {
    (0..in_shape.len())
        .map(|d| {
            let lhs = dilate(in_shape[d], lhs_dilation[d]);
            let rhs = dilate(window[d], rhs_dilation[d]);
            let out = dilate(out_shape[d], strides[d]);
            let lo = padding[d].0;
            (lo, (out - lhs) + (rhs - lo - 1))
        })
        .collect()
}

/// `reduce_window_sum` (JAX's `_reduce_window_sum_transpose_rule`): the
/// cotangent padded (strides as interior padding) then summed over the
/// same windows, stepping by the base dilation.
fn reduce_window_sum(
    window: &Window<'_>,
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    for_linear(operands, |_, a| {
        let rank = a.rank();
        let pads = vjp_lhs_padding(
            &a.shape,
            window.dimensions,
            window.strides,
            ct_shape,
            window.padding,
            window.base_dilation,
            window.window_dilation,
        );
        let config: Vec<(i64, i64, i64)> = pads
            .iter()
            .zip(window.strides)
            .map(|(&(lo, hi), &s)| (lo, hi, s - 1))
            .collect();
        let padded = lax::pad(ct, &zero_of(ct), &config);
        Ok(Some(lax::reduce_window_dilated(
            &padded,
            WindowOp::Sum,
            window.dimensions,
            window.base_dilation,
            &vec![(0, 0); rank],
            &vec![1; rank],
            window.window_dilation,
        )))
    })
}

/// `select_and_scatter_add` with a known operand (JAX's
/// `_select_and_scatter_add_transpose`): each window's cotangent is the
/// output cotangent at the position the window selects — what JAX's
/// `select_and_gather_add` computes, done here with one strided slice per
/// window offset and a running selection.
fn select_and_scatter_add(
    primitive: &Primitive,
    window: &Window<'_>,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let operand = known_at(primitive, operands, 1)?;
    for_linear(operands, |_, source| {
        gather_selected(window, ct, operand, &source.shape)
    })
}

/// The window offsets in row-major order (the last dimension fastest).
fn window_offsets(dimensions: &[i64]) -> Vec<Vec<i64>> {
    dimensions.iter().fold(vec![Vec::new()], |offsets, &size| {
        offsets
            .into_iter()
            .flat_map(|prefix| {
                (0..size).map(move |k| {
                    let mut offset = prefix.clone();
                    offset.push(k);
                    offset
                })
            })
            .collect()
    })
}

/// For each window of `operand` (windows of shape `out_shape`), the value
/// of `ct` where select-and-scatter puts the window's source value: the
/// first in-bounds position in row-major order, replaced by each later
/// in-bounds one that the current choice is not `>=` (as XLA's
/// `select_and_scatter` with the `ge` selector). Windows entirely in the
/// padding select nothing (zero).
fn gather_selected(
    window: &Window<'_>,
    ct: &Array,
    operand: &Array,
    out_shape: &[i64],
) -> Result<Tangent> {
    if out_shape.contains(&0) {
        return Ok(None);
    }
    let aval = operand.aval()?.clone();
    let config: Vec<(i64, i64, i64)> = window.padding.iter().map(|&(lo, hi)| (lo, hi, 0)).collect();
    let values = lax::pad(operand, &support::literal(0.0, aval.dtype, false), &config);
    let cts = lax::pad(ct, &zero_of(ct), &config);
    let inside = support::full(&Aval::new(DType::Bool, &aval.shape), 1.0);
    let inside = lax::pad(&inside, &support::literal(0.0, DType::Bool, false), &config);
    let mut best: Option<(Array, Array, Array)> = None;
    for start in window_offsets(window.dimensions) {
        let limit: Vec<i64> = start
            .iter()
            .zip(out_shape)
            .zip(window.strides)
            .map(|((&k, &o), &s)| k + (o - 1) * s + 1)
            .collect();
        let take = |x: &Array| lax::slice(x, &start, &limit, Some(window.strides));
        let (value, ct, valid) = (take(&values), take(&cts), take(&inside));
        best = Some(match best {
            None => (value, ct, valid),
            Some((best_value, best_ct, best_valid)) => {
                let keep = lax::and(&best_valid, &lax::ge(&best_value, &value));
                let switch = lax::and(&valid, &lax::not(&keep));
                (
                    lax::select_n(&switch, &[&best_value, &value]),
                    lax::select_n(&switch, &[&best_ct, &ct]),
                    lax::or(&best_valid, &valid),
                )
            }
        });
    }
    Ok(best.map(|(_, ct, _)| ct))
}

// ---------------------------------------------------------------------------
// Matrix products and convolutions.

/// The dimension numbers and options of a `dot_general` of `x` and `y`.
struct Dot<'a> {
    /// Contracting dimensions of x.
    x_contract: &'a [i64],
    /// Contracting dimensions of y.
    y_contract: &'a [i64],
    /// Batch dimensions of x.
    x_batch: &'a [i64],
    /// Batch dimensions of y.
    y_batch: &'a [i64],
    /// The result dtype, if not the operands'.
    preferred_element_type: Option<DType>,
    /// Precision on accelerators.
    precision: Option<Precision>,
}

impl Dot<'_> {
    /// The same product with the operands swapped.
    fn swapped(&self) -> Dot<'_> {
        Dot {
            x_contract: self.y_contract,
            y_contract: self.x_contract,
            x_batch: self.y_batch,
            y_batch: self.x_batch,
            preferred_element_type: self.preferred_element_type,
            precision: self.precision,
        }
    }
}

/// `dot_general` with one linear operand (JAX's `_dot_general_transpose_lhs`
/// and `_rhs`).
fn dot_general(
    primitive: &Primitive,
    dot: &Dot<'_>,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match operands {
        [Operand::Linear(x), Operand::Known(y)] => {
            Ok(vec![Some(dot_transpose_lhs(ct, x, y, dot, false)?), None])
        }
        [Operand::Known(x), Operand::Linear(y)] => Ok(vec![
            None,
            Some(dot_transpose_lhs(ct, y, x, &dot.swapped(), true)?),
        ]),
        [Operand::Linear(_), Operand::Linear(_)] => Err(not_linear(primitive, 1)),
        _ => nonlinear(primitive, operands),
    }
}

/// The dimensions of a rank-`rank` operand that are neither contracted nor batch.
fn free_dims(rank: usize, contract: &[i64], batch: &[i64]) -> Vec<i64> {
    (0..rank as i64)
        .filter(|d| !contract.contains(d) && !batch.contains(d))
        .collect()
}

/// The cotangent of `x` in `dot_general(x, y)` (of `dot_general(y, x)` when
/// `swap_ans`): `ct` contracted with `y` over y's free dims, then
/// transposed into x's layout and converted to its dtype.
fn dot_transpose_lhs(
    ct: &Array,
    x: &Aval,
    y: &Array,
    dot: &Dot<'_>,
    swap_ans: bool,
) -> Result<Array> {
    let y_aval = y.aval()?;
    let x_kept = free_dims(x.rank(), dot.x_contract, dot.x_batch);
    let y_kept = free_dims(y_aval.rank(), dot.y_contract, dot.y_batch);
    let batch = dot.x_batch.len() as i64;
    let ans_batch: Vec<i64> = (0..batch).collect();
    let y_start = if swap_ans {
        batch
    } else {
        batch + x_kept.len() as i64
    };
    let ans_y: Vec<i64> = (y_start..y_start + y_kept.len() as i64).collect();
    let x_contract_by_y: Vec<i64> = argsort(dot.y_contract)
        .iter()
        .map(|&i| dot.x_contract[i as usize])
        .collect();
    let unsorted: Vec<i64> = dot
        .x_batch
        .iter()
        .chain(&x_kept)
        .chain(&x_contract_by_y)
        .copied()
        .collect();
    let y = convert_if_needed(y, ct.dtype_or_bool(), false);
    let product = lax::dot_general_with_precision(
        ct,
        &y,
        ((&ans_y, &y_kept), (&ans_batch, dot.y_batch)),
        dot.preferred_element_type,
        dot.precision,
    );
    let x_bar = transpose_if_needed(&product, &argsort(&unsorted));
    Ok(convert_if_needed(&x_bar, x.dtype, x.weak_type))
}

/// The parameters of a `conv_general_dilated`.
struct Conv<'a> {
    /// Step per spatial dimension.
    window_strides: &'a [i64],
    /// (low, high) padding per spatial dimension.
    padding: &'a [(i64, i64)],
    /// Input dilation per spatial dimension.
    lhs_dilation: &'a [i64],
    /// Kernel dilation per spatial dimension.
    rhs_dilation: &'a [i64],
    /// Operand and result layouts.
    dn: &'a ConvDimensionNumbers,
    /// Feature groups.
    feature_group_count: i64,
    /// Batch groups.
    batch_group_count: i64,
    /// The result dtype, if not the operands'.
    preferred_element_type: Option<DType>,
}

/// `conv_general_dilated` with one linear operand (JAX's
/// `_conv_general_dilated_transpose_lhs` and `_rhs`).
fn conv_general_dilated(
    primitive: &Primitive,
    conv: &Conv<'_>,
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match operands {
        [Operand::Linear(lhs), Operand::Known(rhs)] => Ok(vec![
            Some(conv_transpose_lhs(conv, ct, ct_shape, lhs, rhs)?),
            None,
        ]),
        [Operand::Known(lhs), Operand::Linear(rhs)] => Ok(vec![
            None,
            conv_transpose_rhs(conv, ct, ct_shape, lhs, rhs)?,
        ]),
        [Operand::Linear(_), Operand::Linear(_)] => Err(not_linear(primitive, 1)),
        _ => nonlinear(primitive, operands),
    }
}

/// A layout with its batch and feature dims (the first two) swapped.
fn swap_spec(spec: &[i64]) -> oxla_core::Dims {
    let mut swapped: oxla_core::Dims = spec.iter().copied().collect();
    swapped.swap(0, 1);
    swapped
}

/// The sizes of the spatial dims of a `shape` laid out as `spec`.
fn spatial(spec: &[i64], shape: &[i64]) -> Vec<i64> {
    spec[2..].iter().map(|&d| shape[d as usize]).collect()
}

/// JAX's `_reshape_axis_into`: dim `src` of `x` (of `shape`) merged into
/// dim `dst` (numbered without `src`), as its major part.
#[track_caller]
fn reshape_axis_into(src: usize, dst: usize, x: &Array, shape: &[i64]) -> (Array, Vec<i64>) {
    let mut perm: Vec<i64> = (0..shape.len() as i64)
        .filter(|&d| d != src as i64)
        .collect();
    perm.insert(dst, src as i64);
    let mut new_shape: Vec<i64> = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != src)
        .map(|(_, &s)| s)
        .collect();
    new_shape[dst] *= shape[src];
    let moved = transpose_if_needed(x, &perm);
    (lax::reshape(&moved, &new_shape), new_shape)
}

/// The cotangent of a convolution's input: the output cotangent convolved
/// with the spatially reversed kernel (its feature dims swapped, groups
/// moved into the output features), strides and input dilation trading
/// places.
fn conv_transpose_lhs(
    conv: &Conv<'_>,
    ct: &Array,
    ct_shape: &[i64],
    lhs: &Aval,
    rhs: &Array,
) -> Result<Array> {
    let rhs_aval = rhs.aval()?.clone();
    let dn = conv.dn;
    let (lhs_spec, rhs_spec, out_spec) = (&dn.lhs_spec, &dn.rhs_spec, &dn.out_spec);
    let groups = conv.feature_group_count.max(conv.batch_group_count);
    let mut kernel = rhs.clone();
    if groups > 1 {
        let (split, shape) = super::support::reshape_axis_out_of(rhs_spec[0] as usize, groups, rhs);
        (kernel, _) = reshape_axis_into(rhs_spec[0] as usize, rhs_spec[1] as usize, &split, &shape);
    }
    let padding = vjp_lhs_padding(
        &spatial(lhs_spec, &lhs.shape),
        &spatial(rhs_spec, &rhs_aval.shape),
        conv.window_strides,
        &spatial(out_spec, ct_shape),
        conv.padding,
        conv.lhs_dilation,
        conv.rhs_dilation,
    );
    let reversed = lax::rev(&kernel, &rhs_spec[2..]);
    let reversed = convert_if_needed(&reversed, ct.dtype_or_bool(), false);
    let numbers = ConvDimensionNumbers {
        lhs_spec: out_spec.clone(),
        rhs_spec: swap_spec(rhs_spec),
        out_spec: lhs_spec.clone(),
    };
    let out = bind_one(
        Primitive::ConvGeneralDilated {
            window_strides: conv.lhs_dilation.iter().copied().collect(),
            padding,
            lhs_dilation: conv.window_strides.iter().copied().collect(),
            rhs_dilation: conv.rhs_dilation.iter().copied().collect(),
            dimension_numbers: numbers,
            feature_group_count: groups,
            batch_group_count: 1,
            preferred_element_type: conv.preferred_element_type,
        },
        &[ct, &reversed],
    )?;
    let mut out = convert_if_needed(&out, lhs.dtype, lhs.weak_type);
    let batch_groups = conv.batch_group_count;
    if batch_groups > 1 {
        let (batch_dim, feature_dim) = (lhs_spec[0] as usize, lhs_spec[1] as usize);
        let (split, shape) = super::support::reshape_axis_out_of(feature_dim, batch_groups, &out);
        (out, _) = reshape_axis_into(feature_dim, batch_dim, &split, &shape);
    }
    Ok(out)
}

/// The cotangent of a convolution's kernel: the input convolved with the
/// output cotangent (batch and feature dims swapped, strides and kernel
/// dilation trading places, feature groups becoming batch groups and
/// vice versa). Zero when the output is empty.
fn conv_transpose_rhs(
    conv: &Conv<'_>,
    ct: &Array,
    ct_shape: &[i64],
    lhs: &Array,
    rhs: &Aval,
) -> Result<Tangent> {
    if ct_shape.contains(&0) {
        return Ok(None);
    }
    let lhs_aval = lhs.aval()?.clone();
    let dn = conv.dn;
    let (lhs_spec, rhs_spec, out_spec) = (&dn.lhs_spec, &dn.rhs_spec, &dn.out_spec);
    let (feature_groups, batch_groups) = if conv.batch_group_count > 1 {
        (conv.batch_group_count, 1)
    } else {
        (1, conv.feature_group_count)
    };
    let padding = vjp_rhs_padding(
        &spatial(lhs_spec, &lhs_aval.shape),
        &spatial(rhs_spec, &rhs.shape),
        conv.window_strides,
        &spatial(out_spec, ct_shape),
        conv.padding,
        conv.lhs_dilation,
        conv.rhs_dilation,
    );
    let numbers = ConvDimensionNumbers {
        lhs_spec: swap_spec(lhs_spec),
        rhs_spec: swap_spec(out_spec),
        out_spec: swap_spec(rhs_spec),
    };
    let input = convert_if_needed(lhs, ct.dtype_or_bool(), false);
    let out = bind_one(
        Primitive::ConvGeneralDilated {
            window_strides: conv.rhs_dilation.iter().copied().collect(),
            padding,
            lhs_dilation: conv.lhs_dilation.iter().copied().collect(),
            rhs_dilation: conv.window_strides.iter().copied().collect(),
            dimension_numbers: numbers,
            feature_group_count: feature_groups,
            batch_group_count: batch_groups,
            preferred_element_type: conv.preferred_element_type,
        },
        &[&input, ct],
    )?;
    Ok(Some(convert_if_needed(&out, rhs.dtype, rhs.weak_type)))
}

// ---------------------------------------------------------------------------
// Identities.

/// `optimization_barrier`: the nonzero cotangents of the linear operands
/// go through one barrier of their own (JAX's `_opt_barrier_transpose`).
fn optimization_barrier(cts: &[Tangent], operands: &[Operand]) -> Result<Vec<Tangent>> {
    let live: Vec<(usize, &Array)> = operands
        .iter()
        .zip(cts)
        .enumerate()
        .filter_map(|(i, (operand, ct))| match (operand, ct) {
            (Operand::Linear(_), Some(ct)) => Some((i, ct)),
            (Operand::Linear(_), None) | (Operand::Known(_), _) => None,
        })
        .collect();
    let mut result = none(operands.len());
    if live.is_empty() {
        return Ok(result);
    }
    let inputs: Vec<&Array> = live.iter().map(|&(_, ct)| ct).collect();
    let outs = support::bind_all(Primitive::OptimizationBarrier, &inputs)?;
    for ((i, _), out) in live.into_iter().zip(outs) {
        result[i] = Some(out);
    }
    Ok(result)
}
