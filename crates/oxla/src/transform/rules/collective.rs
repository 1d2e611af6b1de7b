//! The jvp, transpose and batching rules of the collective family
//! (`oxla_core::primitive::collective`).
//!
//! Collectives over a named `vmap` axis, computed by that `vmap`'s
//! batching rule along the batch dimension (JAX's batchers in
//! `jax/_src/lax/parallel.py`): the examples of the batch play the part of
//! the devices of a group. A reduction (`psum`, `pmax`, `pmin`) and
//! `all_gather` give a value every example shares (unbatched);
//! `psum_scatter`, `all_to_all`, `ppermute` and `axis_index` give one per
//! example. An operand that does not depend on the batch is the same in
//! every example: its `psum` is `n` times it.
//!
//! jvp, transpose and batching rules of the collectives (JAX's rules in
//! `jax/_src/lax/parallel.py`): psum, all_gather, psum_scatter, all_to_all
//! and ppermute are linear; psum of a varying value (a `shard_map` that
//! checks varying axes) transposes to pvary, and otherwise to psum (with
//! `shard_map` scaling the cotangents of replicated results and summing
//! those of replicated operands, as JAX's shard_map does with
//! `check_vma=False`), all_gather and psum_scatter transpose to each other, all_to_all
//! to itself with the dimensions swapped, ppermute to the inverse
//! permutation. pmax and pmin pass the tangent of the devices holding the
//! extreme (averaged over ties).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::same_bdim_unary;
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{finish, single};
use crate::transform::support;
use crate::transform::support::{
    Tangent, batch_at, bind_all, internal_error, literal, move_axis, refs, rule_error, zeros,
};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::for_linear;
use oxla_core::primitive::collective;
use oxla_core::primitive::collective::Op;
use oxla_core::{AxisGroup, DType, Primitive, ReduceOp};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => {
            return collective_jvp(op, primitive, primals, tangents);
        }
        // Linear: the tangent is laid out (or varies) as the value does.
        Op::Pvary { .. } => {
            let out = support::bind_one(primitive, &refs(primals))?;
            let tangent = match tangents.first().cloned().flatten() {
                Some(t) => Some(support::bind_one(primitive, &[&t])?),
                None => None,
            };
            single(out, tangent)
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
        ..
    } = *input;
    match op {
        // JAX's pvary transpose: the cotangent summed over the axes the
        // value was made to vary over.
        Op::Pvary { group } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(
                Primitive::Collective(collective::Op::AllReduce {
                    op: oxla_core::ReduceOp::Sum,
                    group: group.clone(),
                }),
                &[ct],
            )))
        }),
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => collective_transpose(op, primitive, ct, operands),
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
        Op::Pvary { .. } => same_bdim_unary(primitive, args, bdims, size),
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. }
        | Op::AxisIndex { .. } => collective_batch(op, primitive, args, bdims, size),
    }
}

/// Outputs and their batch dims.
type Batched = (Vec<Array>, Vec<Option<usize>>);

/// `primitive`, a collective over the `vmap` axis of `size` examples, on
/// the operand batched at `bdims[0]` (none for `axis_index`).
pub(crate) fn vmap_axis_batch(
    op: &Op,
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Op::AxisIndex { .. } = op {
        return Ok((vec![lax::iota(DType::I32, &[size], 0)], vec![Some(0)]));
    }
    let (Some(x), Some(&bdim)) = (args.first(), bdims.first()) else {
        return Err(internal_error("vmap", primitive, "no operand"));
    };
    let (out, out_bdim) = match op {
        Op::AllReduce { op, .. } => (reduce(primitive, *op, x, bdim, size)?, None),
        Op::AllGather { dim, tiled, .. } => {
            let stacked = batch_at(x, bdim, size, *dim);
            let out = if *tiled {
                merge_with_next(&stacked, *dim)?
            } else {
                stacked
            };
            (out, None)
        }
        Op::ReduceScatter { dim, tiled, .. } => {
            let summed = reduce(primitive, ReduceOp::Sum, x, bdim, size)?;
            let extent = summed.aval()?.shape.get(*dim).copied();
            let out = match (*tiled, extent) {
                (false, Some(e)) if e == size => summed,
                (true, Some(e)) if e % size == 0 => split_dim(&summed, *dim, size)?,
                (_, e) => {
                    return Err(rule_error(
                        "vmap",
                        primitive,
                        format!(
                            "dimension {dim} of the operand has {} elements, which the vmap \
                             axis of {size} examples cannot scatter{}",
                            e.map_or("no".to_string(), |e| e.to_string()),
                            if *tiled {
                                " evenly"
                            } else {
                                " one each (it needs exactly that many)"
                            }
                        ),
                    ));
                }
            };
            (out, Some(*dim))
        }
        Op::AllToAll {
            split_dim,
            concat_dim,
            ..
        } => (
            all_to_all(primitive, x, bdim, size, *split_dim, *concat_dim)?,
            Some(0),
        ),
        Op::Ppermute { perm, .. } => ppermute(x, bdim, size, perm)?,
        Op::Pvary { .. } | Op::AxisIndex { .. } => {
            return Err(internal_error("vmap", primitive, "not a collective"));
        }
    };
    Ok((vec![out], vec![out_bdim]))
}

/// The reduction `op` over the examples: along the batch dimension, or
/// of `n` equal values for an unbatched operand.
fn reduce(
    primitive: &Primitive,
    op: ReduceOp,
    x: &Array,
    bdim: Option<usize>,
    size: i64,
) -> Result<Array> {
    Ok(match (op, bdim) {
        (ReduceOp::Sum, Some(b)) => lax::reduce_sum(x, &[b as i64]),
        (ReduceOp::Max, Some(b)) => lax::reduce_max(x, &[b as i64]),
        (ReduceOp::Min, Some(b)) => lax::reduce_min(x, &[b as i64]),
        (ReduceOp::Sum, None) => {
            let aval = x.aval()?;
            lax::mul(x, &literal(size as f64, aval.dtype, true))
        }
        (ReduceOp::Max | ReduceOp::Min, None) => x.clone(),
        (ReduceOp::Prod | ReduceOp::And | ReduceOp::Or, _) => {
            return Err(rule_error(
                "vmap",
                primitive,
                format!("{op:?} is not a collective reduction"),
            ));
        }
    })
}

/// `x` with dimensions `dim` and `dim + 1` merged into one.
fn merge_with_next(x: &Array, dim: usize) -> Result<Array> {
    let mut shape = x.aval()?.shape.clone();
    let inner = shape.remove(dim + 1);
    shape[dim] *= inner;
    Ok(lax::reshape(x, &shape))
}

/// `x` with dimension `dim` split into `(parts, extent / parts)`.
fn split_dim(x: &Array, dim: usize, parts: i64) -> Result<Array> {
    let mut shape = x.aval()?.shape.clone();
    let extent = shape[dim];
    shape[dim] = extent / parts;
    shape.insert(dim, parts);
    Ok(lax::reshape(x, &shape))
}

/// Example `j` splits `split_dim` into one block per example and sends
/// block `i` to example `i`, which concatenates the blocks it gets, in
/// the order of `j`, along `concat_dim`: batched at 0.
fn all_to_all(
    primitive: &Primitive,
    x: &Array,
    bdim: Option<usize>,
    size: i64,
    split: usize,
    concat: usize,
) -> Result<Array> {
    // [j, ...]: the sender first.
    let senders = batch_at(x, bdim, size, 0);
    let extent = senders.aval()?.shape.get(split + 1).copied().unwrap_or(0);
    if extent % size != 0 {
        return Err(rule_error(
            "vmap",
            primitive,
            format!(
                "dimension {split} of the operand has {extent} elements, which the vmap axis of \
                 {size} examples cannot split evenly"
            ),
        ));
    }
    // [j, ..., i, block, ...] → [i, j, ..., block, ...]: the receiver first.
    let blocks = split_dim(&senders, split + 1, size)?;
    let receivers = move_axis(&blocks, split + 1, 0);
    // Each receiver's blocks in sender order, just before `concat`, merged.
    let before_concat = move_axis(&receivers, 1, concat + 1);
    merge_with_next(&before_concat, concat + 1)
}

/// Example `src` sends its `x` to example `dst` for each `(src, dst)`;
/// an example nobody sends to gets zeros.
fn ppermute(
    x: &Array,
    bdim: Option<usize>,
    size: i64,
    perm: &[(usize, usize)],
) -> Result<(Array, Option<usize>)> {
    let mut source: Vec<Option<usize>> = vec![None; size as usize];
    for &(src, dst) in perm {
        if let Some(slot) = source.get_mut(dst) {
            *slot = Some(src);
        }
    }
    if bdim.is_none() && source.iter().all(Option::is_some) {
        // Every example gets an equal value.
        return Ok((x.clone(), None));
    }
    let batched = batch_at(x, bdim, size, 0);
    let indices: Vec<i32> = source.iter().map(|s| s.unwrap_or(0) as i32).collect();
    let indices = Array::from_slice(&indices, &[size])?;
    let moved = crate::numpy::take(&batched, &indices, Some(0), true);
    if source.iter().all(Option::is_some) {
        return Ok((moved, Some(0)));
    }
    let received: Vec<bool> = source.iter().map(Option::is_some).collect();
    let received = Array::from_slice(&received, &[size])?;
    let aval = moved.aval()?.clone();
    let mask = lax::broadcast_in_dim(&received, &aval.shape, &[0]);
    Ok((lax::select_n(&mask, &[&zeros(&aval), &moved]), Some(0)))
}

fn psum(group: &AxisGroup, x: &Array) -> Result<Array> {
    support::bind_one(
        &Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group: group.clone(),
        }),
        &[x],
    )
}

/// The primal output and output tangent of a collective.
pub(crate) fn collective_jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    if let Op::AxisIndex { .. } = op {
        return Ok((bind_all(primitive.clone(), &[])?, vec![None]));
    }
    let x = &primals[0];
    let out = support::bind_one(primitive, &[x])?;
    let Some(t) = tangents.first().cloned().flatten() else {
        return Ok((vec![out], vec![None]));
    };
    let tangent = match op {
        Op::AllReduce {
            op: ReduceOp::Max | ReduceOp::Min,
            group,
        } => {
            let at_extreme =
                lax::convert_element_type_weak(&lax::eq(x, &out), t.dtype_or_bool(), t.weak_type());
            psum(group, &(&t * &at_extreme))? / psum(group, &at_extreme)?
        }
        Op::AllReduce { .. }
        | Op::AllGather { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::Ppermute { .. } => support::bind_one(primitive, &[&t])?,
        Op::Pvary { .. } | Op::AxisIndex { .. } => {
            return Err(internal_error("jvp", primitive, "not a collective"));
        }
    };
    Ok((vec![out], vec![Some(tangent)]))
}

/// The cotangent of a collective's operand from its output's `ct`.
pub(crate) fn collective_transpose(
    op: &Op,
    primitive: &Primitive,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let Some(Operand::Linear(operand)) = operands.first() else {
        return Ok(vec![None; operands.len()]);
    };
    let transposed = match op {
        // Inside a shard_map with varying axes, psum makes a varying value
        // replicated, and its transpose hands each device the cotangent
        // (JAX's psum_invariant → pvary); without them, psum → psum.
        Op::AllReduce {
            op: ReduceOp::Sum,
            group,
        } if group.axes.iter().any(|a| operand.vma.contains(a)) => {
            Primitive::Collective(collective::Op::Pvary {
                group: group.clone(),
            })
        }
        Op::AllReduce {
            op: ReduceOp::Sum,
            group,
        } => Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group: group.clone(),
        }),
        Op::AllGather {
            group,
            dim,
            tiled,
            invariant: true,
        } => return Ok(vec![Some(own_slice(group, *dim, *tiled, ct)?)]),
        Op::AllGather {
            group,
            dim,
            tiled,
            invariant: false,
        } => Primitive::Collective(collective::Op::ReduceScatter {
            group: group.clone(),
            dim: *dim,
            tiled: *tiled,
        }),
        Op::ReduceScatter { group, dim, tiled } => {
            Primitive::Collective(collective::Op::AllGather {
                group: group.clone(),
                dim: *dim,
                tiled: *tiled,
                invariant: false,
            })
        }
        Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => Primitive::Collective(collective::Op::AllToAll {
            group: group.clone(),
            split_dim: *concat_dim,
            concat_dim: *split_dim,
        }),
        Op::Ppermute { group, perm } => Primitive::Collective(collective::Op::Ppermute {
            group: group.clone(),
            perm: perm.iter().map(|&(s, d)| (d, s)).collect(),
        }),
        Op::AllReduce { .. } | Op::AxisIndex { .. } => {
            return Err(rule_error(
                "transpose",
                primitive,
                "is not linear, so it cannot be transposed",
            ));
        }
        Op::Pvary { .. } => {
            return Err(internal_error("transpose", primitive, "not a collective"));
        }
    };
    Ok(vec![Some(support::bind_one(&transposed, &[ct])?)])
}

/// The transpose of `all_gather_invariant`: this device's block of the
/// cotangent `ct` along `dim` (squeezed when the gather stacked), as JAX's
/// `dynamic_slice` at `axis_index * block`.
fn own_slice(group: &AxisGroup, dim: usize, tiled: bool, ct: &Array) -> Result<Array> {
    let extent = ct.aval()?.shape[dim];
    let block = extent / group.size() as i64;
    let index = bind_all(
        Primitive::Collective(collective::Op::AxisIndex {
            group: group.clone(),
        }),
        &[],
    )?
    .remove(0);
    let start = &index * block as i32;
    let slice = crate::lax::dynamic_slice_in_dim(ct, &start, block, dim as i64);
    if tiled {
        Ok(slice)
    } else {
        Ok(crate::lax::squeeze(&slice, &[dim as i64]))
    }
}

/// A collective on an operand batched at `bdims[0]` over `size` examples.
/// Over this `vmap`'s own named axis, it is computed along the batch
/// dimension ([`crate::transform::vmap_collectives`]). Over other axes, it runs per
/// example: elementwise ones keep the batch dimension where it is; the
/// others get it in front, their dimensions shifted by one.
pub(crate) fn collective_batch(
    op: &Op,
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let axis = crate::transform::batching::rule_axis(size);
    if let (Some(name), Some(own)) = (
        primitive.axis_group().and_then(AxisGroup::vmap_axis),
        &axis.name,
    ) && name == own
    {
        return vmap_axis_batch(op, primitive, args, bdims, size);
    }
    let (x, b) = match (args.first(), bdims.first().copied().flatten()) {
        (Some(x), Some(b)) => (x, b),
        _ => {
            return Ok((
                bind_all(primitive.clone(), &args.iter().collect::<Vec<_>>())?,
                vec![None],
            ));
        }
    };
    let front = || move_axis(x, b, 0);
    let (out, bdim) = match op {
        Op::AllReduce { .. } | Op::Ppermute { .. } => (support::bind_one(primitive, &[x])?, b),
        Op::AllGather {
            group,
            dim,
            tiled,
            invariant,
        } => (
            support::bind_one(
                &Primitive::Collective(collective::Op::AllGather {
                    group: group.clone(),
                    dim: dim + 1,
                    tiled: *tiled,
                    invariant: *invariant,
                }),
                &[&front()],
            )?,
            0,
        ),
        Op::ReduceScatter { group, dim, tiled } => (
            support::bind_one(
                &Primitive::Collective(collective::Op::ReduceScatter {
                    group: group.clone(),
                    dim: dim + 1,
                    tiled: *tiled,
                }),
                &[&front()],
            )?,
            0,
        ),
        Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => (
            support::bind_one(
                &Primitive::Collective(collective::Op::AllToAll {
                    group: group.clone(),
                    split_dim: split_dim + 1,
                    concat_dim: concat_dim + 1,
                }),
                &[&front()],
            )?,
            0,
        ),
        Op::AxisIndex { .. } => (bind_all(primitive.clone(), &[])?.remove(0), b),
        Op::Pvary { .. } => {
            return Err(internal_error("vmap", primitive, "not a collective"));
        }
    };
    Ok((vec![out], vec![Some(bdim)]))
}
