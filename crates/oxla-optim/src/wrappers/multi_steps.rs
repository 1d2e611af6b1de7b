//! `optax.MultiSteps`: gradient accumulation over mini-steps.

use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map_named};
use oxla::{Array, DType, Error, Result};

use crate::GradientTransformation;
use crate::transforms::{safe_increment, zero_count, zeros_like_tree};

/// State of [`MultiSteps`] (`optax.MultiStepsState`, without the state of
/// a skip function, which oxla's `MultiSteps` does not take).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct MultiStepsState<P: Pytree, S: Pytree> {
    /// Mini-steps accumulated since the last emitted update (`int32`).
    pub mini_step: Array,
    /// Updates emitted so far (`int32`).
    pub gradient_step: Array,
    /// The inner transformation's state.
    pub inner_opt_state: S,
    /// The mean (or sum) of the gradients accumulated so far.
    pub acc_grads: P,
}

/// Accumulates gradients over `every_k` mini-steps (`optax.MultiSteps(opt,
/// every_k_schedule)` with a constant `every_k_schedule`): the updates are
/// zeros until the `every_k`-th mini-step, which gives the inner
/// transformation's update of the mean (or, without `use_grad_mean`, the
/// sum) of the accumulated gradients and resets the accumulator.
///
/// As in Optax, the inner update runs at every mini-step and its state is
/// kept only on the emitting step, so the step traces into one program
/// without a branch.
#[derive(Debug, Clone)]
pub struct MultiSteps<T> {
    /// The transformation applied to the accumulated gradients.
    pub inner: T,
    /// Mini-steps per update (at least 1).
    pub every_k: u32,
    /// Whether to average the accumulated gradients (Optax's default) or
    /// sum them.
    pub use_grad_mean: bool,
}

/// `optax.MultiSteps(inner, every_k)`, averaging the gradients.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[0.0f32], &[1])?;
/// let opt = optim::multi_steps(optim::sgd(1.0), 2);
/// let state = opt.init(&params);
/// let (u, state) = opt.update(Array::from_slice(&[1.0f32], &[1])?, state, &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![0.0]);                 // accumulating
/// assert!(!opt.has_updated(&state).item::<bool>()?);
/// let (u, state) = opt.update(Array::from_slice(&[3.0f32], &[1])?, state, &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-2.0]);                // -1 · mean(1, 3)
/// assert!(opt.has_updated(&state).item::<bool>()?);
/// # Ok(())
/// # }
/// ```
pub fn multi_steps<T>(inner: T, every_k: u32) -> MultiSteps<T> {
    MultiSteps {
        inner,
        every_k,
        use_grad_mean: true,
    }
}

impl<T> MultiSteps<T> {
    /// Whether the last update emitted the inner transformation's update: a
    /// `bool` scalar, `mini_step == 0 && gradient_step > 0`
    /// (`MultiSteps.has_updated`).
    pub fn has_updated<P: Pytree, S: Pytree>(&self, state: &MultiStepsState<P, S>) -> Array {
        jnp::logical_and(
            &jnp::equal(&state.mini_step, &Array::weak_scalar(0i32)),
            &jnp::greater(&state.gradient_step, &Array::weak_scalar(0i32)),
        )
    }
}

impl<P, T> GradientTransformation<P> for MultiSteps<T>
where
    P: Pytree + Clone,
    T: GradientTransformation<P>,
{
    type State = MultiStepsState<P, T::State>;

    fn init(&self, params: &P) -> Self::State {
        MultiStepsState {
            mini_step: zero_count(),
            gradient_step: zero_count(),
            inner_opt_state: self.inner.init(params),
            acc_grads: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        let k = i32::try_from(self.every_k)
            .ok()
            .filter(|k| *k >= 1)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "MultiSteps: every_k must be from 1 to {}, got {}",
                    i32::MAX,
                    self.every_k
                ))
            })?;
        let mini_step = &state.mini_step;
        let acc_grads = tree_map_named("MultiSteps", &[&updates, &state.acc_grads], |l| {
            let (g, acc) = (l[0], l[1]);
            if self.use_grad_mean {
                // Welford's running mean, as Optax.
                let n = oxla::lax::convert_element_type(&(mini_step + 1), g.dtype_or_bool());
                acc + &((g - acc) / &n)
            } else {
                g + acc
            }
        })?;
        let (old_leaves, old_def) = state.inner_opt_state.flatten();
        let (final_updates, new_inner) =
            self.inner
                .update(acc_grads.clone(), state.inner_opt_state, params)?;
        let emit = jnp::equal(mini_step, &Array::weak_scalar(k - 1));
        let (new_leaves, new_def) = new_inner.flatten();
        if new_def != old_def {
            return Err(Error::InvalidArgument(format!(
                "MultiSteps: the inner update changed its state's structure from {old_def} to \
                 {new_def}"
            )));
        }
        let kept: Vec<Array> = old_leaves
            .iter()
            .zip(&new_leaves)
            .map(|(old, new)| jnp::where_(&emit, new, old))
            .collect();
        let inner_opt_state = T::State::unflatten_from(&new_def, &mut kept.into_iter())?;
        let as_dtype = |x: &Array, d: DType| oxla::lax::convert_element_type(x, d);
        let keep = jnp::logical_not(&emit);
        let acc_grads = tree_map_named("MultiSteps", &[&acc_grads, &final_updates], |l| {
            let d = l[1].dtype_or_bool();
            as_dtype(&keep, d) * as_dtype(l[0], d)
        })?;
        let final_updates = tree_map_named("MultiSteps", &[&final_updates], |l| {
            as_dtype(&emit, l[0].dtype_or_bool()) * l[0]
        })?;
        let gradient_step = jnp::where_(
            &emit,
            &safe_increment(&state.gradient_step),
            &state.gradient_step,
        );
        let mini_step = jnp::remainder(&safe_increment(mini_step), &Array::weak_scalar(k));
        Ok((
            final_updates,
            MultiStepsState {
                mini_step,
                gradient_step,
                inner_opt_state,
                acc_grads,
            },
        ))
    }
}
