//! `optax.inject_hyperparams` for the learning rate: the rate lives in the
//! state, so it can change between steps of a jitted update without a
//! recompilation.

use oxla::pytree::{Pytree, tree_map};
use oxla::{Array, DType, Error, Result};

use crate::GradientTransformation;
use crate::transforms::{safe_increment, zero_count};

/// State of [`InjectLearningRate`] (`optax.InjectHyperparamsState` with the
/// one hyperparameter `learning_rate`).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct InjectLearningRateState<S: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// The learning rate (an `f32` scalar): replace it between steps (see
    /// [`set_learning_rate`](Self::set_learning_rate)) to change the rate.
    pub learning_rate: Array,
    /// The inner transformation's state.
    pub inner_state: S,
}

impl<S: Pytree> InjectLearningRateState<S> {
    /// Sets the learning rate used from the next step on, in the dtype the
    /// state holds it in (so a jitted step sees the same argument types and
    /// does not recompile).
    pub fn set_learning_rate(&mut self, learning_rate: f64) -> Result<()> {
        let dtype = self.learning_rate.dtype_or_bool();
        if !dtype.is_float() {
            return Err(Error::InvalidArgument(format!(
                "inject_learning_rate: the state's learning rate is {dtype}, not a float"
            )));
        }
        self.learning_rate = oxla::lax::convert_element_type(&Array::scalar(learning_rate)?, dtype);
        Ok(())
    }
}

/// `inner` followed by a descent step at a learning rate held in the state
/// (`optax.inject_hyperparams(factory)(learning_rate=…)` for optimizers of
/// the form `chain(inner, scale_by_learning_rate(learning_rate))`: with
/// `scale_by_adam` it is `inject_hyperparams(optax.adam)`).
#[derive(Debug, Clone)]
pub struct InjectLearningRate<T> {
    /// The transformation before the learning-rate step.
    pub inner: T,
    /// The initial learning rate.
    pub learning_rate: f64,
}

/// `inject_hyperparams` of `chain(inner, scale_by_learning_rate(learning_rate))`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[2.0f32], &[1])?;
/// let opt = optim::inject_learning_rate(optim::Identity, 0.1);
/// let mut state = opt.init(&g);
/// state.set_learning_rate(0.5)?;
/// let (u, state) = opt.update(g.clone(), state, &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-1.0]);                // -0.5 · 2
/// assert_eq!(state.count.item::<i32>()?, 1);
/// # Ok(())
/// # }
/// ```
pub fn inject_learning_rate<T>(inner: T, learning_rate: f64) -> InjectLearningRate<T> {
    InjectLearningRate {
        inner,
        learning_rate,
    }
}

impl<P, T> GradientTransformation<P> for InjectLearningRate<T>
where
    P: Pytree,
    T: GradientTransformation<P>,
{
    type State = InjectLearningRateState<T::State>;

    fn init(&self, params: &P) -> Self::State {
        // Optax keeps a float hyperparameter as a float32 array.
        let learning_rate = Array::scalar(self.learning_rate)
            .map(|r| oxla::lax::convert_element_type(&r, DType::F32))
            .unwrap_or_else(Array::error);
        InjectLearningRateState {
            count: zero_count(),
            learning_rate,
            inner_state: self.inner.init(params),
        }
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        let (updates, inner_state) = self.inner.update(updates, state.inner_state, params)?;
        let step = -&state.learning_rate;
        let updates = tree_map(&updates, |g| {
            oxla::lax::convert_element_type(&step, g.dtype_or_bool()) * g
        })?;
        Ok((
            updates,
            InjectLearningRateState {
                count: safe_increment(&state.count),
                learning_rate: state.learning_rate,
                inner_state,
            },
        ))
    }
}
