//! The transpose dispatcher (each family's rule is in `rules/<family>.rs`)
//! and the helpers several families share: cotangents of the linear
//! operands from the cotangents of the outputs (JAX's
//! `ad.primitive_transposes`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::transform::rules::{
    call, collective, contract, control, elementwise, fft, host, index, linalg, marker, reduce,
    rng, shape, sharding,
};
use oxla_core::{
    Aval, DType, GatherDimensionNumbers, GatherMode, Primitive, Scalar, ScatterDimensionNumbers,
    ScatterOp,
};

use super::support::{self, Tangent};

use super::transpose::Operand;

use crate::array::Array;

use crate::error::{Error, Result};

use crate::lax;

/// What a family's transpose rule gets: the equation's primitive, the
/// cotangents of its outputs and its operands (linear or known).
#[derive(Clone, Copy)]
pub(crate) struct TransposeArgs<'a> {
    /// The primitive.
    pub(crate) primitive: &'a Primitive,
    /// The output cotangents.
    pub(crate) cts: &'a [Tangent],
    /// The operands: linear (with their types) or known values.
    pub(crate) operands: &'a [Operand],
    /// The output types.
    pub(crate) out_avals: &'a [Aval],
    /// The first nonzero output cotangent.
    pub(crate) ct: &'a Array,
    /// Its shape.
    pub(crate) ct_shape: &'a [i64],
}

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
    let input = TransposeArgs {
        primitive,
        cts,
        operands,
        out_avals,
        ct,
        ct_shape: &ct_shape,
    };
    let cts_in = match primitive {
        Primitive::Elementwise(op) => elementwise::transpose(op, &input),
        Primitive::Shape(op) => shape::transpose(op, &input),
        Primitive::Index(op) => index::transpose(op, &input),
        Primitive::Reduce(op) => reduce::transpose(op, &input),
        Primitive::Contract(op) => contract::transpose(op, &input),
        Primitive::Call(op) => call::transpose(op, &input),
        Primitive::Control(op) => control::transpose(op, &input),
        Primitive::Collective(op) => collective::transpose(op, &input),
        Primitive::Sharding(op) => sharding::transpose(op, &input),
        Primitive::Host(op) => host::transpose(op, &input),
        Primitive::Marker(op) => marker::transpose(op, &input),
        Primitive::Fft(op) => fft::transpose(op, &input),
        Primitive::Linalg(op) => linalg::transpose(op, &input),
        Primitive::Rng(op) => rng::transpose(op, &input),
    }?;
    finish(primitive, operands, cts_in)
}

// ---------------------------------------------------------------------------
// Operands, errors and results.

/// `n` symbolic zeros.
pub(crate) fn none(n: usize) -> Vec<Tangent> {
    vec![None; n]
}

/// The error of a primitive whose operand `index` is linear but which is
/// not linear in it.
pub(crate) fn not_linear(primitive: &Primitive, index: usize) -> Error {
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
pub(crate) fn nonlinear(primitive: &Primitive, operands: &[Operand]) -> Result<Vec<Tangent>> {
    match operands
        .iter()
        .position(|o| matches!(o, Operand::Linear(_)))
    {
        Some(i) => Err(not_linear(primitive, i)),
        None => Ok(none(operands.len())),
    }
}

/// The value of operand `index`, which must be known (a residual).
pub(crate) fn known_at<'a>(
    primitive: &Primitive,
    operands: &'a [Operand],
    index: usize,
) -> Result<&'a Array> {
    match operands.get(index) {
        Some(Operand::Known(x)) => Ok(x),
        Some(Operand::Linear(_)) => Err(not_linear(primitive, index)),
        None => Err(support::internal_error(
            "transpose",
            primitive,
            format!("operand {index} is missing"),
        )),
    }
}

/// The type of operand `index`, linear or known.
pub(crate) fn aval_at(primitive: &Primitive, operands: &[Operand], index: usize) -> Result<Aval> {
    match operands.get(index) {
        Some(Operand::Linear(a)) => Ok(a.clone()),
        Some(Operand::Known(x)) => Ok(x.aval()?.clone()),
        None => Err(support::internal_error(
            "transpose",
            primitive,
            format!("operand {index} is missing"),
        )),
    }
}

/// One cotangent per operand: `rule(index, aval)` for the linear ones,
/// `None` for the known ones.
pub(crate) fn for_linear(
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
        return Err(support::internal_error(
            "transpose",
            primitive,
            format!(
                "the rule gave {} cotangents for {} operands",
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
                    return Err(support::internal_error(
                        "transpose",
                        primitive,
                        format!("made a cotangent {ct_aval} for operand {i} of type {aval}"),
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

/// Strongly typed zeros of `shape` with the cotangent's dtype.
#[track_caller]
pub(crate) fn zeros_like_ct(ct: &Array, shape: &[i64]) -> Array {
    support::zeros(&Aval::new(ct.dtype_or_bool(), shape))
}

/// A zero literal of the cotangent's dtype (a padding value).
pub(crate) fn zero_of(ct: &Array) -> Array {
    support::literal(0.0, ct.dtype_or_bool(), false)
}

/// Zero as a scalar parameter of `dtype` (a gather's fill value).
fn zero_scalar(dtype: DType) -> Scalar {
    if dtype == DType::Bool {
        Scalar::Bool(false)
    } else if dtype.is_inexact() {
        Scalar::Float(0.0)
    } else if dtype.is_unsigned_int() {
        Scalar::UInt(0)
    } else {
        Scalar::Int(0)
    }
}

/// The positions that sort `values` (the inverse of a permutation).
pub(crate) fn argsort(values: &[i64]) -> Vec<i64> {
    let mut order: Vec<i64> = (0..values.len() as i64).collect();
    order.sort_by_key(|&i| values[i as usize]);
    order
}

// ---------------------------------------------------------------------------
// Elementwise primitives.

/// `select_n` with a known selector: each linear case gets the cotangent
/// where it was selected and zeros elsewhere (JAX's `_select_transpose_rule`).
pub(crate) fn select_n(
    primitive: &Primitive,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
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

// ---------------------------------------------------------------------------
// Structural primitives.

/// `broadcast_in_dim`: the cotangent summed over the added dimensions and
/// over the size-1 dimensions that were expanded, reshaped to the operand.
pub(crate) fn broadcast_in_dim(
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

/// `concatenate`: each linear operand's slice of the cotangent.
pub(crate) fn concatenate(
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
pub(crate) fn split(
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
pub(crate) fn pad(
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
pub(crate) fn slice(
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

// ---------------------------------------------------------------------------
// Gather and scatter.

/// `gather` with known indices (JAX's `_gather_transpose_rule`): the
/// cotangent scatter-added into zeros. Scatter drops out-of-bounds
/// windows, as `Fill` mode's gather reads its fill value for them; `Clip`
/// mode's indices are clamped first, as its gather does.
pub(crate) fn gather(
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
pub(crate) fn scatter(
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

/// `max(0, 1 + dilation * (d - 1))`: the extent of `d` points `dilation` apart.
pub(crate) fn dilate(d: i64, dilation: i64) -> i64 {
    if d == 0 { 0 } else { 1 + dilation * (d - 1) }
}

/// JAX's `_conv_general_vjp_lhs_padding`: the padding of the output
/// cotangent that a window pass over it needs to give the input's
/// cotangent.
pub(crate) fn vjp_lhs_padding(
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

// ---------------------------------------------------------------------------
// Matrix products and convolutions.

// ---------------------------------------------------------------------------
// Identities.
