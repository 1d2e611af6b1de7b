//! The jvp, transpose and batching rules of the contract family
//! (`oxla_core::primitive::contract`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{Batched, axes_to_batched, done, empty_batch, to_batched};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{Jvp, differentiable, finish, single};
use crate::transform::support;
use crate::transform::support::{Tangent, add_tangents, refs, rule_error};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{argsort, dilate, nonlinear, not_linear, vjp_lhs_padding};
use oxla_core::primitive::contract;
use oxla_core::primitive::contract::Op;
use oxla_core::{Aval, ConvDimensionNumbers, DType, Dims, Precision, Primitive};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::DotGeneral { .. } | Op::ConvGeneralDilated { .. } => {
            bilinear_jvp(primitive, primals, tangents)?
        }
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ct,
        ct_shape,
        ..
    } = *input;
    match op {
        Op::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers,
            feature_group_count,
            batch_group_count,
            preferred_element_type,
            precision,
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
                precision: *precision,
            };
            conv_general_dilated(primitive, &conv, ct, ct_shape, operands)
        }
        Op::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            preferred_element_type,
            precision,
            out_sharding: _,
        } => {
            let dot = Dot {
                x_contract: lhs_contracting,
                y_contract: rhs_contracting,
                x_batch: lhs_batch,
                y_batch: rhs_batch,
                preferred_element_type: *preferred_element_type,
                precision: *precision,
            };
            dot_general_transpose(primitive, &dot, ct, operands)
        }
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    match op {
        Op::ConvGeneralDilated { .. } => conv(primitive, args, bdims, size),
        Op::DotGeneral { .. } => dot_general_batch(primitive, args, bdims),
    }
}

/// The jvp of a bilinear op (`dot_general`, convolution): the op applied
/// with each operand's tangent in its place, summed.
fn bilinear_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let ([x, y], [tx, ty]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, tangents) {
        return Ok(single(out, None));
    }
    let left = tx
        .as_ref()
        .map(|t| support::bind_one(primitive, &[t, y]))
        .transpose()?;
    let right = ty
        .as_ref()
        .map(|t| support::bind_one(primitive, &[x, t]))
        .transpose()?;
    Ok(single(out, add_tangents(left, right)))
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

/// The dimension numbers and options of a `dot_general_transpose` of `x` and `y`.
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

/// `dot_general_transpose` with one linear operand (JAX's `_dot_general_transpose_lhs`
/// and `_rhs`).
fn dot_general_transpose(
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

/// The cotangent of `x` in `dot_general_transpose(x, y)` (of `dot_general_transpose(y, x)` when
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
    // The product is x's cotangent with its dimensions in the order
    // `unsorted`; on a mesh with explicit axes it is split as x is (JAX
    // passes x's sharding as the product's out_sharding too: its
    // contracting dimensions may be split on both sides).
    let out_sharding = x.sharding.as_ref().map(|s| {
        let axes = x.dim_axes();
        let dims: Vec<oxla_core::DimAxes> =
            unsorted.iter().map(|&d| axes[d as usize].clone()).collect();
        oxla_core::ShardingDesc::new(s.mesh.clone(), dims.into())
    });
    let product = lax::dot_general_typed(
        ct,
        &y,
        ((&ans_y, &y_kept), (&ans_batch, dot.y_batch)),
        (dot.preferred_element_type, dot.precision),
        out_sharding,
    );
    let x_bar = support::transpose_if_needed(&product, &argsort(&unsorted));
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
    /// Precision of both operands, if set (the transposes keep it).
    precision: Option<oxla_core::Precision>,
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
        let (split, _) = support::reshape_axis_out_of(rhs_spec[0] as usize, groups, rhs);
        kernel = support::reshape_axis_into(rhs_spec[0] as usize, rhs_spec[1] as usize, &split);
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
    let out = support::bind_one(
        &Primitive::Contract(contract::Op::ConvGeneralDilated {
            window_strides: conv.lhs_dilation.iter().copied().collect(),
            padding,
            lhs_dilation: conv.window_strides.iter().copied().collect(),
            rhs_dilation: conv.rhs_dilation.iter().copied().collect(),
            dimension_numbers: numbers,
            feature_group_count: groups,
            batch_group_count: 1,
            preferred_element_type: conv.preferred_element_type,
            precision: conv.precision,
        }),
        &[ct, &reversed],
    )?;
    let mut out = convert_if_needed(&out, lhs.dtype, lhs.weak_type);
    let batch_groups = conv.batch_group_count;
    if batch_groups > 1 {
        let (batch_dim, feature_dim) = (lhs_spec[0] as usize, lhs_spec[1] as usize);
        let (split, _) = support::reshape_axis_out_of(feature_dim, batch_groups, &out);
        out = support::reshape_axis_into(feature_dim, batch_dim, &split);
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
    let out = support::bind_one(
        &Primitive::Contract(contract::Op::ConvGeneralDilated {
            window_strides: conv.rhs_dilation.iter().copied().collect(),
            padding,
            lhs_dilation: conv.lhs_dilation.iter().copied().collect(),
            rhs_dilation: conv.window_strides.iter().copied().collect(),
            dimension_numbers: numbers,
            feature_group_count: feature_groups,
            batch_group_count: batch_groups,
            preferred_element_type: conv.preferred_element_type,
            precision: conv.precision,
        }),
        &[&input, ct],
    )?;
    Ok(Some(convert_if_needed(&out, rhs.dtype, rhs.weak_type)))
}

/// JAX's dot_general_batch batching rule: both batched, the batch dims become a
/// new leading dot batch dim; one batched, its batch dim is a free dim of
/// that side, which says where it lands in the result.
fn dot_general_batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
) -> Result<Batched> {
    let Primitive::Contract(contract::Op::DotGeneral {
        lhs_contracting,
        rhs_contracting,
        lhs_batch,
        rhs_batch,
        preferred_element_type,
        precision,
        out_sharding,
    }) = primitive
    else {
        return Err(rule_error("vmap", primitive, "not a dot_general_batch"));
    };
    // Free dims of one side before its batch dim `bdim` (unbatched axes).
    let free_before = |batch: &[i64], contracting: &[i64], bdim: usize| {
        (0..bdim as i64)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .count()
    };
    let (lb, lc, rb, rc, out_bdim) = match (bdims[0], bdims[1]) {
        (Some(l), Some(r)) => (
            shifted_from(Some(l), lhs_batch, l),
            axes_to_batched(lhs_contracting, l),
            shifted_from(Some(r), rhs_batch, r),
            axes_to_batched(rhs_contracting, r),
            Some(0),
        ),
        (Some(l), None) => (
            axes_to_batched(lhs_batch, l),
            axes_to_batched(lhs_contracting, l),
            rhs_batch.clone(),
            rhs_contracting.clone(),
            Some(lhs_batch.len() + free_before(lhs_batch, lhs_contracting, l)),
        ),
        (None, Some(r)) => (
            lhs_batch.clone(),
            lhs_contracting.clone(),
            axes_to_batched(rhs_batch, r),
            axes_to_batched(rhs_contracting, r),
            Some(
                args[0].ndim_or_zero() - lhs_contracting.len()
                    + free_before(rhs_batch, rhs_contracting, r),
            ),
        ),
        (None, None) => (
            lhs_batch.clone(),
            lhs_contracting.clone(),
            rhs_batch.clone(),
            rhs_contracting.clone(),
            None,
        ),
    };
    let p = Primitive::Contract(contract::Op::DotGeneral {
        lhs_contracting: lc,
        rhs_contracting: rc,
        lhs_batch: lb,
        rhs_batch: rb,
        preferred_element_type: *preferred_element_type,
        precision: *precision,
        // The batch dimension is not split (JAX inserts `None` for it too).
        out_sharding: out_sharding
            .as_ref()
            .zip(out_bdim)
            .map(|(s, b)| s.with_dim_inserted(b, std::sync::Arc::from([]))),
    });
    done(
        vec![support::bind_one(&p, &[&args[0], &args[1]])?],
        vec![out_bdim],
    )
}

/// `first` (if given) followed by the unbatched `axes` as positions in the
/// operand batched at `bdim`.
fn shifted_from(first: Option<usize>, axes: &[i64], bdim: usize) -> Dims {
    first
        .map(|f| f as i64)
        .into_iter()
        .chain(axes.iter().map(|&a| to_batched(a, bdim)))
        .collect()
}

/// JAX's conv_general_dilated batching rule: a batched lhs folds its batch
/// into the lhs batch dim, a batched rhs into the output features, both
/// into feature (or batch) groups.
fn conv(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let Primitive::Contract(contract::Op::ConvGeneralDilated {
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers: dn,
        feature_group_count,
        batch_group_count,
        preferred_element_type,
        precision,
    }) = primitive
    else {
        return Err(rule_error("vmap", primitive, "not a conv_general_dilated"));
    };
    let (lhs, rhs) = (&args[0], &args[1]);
    // JAX asserts this (the shape rule rejects it too).
    if *feature_group_count > 1 && *batch_group_count > 1 {
        return Err(rule_error(
            "vmap",
            primitive,
            "feature_group_count and batch_group_count cannot both be above 1",
        ));
    }
    if size == 0 && bdims.iter().any(Option::is_some) {
        return empty_batch(primitive, args, bdims);
    }
    let conv_with = |lhs: &Array, rhs: &Array, fgc: i64, bgc: i64| -> Result<Array> {
        let p = Primitive::Contract(contract::Op::ConvGeneralDilated {
            window_strides: window_strides.clone(),
            padding: padding.clone(),
            lhs_dilation: lhs_dilation.clone(),
            rhs_dilation: rhs_dilation.clone(),
            dimension_numbers: dn.clone(),
            feature_group_count: fgc,
            batch_group_count: bgc,
            preferred_element_type: *preferred_element_type,
            precision: *precision,
        });
        support::bind_one(&p, &[lhs, rhs])
    };
    let spec = |s: &Dims, i: usize| s[i] as usize;
    let (lhs_n, lhs_c) = (spec(&dn.lhs_spec, 0), spec(&dn.lhs_spec, 1));
    let rhs_o = spec(&dn.rhs_spec, 0);
    let (out_n, out_c) = (spec(&dn.out_spec, 0), spec(&dn.out_spec, 1));
    let (fgc, bgc) = (*feature_group_count, *batch_group_count);
    let (out, out_bdim) = match (bdims[0], bdims[1]) {
        (Some(lb), Some(rb)) => {
            let (new_lhs, fgc, bgc) = if bgc > 1 {
                (support::reshape_axis_into(lb, lhs_n, lhs), fgc, bgc * size)
            } else {
                (support::reshape_axis_into(lb, lhs_c, lhs), fgc * size, bgc)
            };
            let new_rhs = support::reshape_axis_into(rb, rhs_o, rhs);
            let out = conv_with(&new_lhs, &new_rhs, fgc, bgc)?;
            (
                crate::transform::support::reshape_axis_out_of(out_c, size, &out).0,
                Some(out_c),
            )
        }
        (Some(lb), None) => {
            let new_lhs = if bgc == 1 {
                support::reshape_axis_into(lb, lhs_n, lhs)
            } else {
                let split = crate::transform::support::reshape_axis_out_of(
                    lhs_n + usize::from(lb <= lhs_n),
                    bgc,
                    lhs,
                )
                .0;
                let merged =
                    support::reshape_axis_into(lb + usize::from(lhs_n < lb), lhs_n + 1, &split);
                support::reshape_axis_into(lhs_n, lhs_n, &merged)
            };
            let out = conv_with(&new_lhs, rhs, fgc, bgc)?;
            (
                crate::transform::support::reshape_axis_out_of(out_n, size, &out).0,
                Some(out_n),
            )
        }
        (None, Some(rb)) => {
            if fgc == 1 && bgc == 1 {
                let new_rhs = support::reshape_axis_into(rb, rhs_o, rhs);
                let out = conv_with(lhs, &new_rhs, fgc, bgc)?;
                (
                    crate::transform::support::reshape_axis_out_of(out_c, size, &out).0,
                    Some(out_c),
                )
            } else {
                let groups = if fgc > 1 { fgc } else { bgc };
                let split = crate::transform::support::reshape_axis_out_of(
                    rhs_o + usize::from(rb <= rhs_o),
                    groups,
                    rhs,
                )
                .0;
                let merged =
                    support::reshape_axis_into(rb + usize::from(rhs_o < rb), rhs_o + 1, &split);
                let new_rhs = support::reshape_axis_into(rhs_o, rhs_o, &merged);
                let out = conv_with(lhs, &new_rhs, fgc, bgc)?;
                let out = crate::transform::support::reshape_axis_out_of(out_c, groups, &out).0;
                let out = crate::transform::support::reshape_axis_out_of(out_c + 1, size, &out).0;
                (
                    support::reshape_axis_into(out_c, out_c + 1, &out),
                    Some(out_c),
                )
            }
        }
        (None, None) => (conv_with(lhs, rhs, fgc, bgc)?, None),
    };
    done(vec![out], vec![out_bdim])
}
