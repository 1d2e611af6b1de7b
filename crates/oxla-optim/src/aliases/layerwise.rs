//! Optax's optimizers that scale each leaf (layer) as a whole: LAMB and
//! LARS by their trust ratio, NovoGrad by its gradient norm's moment.

use super::super::schedules::Schedule;
use super::super::transforms::{
    AddDecayedWeights, ScaleByAdam, ScaleByLearningRate, ScaleByNovograd, ScaleByTrustRatio, Trace,
    add_decayed_weights, scale_by_learning_rate, scale_by_novograd, scale_by_trust_ratio, trace,
};

/// LAMB: `(scale_by_adam, add_decayed_weights, scale_by_trust_ratio,
/// scale_by_learning_rate)`.
pub type Lamb = (
    ScaleByAdam,
    AddDecayedWeights,
    ScaleByTrustRatio,
    ScaleByLearningRate,
);

/// The optional arguments of `optax.lamb`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LambOptions {
    /// Decay of the first moment (0.9).
    pub b1: f64,
    /// Decay of the second moment (0.999).
    pub b2: f64,
    /// Added to the root of the second moment (1e-6).
    pub eps: f64,
    /// Added to the second moment inside the root (0).
    pub eps_root: f64,
    /// Times the parameters, added to Adam's direction (0).
    pub weight_decay: f64,
}

impl Default for LambOptions {
    fn default() -> Self {
        LambOptions {
            b1: 0.9,
            b2: 0.999,
            eps: 1e-6,
            eps_root: 0.0,
            weight_decay: 0.0,
        }
    }
}

/// `optax.lamb(learning_rate)` with Optax's defaults.
pub fn lamb(learning_rate: impl Into<Schedule>) -> Lamb {
    lamb_with(learning_rate, LambOptions::default())
}

/// `optax.lamb(learning_rate, b1, b2, eps, eps_root, weight_decay)` (every
/// leaf decayed: Optax's default mask).
pub fn lamb_with(learning_rate: impl Into<Schedule>, options: LambOptions) -> Lamb {
    let LambOptions {
        b1,
        b2,
        eps,
        eps_root,
        weight_decay,
    } = options;
    (
        ScaleByAdam {
            b1,
            b2,
            eps,
            eps_root,
            nesterov: false,
        },
        add_decayed_weights(weight_decay),
        scale_by_trust_ratio(0.0, 1.0, 0.0),
        scale_by_learning_rate(learning_rate),
    )
}

/// LARS: `(add_decayed_weights, scale_by_trust_ratio,
/// scale_by_learning_rate, trace)`.
pub type Lars = (
    AddDecayedWeights,
    ScaleByTrustRatio,
    ScaleByLearningRate,
    Trace,
);

/// The optional arguments of `optax.lars`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LarsOptions {
    /// Times the parameters, added to the gradients (0).
    pub weight_decay: f64,
    /// Multiplies the trust ratio (0.001).
    pub trust_coefficient: f64,
    /// Added to the update's norm in the trust ratio (0).
    pub eps: f64,
    /// Decay of the momentum trace after the learning rate (0.9).
    pub momentum: f64,
    /// Whether that momentum is Nesterov's (false).
    pub nesterov: bool,
}

impl Default for LarsOptions {
    fn default() -> Self {
        LarsOptions {
            weight_decay: 0.0,
            trust_coefficient: 0.001,
            eps: 0.0,
            momentum: 0.9,
            nesterov: false,
        }
    }
}

/// `optax.lars(learning_rate)` with Optax's defaults.
pub fn lars(learning_rate: impl Into<Schedule>) -> Lars {
    lars_with(learning_rate, LarsOptions::default())
}

/// `optax.lars(learning_rate, weight_decay, trust_coefficient=…, eps=…,
/// momentum=…, nesterov=…)`, weight decay and trust ratio applied to every
/// leaf (Optax's default masks).
pub fn lars_with(learning_rate: impl Into<Schedule>, options: LarsOptions) -> Lars {
    let LarsOptions {
        weight_decay,
        trust_coefficient,
        eps,
        momentum,
        nesterov,
    } = options;
    (
        add_decayed_weights(weight_decay),
        scale_by_trust_ratio(0.0, trust_coefficient, eps),
        scale_by_learning_rate(learning_rate),
        trace(momentum, nesterov),
    )
}

/// NovoGrad: `(scale_by_novograd, scale_by_learning_rate)`.
pub type Novograd = (ScaleByNovograd, ScaleByLearningRate);

/// The optional arguments of `optax.novograd`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NovogradOptions {
    /// Momentum factor (0.9).
    pub b1: f64,
    /// Decay of the second moment (0.25).
    pub b2: f64,
    /// Added to the root of the second moment (1e-6).
    pub eps: f64,
    /// Added to the second moment inside the root (0).
    pub eps_root: f64,
    /// Times the parameters, added to the normalized gradients (0).
    pub weight_decay: f64,
}

impl Default for NovogradOptions {
    fn default() -> Self {
        NovogradOptions {
            b1: 0.9,
            b2: 0.25,
            eps: 1e-6,
            eps_root: 0.0,
            weight_decay: 0.0,
        }
    }
}

/// `optax.novograd(learning_rate)` with Optax's defaults.
pub fn novograd(learning_rate: impl Into<Schedule>) -> Novograd {
    novograd_with(learning_rate, NovogradOptions::default())
}

/// `optax.novograd(learning_rate, b1, b2, eps, eps_root, weight_decay)`.
pub fn novograd_with(learning_rate: impl Into<Schedule>, options: NovogradOptions) -> Novograd {
    let NovogradOptions {
        b1,
        b2,
        eps,
        eps_root,
        weight_decay,
    } = options;
    (
        scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
        scale_by_learning_rate(learning_rate),
    )
}
