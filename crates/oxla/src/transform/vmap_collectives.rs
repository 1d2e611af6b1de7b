//! Collectives over a named `vmap` axis, computed by that `vmap`'s
//! batching rule along the batch dimension (JAX's batchers in
//! `jax/_src/lax/parallel.py`): the examples of the batch play the part of
//! the devices of a group. A reduction (`psum`, `pmax`, `pmin`) and
//! `all_gather` give a value every example shares (unbatched);
//! `psum_scatter`, `all_to_all`, `ppermute` and `axis_index` give one per
//! example. An operand that does not depend on the batch is the same in
//! every example: its `psum` is `n` times it.

use oxla_core::primitive::collective;
use oxla_core::{DType, Primitive, ReduceOp};

use super::support::{batch_at, literal, move_axis, rule_error, zeros};
use crate::array::Array;
use crate::error::Result;
use crate::lax;

/// Outputs and their batch dims.
type Batched = (Vec<Array>, Vec<Option<usize>>);

/// `primitive`, a collective over the `vmap` axis of `size` examples, on
/// the operand batched at `bdims[0]` (none for `axis_index`).
pub(crate) fn batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Primitive::Collective(collective::Op::AxisIndex { .. }) = primitive {
        return Ok((vec![lax::iota(DType::I32, &[size], 0)], vec![Some(0)]));
    }
    let (Some(x), Some(&bdim)) = (args.first(), bdims.first()) else {
        return Err(rule_error("vmap", primitive, "internal: no operand"));
    };
    let (out, out_bdim) = match primitive {
        Primitive::Collective(collective::Op::AllReduce { op, .. }) => {
            (reduce(primitive, *op, x, bdim, size)?, None)
        }
        Primitive::Collective(collective::Op::AllGather { dim, tiled, .. }) => {
            let stacked = batch_at(x, bdim, size, *dim);
            let out = if *tiled {
                merge_with_next(&stacked, *dim)?
            } else {
                stacked
            };
            (out, None)
        }
        Primitive::Collective(collective::Op::ReduceScatter { dim, tiled, .. }) => {
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
        Primitive::Collective(collective::Op::AllToAll {
            split_dim,
            concat_dim,
            ..
        }) => (
            all_to_all(primitive, x, bdim, size, *split_dim, *concat_dim)?,
            Some(0),
        ),
        Primitive::Collective(collective::Op::Ppermute { perm, .. }) => {
            ppermute(x, bdim, size, perm)?
        }
        _ => {
            return Err(rule_error("vmap", primitive, "internal: not a collective"));
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
