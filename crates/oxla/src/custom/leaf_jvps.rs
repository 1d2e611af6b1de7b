//! `custom_jvps`: a custom jvp given as one rule per input leaf, as JAX's
//! `custom_jvp.defjvps`.

use super::{CustomJvp, custom_jvp};
use crate::array::Array;
use crate::error::Error;
use crate::pytree::Pytree;

/// One input leaf's contribution to the output tangents:
/// `(the leaf's tangent, the primal outputs, the primals) -> output tangents`.
pub type LeafJvp<In, Out> = Box<dyn Fn(&Array, &Out, &In) -> Out + Send + Sync>;

/// `f` with one jvp rule per input leaf (in flattening order), as
/// `f.defjvps(jvp_0, jvp_1, ...)`: the output tangents are the sum of each
/// leaf's contribution; a `None` rule means the leaf does not move the
/// outputs (JAX's `None`). Every differentiation of `f` uses the rules.
///
/// ```
/// use oxla::{Array, custom_jvps, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // f(x, y) = sin(x) y, with ∂/∂x = cos(x) y and ∂/∂y = sin(x).
/// let f = custom_jvps(
///     |(x, y): (Array, Array)| jnp::sin(&x) * &y,
///     vec![
///         Some(Box::new(|t: &Array, _: &Array, (x, y): &(Array, Array)| t * &jnp::cos(x) * y)),
///         Some(Box::new(|t: &Array, _: &Array, (x, _): &(Array, Array)| t * &jnp::sin(x))),
///     ],
/// );
/// let (x, y) = (Array::scalar(0.0f32)?, Array::scalar(3.0f32)?);
/// let (dx, dy) = grad(|p: (Array, Array)| f.call(p).unwrap_or_else(Array::error)).call((x, y))?;
/// assert_eq!((dx.item::<f32>()?, dy.item::<f32>()?), (3.0, 0.0));
/// # Ok(())
/// # }
/// ```
pub fn custom_jvps<In, Out, F>(f: F, rules: Vec<Option<LeafJvp<In, Out>>>) -> CustomJvp<In, Out, F>
where
    In: Pytree + 'static,
    Out: Pytree + 'static,
    F: Fn(In) -> Out + Clone + Send + Sync + 'static,
{
    let primal = f.clone();
    custom_jvp(f, move |primals: In, tangents: In| {
        let (leaves, _) = primals.flatten();
        let copy = primals
            .with_leaves(&mut leaves.into_iter())
            .expect("the primals' own leaves fit their structure");
        let out = primal(copy);
        let (t_leaves, _) = tangents.flatten();
        let (out_leaves, out_tree) = out.flatten();
        if t_leaves.len() != rules.len() {
            let e = Error::InvalidArgument(format!(
                "custom_jvps has {} rules for {} input leaves",
                rules.len(),
                t_leaves.len()
            ));
            let errors = || {
                out_leaves
                    .iter()
                    .map(|_| Array::error(e.clone()))
                    .collect::<Vec<_>>()
            };
            return (
                Out::unflatten_from(&out_tree, &mut errors().into_iter()).expect("same structure"),
                Out::unflatten_from(&out_tree, &mut errors().into_iter()).expect("same structure"),
            );
        }
        let mut total: Option<Vec<Array>> = None;
        for (t, rule) in t_leaves.iter().zip(&rules) {
            let Some(rule) = rule else { continue };
            let (part, _) = rule(t, &out, &primals).flatten();
            total = Some(match total {
                None => part,
                Some(sum) => sum.iter().zip(&part).map(|(a, b)| a + b).collect(),
            });
        }
        let total =
            total.unwrap_or_else(|| out_leaves.iter().map(crate::numpy::zeros_like).collect());
        let tangent =
            Out::unflatten_from(&out_tree, &mut total.into_iter()).expect("same structure");
        (out, tangent)
    })
}
