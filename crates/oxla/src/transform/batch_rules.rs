//! The batching rule of every primitive: outputs and where their batch
//! dimension is, from operands with a batch dimension (or none).
#![deny(clippy::wildcard_enum_match_arm)]

use oxla_core::shape_rules::abstract_eval;
use oxla_core::{
    Aval, DType, Dims, GatherDimensionNumbers, GatherMode, Primitive, Scalar, ScalarKey,
    ScatterDimensionNumbers, ScatterOp, VmapMethod,
};

use super::support::{batch_at, bind_all, literal, move_axis, rule_error, zeros};
use crate::array::Array;
use crate::error::Result;
use crate::lax;

/// Outputs and their batch dims.
type Batched = (Vec<Array>, Vec<Option<usize>>);

/// Outputs of `primitive` on batched operands (`bdims[i]` is where operand
/// i's batch dimension is, `None` if it has none), and their batch dims.
pub(crate) fn batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    if args.len() != bdims.len() {
        return Err(rule_error(
            "vmap",
            primitive,
            format!("{} operands but {} batch dims", args.len(), bdims.len()),
        ));
    }
    let size = axis_size;
    match primitive {
        Primitive::Unary(_)
        | Primitive::IntegerPow { .. }
        | Primitive::ConvertElementType { .. }
        | Primitive::StopGradient
        | Primitive::CheckpointName { .. }
        | Primitive::Pvary { .. } => same_bdim_unary(primitive, args, bdims, size),
        Primitive::ShardingConstraint { sharding } => {
            sharding_constraint(sharding, args, bdims, size)
        }
        Primitive::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => super::shard_map_rules::batch(
            &super::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            },
            args,
            bdims,
            size,
        ),
        Primitive::AllReduce { .. }
        | Primitive::AllGather { .. }
        | Primitive::ReduceScatter { .. }
        | Primitive::AllToAll { .. }
        | Primitive::Ppermute { .. }
        | Primitive::AxisIndex { .. } => {
            super::collective_rules::batch(primitive, args, bdims, size)
        }
        Primitive::BitcastConvertType { .. } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            done(vec![bind1(primitive.clone(), &[&x])?], vec![Some(0)])
        }
        Primitive::Binary(_) | Primitive::Compare(_) => elementwise(primitive, args, bdims, size),
        Primitive::SelectN => select_n(primitive, args, bdims, size),
        Primitive::Clamp => clamp(primitive, args, bdims, size),
        Primitive::Iota { .. } => Err(rule_error(
            "vmap",
            primitive,
            "iota has no operands, so it is never batched",
        )),
        Primitive::BroadcastInDim {
            shape,
            broadcast_dimensions,
        } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            let mut new_shape = vec![size];
            new_shape.extend_from_slice(shape);
            let mut dims = vec![0];
            dims.extend(broadcast_dimensions.iter().map(|d| d + 1));
            done(
                vec![lax::broadcast_in_dim(&x, &new_shape, &dims)],
                vec![Some(0)],
            )
        }
        Primitive::Reshape { new_sizes } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            let mut new_shape = vec![size];
            new_shape.extend_from_slice(new_sizes);
            done(vec![lax::reshape(&x, &new_shape)], vec![Some(0)])
        }
        Primitive::Transpose { permutation } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let mut perm = vec![b as i64];
            perm.extend(permutation.iter().map(|&p| to_batched(p, b)));
            done(vec![lax::transpose(&x, &perm)], vec![Some(0)])
        }
        Primitive::Squeeze { dimensions } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let dims = axes_to_batched(dimensions, b);
            let out_b = bdim_after_removing(&dims, b);
            done(vec![lax::squeeze(&x, &dims)], vec![Some(out_b)])
        }
        Primitive::Rev { dimensions } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let dims = axes_to_batched(dimensions, b);
            done(vec![lax::rev(&x, &dims)], vec![Some(b)])
        }
        Primitive::Split { axis, sizes } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axis = to_batched(*axis as i64, b) as usize;
            let pieces = lax::split(&x, sizes, axis as i64);
            let n = pieces.len();
            done(pieces, vec![Some(b); n])
        }
        Primitive::Concatenate { dimension } => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| batch_at(x, bd, size, 0))
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            done(vec![lax::concatenate(&refs, dimension + 1)], vec![Some(0)])
        }
        Primitive::Pad { config } => pad(config, args, bdims, size),
        Primitive::Slice {
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
        Primitive::Reduce { op, axes } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axes = axes_to_batched(axes, b);
            let out_b = bdim_after_removing(&axes, b);
            let p = Primitive::Reduce { op: *op, axes };
            done(vec![bind1(p, &[&x])?], vec![Some(out_b)])
        }
        Primitive::DynamicSlice { slice_sizes } => {
            dynamic_slice(primitive, slice_sizes, args, bdims, size)
        }
        Primitive::DynamicUpdateSlice => dynamic_update_slice(primitive, args, bdims, size),
        Primitive::Cumulative { op, axis, reverse } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let p = Primitive::Cumulative {
                op: *op,
                axis: to_batched(*axis as i64, b) as usize,
                reverse: *reverse,
            };
            done(vec![bind1(p, &[&x])?], vec![Some(b)])
        }
        Primitive::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let p = Primitive::ReduceWindow {
                op: *op,
                window_dimensions: insert_at(window_dimensions, b, 1),
                window_strides: insert_at(window_strides, b, 1),
                padding: insert_at(padding, b, (0, 0)),
                base_dilation: insert_at(base_dilation, b, 1),
                window_dilation: insert_at(window_dilation, b, 1),
            };
            done(vec![bind1(p, &[&x])?], vec![Some(b)])
        }
        Primitive::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            let source = batch_at(&args[0], bdims[0], size, 0);
            let x = batch_at(&args[1], bdims[1], size, 0);
            let p = Primitive::SelectAndScatterAdd {
                window_dimensions: insert_at(window_dimensions, 0, 1),
                window_strides: insert_at(window_strides, 0, 1),
                padding: insert_at(padding, 0, (0, 0)),
            };
            done(vec![bind1(p, &[&source, &x])?], vec![Some(0)])
        }
        Primitive::ArgMinMax {
            op,
            axis,
            index_dtype,
        } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axis = to_batched(*axis as i64, b);
            let out_b = bdim_after_removing(&[axis], b);
            let p = Primitive::ArgMinMax {
                op: *op,
                axis: axis as usize,
                index_dtype: *index_dtype,
            };
            done(vec![bind1(p, &[&x])?], vec![Some(out_b)])
        }
        Primitive::ReduceWith { computation, axes } => {
            super::reduce_with_rules::batch(primitive, computation, axes, args, bdims, size)
        }
        Primitive::Sort {
            dimension,
            is_stable,
            num_keys,
        } => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| batch_at(x, bd, size, 0))
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            let p = Primitive::Sort {
                dimension: dimension + 1,
                is_stable: *is_stable,
                num_keys: *num_keys,
            };
            let outs = bind_all(p, &refs)?;
            let out_bdims = vec![Some(0); outs.len()];
            done(outs, out_bdims)
        }
        Primitive::TopK { .. } => {
            let (mut x, mut b) = operand(&args[0], bdims[0], size);
            if b + 1 == x.ndim_or_zero() {
                x = move_axis(&x, b, 0);
                b = 0;
            }
            let outs = bind_all(primitive.clone(), &[&x])?;
            let out_bdims = vec![Some(b); outs.len()];
            done(outs, out_bdims)
        }
        Primitive::ConvGeneralDilated { .. } => conv(primitive, args, bdims, size),
        Primitive::Gather {
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
        Primitive::Scatter {
            op,
            dimension_numbers,
        } => {
            let out = scatter_rule(*op, dimension_numbers, args, bdims, size)?;
            done(vec![out], vec![Some(0)])
        }
        Primitive::DotGeneral { .. } => dot_general(primitive, args, bdims),
        Primitive::OptimizationBarrier => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| match bd {
                    Some(b) => move_axis(x, b, 0),
                    None => x.clone(),
                })
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            let outs = bind_all(Primitive::OptimizationBarrier, &refs)?;
            let out_bdims = bdims.iter().map(|bd| bd.map(|_| 0)).collect();
            done(outs, out_bdims)
        }
        Primitive::Call { .. }
        | Primitive::Remat { .. }
        | Primitive::CustomJvpCall { .. }
        | Primitive::CustomVjpCall { .. }
        | Primitive::CustomLin { .. } => super::calls::batch(primitive, args, bdims, axis_size),
        Primitive::CallExported { .. } => per_example(primitive, args, bdims),
        Primitive::HostCallback { callback, results } => match callback.vmap_method {
            VmapMethod::Sequential => per_example(primitive, args, bdims),
            VmapMethod::ExpandDims | VmapMethod::BroadcastAll => {
                host_callback_batched(callback, results, args, bdims, axis_size)
            }
        },
        Primitive::Cond { branches } => {
            super::control::cond_batch(branches, args, bdims, axis_size)
        }
        Primitive::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => super::control::while_batch(
            cond_jaxpr,
            body_jaxpr,
            *cond_nconsts,
            *body_nconsts,
            args,
            bdims,
            axis_size,
        ),
        Primitive::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => super::control::scan_batch(
            &super::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            args,
            bdims,
            axis_size,
        ),
    }
}

/// The outputs with their batch dims, or the error one of them carries.
fn done(outs: Vec<Array>, out_bdims: Vec<Option<usize>>) -> Result<Batched> {
    for out in &outs {
        out.check()?;
    }
    Ok((outs, out_bdims))
}

/// The single output of `primitive` bound through the current trace.
#[track_caller]
fn bind1(primitive: Primitive, inputs: &[&Array]) -> Result<Array> {
    Ok(bind_all(primitive, inputs)?.swap_remove(0))
}

/// The operand with its batch dim (an unbatched one is broadcast to have
/// one at 0).
fn operand(x: &Array, bdim: Option<usize>, size: i64) -> (Array, usize) {
    match bdim {
        Some(b) => (x.clone(), b),
        None => (batch_at(x, None, size, 0), 0),
    }
}

/// The position of unbatched axis `axis` in the operand batched at `bdim`.
fn to_batched(axis: i64, bdim: usize) -> i64 {
    if axis >= bdim as i64 { axis + 1 } else { axis }
}

/// Unbatched axes as positions in the operand batched at `bdim`.
fn axes_to_batched(axes: &[i64], bdim: usize) -> Dims {
    axes.iter().map(|&a| to_batched(a, bdim)).collect()
}

/// Where the batch dim `bdim` ends up once the (batched) `axes` are gone.
fn bdim_after_removing(axes: &[i64], bdim: usize) -> usize {
    bdim - axes.iter().filter(|&&a| a < bdim as i64).count()
}

/// `values` with `value` inserted at `index`.
fn insert_at<T: Clone, R: FromIterator<T>>(values: &[T], index: usize, value: T) -> R {
    values[..index]
        .iter()
        .cloned()
        .chain(std::iter::once(value))
        .chain(values[index..].iter().cloned())
        .collect()
}

/// The shape of one batch element of `x`.
fn unbatched_shape(x: &Array, bdim: Option<usize>) -> Vec<i64> {
    let mut shape = x.shape_or_empty().to_vec();
    if let Some(b) = bdim {
        shape.remove(b);
    }
    shape
}

/// One-operand elementwise primitives: applied as they are, the batch dim
/// staying where it is.
fn same_bdim_unary(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (x, b) = operand(&args[0], bdims[0], size);
    done(vec![bind1(primitive.clone(), &[&x])?], vec![Some(b)])
}

/// A sharding constraint on a batched operand: the batch dimension is
/// split over the vmap's `spmd_axis_name` mesh axes, or not at all (JAX
/// inserts `None` for it too).
fn sharding_constraint(
    sharding: &oxla_core::ShardingDesc,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (x, b) = operand(&args[0], bdims[0], size);
    let spmd_axes = super::batching::rule_axis(size)
        .spmd_axis_name
        .unwrap_or_else(|| std::sync::Arc::from(Vec::new()));
    if let Some(missing) = spmd_axes
        .iter()
        .find(|a| sharding.mesh.axis_size(a).is_none())
    {
        return Err(rule_error(
            "vmap",
            &Primitive::ShardingConstraint {
                sharding: sharding.clone(),
            },
            format!(
                "spmd_axis_name names '{missing}', which {} lacks",
                sharding.mesh
            ),
        ));
    }
    let batched = Primitive::ShardingConstraint {
        sharding: sharding.with_dim_inserted(b, spmd_axes),
    };
    done(vec![bind1(batched, &[&x])?], vec![Some(b)])
}

/// The common batch dim when every batched operand has it and one shape,
/// and every unbatched operand is a scalar that may stay one
/// (`scalar_ok(i)`): then the primitive applies as it is.
fn shared_bdim(
    args: &[Array],
    bdims: &[Option<usize>],
    scalar_ok: impl Fn(usize) -> bool,
) -> Option<usize> {
    let (first, b) = args
        .iter()
        .zip(bdims)
        .find_map(|(x, bd)| bd.map(|b| (x, b)))?;
    let fits = args
        .iter()
        .zip(bdims)
        .enumerate()
        .all(|(i, (x, bd))| match bd {
            Some(d) => *d == b && x.shape_or_empty() == first.shape_or_empty(),
            None => x.ndim_or_zero() == 0 && scalar_ok(i),
        });
    fits.then_some(b)
}

/// Binary elementwise ops and comparisons: batched operands get their batch
/// dim at 0, unbatched ones a size-1 leading dim (rank-0 ones stay), and a
/// batched operand that was rank 0 becomes [B, 1, ..., 1] so that every
/// operand has the same rank (oxla broadcasts only at equal ranks).
fn elementwise(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let refs: Vec<&Array> = args.iter().collect();
    if let Some(b) = shared_bdim(args, bdims, |_| true) {
        return done(vec![bind1(primitive.clone(), &refs)?], vec![Some(b)]);
    }
    let rank = args
        .iter()
        .zip(bdims)
        .map(|(x, bd)| x.ndim_or_zero() - usize::from(bd.is_some()))
        .max()
        .unwrap_or(0);
    let xs: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, &bd)| match bd {
            Some(b) => {
                let moved = move_axis(x, b, 0);
                if moved.ndim_or_zero() == 1 && rank > 0 {
                    let mut shape = vec![1; rank + 1];
                    shape[0] = size;
                    lax::reshape(&moved, &shape)
                } else {
                    moved
                }
            }
            None if x.ndim_or_zero() == 0 => x.clone(),
            None => {
                let mut shape = vec![1];
                shape.extend_from_slice(x.shape_or_empty());
                lax::reshape(x, &shape)
            }
        })
        .collect();
    let refs: Vec<&Array> = xs.iter().collect();
    done(vec![bind1(primitive.clone(), &refs)?], vec![Some(0)])
}

/// An operand that may be rank 0 next to one of `full_shape` (a select_n
/// selector, a clamp bound): an unbatched scalar stays one; otherwise it
/// gets its batch dim at 0 and the full shape [B, ...full_shape].
fn scalar_or_full(x: &Array, bdim: Option<usize>, size: i64, full_shape: &[i64]) -> Array {
    if bdim.is_none() && x.ndim_or_zero() == 0 {
        return x.clone();
    }
    let y = batch_at(x, bdim, size, 0);
    if y.ndim_or_zero() == 1 && !full_shape.is_empty() {
        let mut shape = vec![size];
        shape.extend_from_slice(full_shape);
        lax::broadcast_in_dim(&y, &shape, &[0])
    } else {
        y
    }
}

/// select_n: the cases (one shape) all get their batch dim at 0; the
/// selector stays an unbatched scalar or gets the cases' full shape.
fn select_n(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Some(b) = shared_bdim(args, bdims, |i| i == 0) {
        let refs: Vec<&Array> = args.iter().collect();
        return done(vec![bind1(primitive.clone(), &refs)?], vec![Some(b)]);
    }
    let case_shape = unbatched_shape(&args[1], bdims[1]);
    let mut xs = vec![scalar_or_full(&args[0], bdims[0], size, &case_shape)];
    xs.extend(
        args[1..]
            .iter()
            .zip(&bdims[1..])
            .map(|(x, &bd)| batch_at(x, bd, size, 0)),
    );
    let refs: Vec<&Array> = xs.iter().collect();
    done(vec![bind1(primitive.clone(), &refs)?], vec![Some(0)])
}

/// clamp(lo, x, hi): x gets its batch dim at 0; each bound stays an
/// unbatched scalar or gets x's full shape.
fn clamp(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Some(b) = shared_bdim(args, bdims, |i| i != 1) {
        let refs: Vec<&Array> = args.iter().collect();
        return done(vec![bind1(primitive.clone(), &refs)?], vec![Some(b)]);
    }
    let x_shape = unbatched_shape(&args[1], bdims[1]);
    let lo = scalar_or_full(&args[0], bdims[0], size, &x_shape);
    let x = batch_at(&args[1], bdims[1], size, 0);
    let hi = scalar_or_full(&args[2], bdims[2], size, &x_shape);
    done(
        vec![bind1(primitive.clone(), &[&lo, &x, &hi])?],
        vec![Some(0)],
    )
}

/// pad: an unbatched padding value pads the operand with no padding of the
/// batch dim; a batched one (as JAX) pads with zero and selects the value
/// where a mask of the padded positions says so.
fn pad(
    config: &[(i64, i64, i64)],
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (value, value_bdim) = (&args[1], bdims[1]);
    if value_bdim.is_none() {
        let (x, b) = operand(&args[0], bdims[0], size);
        let config: Vec<_> = insert_at(config, b, (0, 0, 0));
        return done(vec![lax::pad(&x, value, &config)], vec![Some(b)]);
    }
    let x = batch_at(&args[0], bdims[0], size, 0);
    let config: Vec<_> = insert_at(config, 0, (0, 0, 0));
    let dtype = x.dtype_or_bool();
    let padded = lax::pad(&x, &literal(0.0, dtype, false), &config);
    padded.check()?;
    let ones = super::support::full(&Aval::new(DType::Bool, x.shape_or_empty()), 1.0);
    let mask = lax::pad(&ones, &literal(0.0, DType::Bool, false), &config);
    let value = batch_at(value, value_bdim, size, 0);
    let value = lax::broadcast_in_dim(&value, padded.shape_or_empty(), &[0]);
    done(
        vec![lax::select_n(&mask, &[&value, &padded])],
        vec![Some(0)],
    )
}

/// The one index dtype of start indices (i32 when there are none; the
/// widest integer type when they differ).
fn index_dtype(indices: &[Array]) -> DType {
    match indices.first() {
        None => DType::I32,
        Some(first)
            if indices
                .iter()
                .all(|i| i.dtype_or_bool() == first.dtype_or_bool()) =>
        {
            first.dtype_or_bool()
        }
        Some(_) if indices.iter().any(|i| i.dtype_or_bool().byte_size() == 8) => DType::I64,
        Some(_) => DType::I32,
    }
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

/// dynamic_slice: with unbatched indices, a zero start and the whole batch
/// for the batch dim; with batched ones, a gather (clip mode clamps as
/// dynamic_slice does), as JAX.
fn dynamic_slice(
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
        let p = Primitive::DynamicSlice {
            slice_sizes: insert_at(slice_sizes, b, size),
        };
        return done(vec![bind1(p, &inputs)?], vec![Some(b)]);
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

/// dynamic_update_slice: with unbatched indices, a zero start for the batch
/// dim; with batched ones, a scatter of each batch element's update at its
/// start indices, clamped so the update fits (as dynamic_update_slice
/// clamps), as JAX.
fn dynamic_update_slice(
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
        return done(vec![bind1(primitive.clone(), &inputs)?], vec![Some(b)]);
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

/// Zeros of the outputs' types with an empty batch dim at 0 (for a batch
/// of size 0, which gathers and convolutions cannot express by reshaping).
fn empty_batch(primitive: &Primitive, args: &[Array], bdims: &[Option<usize>]) -> Result<Batched> {
    let avals: Vec<Aval> = args
        .iter()
        .zip(bdims)
        .map(|(x, &bd)| {
            let mut aval = x.aval()?.clone();
            aval.shape = unbatched_shape(x, bd).into_iter().collect();
            Ok(aval)
        })
        .collect::<Result<_>>()?;
    let refs: Vec<&Aval> = avals.iter().collect();
    let outs = abstract_eval(primitive, &refs).map_err(|m| rule_error("vmap", primitive, m))?;
    let outs: Vec<Array> = outs
        .iter()
        .map(|aval| {
            let mut shape = vec![0];
            shape.extend_from_slice(&aval.shape);
            zeros(&aval.with_shape(&shape))
        })
        .collect();
    let out_bdims = vec![Some(0); outs.len()];
    done(outs, out_bdims)
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
    let p = Primitive::Gather {
        dimension_numbers: dnums,
        slice_sizes,
        mode: g.mode,
        fill_value: g.fill_value,
    };
    let out_bdim = x_bdim.or(indices_bdim).map(|_| 0);
    Ok((bind1(p, &[&x, &indices])?, out_bdim))
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
    let p = Primitive::Scatter {
        op,
        dimension_numbers: dnums,
    };
    bind1(p, &[&x, &indices, &updates])
}

/// JAX's dot_general batching rule: both batched, the batch dims become a
/// new leading dot batch dim; one batched, its batch dim is a free dim of
/// that side, which says where it lands in the result.
fn dot_general(primitive: &Primitive, args: &[Array], bdims: &[Option<usize>]) -> Result<Batched> {
    let Primitive::DotGeneral {
        lhs_contracting,
        rhs_contracting,
        lhs_batch,
        rhs_batch,
        preferred_element_type,
        precision,
    } = primitive
    else {
        return Err(rule_error("vmap", primitive, "not a dot_general"));
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
    let p = Primitive::DotGeneral {
        lhs_contracting: lc,
        rhs_contracting: rc,
        lhs_batch: lb,
        rhs_batch: rb,
        preferred_element_type: *preferred_element_type,
        precision: *precision,
    };
    done(vec![bind1(p, &[&args[0], &args[1]])?], vec![out_bdim])
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

/// JAX's `_reshape_axis_into`: dim `src` of `x` merged into dim `dst` (of
/// the dims without `src`) as its major part.
fn reshape_axis_into(src: usize, dst: usize, x: &Array) -> Array {
    let shape = x.shape_or_empty().to_vec();
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
    let identity = perm.iter().enumerate().all(|(i, &p)| p == i as i64);
    let moved = if identity {
        x.clone()
    } else {
        lax::transpose(x, &perm)
    };
    lax::reshape(&moved, &new_shape)
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
    let Primitive::ConvGeneralDilated {
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers: dn,
        feature_group_count,
        batch_group_count,
        preferred_element_type,
    } = primitive
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
        let p = Primitive::ConvGeneralDilated {
            window_strides: window_strides.clone(),
            padding: padding.clone(),
            lhs_dilation: lhs_dilation.clone(),
            rhs_dilation: rhs_dilation.clone(),
            dimension_numbers: dn.clone(),
            feature_group_count: fgc,
            batch_group_count: bgc,
            preferred_element_type: *preferred_element_type,
        };
        bind1(p, &[lhs, rhs])
    };
    let spec = |s: &Dims, i: usize| s[i] as usize;
    let (lhs_n, lhs_c) = (spec(&dn.lhs_spec, 0), spec(&dn.lhs_spec, 1));
    let rhs_o = spec(&dn.rhs_spec, 0);
    let (out_n, out_c) = (spec(&dn.out_spec, 0), spec(&dn.out_spec, 1));
    let (fgc, bgc) = (*feature_group_count, *batch_group_count);
    let (out, out_bdim) = match (bdims[0], bdims[1]) {
        (Some(lb), Some(rb)) => {
            let (new_lhs, fgc, bgc) = if bgc > 1 {
                (reshape_axis_into(lb, lhs_n, lhs), fgc, bgc * size)
            } else {
                (reshape_axis_into(lb, lhs_c, lhs), fgc * size, bgc)
            };
            let new_rhs = reshape_axis_into(rb, rhs_o, rhs);
            let out = conv_with(&new_lhs, &new_rhs, fgc, bgc)?;
            (
                super::support::reshape_axis_out_of(out_c, size, &out).0,
                Some(out_c),
            )
        }
        (Some(lb), None) => {
            let new_lhs = if bgc == 1 {
                reshape_axis_into(lb, lhs_n, lhs)
            } else {
                let split =
                    super::support::reshape_axis_out_of(lhs_n + usize::from(lb <= lhs_n), bgc, lhs)
                        .0;
                let merged = reshape_axis_into(lb + usize::from(lhs_n < lb), lhs_n + 1, &split);
                reshape_axis_into(lhs_n, lhs_n, &merged)
            };
            let out = conv_with(&new_lhs, rhs, fgc, bgc)?;
            (
                super::support::reshape_axis_out_of(out_n, size, &out).0,
                Some(out_n),
            )
        }
        (None, Some(rb)) => {
            if fgc == 1 && bgc == 1 {
                let new_rhs = reshape_axis_into(rb, rhs_o, rhs);
                let out = conv_with(lhs, &new_rhs, fgc, bgc)?;
                (
                    super::support::reshape_axis_out_of(out_c, size, &out).0,
                    Some(out_c),
                )
            } else {
                let groups = if fgc > 1 { fgc } else { bgc };
                let split = super::support::reshape_axis_out_of(
                    rhs_o + usize::from(rb <= rhs_o),
                    groups,
                    rhs,
                )
                .0;
                let merged = reshape_axis_into(rb + usize::from(rhs_o < rb), rhs_o + 1, &split);
                let new_rhs = reshape_axis_into(rhs_o, rhs_o, &merged);
                let out = conv_with(lhs, &new_rhs, fgc, bgc)?;
                let out = super::support::reshape_axis_out_of(out_c, groups, &out).0;
                let out = super::support::reshape_axis_out_of(out_c + 1, size, &out).0;
                (reshape_axis_into(out_c, out_c + 1, &out), Some(out_c))
            }
        }
        (None, None) => (conv_with(lhs, rhs, fgc, bgc)?, None),
    };
    done(vec![out], vec![out_bdim])
}

/// An exported function batched by calling it once per example (a `map`
/// over the batch axis, one loop inside the program): its module has fixed
/// shapes, so it cannot take the batch axis itself.
fn per_example(primitive: &Primitive, args: &[Array], bdims: &[Option<usize>]) -> Result<Batched> {
    let batched: Vec<Array> = args
        .iter()
        .zip(bdims)
        .filter_map(|(x, bd)| bd.map(|d| move_axis(x, d, 0)))
        .collect();
    if batched.is_empty() {
        let refs: Vec<&Array> = args.iter().collect();
        let outs = bind_all(primitive.clone(), &refs)?;
        let n = outs.len();
        return Ok((outs, vec![None; n]));
    }
    let outs = crate::control::map(
        |slices: Vec<Array>| {
            let mut slices = slices.into_iter();
            let operands: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, bd)| match bd {
                    Some(_) => slices.next().unwrap_or_else(|| x.clone()),
                    None => x.clone(),
                })
                .collect();
            let refs: Vec<&Array> = operands.iter().collect();
            bind_all(primitive.clone(), &refs)
        },
        batched,
    )?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}

/// A host callback called once on the whole batch (`vmap_method`
/// `expand_dims` or `broadcast_all`): the batched operands with the batch
/// leading, the others with a leading axis of 1 (`expand_dims`) or
/// broadcast to the batch (`broadcast_all`); the callback returns results
/// with the batch leading.
fn host_callback_batched(
    callback: &oxla_core::HostCallback,
    results: &[Aval],
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<Batched> {
    let operands: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, bd)| match (bd, callback.vmap_method) {
            (Some(d), _) => Ok(move_axis(x, *d, 0)),
            (None, VmapMethod::BroadcastAll) => {
                let aval = x.aval()?;
                let mut shape = vec![axis_size];
                shape.extend_from_slice(&aval.shape);
                let dims: Vec<i64> = (1..shape.len() as i64).collect();
                Ok(lax::broadcast_in_dim(x, &shape, &dims))
            }
            (None, _) => Ok(lax::expand_dims(x, &[0])),
        })
        .collect::<Result<_>>()?;
    let batched_results = results
        .iter()
        .map(|a| {
            let mut shape = vec![axis_size];
            shape.extend_from_slice(&a.shape);
            Aval::new(a.dtype, &shape)
        })
        .collect();
    let primitive = Primitive::HostCallback {
        callback: callback.clone(),
        results: batched_results,
    };
    let refs: Vec<&Array> = operands.iter().collect();
    let outs = bind_all(primitive, &refs)?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}
