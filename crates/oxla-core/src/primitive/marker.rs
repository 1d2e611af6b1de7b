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
