//! Sharding primitives: `with_sharding_constraint` and `shard_map`.

use crate::aval::Aval;
use crate::shape_rules::{RuleResult, expect_arity};
use crate::subjaxpr::SubJaxpr;

/// A sharding primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// The identity that asks the partitioner to lay its operand out as
    /// `sharding` at this point (`with_sharding_constraint`).
    ShardingConstraint {
        /// The layout.
        sharding: crate::sharding::ShardingDesc,
    },
    /// `shard_map`: `jaxpr` runs on every device of the mesh, on the
    /// device's blocks of the operands (cut as `in_shardings` say), and its
    /// results are the blocks of the outputs (put together as
    /// `out_shardings` say). Every mesh axis is manual inside.
    ShardMap {
        /// The per-device function.
        jaxpr: SubJaxpr,
        /// How each operand is cut into blocks.
        in_shardings: Vec<crate::sharding::ShardingDesc>,
        /// How each result is put together from blocks.
        out_shardings: Vec<crate::sharding::ShardingDesc>,
        /// Whether the body's values carry the mesh axes they vary over
        /// (JAX's `check_vma`): gradients then sum replicated values'
        /// cotangents inside the body, as JAX's do.
        check_vma: bool,
    },
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::ShardingConstraint { sharding } => {
            expect_arity(inputs, 1)?;
            crate::sharding::check_sharding(sharding, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Op::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            ..
        } => shard_map_avals(jaxpr.jaxpr(), in_shardings, out_shardings, inputs),
    }
}

/// The global results of a `shard_map`: each operand's block must be the
/// body's parameter type, and each result is the body's result tiled as its
/// out sharding says.
fn shard_map_avals(
    body: &crate::jaxpr::Jaxpr,
    in_shardings: &[crate::sharding::ShardingDesc],
    out_shardings: &[crate::sharding::ShardingDesc],
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() != in_shardings.len() || inputs.len() != body.invars.len() {
        return Err(format!(
            "{} operands for {} in_specs and a body of {} parameters",
            inputs.len(),
            in_shardings.len(),
            body.invars.len()
        ));
    }
    if out_shardings.len() != body.outvars.len() {
        return Err(format!(
            "{} out_specs for a body of {} results",
            out_shardings.len(),
            body.outvars.len()
        ));
    }
    for (i, ((x, sharding), var)) in inputs
        .iter()
        .zip(in_shardings)
        .zip(&body.invars)
        .enumerate()
    {
        crate::sharding::check_sharding(sharding, x).map_err(|e| format!("operand {i}: {e}"))?;
        let block: Vec<i64> = x
            .shape
            .iter()
            .enumerate()
            .map(|(d, &n)| n / sharding.tiles(d) as i64)
            .collect();
        let want = body.aval(*var);
        if want.dtype != x.dtype || want.shape.as_slice() != block.as_slice() {
            return Err(format!(
                "operand {i} is {x}, whose blocks under {} are {}[{}], but the body takes {want}",
                sharding.spec_text(),
                x.dtype,
                block
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }
    body.outvars
        .iter()
        .zip(out_shardings)
        .map(|(o, sharding)| {
            let block = body.atom_aval(o);
            if sharding.dims.len() > block.shape.len() {
                return Err(format!(
                    "out spec {} has more entries than the {} dimensions of the body's result {block}",
                    sharding.spec_text(),
                    block.shape.len()
                ));
            }
            let shape: Vec<i64> = block
                .shape
                .iter()
                .enumerate()
                .map(|(d, &n)| n * sharding.tiles(d) as i64)
                .collect();
            let mut out = block.with_shape(&shape);
            out.weak_type = block.weak_type;
            Ok(out)
        })
        .collect()
}
