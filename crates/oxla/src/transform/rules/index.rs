//! The jvp, transpose and batching rules of the index family
//! (`oxla_core::primitive::index`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{
    Batched, done, empty_batch, index_dtype, insert_at, operand, unbatched_shape,
};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{
    Jvp, differentiable, finish, fit, indicator, linear_jvp, lit, lit_i32, select, single,
    tangent_values, zero_jvp,
};
use crate::transform::support;
use crate::transform::support::{
    Tangent, add_tangents, batch_at, has_tangent, literal, move_axis, refs,
};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{
    aval_at, for_linear, gather, known_at, scatter, slice, zeros_like_ct,
};
use oxla_core::primitive::index;
use oxla_core::primitive::index::Op;
use oxla_core::{
    Aval, DType, Dims, GatherDimensionNumbers, GatherMode, Primitive, Scalar, ScalarKey,
    ScatterDimensionNumbers, ScatterOp,
};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::Slice { .. } => linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true)?,
        Op::DynamicSlice { .. } => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i == 0)?
        }
        Op::DynamicUpdateSlice => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i < 2)?
        }
        Op::Gather {
            dimension_numbers,
            slice_sizes,
            mode,
            ..
        } => {
            // Out-of-bounds slices of the tangent are zero.
            let tangent_primitive = Primitive::Index(index::Op::Gather {
                dimension_numbers: dimension_numbers.clone(),
                slice_sizes: slice_sizes.clone(),
                mode: *mode,
                fill_value: ScalarKey::of(Scalar::Float(0.0)),
            });
            linear_jvp(primitive, tangent_primitive, primals, tangents, |i| i == 0)?
        }
        Op::Scatter {
            op,
            dimension_numbers,
        } => scatter_jvp(primitive, *op, dimension_numbers, primals, tangents)?,
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
        Op::Slice {
            start_indices,
            strides,
            ..
        } => slice(start_indices, strides, ct, ct_shape, operands),
        Op::DynamicSlice { .. } => dynamic_slice_transpose(primitive, ct, operands),
        Op::DynamicUpdateSlice => dynamic_update_slice_transpose(primitive, ct, operands),
        Op::Gather {
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
        Op::Scatter {
            op,
            dimension_numbers,
        } => scatter(primitive, *op, dimension_numbers, ct, ct_shape, operands),
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
        Op::Slice {
            start_indices,
            limit_indices,
            strides,
        } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let (mut start, mut limit, mut step) = (
                start_indices.to_vec(),
                limit_indices.to_vec(),
                strides.to_vec(),
            );
            start.insert(b, 0);
            limit.insert(b, size);
            step.insert(b, 1);
            done(
                vec![lax::slice(&x, &start, &limit, Some(&step))],
                vec![Some(b)],
            )
        }
        Op::DynamicSlice { slice_sizes } => {
            dynamic_slice_batch(primitive, slice_sizes, args, bdims, size)
        }
        Op::DynamicUpdateSlice => dynamic_update_slice_batch(primitive, args, bdims, size),
        Op::Gather {
            dimension_numbers,
            slice_sizes,
            mode,
            fill_value,
        } => {
            if size == 0 && bdims[0].is_some() && bdims[1].is_some() {
                return empty_batch(primitive, args, bdims);
            }
            let gather = GatherParams {
                dnums: dimension_numbers.clone(),
                slice_sizes: slice_sizes.clone(),
                mode: *mode,
                fill_value: *fill_value,
            };
            let (out, b) = gather_rule(&gather, &args[0], bdims[0], &args[1], bdims[1])?;
            done(vec![out], vec![b])
        }
        Op::Scatter {
            op,
            dimension_numbers,
        } => {
            let out = scatter_rule(*op, dimension_numbers, args, bdims, size)?;
            done(vec![out], vec![Some(0)])
        }
    }
}

/// Scatter with `op`: add is linear in operand and updates; set, min and
/// max follow JAX's rules for possibly repeated indices; mul is
/// differentiable in the operand only (as in JAX without unique indices).
fn scatter_jvp(
    primitive: &Primitive,
    op: ScatterOp,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    match op {
        ScatterOp::Add => linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i != 1),
        ScatterOp::Set => scatter_set_jvp(primitive, numbers, primals, tangents),
        ScatterOp::Mul => scatter_mul_jvp(primitive, primals, tangents),
        ScatterOp::Min | ScatterOp::Max => {
            scatter_extremal_jvp(primitive, numbers, primals, tangents)
        }
    }
}

/// A scatter with `op` and `numbers` through the current trace.
fn scatter_with(
    op: ScatterOp,
    numbers: &ScatterDimensionNumbers,
    x: &Array,
    indices: &Array,
    updates: &Array,
) -> Result<Array> {
    let primitive = Primitive::Index(index::Op::Scatter {
        op,
        dimension_numbers: numbers.clone(),
    });
    support::bind_one(&primitive, &[x, indices, updates])
}

/// The gather that reads back, for each update element, the element of `x`
/// a scatter with `numbers` writes it to (updates of `updates_shape`;
/// out-of-bounds windows, which scatter drops, read `fill`).
fn gather_scattered(
    x: &Array,
    indices: &Array,
    numbers: &ScatterDimensionNumbers,
    updates_shape: &[i64],
    fill: Scalar,
) -> Array {
    let mut window_dims = numbers.update_window_dims.iter();
    let slice_sizes: Vec<i64> = (0..x.ndim_or_zero() as i64)
        .map(|d| {
            if numbers.inserted_window_dims.contains(&d) {
                1
            } else {
                window_dims
                    .next()
                    .and_then(|&u| updates_shape.get(u as usize).copied())
                    .unwrap_or(1)
            }
        })
        .collect();
    let gather_numbers = GatherDimensionNumbers {
        offset_dims: numbers.update_window_dims.clone(),
        collapsed_slice_dims: numbers.inserted_window_dims.clone(),
        start_index_map: numbers.scatter_dims_to_operand_dims.clone(),
    };
    lax::gather(
        x,
        indices,
        gather_numbers,
        &slice_sizes,
        GatherMode::Fill,
        fill,
    )
}

/// JAX's `_scatter_jvp` for indices that may repeat: a scatter of update
/// ids decides which update wins each element; operand and updates (and
/// their tangents) are masked to the winners and combined by scatter-add,
/// so the primal and tangent agree on the winner.
fn scatter_set_jvp(
    primitive: &Primitive,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let ([x, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return zero_jvp(primitive, primals);
    };
    if !has_tangent(x.dtype_or_bool()) || (t_x.is_none() && t_updates.is_none()) {
        return zero_jvp(primitive, primals);
    }
    let updates_shape = updates.shape_or_empty().to_vec();
    let mut ids_shape = updates_shape.clone();
    for &d in &numbers.update_window_dims {
        if let Some(size) = ids_shape.get_mut(d as usize) {
            *size = 1;
        }
    }
    let num_ids: i64 = ids_shape.iter().product();
    let ids = lax::add(
        &lax::reshape(&lax::iota(DType::I32, &[num_ids], 0), &ids_shape),
        &lit_i32(1),
    );
    let ids = fit(&ids, &updates_shape);
    let no_ids = support::zeros(&Aval::new(DType::I32, x.shape_or_empty()));
    let scattered = scatter_with(ScatterOp::Set, numbers, &no_ids, indices, &ids)?;
    let gathered = gather_scattered(
        &scattered,
        indices,
        numbers,
        &updates_shape,
        Scalar::Int(-1),
    );
    let operand_kept = lax::eq(&scattered, &lit_i32(0));
    let update_won = lax::eq(&ids, &gathered);
    let masked = |keep: &Array, v: &Array| -> Result<Array> {
        Ok(select(keep, v, &support::zeros(v.aval()?)))
    };
    let masked_tangent = |keep: &Array, t: &Tangent, primal: &Array| match t {
        Some(t) => masked(keep, t),
        None => tangent_values(&None, primal),
    };
    let out = scatter_with(
        ScatterOp::Add,
        numbers,
        &masked(&operand_kept, x)?,
        indices,
        &masked(&update_won, updates)?,
    )?;
    let tangent = scatter_with(
        ScatterOp::Add,
        numbers,
        &masked_tangent(&operand_kept, t_x, x)?,
        indices,
        &masked_tangent(&update_won, t_updates, updates)?,
    )?;
    Ok(single(out, Some(tangent)))
}

/// scatter-mul: linear in the operand (the same scatter-mul of its
/// tangent); like JAX without `unique_indices`, no rule for the updates.
fn scatter_mul_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let ([_, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !has_tangent(out.dtype_or_bool()) {
        return Ok(single(out, None));
    }
    if t_updates.is_some() {
        return Err(support::rule_error(
            "jvp",
            primitive,
            "the derivative with respect to the updates is only defined for unique indices \
             (as in JAX), which oxla's scatter does not promise",
        ));
    }
    let tangent = t_x
        .as_ref()
        .map(|t| support::bind_one(primitive, &[t, indices, updates]))
        .transpose()?;
    Ok(single(out, tangent))
}

/// JAX's `_scatter_extremal_jvp` (scatter-min/max): each element's tangent
/// is the mean of the tangents of the values (operand and updates) equal to
/// the result there.
fn scatter_extremal_jvp(
    primitive: &Primitive,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let ([x, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, &[t_x.clone(), t_updates.clone()]) {
        return Ok(single(out, None));
    }
    let updates_shape = updates.shape_or_empty().to_vec();
    let back =
        |a: &Array| gather_scattered(a, indices, numbers, &updates_shape, Scalar::Float(0.0));
    let target = back(&out);
    let successful = lax::eq(updates, &target);
    let retained = lax::eq(&back(x), &target);
    let no_operand = support::zeros(x.aval()?);
    let count = |ones: &Array| -> Result<Array> {
        Ok(back(&scatter_with(
            ScatterOp::Add,
            numbers,
            &no_operand,
            indices,
            ones,
        )?))
    };
    let num_updates = count(&indicator(&successful, updates))?;
    let num_refs = count(&support::full(updates.aval()?, 1.0))?;
    let one = lit(1.0, updates);
    let shared = lax::div(&one, &lax::add(&num_updates, &one));
    let no_updates = support::zeros(updates.aval()?);
    let update_coef = select(
        &successful,
        &select(&retained, &shared, &lax::div(&one, &num_updates)),
        &no_updates,
    );
    let operand_coef = lax::div(
        &lax::sub(&select(&retained, &shared, &no_updates), &one),
        &num_refs,
    );
    let from_operand = t_x.as_ref().map(|t| lax::mul(&back(t), &operand_coef));
    let from_updates = t_updates.as_ref().map(|t| lax::mul(t, &update_coef));
    let tangent_updates = tangent_values(&add_tangents(from_operand, from_updates), updates)?;
    let tangent = scatter_with(
        ScatterOp::Add,
        numbers,
        &tangent_values(t_x, x)?,
        indices,
        &tangent_updates,
    )?;
    Ok(single(out, Some(tangent)))
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

/// `dynamic_slice_transpose` with known indices: the cotangent written into zeros
/// at the same (already normalized) start.
fn dynamic_slice_transpose(
    primitive: &Primitive,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let indices = known_from(primitive, operands, 1)?;
    for_linear(operands, |_, a| {
        let zeros = zeros_like_ct(ct, &a.shape);
        let mut inputs = vec![&zeros, ct];
        inputs.extend(indices.iter().copied());
        Ok(Some(support::bind_one(
            &Primitive::Index(index::Op::DynamicUpdateSlice),
            &inputs,
        )?))
    })
}

/// `dynamic_update_slice_transpose` with known indices: the operand's cotangent is
/// the cotangent with the updated window zeroed, the update's is that
/// window of the cotangent.
fn dynamic_update_slice_transpose(
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
            support::bind_one(&Primitive::Index(index::Op::DynamicUpdateSlice), &inputs)?
        } else {
            let mut inputs = vec![ct];
            inputs.extend(indices.iter().copied());
            support::bind_one(
                &Primitive::Index(index::Op::DynamicSlice {
                    slice_sizes: update_shape.clone(),
                }),
                &inputs,
            )?
        };
        Ok(Some(ct))
    })
}

/// `x` converted to `dtype` (as it is if it has it, weakly typed or not).
fn as_dtype(x: &Array, dtype: DType) -> Array {
    if x.dtype_or_bool() == dtype {
        x.clone()
    } else {
        lax::convert_element_type(x, dtype)
    }
}

/// Scalar start indices (some batched) as one [B, n] index array.
fn stack_indices(indices: &[Array], bdims: &[Option<usize>], size: i64) -> Array {
    let dtype = index_dtype(indices);
    let columns: Vec<Array> = indices
        .iter()
        .zip(bdims)
        .map(|(i, bd)| {
            let i = as_dtype(i, dtype);
            let dims: &[i64] = if bd.is_some() { &[0] } else { &[] };
            lax::broadcast_in_dim(&i, &[size, 1], dims)
        })
        .collect();
    let refs: Vec<&Array> = columns.iter().collect();
    lax::concatenate(&refs, 1)
}

/// dynamic_slice_batch: with unbatched indices, a zero start and the whole batch
/// for the batch dim; with batched ones, a gather (clip mode clamps as
/// dynamic_slice_batch does), as JAX.
fn dynamic_slice_batch(
    primitive: &Primitive,
    slice_sizes: &[i64],
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (indices, index_bdims) = (&args[1..], &bdims[1..]);
    if index_bdims.iter().all(Option::is_none) {
        let (x, b) = operand(&args[0], bdims[0], size);
        let zero = literal(0.0, index_dtype(indices), false);
        let mut starts: Vec<&Array> = indices.iter().collect();
        starts.insert(b, &zero);
        let mut inputs = vec![&x];
        inputs.extend(starts);
        let p = Primitive::Index(index::Op::DynamicSlice {
            slice_sizes: insert_at(slice_sizes, b, size),
        });
        return done(vec![support::bind_one(&p, &inputs)?], vec![Some(b)]);
    }
    if size == 0 {
        return empty_batch(primitive, args, bdims);
    }
    let index = stack_indices(indices, index_bdims, size);
    index.check()?;
    let dims: Dims = (0..indices.len() as i64).collect();
    let gather = GatherParams {
        dnums: GatherDimensionNumbers {
            offset_dims: dims.clone(),
            collapsed_slice_dims: Dims::new(),
            start_index_map: dims,
        },
        slice_sizes: slice_sizes.iter().copied().collect(),
        mode: GatherMode::Clip,
        fill_value: ScalarKey::of(Scalar::Int(0)),
    };
    let (out, b) = gather_rule(&gather, &args[0], bdims[0], &index, Some(0))?;
    done(vec![out], vec![b])
}

/// dynamic_update_slice_batch: with unbatched indices, a zero start for the batch
/// dim; with batched ones, a scatter of each batch element's update at its
/// start indices, clamped so the update fits (as dynamic_update_slice_batch
/// clamps), as JAX.
fn dynamic_update_slice_batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (indices, index_bdims) = (&args[2..], &bdims[2..]);
    if index_bdims.iter().all(Option::is_none) {
        let b = bdims[0].unwrap_or(0);
        let x = batch_at(&args[0], bdims[0], size, b);
        let update = batch_at(&args[1], bdims[1], size, b);
        let zero = literal(0.0, index_dtype(indices), false);
        let mut inputs = vec![&x, &update];
        inputs.extend(indices.iter());
        inputs.insert(2 + b, &zero);
        return done(vec![support::bind_one(primitive, &inputs)?], vec![Some(b)]);
    }
    let x_shape = unbatched_shape(&args[0], bdims[0]);
    let update_shape = unbatched_shape(&args[1], bdims[1]);
    let dtype = index_dtype(indices);
    let clamped: Vec<Array> = indices
        .iter()
        .enumerate()
        .map(|(d, i)| {
            let i = as_dtype(i, dtype);
            let hi = literal((x_shape[d] - update_shape[d]) as f64, dtype, false);
            lax::clamp(&literal(0.0, dtype, false), &i, &hi)
        })
        .collect();
    let index = stack_indices(&clamped, index_bdims, size);
    let x = batch_at(&args[0], bdims[0], size, 0);
    let update = batch_at(&args[1], bdims[1], size, 0);
    let dims: Dims = (0..indices.len() as i64).collect();
    let dnums = ScatterDimensionNumbers {
        update_window_dims: dims.clone(),
        inserted_window_dims: Dims::new(),
        scatter_dims_to_operand_dims: dims,
    };
    let out = scatter_rule(
        ScatterOp::Set,
        &dnums,
        &[x, index, update],
        &[Some(0), Some(0), Some(0)],
        size,
    )?;
    done(vec![out], vec![Some(0)])
}

/// Index arrays of a batched gather or scatter that also get a column
/// counting the batch need a dtype that holds the batch size.
fn wide_index_dtype(dtype: DType) -> DType {
    if dtype.byte_size() >= 4 {
        dtype
    } else {
        DType::I32
    }
}

/// `indices` (batch at 0) with a leading index component counting the
/// batch: [B, ..., n] becomes [B, ..., n + 1].
fn prepend_batch_counter(indices: &Array) -> Array {
    let dtype = wide_index_dtype(indices.dtype_or_bool());
    let indices = as_dtype(indices, dtype);
    let mut count_shape = indices.shape_or_empty().to_vec();
    let last = count_shape.len() - 1;
    count_shape[last] = 1;
    let counts = lax::iota(dtype, &count_shape, 0);
    lax::concatenate(&[&counts, &indices], last)
}

/// `dims` shifted by one, after `first` if given.
fn shifted(first: Option<i64>, dims: &[i64]) -> Dims {
    first
        .into_iter()
        .chain(dims.iter().map(|d| d + 1))
        .collect()
}

/// The parameters of a gather.
struct GatherParams {
    dnums: GatherDimensionNumbers,
    slice_sizes: Dims,
    mode: GatherMode,
    fill_value: ScalarKey,
}

/// JAX's gather batching rule (before operand batching dims): a batched
/// operand's batch dim becomes a whole-size offset dim; batched indices'
/// batch dim a batch dim of the result; both batched, an index component
/// counting the batch picks each element's operand (collapsed slice dim).
fn gather_rule(
    g: &GatherParams,
    x: &Array,
    x_bdim: Option<usize>,
    indices: &Array,
    indices_bdim: Option<usize>,
) -> Result<(Array, Option<usize>)> {
    let d = &g.dnums;
    let (x, indices, dnums, slice_sizes) = match (x_bdim, indices_bdim) {
        (None, None) => (x.clone(), indices.clone(), d.clone(), g.slice_sizes.clone()),
        (Some(b), None) => {
            let x = move_axis(x, b, 0);
            let dnums = GatherDimensionNumbers {
                offset_dims: shifted(Some(0), &d.offset_dims),
                collapsed_slice_dims: shifted(None, &d.collapsed_slice_dims),
                start_index_map: shifted(None, &d.start_index_map),
            };
            let slice_sizes = insert_at(&g.slice_sizes, 0, x.shape_or_empty()[0]);
            (x, indices.clone(), dnums, slice_sizes)
        }
        (None, Some(b)) => {
            let dnums = GatherDimensionNumbers {
                offset_dims: shifted(None, &d.offset_dims),
                collapsed_slice_dims: d.collapsed_slice_dims.clone(),
                start_index_map: d.start_index_map.clone(),
            };
            (
                x.clone(),
                move_axis(indices, b, 0),
                dnums,
                g.slice_sizes.clone(),
            )
        }
        (Some(xb), Some(ib)) => {
            let x = move_axis(x, xb, 0);
            let indices = prepend_batch_counter(&move_axis(indices, ib, 0));
            let dnums = GatherDimensionNumbers {
                offset_dims: shifted(None, &d.offset_dims),
                collapsed_slice_dims: shifted(Some(0), &d.collapsed_slice_dims),
                start_index_map: shifted(Some(0), &d.start_index_map),
            };
            let slice_sizes = insert_at(&g.slice_sizes, 0, 1);
            (x, indices, dnums, slice_sizes)
        }
    };
    let p = Primitive::Index(index::Op::Gather {
        dimension_numbers: dnums,
        slice_sizes,
        mode: g.mode,
        fill_value: g.fill_value,
    });
    let out_bdim = x_bdim.or(indices_bdim).map(|_| 0);
    Ok((support::bind_one(&p, &[&x, &indices])?, out_bdim))
}

/// JAX's scatter batching rule (before operand batching dims): operand and
/// updates get their batch dim at 0 (broadcast if unbatched); unbatched
/// indices make it a whole-size window dim, batched ones get an index
/// component counting the batch (an inserted window dim).
fn scatter_rule(
    op: ScatterOp,
    d: &ScatterDimensionNumbers,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Array> {
    let x = batch_at(&args[0], bdims[0], size, 0);
    let updates = batch_at(&args[2], bdims[2], size, 0);
    let (indices, dnums) = match bdims[1] {
        None => (
            args[1].clone(),
            ScatterDimensionNumbers {
                update_window_dims: shifted(Some(0), &d.update_window_dims),
                inserted_window_dims: shifted(None, &d.inserted_window_dims),
                scatter_dims_to_operand_dims: shifted(None, &d.scatter_dims_to_operand_dims),
            },
        ),
        Some(b) => (
            prepend_batch_counter(&move_axis(&args[1], b, 0)),
            ScatterDimensionNumbers {
                update_window_dims: shifted(None, &d.update_window_dims),
                inserted_window_dims: shifted(Some(0), &d.inserted_window_dims),
                scatter_dims_to_operand_dims: shifted(Some(0), &d.scatter_dims_to_operand_dims),
            },
        ),
    };
    let p = Primitive::Index(index::Op::Scatter {
        op,
        dimension_numbers: dnums,
    });
    support::bind_one(&p, &[&x, &indices, &updates])
}
