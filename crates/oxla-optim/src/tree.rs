//! Leaf-wise arithmetic over pytrees of the same structure, for the
//! optimizers.

use oxla::Array;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_leaves, tree_map_named};

/// `params + updates`, leaf by leaf, in each parameter's dtype (Optax's
/// `apply_updates`); an error when the two pytrees' structures differ.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::apply_updates;
/// # fn main() -> oxla::Result<()> {
/// let params = (Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::scalar(3.0f32)?);
/// let updates = (Array::from_slice(&[0.5f32, -0.5], &[2])?, Array::scalar(-1.0f32)?);
/// let (w, b) = apply_updates(&params, &updates)?;
/// assert_eq!(w.to_vec::<f32>()?, vec![1.5, 1.5]);
/// assert_eq!(b.item::<f32>()?, 2.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn apply_updates<P: Pytree>(params: &P, updates: &P) -> Result<P> {
    tree_map_named("apply_updates", &[params, updates], |l| {
        oxla::lax::convert_element_type(&(l[0] + l[1]), l[0].dtype_or_bool())
    })
}

/// The L2 norm of all leaves together: `sqrt(Σ sum(x²))` (Optax's
/// `global_norm`).
///
/// ```
/// use oxla::Array;
/// use oxla_optim::global_norm;
/// # fn main() -> oxla::Result<()> {
/// let tree = vec![Array::from_slice(&[3.0f32], &[1])?, Array::from_slice(&[4.0f32], &[1])?];
/// assert_eq!(global_norm(&tree).item::<f32>()?, 5.0);
/// # Ok(())
/// # }
/// ```
pub fn global_norm<P: Pytree>(tree: &P) -> Array {
    let squares: Vec<Array> = tree_leaves(tree)
        .iter()
        .map(|x| jnp::sum(&jnp::square(x), None, false))
        .collect();
    let total = squares
        .into_iter()
        .reduce(|a, b| a + b)
        .unwrap_or_else(|| Array::weak_scalar(0.0f32));
    jnp::sqrt(&total)
}
