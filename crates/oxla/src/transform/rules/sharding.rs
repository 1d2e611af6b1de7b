//! The jvp, transpose and batching rules of the sharding family
//! (`oxla_core::primitive::sharding`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::transform::batch_rules::{Batched, done, operand};
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::{finish, refs, single};
use crate::transform::support;
use crate::transform::support::{Tangent, rule_error};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::for_linear;
use oxla_core::primitive::sharding;
use oxla_core::primitive::sharding::Op;
use oxla_core::{Aval, Primitive};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let result = match op {
        Op::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => {
            let params = crate::transform::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            };
            return crate::transform::shard_map_rules::jvp(&params, primals, tangents, ctx);
        }
        // Linear: the tangent is laid out (or varies) as the value does.
        Op::ShardingConstraint { .. } => {
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
pub(crate) fn transpose(
    op: &Op,
    primitive: &Primitive,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
    ct: &Array,
    _ct_shape: &[i64],
) -> Result<Vec<Tangent>> {
    match op {
        // The cotangent is laid out as the value was (as JAX transposes it).
        Op::ShardingConstraint { .. } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(primitive.clone(), &[ct])))
        }),
        Op::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => crate::transform::shard_map_rules::transpose(
            &crate::transform::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            },
            cts,
            operands,
            out_avals,
        ),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(
    op: &Op,
    _primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let size = axis_size;
    match op {
        Op::ShardingConstraint { sharding } => sharding_constraint(sharding, args, bdims, size),
        Op::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => crate::transform::shard_map_rules::batch(
            &crate::transform::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            },
            args,
            bdims,
            size,
        ),
    }
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
    let spmd_axes = crate::transform::batching::rule_axis(size)
        .spmd_axis_name
        .unwrap_or_else(|| std::sync::Arc::from(Vec::new()));
    if let Some(missing) = spmd_axes
        .iter()
        .find(|a| sharding.mesh.axis_size(a).is_none())
    {
        return Err(rule_error(
            "vmap",
            &Primitive::Sharding(sharding::Op::ShardingConstraint {
                sharding: sharding.clone(),
            }),
            format!(
                "spmd_axis_name names '{missing}', which {} lacks",
                sharding.mesh
            ),
        ));
    }
    let batched = Primitive::Sharding(sharding::Op::ShardingConstraint {
        sharding: sharding.with_dim_inserted(b, spmd_axes),
    });
    done(vec![support::bind_one(&batched, &[&x])?], vec![Some(b)])
}
