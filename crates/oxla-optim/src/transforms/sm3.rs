//! SM3's memory-efficient second moments: one accumulator per axis of each
//! leaf instead of one per element (`optax.scale_by_sm3`).

use oxla::Array;
use oxla::Result;
use oxla::lax;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_leaves, tree_map, tree_map_named, tree_structure, tree_unflatten};

use super::{GradientTransformation, ema_update, zeros_like_tree};

/// State of [`ScaleBySm3`]: per leaf (in the order of the parameters'
/// leaves), one accumulator per axis, and the momentum.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Sm3State<P: Pytree> {
    /// For each leaf, a vector per axis as long as that axis: the largest
    /// accumulated squared gradient over the other axes.
    pub mu: Vec<Vec<Array>>,
    /// The momentum of the rescaled updates.
    pub nu: P,
}

/// SM3: each element's accumulated squared gradient is bounded by the
/// smallest of its axes' accumulators (for rank 2 and more; a vector's is
/// exact), updates are divided by its root (0 where it is 0), and the
/// result is averaged with momentum `b1` (`optax.scale_by_sm3`). Leaves
/// must have rank 1 or more and real dtypes, as in Optax.
#[derive(Debug, Clone, Copy)]
pub struct ScaleBySm3 {
    /// Decay of the momentum.
    pub b1: f64,
    /// Decay of the accumulators (1 accumulates sums, Optax's default).
    pub b2: f64,
    /// Added to the accumulators inside the root.
    pub eps: f64,
}

/// `optax.scale_by_sm3(b1, b2, eps)`; Optax's defaults are `(0.9, 1.0,
/// 1e-8)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = oxla::numpy::zeros(&[2, 3], oxla::DType::F32);
/// let sm3 = optim::scale_by_sm3(0.0, 1.0, 0.0);
/// let state = sm3.init(&params);
/// let shapes: Vec<&[i64]> = state.mu[0].iter().map(|a| a.shape()).collect();
/// assert_eq!(shapes, [&[2][..], &[3][..]]);                   // one accumulator per axis
/// let g = Array::from_slice(&[1.0f32, -2.0, 3.0, 0.5, 0.0, -1.0], &[2, 3])?;
/// let (u, _) = sm3.update(g, state, &params)?;
/// // The first step divides each element by its own magnitude (0 stays 0).
/// assert_eq!(u.to_vec::<f32>()?, vec![1.0, -1.0, 1.0, 1.0, 0.0, -1.0]);
/// # Ok(())
/// # }
/// ```
pub fn scale_by_sm3(b1: f64, b2: f64, eps: f64) -> ScaleBySm3 {
    ScaleBySm3 { b1, b2, eps }
}

/// `[1, …, size of axis, …, 1]`: a per-axis vector's shape broadcast
/// against its leaf.
fn expanded_shape(shape: &[i64], axis: usize) -> Vec<i64> {
    (0..shape.len())
        .map(|i| if i == axis { shape[i] } else { 1 })
        .collect()
}

impl ScaleBySm3 {
    /// One leaf's rescaled update and its next per-axis accumulators.
    fn leaf_update(&self, g: &Array, accumulators: &[Array]) -> (Array, Vec<Array>) {
        let shape = g.shape_or_empty();
        let rank = shape.len();
        let (new_weight, old_weight) = if self.b2 == 1.0 {
            (1.0, 1.0)
        } else {
            (1.0 - self.b2, self.b2)
        };
        let expanded: Vec<Array> = accumulators
            .iter()
            .enumerate()
            .map(|(i, v)| jnp::reshape(v, &expanded_shape(shape, i)))
            .collect();
        let bound = expanded
            .into_iter()
            .reduce(|a, b| jnp::minimum(&a, &b))
            .unwrap_or_else(|| jnp::zeros_like(g));
        let accum = (g * g) * new_weight + bound * old_weight;
        let positive = jnp::greater(&accum, &Array::weak_scalar(0.0));
        let inverse_root = jnp::where_(
            &positive,
            &lax::rsqrt(&(&accum + self.eps)),
            &Array::weak_scalar(0.0),
        );
        let next: Vec<Array> = if rank < 2 {
            vec![accum.clone()]
        } else {
            (0..rank)
                .map(|i| {
                    let others: Vec<i64> = (0..rank as i64).filter(|&a| a != i as i64).collect();
                    jnp::max(&accum, Some(&others), false)
                })
                .collect()
        };
        (g * &inverse_root, next)
    }
}

impl<P: Pytree> GradientTransformation<P> for ScaleBySm3 {
    type State = Sm3State<P>;

    fn init(&self, params: &P) -> Sm3State<P> {
        let per_axis = |p: &Array| -> Vec<Array> {
            p.shape_or_empty()
                .iter()
                .map(|&size| jnp::zeros(&[size], p.dtype_or_bool()))
                .collect()
        };
        Sm3State {
            mu: tree_leaves(params).iter().map(per_axis).collect(),
            nu: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: Sm3State<P>, _: &P) -> Result<(P, Sm3State<P>)> {
        let leaves = tree_leaves(&updates);
        let bad = |why: String| Err(oxla::Error::InvalidArgument(format!("scale_by_sm3: {why}")));
        if state.mu.len() != leaves.len() {
            return bad(format!(
                "the state has accumulators for {} leaves, the updates have {} (was the state \
                 made for other parameters?)",
                state.mu.len(),
                leaves.len()
            ));
        }
        let mut scaled = Vec::with_capacity(leaves.len());
        let mut mu = Vec::with_capacity(leaves.len());
        for (k, (g, accumulators)) in leaves.iter().zip(&state.mu).enumerate() {
            let (rank, dtype) = (g.ndim_or_zero(), g.dtype_or_bool());
            if dtype.is_complex() {
                return bad(format!(
                    "leaf {k} is {dtype:?}; SM3 takes real parameters only"
                ));
            }
            if rank == 0 {
                return bad(format!(
                    "leaf {k} is a scalar; SM3 takes leaves of rank 1 or more"
                ));
            }
            if accumulators.len() != rank {
                return bad(format!(
                    "leaf {k} has rank {rank} but the state has {} accumulators for it",
                    accumulators.len()
                ));
            }
            let (update, next) = self.leaf_update(g, accumulators);
            scaled.push(update);
            mu.push(next);
        }
        let scaled: P = tree_unflatten(&tree_structure(&updates), scaled)?;
        let b1 = self.b1;
        let nu = tree_map_named("scale_by_sm3", &[&scaled, &state.nu], |l| {
            ema_update(l[0], l[1], b1)
        })?;
        Ok((tree_map(&nu, Array::clone)?, Sm3State { mu, nu }))
    }
}
