//! `optax.apply_if_finite`: skips updates whose gradients are not finite.

use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_leaves};
use oxla::{Array, Result, lax};

use crate::GradientTransformation;
use crate::transforms::{safe_increment, zero_count, zeros_like_tree};

/// State of [`ApplyIfFinite`] (`optax.ApplyIfFiniteState`).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct ApplyIfFiniteState<S: Pytree> {
    /// Consecutive steps with non-finite gradients so far (`int32`).
    pub notfinite_count: Array,
    /// Whether the last step's gradients were all finite (`bool`).
    pub last_finite: Array,
    /// Steps with non-finite gradients in all (`int32`).
    pub total_notfinite: Array,
    /// The inner transformation's state.
    pub inner_state: S,
}

/// Applies `inner` only when every gradient is finite, otherwise gives
/// zero updates and keeps the inner state; after more than
/// `max_consecutive_errors` non-finite steps in a row it applies `inner`
/// anyway (`optax.apply_if_finite`). The choice is a `lax::cond` on the
/// traced check, so it works inside `jit`.
#[derive(Debug, Clone)]
pub struct ApplyIfFinite<T> {
    /// The transformation applied to finite gradients.
    pub inner: T,
    /// How many non-finite steps in a row are skipped.
    pub max_consecutive_errors: u32,
}

/// `optax.apply_if_finite(inner, max_consecutive_errors)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[0.0f32, 0.0], &[2])?;
/// let opt = optim::apply_if_finite(optim::sgd(1.0), 2);
/// let state = opt.init(&params);
/// let (u, state) = opt.update(Array::from_slice(&[1.0f32, f32::NAN], &[2])?, state, &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![0.0, 0.0]);            // skipped
/// assert_eq!(state.total_notfinite.item::<i32>()?, 1);
/// let (u, state) = opt.update(Array::from_slice(&[1.0f32, 2.0], &[2])?, state, &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-1.0, -2.0]);
/// assert!(state.last_finite.item::<bool>()?);
/// # Ok(())
/// # }
/// ```
pub fn apply_if_finite<T>(inner: T, max_consecutive_errors: u32) -> ApplyIfFinite<T> {
    ApplyIfFinite {
        inner,
        max_consecutive_errors,
    }
}

impl<P, T> GradientTransformation<P> for ApplyIfFinite<T>
where
    P: Pytree + Clone,
    T: GradientTransformation<P>,
{
    type State = ApplyIfFiniteState<T::State>;

    fn init(&self, params: &P) -> Self::State {
        ApplyIfFiniteState {
            notfinite_count: zero_count(),
            last_finite: Array::scalar(true).unwrap_or_else(Array::error),
            total_notfinite: zero_count(),
            inner_state: self.inner.init(params),
        }
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        let isfinite = tree_leaves(&updates)
            .iter()
            .map(|p| jnp::all(&jnp::isfinite(p), None, false))
            .reduce(|a, b| jnp::logical_and(&a, &b))
            .map_or_else(|| Array::scalar(true), Ok)?;
        let zero = Array::scalar(0i32)?;
        let notfinite_count =
            jnp::where_(&isfinite, &zero, &safe_increment(&state.notfinite_count));
        let max = i32::try_from(self.max_consecutive_errors).unwrap_or(i32::MAX);
        let apply = jnp::logical_or(
            &isfinite,
            &jnp::greater(&notfinite_count, &Array::weak_scalar(max)),
        );
        let (updates, inner_state) = lax::cond(
            &apply,
            |(updates, inner_state, params): (P, T::State, P)| {
                self.inner.update(updates, inner_state, &params)
            },
            |(updates, inner_state, _): (P, T::State, P)| {
                Ok((zeros_like_tree(&updates), inner_state))
            },
            (updates, state.inner_state, params.clone()),
        )?;
        let total_notfinite = jnp::where_(
            &isfinite,
            &state.total_notfinite,
            &safe_increment(&state.total_notfinite),
        );
        Ok((
            updates,
            ApplyIfFiniteState {
                notfinite_count,
                last_finite: isfinite,
                total_notfinite,
                inner_state,
            },
        ))
    }
}
