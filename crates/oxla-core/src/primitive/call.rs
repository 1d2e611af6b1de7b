//! Calls of other functions: `jit` inside a trace (`pjit`), checkpoints,
//! functions with custom derivative rules, and exported modules.

use super::print;
use crate::aval::Aval;
use crate::primitive::{Primitive, contract, marker};
use crate::shape_rules::{RuleResult, ShapeError, call_avals};
use crate::subjaxpr::{OpaqueRule, SubJaxpr};
use std::sync::Arc;

/// Which intermediate values of a checkpointed function reverse mode may
/// keep from the forward pass (the rest is recomputed), as
/// `jax.checkpoint_policies`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RematPolicy {
    /// Keep nothing: recompute every intermediate from the inputs.
    NothingSaveable,
    /// Keep everything (as without checkpoint).
    EverythingSaveable,
    /// Keep the results of matrix products and convolutions.
    DotsSaveable,
    /// Keep the results of matrix products without batch dimensions.
    DotsWithNoBatchDimsSaveable,
    /// Keep only values named with `checkpoint_name` under these names.
    SaveOnlyTheseNames(Vec<String>),
    /// Keep values named with `checkpoint_name`, except under these names
    /// (nothing unnamed).
    SaveAnyNamesButThese(Vec<String>),
    /// Keep what either policy keeps (`save_from_both_policies`).
    SaveFromBothPolicies(Box<RematPolicy>, Box<RematPolicy>),
}
impl RematPolicy {
    /// JAX's name of the policy.
    pub fn name(&self) -> &'static str {
        match self {
            RematPolicy::NothingSaveable => "nothing_saveable",
            RematPolicy::EverythingSaveable => "everything_saveable",
            RematPolicy::DotsSaveable => "dots_saveable",
            RematPolicy::DotsWithNoBatchDimsSaveable => "dots_with_no_batch_dims_saveable",
            RematPolicy::SaveOnlyTheseNames(_) => "save_only_these_names",
            RematPolicy::SaveAnyNamesButThese(_) => "save_any_names_but_these",
            RematPolicy::SaveFromBothPolicies(..) => "save_from_both_policies",
        }
    }

    /// Whether reverse mode may keep the result of `eqn` (rather than
    /// recompute it).
    pub fn saveable(&self, eqn: &crate::jaxpr::Equation) -> bool {
        match self {
            RematPolicy::NothingSaveable => false,
            RematPolicy::EverythingSaveable => true,
            RematPolicy::DotsSaveable => matches!(
                eqn.primitive,
                Primitive::Contract(contract::Op::DotGeneral { .. })
                    | Primitive::Contract(contract::Op::ConvGeneralDilated { .. })
            ),
            RematPolicy::DotsWithNoBatchDimsSaveable => matches!(
                &eqn.primitive,
                Primitive::Contract(contract::Op::DotGeneral { lhs_batch, .. }) if lhs_batch.is_empty()
            ),
            RematPolicy::SaveOnlyTheseNames(names) => matches!(
                &eqn.primitive,
                Primitive::Marker(marker::Op::CheckpointName { name }) if names.iter().any(|n| n.as_str() == &**name)
            ),
            RematPolicy::SaveAnyNamesButThese(names) => matches!(
                &eqn.primitive,
                Primitive::Marker(marker::Op::CheckpointName { name }) if !names.iter().any(|n| n.as_str() == &**name)
            ),
            RematPolicy::SaveFromBothPolicies(first, second) => {
                first.saveable(eqn) || second.saveable(eqn)
            }
        }
    }
}
/// A call primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// A call of a closed jaxpr: `jit` inside a trace (JAX's `pjit`).
    /// Operands are the jaxpr's inputs (captured values first).
    Call {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The function's name.
        name: Arc<str>,
    },
    /// A checkpointed (rematerialized) call: reverse mode keeps only what
    /// the policy allows and recomputes the rest.
    Remat {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// What may be kept.
        policy: RematPolicy,
        /// Whether recomputation is fenced by an optimization barrier.
        prevent_cse: bool,
    },
    /// A call of a function with a user-defined jvp rule.
    CustomJvpCall {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The user's jvp rule.
        rule: OpaqueRule,
    },
    /// A call of a function with user-defined forward and backward rules.
    CustomVjpCall {
        /// The function's body.
        jaxpr: SubJaxpr,
        /// The user's fwd and bwd rules.
        rule: OpaqueRule,
    },
    /// The linear part of a `custom_vjp` function in reverse mode: operands
    /// are the residuals of its fwd rule, then the input tangents. It is
    /// only ever transposed (through the bwd rule), never run.
    CustomLin {
        /// The user's fwd and bwd rules.
        rule: OpaqueRule,
        /// How many leading operands are residuals.
        num_residuals: usize,
        /// The output tangents' types.
        out_avals: Vec<crate::aval::Aval>,
    },
    /// A call of a function exported with `jax.export` (JAX's
    /// `call_exported`): operands are the inputs its module keeps; the
    /// module is merged into the program as a private function.
    CallExported {
        /// The exported function.
        function: crate::exported::ExportedFunction,
    },
}

impl Op {
    /// The body of a call-like primitive (`None` for `custom_lin`, which
    /// has none, and an exported call, whose body is a module).
    pub fn body(&self) -> Option<&SubJaxpr> {
        match self {
            Op::Call { jaxpr, .. }
            | Op::Remat { jaxpr, .. }
            | Op::CustomJvpCall { jaxpr, .. }
            | Op::CustomVjpCall { jaxpr, .. } => Some(jaxpr),
            Op::CustomLin { .. } | Op::CallExported { .. } => None,
        }
    }

    /// The jaxprs the primitive carries.
    pub fn nested_jaxprs(&self) -> Vec<&SubJaxpr> {
        self.body().into_iter().collect()
    }

    /// The jaxprs the primitive carries, mutably.
    pub fn nested_jaxprs_mut(&mut self) -> Vec<&mut SubJaxpr> {
        match self {
            Op::Call { jaxpr, .. }
            | Op::Remat { jaxpr, .. }
            | Op::CustomJvpCall { jaxpr, .. }
            | Op::CustomVjpCall { jaxpr, .. } => vec![jaxpr],
            Op::CustomLin { .. } | Op::CallExported { .. } => Vec::new(),
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Call { .. } => "pjit",
            Op::CallExported { .. } => "call_exported",
            Op::Remat { .. } => "checkpoint",
            Op::CustomJvpCall { .. } => "custom_jvp_call",
            Op::CustomVjpCall { .. } => "custom_vjp_call",
            Op::CustomLin { .. } => "custom_lin",
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
            Op::Call { jaxpr, name } => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("name={name}"),
            ],
            Op::Remat {
                jaxpr,
                policy,
                prevent_cse,
            } => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("policy={}", policy.name()),
                format!("prevent_cse={}", print::py_bool(*prevent_cse)),
            ],
            Op::CallExported { function } => {
                vec![format!("name={}", function.name())]
            }
            Op::CustomJvpCall { jaxpr, rule } => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("jvp={}", rule.name()),
            ],
            Op::CustomVjpCall { jaxpr, rule } => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("fwd_bwd={}", rule.name()),
            ],
            Op::CustomLin {
                rule,
                num_residuals,
                ..
            } => vec![
                format!("bwd={}", rule.name()),
                format!("num_res={num_residuals}"),
            ],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Call { jaxpr, .. }
        | Op::Remat { jaxpr, .. }
        | Op::CustomJvpCall { jaxpr, .. }
        | Op::CustomVjpCall { jaxpr, .. } => call_avals(jaxpr.jaxpr(), inputs),
        Op::CallExported { function } => exported_avals(function, inputs),
        Op::CustomLin {
            num_residuals,
            out_avals,
            ..
        } => {
            if inputs.len() < *num_residuals {
                return Err(ShapeError::Invalid(format!(
                    "takes {num_residuals} residuals, got {} operands",
                    inputs.len()
                )));
            }
            Ok(out_avals.clone())
        }
    }
}

/// The outputs of an exported function, whose inputs must have exactly
/// the exported types.
fn exported_avals(
    function: &crate::exported::ExportedFunction,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    let want = function.in_avals();
    if inputs.len() != want.len() {
        return Err(ShapeError::Invalid(format!(
            "{} was exported with {} inputs, not {}",
            function.name(),
            want.len(),
            inputs.len()
        )));
    }
    for (i, (a, w)) in inputs.iter().zip(want).enumerate() {
        if a.dtype != w.dtype || a.shape != w.shape {
            return Err(ShapeError::Invalid(format!(
                "input {i} is {a}, but {} was exported for {w}",
                function.name()
            )));
        }
    }
    Ok(function.out_avals().to_vec())
}
