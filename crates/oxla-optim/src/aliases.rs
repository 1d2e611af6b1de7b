//! Optax's named optimizers as chains of [`transforms`](super::transforms):
//! SGD and Adam here, the others in a module per family.

mod adafactor;
mod adaptive;
mod layerwise;

pub use adafactor::{Adafactor, AdafactorOptions, adafactor, adafactor_with};
pub use adaptive::{
    Adabelief, AdabeliefOptions, Adadelta, Adagrad, Adamax, Lion, Radam, RadamOptions, Rmsprop,
    RmspropOptions, Sm3, adabelief, adabelief_with, adadelta, adadelta_with, adagrad, adagrad_with,
    adamax, adamax_with, lion, lion_with, nadam, nadam_with, radam, radam_with, rmsprop,
    rmsprop_with, sm3, sm3_with,
};
pub use layerwise::{
    Lamb, LambOptions, Lars, LarsOptions, Novograd, NovogradOptions, lamb, lamb_with, lars,
    lars_with, novograd, novograd_with,
};

use super::schedules::Schedule;
use super::transforms::{
    AddDecayedWeights, ScaleByAdam, ScaleByLearningRate, Trace, add_decayed_weights, scale_by_adam,
    scale_by_learning_rate, trace,
};

/// Stochastic gradient descent, optionally with momentum:
/// `(trace or identity, scale_by_learning_rate)`.
pub type Sgd = (Option<Trace>, ScaleByLearningRate);

/// Adam: `(scale_by_adam, scale_by_learning_rate)`.
pub type Adam = (ScaleByAdam, ScaleByLearningRate);

/// AdamW: `(scale_by_adam, add_decayed_weights, scale_by_learning_rate)`.
pub type AdamW = (ScaleByAdam, AddDecayedWeights, ScaleByLearningRate);

/// `optax.sgd(learning_rate)`: `params -= learning_rate * grads`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let grads = Array::from_slice(&[0.5f32, 1.0], &[2])?;
/// let opt = optim::sgd(0.5);
/// let state = opt.init(&params);
/// let (updates, _state) = opt.update(grads, state, &params)?;
/// let params = optim::apply_updates(&params, &updates)?;
/// assert_eq!(params.to_vec::<f32>()?, vec![0.75, 1.5]);
/// # Ok(())
/// # }
/// ```
pub fn sgd(learning_rate: impl Into<Schedule>) -> Sgd {
    (None, scale_by_learning_rate(learning_rate))
}

/// `optax.sgd(learning_rate, momentum=beta, nesterov=nesterov)`: SGD on a
/// momentum trace.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let mut params = Array::from_slice(&[0.0f32], &[1])?;
/// let grads = Array::from_slice(&[1.0f32], &[1])?;
/// let opt = optim::momentum(1.0, 0.5, false);
/// let mut state = opt.init(&params);
/// for _ in 0..2 {
///     let (updates, next) = opt.update(grads.clone(), state, &params)?;
///     (params, state) = (optim::apply_updates(&params, &updates)?, next);
/// }
/// assert_eq!(params.to_vec::<f32>()?, vec![-2.5]);          // -1, then -(1 + 0.5)
/// # Ok(())
/// # }
/// ```
pub fn momentum(learning_rate: impl Into<Schedule>, beta: f64, nesterov: bool) -> Sgd {
    (
        Some(trace(beta, nesterov)),
        scale_by_learning_rate(learning_rate),
    )
}

/// `optax.adam(learning_rate)` with Optax's defaults (b1 0.9, b2 0.999,
/// eps 1e-8).
///
/// Adam's first step moves every parameter by about the learning rate,
/// against the sign of its gradient:
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[1.0f32, 1.0], &[2])?;
/// let grads = Array::from_slice(&[2.0f32, -0.5], &[2])?;
/// let opt = optim::adam(0.1);
/// let (updates, state) = opt.update(grads, opt.init(&params), &params)?;
/// let u = updates.to_vec::<f32>()?;
/// assert!((u[0] + 0.1).abs() < 1e-6 && (u[1] - 0.1).abs() < 1e-6, "{u:?}");
/// assert_eq!(state.0.count.item::<i32>()?, 1);                // the step count
/// # Ok(())
/// # }
/// ```
pub fn adam(learning_rate: impl Into<Schedule>) -> Adam {
    adam_with(learning_rate, 0.9, 0.999, 1e-8)
}

/// `optax.adam(learning_rate, b1, b2, eps)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation, Schedule};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[1.0f32], &[1])?;
/// // A schedule as the learning rate: its step count is in the state.
/// let opt = optim::adam_with(Schedule::linear(0.1, 0.0, 10), 0.8, 0.99, 1e-6);
/// let (updates, _) = opt.update(params.clone(), opt.init(&params), &params)?;
/// assert!((updates.item::<f32>()? + 0.1).abs() < 1e-5);
/// # Ok(())
/// # }
/// ```
pub fn adam_with(learning_rate: impl Into<Schedule>, b1: f64, b2: f64, eps: f64) -> Adam {
    (
        scale_by_adam(b1, b2, eps),
        scale_by_learning_rate(learning_rate),
    )
}

/// `optax.adamw(learning_rate, weight_decay=weight_decay)` with Optax's
/// defaults (b1 0.9, b2 0.999, eps 1e-8); Optax's default weight decay is
/// 1e-4.
///
/// The decay is added to Adam's direction before the learning rate
/// scales it: the update is `-lr * (adam + weight_decay * params)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[1.0f32, 1.0], &[2])?;
/// let grads = Array::from_slice(&[1.0f32, -1.0], &[2])?;
/// let opt = optim::adamw(0.1, 0.5);
/// let (updates, _) = opt.update(grads, opt.init(&params), &params)?;
/// let u = updates.to_vec::<f32>()?;                          // -0.1 * ([1, -1] + 0.5)
/// assert!((u[0] + 0.15).abs() < 1e-6 && (u[1] - 0.05).abs() < 1e-6, "{u:?}");
/// # Ok(())
/// # }
/// ```
pub fn adamw(learning_rate: impl Into<Schedule>, weight_decay: f64) -> AdamW {
    adamw_with(learning_rate, 0.9, 0.999, 1e-8, weight_decay)
}

/// `optax.adamw(learning_rate, b1, b2, eps, weight_decay=weight_decay)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[2.0f32], &[1])?;
/// let opt = optim::adamw_with(0.1, 0.9, 0.999, 1e-8, 0.0);   // no decay: Adam
/// let (updates, _) = opt.update(Array::from_slice(&[3.0f32], &[1])?, opt.init(&params), &params)?;
/// assert!((updates.item::<f32>()? + 0.1).abs() < 1e-6);
/// # Ok(())
/// # }
/// ```
pub fn adamw_with(
    learning_rate: impl Into<Schedule>,
    b1: f64,
    b2: f64,
    eps: f64,
    weight_decay: f64,
) -> AdamW {
    (
        scale_by_adam(b1, b2, eps),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )
}
