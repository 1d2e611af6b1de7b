//! Markers: identities that carry a meaning for a transformation or the
//! compiler (`stop_gradient`, `optimization_barrier`, `checkpoint_name`).

use crate::aval::Aval;
use crate::shape_rules::RuleResult;
use crate::shape_rules::expect_arity;
use std::sync::Arc;

/// A marker primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// The identity, whose derivative is zero.
    StopGradient,
    /// The identity on several operands that XLA may not move computations
    /// across or merge computations through (keeps recomputation apart).
    OptimizationBarrier,
    /// The identity that names a value for checkpoint policies
    /// (`checkpoint_name`).
    CheckpointName {
        /// The name.
        name: Arc<str>,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::StopGradient => "stop_gradient",
            Op::OptimizationBarrier => "optimization_barrier",
            Op::CheckpointName { .. } => "name",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::StopGradient | Op::OptimizationBarrier => vec![],
            Op::CheckpointName { name } => vec![format!("name={name}")],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::StopGradient | Op::CheckpointName { .. } => {
            expect_arity(inputs, 1)?;
            Ok(vec![inputs[0].clone()])
        }
        Op::OptimizationBarrier => Ok(inputs.iter().map(|a| (*a).clone()).collect()),
    }
}

/// The sharding rule (see [`crate::sharding_rules`]): each result is its
/// operand, split alike.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    match op {
        Op::StopGradient | Op::CheckpointName { .. } | Op::OptimizationBarrier => {
            Ok(inputs.iter().map(|a| a.dim_axes()).collect())
        }
    }
}
