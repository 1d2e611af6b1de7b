//! JAX's transformations on oxla's core: forward mode (jvp), linearize
//! (jvp with tangents staged into a linear jaxpr), reverse mode (transpose
//! of that jaxpr), batching (vmap), rematerialization (checkpoint) and
//! custom rules. Each rule set is an exhaustive match over `Primitive` in
//! its own module.

pub(crate) mod batch_rules;
pub(crate) mod batching;
pub(crate) mod eval;
pub(crate) mod jvp;
pub(crate) mod jvp_rules;
pub(crate) mod linearize;
pub(crate) mod rules;
pub(crate) mod support;
pub(crate) mod transpose;
pub(crate) mod transpose_rules;
