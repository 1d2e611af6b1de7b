//! Host primitives: calls of host functions from inside a program
//! (`pure_callback`, `io_callback`, `debug::print`).

use crate::aval::Aval;
use crate::shape_rules::RuleResult;

/// A host primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// A call of a host function from inside the program (`pure_callback`,
    /// `io_callback`, `debug::print`): operands go to the closure as host
    /// arrays, which returns arrays of `results`' types.
    HostCallback {
        /// The closure's id, name, effect and batching.
        callback: crate::callback::HostCallback,
        /// The types of its results.
        results: Vec<crate::aval::Aval>,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::HostCallback { callback, .. } => {
                if callback.effectful {
                    "io_callback"
                } else {
                    "pure_callback"
                }
            }
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
            Op::HostCallback { callback, .. } => {
                vec![format!("callback={callback}")]
            }
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, _inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::HostCallback { results, .. } => Ok(results.clone()),
    }
}
