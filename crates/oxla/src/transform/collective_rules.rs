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

use oxla_core::primitive::collective;
use oxla_core::{AxisGroup, Primitive, ReduceOp};

use super::support::{Tangent, bind_all, move_axis, rule_error};
use super::transpose::Operand;
use crate::array::Array;
use crate::error::Result;
use crate::lax;

fn bind1(primitive: Primitive, x: &Array) -> Result<Array> {
    let name = primitive.name();
    bind_all(primitive, &[x])?
        .into_iter()
        .next()
        .ok_or_else(|| {
            crate::error::Error::InvalidArgument(format!("internal: {name} gave nothing"))
        })
}

fn psum(group: &AxisGroup, x: &Array) -> Result<Array> {
    bind1(
        Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group: group.clone(),
        }),
        x,
    )
}

/// The primal output and output tangent of a collective.
pub(crate) fn jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    if let Primitive::Collective(collective::Op::AxisIndex { .. }) = primitive {
        return Ok((bind_all(primitive.clone(), &[])?, vec![None]));
    }
    let x = &primals[0];
    let out = bind1(primitive.clone(), x)?;
    let Some(t) = tangents.first().cloned().flatten() else {
        return Ok((vec![out], vec![None]));
    };
    let tangent = match primitive {
        Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Max | ReduceOp::Min,
            group,
        }) => {
            let at_extreme =
                lax::convert_element_type_weak(&lax::eq(x, &out), t.dtype_or_bool(), t.weak_type());
            psum(group, &(&t * &at_extreme))? / psum(group, &at_extreme)?
        }
        Primitive::Collective(collective::Op::AllReduce { .. })
        | Primitive::Collective(collective::Op::AllGather { .. })
        | Primitive::Collective(collective::Op::ReduceScatter { .. })
        | Primitive::Collective(collective::Op::AllToAll { .. })
        | Primitive::Collective(collective::Op::Ppermute { .. }) => bind1(primitive.clone(), &t)?,
        _ => return Err(rule_error("jvp", primitive, "internal: not a collective")),
    };
    Ok((vec![out], vec![Some(tangent)]))
}

/// The cotangent of a collective's operand from its output's `ct`.
pub(crate) fn transpose(
    primitive: &Primitive,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let Some(Operand::Linear(operand)) = operands.first() else {
        return Ok(vec![None; operands.len()]);
    };
    let transposed = match primitive {
        // Inside a shard_map with varying axes, psum makes a varying value
        // replicated, and its transpose hands each device the cotangent
        // (JAX's psum_invariant → pvary); without them, psum → psum.
        Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group,
        }) if group.axes.iter().any(|a| operand.vma.contains(a)) => {
            Primitive::Collective(collective::Op::Pvary {
                group: group.clone(),
            })
        }
        Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group,
        }) => Primitive::Collective(collective::Op::AllReduce {
            op: ReduceOp::Sum,
            group: group.clone(),
        }),
        Primitive::Collective(collective::Op::AllGather {
            group,
            dim,
            tiled,
            invariant: true,
        }) => return Ok(vec![Some(own_slice(group, *dim, *tiled, ct)?)]),
        Primitive::Collective(collective::Op::AllGather {
            group,
            dim,
            tiled,
            invariant: false,
        }) => Primitive::Collective(collective::Op::ReduceScatter {
            group: group.clone(),
            dim: *dim,
            tiled: *tiled,
        }),
        Primitive::Collective(collective::Op::ReduceScatter { group, dim, tiled }) => {
            Primitive::Collective(collective::Op::AllGather {
                group: group.clone(),
                dim: *dim,
                tiled: *tiled,
                invariant: false,
            })
        }
        Primitive::Collective(collective::Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        }) => Primitive::Collective(collective::Op::AllToAll {
            group: group.clone(),
            split_dim: *concat_dim,
            concat_dim: *split_dim,
        }),
        Primitive::Collective(collective::Op::Ppermute { group, perm }) => {
            Primitive::Collective(collective::Op::Ppermute {
                group: group.clone(),
                perm: perm.iter().map(|&(s, d)| (d, s)).collect(),
            })
        }
        Primitive::Collective(collective::Op::AllReduce { .. })
        | Primitive::Collective(collective::Op::AxisIndex { .. }) => {
            return Err(rule_error(
                "transpose",
                primitive,
                "is not linear, so it cannot be transposed",
            ));
        }
        _ => {
            return Err(rule_error(
                "transpose",
                primitive,
                "internal: not a collective",
            ));
        }
    };
    Ok(vec![Some(bind1(transposed, ct)?)])
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
/// dimension ([`super::vmap_collectives`]). Over other axes, it runs per
/// example: elementwise ones keep the batch dimension where it is; the
/// others get it in front, their dimensions shifted by one.
pub(crate) fn batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let axis = super::batching::rule_axis(size);
    if let (Some(name), Some(own)) = (
        primitive.axis_group().and_then(AxisGroup::vmap_axis),
        &axis.name,
    ) && name == own
    {
        return super::vmap_collectives::batch(primitive, args, bdims, size);
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
    let (out, bdim) = match primitive {
        Primitive::Collective(collective::Op::AllReduce { .. })
        | Primitive::Collective(collective::Op::Ppermute { .. }) => {
            (bind1(primitive.clone(), x)?, b)
        }
        Primitive::Collective(collective::Op::AllGather {
            group,
            dim,
            tiled,
            invariant,
        }) => (
            bind1(
                Primitive::Collective(collective::Op::AllGather {
                    group: group.clone(),
                    dim: dim + 1,
                    tiled: *tiled,
                    invariant: *invariant,
                }),
                &front(),
            )?,
            0,
        ),
        Primitive::Collective(collective::Op::ReduceScatter { group, dim, tiled }) => (
            bind1(
                Primitive::Collective(collective::Op::ReduceScatter {
                    group: group.clone(),
                    dim: dim + 1,
                    tiled: *tiled,
                }),
                &front(),
            )?,
            0,
        ),
        Primitive::Collective(collective::Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        }) => (
            bind1(
                Primitive::Collective(collective::Op::AllToAll {
                    group: group.clone(),
                    split_dim: split_dim + 1,
                    concat_dim: concat_dim + 1,
                }),
                &front(),
            )?,
            0,
        ),
        Primitive::Collective(collective::Op::AxisIndex { .. }) => {
            (bind_all(primitive.clone(), &[])?.remove(0), b)
        }
        _ => return Err(rule_error("vmap", primitive, "internal: not a collective")),
    };
    Ok((vec![out], vec![Some(bdim)]))
}
