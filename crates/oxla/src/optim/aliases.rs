//! Optax's named optimizers as chains of [`transforms`](super::transforms).

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
pub fn sgd(learning_rate: impl Into<Schedule>) -> Sgd {
    (None, scale_by_learning_rate(learning_rate))
}

/// `optax.sgd(learning_rate, momentum=beta, nesterov=nesterov)`: SGD on a
/// momentum trace.
pub fn momentum(learning_rate: impl Into<Schedule>, beta: f64, nesterov: bool) -> Sgd {
    (
        Some(trace(beta, nesterov)),
        scale_by_learning_rate(learning_rate),
    )
}

/// `optax.adam(learning_rate)` with Optax's defaults (b1 0.9, b2 0.999,
/// eps 1e-8).
pub fn adam(learning_rate: impl Into<Schedule>) -> Adam {
    adam_with(learning_rate, 0.9, 0.999, 1e-8)
}

/// `optax.adam(learning_rate, b1, b2, eps)`.
pub fn adam_with(learning_rate: impl Into<Schedule>, b1: f64, b2: f64, eps: f64) -> Adam {
    (
        scale_by_adam(b1, b2, eps),
        scale_by_learning_rate(learning_rate),
    )
}

/// `optax.adamw(learning_rate, weight_decay=weight_decay)` with Optax's
/// defaults (b1 0.9, b2 0.999, eps 1e-8); Optax's default weight decay is
/// 1e-4.
pub fn adamw(learning_rate: impl Into<Schedule>, weight_decay: f64) -> AdamW {
    adamw_with(learning_rate, 0.9, 0.999, 1e-8, weight_decay)
}

/// `optax.adamw(learning_rate, b1, b2, eps, weight_decay=weight_decay)`.
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
