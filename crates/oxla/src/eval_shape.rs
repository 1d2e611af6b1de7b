//! `eval_shape`: the types a function returns, found by tracing it, with
//! nothing compiled or run.

use std::fmt;

use oxla_core::Aval;

use crate::error::Result;
use crate::pytree::{Pytree, TreeDef};

/// A function's output types, as `jax.eval_shape` gives them: the
/// structure of its result and each leaf's type.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputTypes {
    /// The result's structure.
    pub tree: TreeDef,
    /// Each leaf's type (shape, dtype, weak type), in flattening order.
    pub avals: Vec<Aval>,
}

impl fmt::Display for OutputTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let avals: Vec<String> = self.avals.iter().map(ToString::to_string).collect();
        write!(f, "{} with leaves ({})", self.tree, avals.join(", "))
    }
}

/// The types `f` returns for arguments of the types of `args`, as
/// `jax.eval_shape(f, *args)`: `f` is traced on tracers of those types, so
/// nothing is compiled or run and `args`' values are not read. Errors `f`
/// makes (a shape mismatch, say) are returned with their line.
///
/// ```
/// use oxla::{Array, DType, eval_shape, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = jnp::zeros(&[8, 3], DType::F32);
/// let types = eval_shape(|x: Array| (jnp::sum(&x, Some(&[0]), false), jnp::argmax(&x, None)), &x)?;
/// assert_eq!(types.avals[0].shape.as_slice(), &[3]);
/// assert_eq!(types.avals[1].dtype, DType::I32);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn eval_shape<In: Pytree, R: Pytree>(
    f: impl FnOnce(In) -> R,
    args: &In,
) -> Result<OutputTypes> {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    let (leaves, _) = args.flatten();
    let traced = crate::jit::trace(f, args, &crate::jit::abstract_leaves(&leaves)?, location)?;
    Ok(OutputTypes {
        avals: traced.jaxpr.out_avals(),
        tree: traced.out_tree,
    })
}
