//! Sharding primitives: `with_sharding_constraint` and `shard_map`.

use super::print;
use crate::aval::Aval;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity};
use crate::subjaxpr::SubJaxpr;

/// The parameters of a `shard_map`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardMapParams {
    /// The per-device function.
    pub jaxpr: SubJaxpr,
    /// How each operand is cut into blocks.
    pub in_shardings: Vec<crate::sharding::ShardingDesc>,
    /// How each result is put together from blocks.
    pub out_shardings: Vec<crate::sharding::ShardingDesc>,
    /// Whether the body's values carry the mesh axes they vary over
    /// (JAX's `check_vma`): gradients then sum replicated values'
    /// cotangents inside the body, as JAX's do.
    pub check_vma: bool,
}

/// A sharding primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// The identity that asks the partitioner to lay its operand out as
    /// `sharding` at this point (`with_sharding_constraint`).
    ShardingConstraint {
        /// The layout.
        sharding: crate::sharding::ShardingDesc,
    },
    /// `reshard` (JAX's `jax.sharding.reshard`, and its `mesh_cast` into and
    /// out of `auto_axes`): the operand with the explicit sharding type
    /// `sharding` (`None`: no explicit sharding, the partitioner's choice),
    /// moving its blocks between devices as that needs.
    Reshard {
        /// The result's explicit sharding.
        sharding: Option<crate::sharding::ShardingDesc>,
    },
    /// `shard_map`: `jaxpr` runs on every device of the mesh, on the
    /// device's blocks of the operands (cut as `in_shardings` say), and its
    /// results are the blocks of the outputs (put together as
    /// `out_shardings` say). Every mesh axis is manual inside.
    ShardMap(ShardMapParams),
}

impl Op {
    /// The jaxprs the primitive carries: a `shard_map`'s body.
    pub fn nested_jaxprs(&self) -> Vec<&SubJaxpr> {
        match self {
            Op::ShardMap(ShardMapParams { jaxpr, .. }) => vec![jaxpr],
            Op::ShardingConstraint { .. } | Op::Reshard { .. } => Vec::new(),
        }
    }

    /// The jaxprs the primitive carries, mutably.
    pub fn nested_jaxprs_mut(&mut self) -> Vec<&mut SubJaxpr> {
        match self {
            Op::ShardMap(ShardMapParams { jaxpr, .. }) => vec![jaxpr],
            Op::ShardingConstraint { .. } | Op::Reshard { .. } => Vec::new(),
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::ShardingConstraint { .. } => "sharding_constraint",
            Op::Reshard { .. } => "reshard",
            Op::ShardMap(_) => "shard_map",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::ShardingConstraint { sharding } => {
                vec![format!("sharding={sharding}")]
            }
            // JAX prints none: the result's type shows the sharding.
            Op::Reshard { .. } => Vec::new(),
            Op::ShardMap(ShardMapParams {
                jaxpr,
                in_shardings,
                out_shardings,
                check_vma,
            }) => {
                let specs = |s: &[crate::sharding::ShardingDesc]| {
                    let texts: Vec<String> = s.iter().map(|d| d.spec_text()).collect();
                    format!("({},)", texts.join(", "))
                };
                vec![
                    format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                    format!(
                        "mesh={}",
                        in_shardings
                            .first()
                            .or(out_shardings.first())
                            .map(|s| s.mesh.to_string())
                            .unwrap_or_default()
                    ),
                    format!("in_specs={}", specs(in_shardings)),
                    format!("out_specs={}", specs(out_shardings)),
                    format!("check_vma={}", print::py_bool(*check_vma)),
                ]
            }
        }
    }
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
        Op::Reshard { sharding } => {
            expect_arity(inputs, 1)?;
            if let Some(sharding) = sharding {
                crate::sharding::check_sharding(sharding, inputs[0])?;
            }
            Ok(vec![inputs[0].with_sharding(sharding.clone())])
        }
        Op::ShardMap(ShardMapParams {
            jaxpr,
            in_shardings,
            out_shardings,
            ..
        }) => shard_map_avals(jaxpr.jaxpr(), in_shardings, out_shardings, inputs),
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
        return Err(ShapeError::Invalid(format!(
            "{} operands for {} in_specs and a body of {} parameters",
            inputs.len(),
            in_shardings.len(),
            body.invars.len()
        )));
    }
    if out_shardings.len() != body.outvars.len() {
        return Err(ShapeError::Invalid(format!(
            "{} out_specs for a body of {} results",
            out_shardings.len(),
            body.outvars.len()
        )));
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
            return Err(ShapeError::Invalid(format!(
                "operand {i} is {x}, whose blocks under {} are {}[{}], but the body takes {want}",
                sharding.spec_text(),
                x.dtype,
                block
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
    }
    body.outvars
        .iter()
        .zip(out_shardings)
        .map(|(o, sharding)| {
            let block = body.atom_aval(o);
            if sharding.dims.len() > block.shape.len() {
                return Err(ShapeError::Invalid(format!(
                    "out spec {} has more entries than the {} dimensions of the body's result {block}",
                    sharding.spec_text(),
                    block.shape.len()
                )));
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

/// The sharding rule (see [`crate::sharding_rules`]): a constraint keeps
/// its operand's type and a reshard has its target's (the shape rule set
/// both); a `shard_map` on a mesh with explicit axes gives each result the
/// explicit part of its out spec.
pub(crate) fn output_shardings(op: &Op, outs: &mut [Aval]) -> RuleResult<()> {
    match op {
        Op::ShardingConstraint { .. } | Op::Reshard { .. } => Ok(()),
        Op::ShardMap(ShardMapParams { out_shardings, .. }) => {
            for (out, sharding) in outs.iter_mut().zip(out_shardings) {
                let typed = sharding.explicit_type();
                *out = out.with_sharding(typed);
            }
            Ok(())
        }
    }
}
