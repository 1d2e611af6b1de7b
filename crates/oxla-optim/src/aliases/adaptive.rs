//! Optax's optimizers that rescale each element by running statistics of
//! its gradients: RMSProp, AdaGrad, AdaDelta, AdaMax, NAdam, RAdam,
//! AdaBelief, Lion and SM3.

use super::super::schedules::Schedule;
use super::super::transforms::{
    AddDecayedWeights, Scale, ScaleByAdadelta, ScaleByAdam, ScaleByAdamax, ScaleByBelief,
    ScaleByLearningRate, ScaleByLion, ScaleByRadam, ScaleByRms, ScaleByRss, ScaleBySm3,
    ScaleByStddev, Trace, add_decayed_weights, scale, scale_by_adadelta, scale_by_adamax,
    scale_by_learning_rate, scale_by_lion, scale_by_rss, scale_by_sm3, trace,
};
use super::Adam;

/// RMSProp: `(scale_by_rms or scale_by_stddev, scale_by_learning_rate,
/// trace or identity)`; exactly one of the first two slots is set
/// (`scale_by_stddev` when centered), the trace with momentum.
pub type Rmsprop = (
    Option<ScaleByRms>,
    Option<ScaleByStddev>,
    ScaleByLearningRate,
    Option<Trace>,
);

/// The optional arguments of `optax.rmsprop`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmspropOptions {
    /// Decay of the running means (0.9).
    pub decay: f64,
    /// Added to the mean of squares (1e-8).
    pub eps: f64,
    /// Initial value of the mean of squares (0).
    pub initial_scale: f64,
    /// Whether `eps` goes inside the root (true) or is added to it.
    pub eps_in_sqrt: bool,
    /// Whether to divide by the standard deviation rather than the root
    /// mean square (false).
    pub centered: bool,
    /// The decay of a momentum trace after the learning rate (none).
    pub momentum: Option<f64>,
    /// Whether that momentum is Nesterov's (false).
    pub nesterov: bool,
    /// Whether to correct the running means' bias (false).
    pub bias_correction: bool,
}

impl Default for RmspropOptions {
    fn default() -> Self {
        RmspropOptions {
            decay: 0.9,
            eps: 1e-8,
            initial_scale: 0.0,
            eps_in_sqrt: true,
            centered: false,
            momentum: None,
            nesterov: false,
            bias_correction: false,
        }
    }
}

/// `optax.rmsprop(learning_rate)` with Optax's defaults.
pub fn rmsprop(learning_rate: impl Into<Schedule>) -> Rmsprop {
    rmsprop_with(learning_rate, RmspropOptions::default())
}

/// `optax.rmsprop(learning_rate, decay, eps, initial_scale, eps_in_sqrt,
/// centered, momentum, nesterov, bias_correction)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation, RmspropOptions};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[1.0f32], &[1])?;
/// let options = RmspropOptions { centered: true, momentum: Some(0.9), ..Default::default() };
/// let opt = optim::rmsprop_with(0.01, options);
/// let state = opt.init(&params);
/// assert!(state.0.is_none() && state.1.is_some());           // centered: scale_by_stddev
/// let (updates, _) = opt.update(params.clone(), state, &params)?;
/// assert!(updates.item::<f32>()? < 0.0);
/// # Ok(())
/// # }
/// ```
pub fn rmsprop_with(learning_rate: impl Into<Schedule>, options: RmspropOptions) -> Rmsprop {
    let RmspropOptions {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt,
        centered,
        momentum,
        nesterov,
        bias_correction,
    } = options;
    let rms = (!centered).then_some(ScaleByRms {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt,
        bias_correction,
    });
    let stddev = centered.then_some(ScaleByStddev {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt,
        bias_correction,
    });
    (
        rms,
        stddev,
        scale_by_learning_rate(learning_rate),
        momentum.map(|decay| trace(decay, nesterov)),
    )
}

/// AdaGrad: `(scale_by_rss, scale_by_learning_rate)`.
pub type Adagrad = (ScaleByRss, ScaleByLearningRate);

/// `optax.adagrad(learning_rate)` with Optax's defaults (initial
/// accumulator value 0.1, eps 1e-7).
pub fn adagrad(learning_rate: impl Into<Schedule>) -> Adagrad {
    adagrad_with(learning_rate, 0.1, 1e-7)
}

/// `optax.adagrad(learning_rate, initial_accumulator_value, eps)`.
pub fn adagrad_with(
    learning_rate: impl Into<Schedule>,
    initial_accumulator_value: f64,
    eps: f64,
) -> Adagrad {
    (
        scale_by_rss(initial_accumulator_value, eps),
        scale_by_learning_rate(learning_rate),
    )
}

/// AdaDelta: `(add_decayed_weights, scale_by_adadelta,
/// scale_by_learning_rate or identity)`.
pub type Adadelta = (
    AddDecayedWeights,
    ScaleByAdadelta,
    Option<ScaleByLearningRate>,
);

/// `optax.adadelta(learning_rate)` with Optax's defaults (rho 0.9, eps
/// 1e-6, no weight decay).
pub fn adadelta(learning_rate: impl Into<Schedule>) -> Adadelta {
    adadelta_with(Some(learning_rate.into()), 0.9, 1e-6, 0.0)
}

/// `optax.adadelta(learning_rate, rho, eps, weight_decay)`. Optax's default
/// learning rate is `None`, which leaves AdaDelta's updates unscaled and
/// unnegated (as `optax.adadelta()` does, they then ascend).
pub fn adadelta_with(
    learning_rate: Option<Schedule>,
    rho: f64,
    eps: f64,
    weight_decay: f64,
) -> Adadelta {
    (
        add_decayed_weights(weight_decay),
        scale_by_adadelta(rho, eps),
        learning_rate.map(scale_by_learning_rate),
    )
}

/// AdaMax: `(scale_by_adamax, scale_by_learning_rate)`.
pub type Adamax = (ScaleByAdamax, ScaleByLearningRate);

/// `optax.adamax(learning_rate)` with Optax's defaults (b1 0.9, b2 0.999,
/// eps 1e-8).
pub fn adamax(learning_rate: impl Into<Schedule>) -> Adamax {
    adamax_with(learning_rate, 0.9, 0.999, 1e-8)
}

/// `optax.adamax(learning_rate, b1, b2, eps)`.
pub fn adamax_with(learning_rate: impl Into<Schedule>, b1: f64, b2: f64, eps: f64) -> Adamax {
    (
        scale_by_adamax(b1, b2, eps),
        scale_by_learning_rate(learning_rate),
    )
}

/// `optax.nadam(learning_rate)`: Adam with Nesterov's momentum, Optax's
/// defaults (b1 0.9, b2 0.999, eps 1e-8).
pub fn nadam(learning_rate: impl Into<Schedule>) -> Adam {
    nadam_with(learning_rate, 0.9, 0.999, 1e-8)
}

/// `optax.nadam(learning_rate, b1, b2, eps)`.
pub fn nadam_with(learning_rate: impl Into<Schedule>, b1: f64, b2: f64, eps: f64) -> Adam {
    (
        ScaleByAdam {
            b1,
            b2,
            eps,
            eps_root: 0.0,
            nesterov: true,
        },
        scale_by_learning_rate(learning_rate),
    )
}

/// RAdam: `(scale_by_radam, scale_by_learning_rate)`.
pub type Radam = (ScaleByRadam, ScaleByLearningRate);

/// The optional arguments of `optax.radam`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadamOptions {
    /// Decay of the first moment (0.9).
    pub b1: f64,
    /// Decay of the second moment (0.999).
    pub b2: f64,
    /// Added to the root of the second moment (1e-8).
    pub eps: f64,
    /// Added to the second moment inside the root (0).
    pub eps_root: f64,
    /// The `ro_t` from which the rectified update is used (5).
    pub threshold: f64,
    /// Whether to use Nesterov's momentum (false).
    pub nesterov: bool,
}

impl Default for RadamOptions {
    fn default() -> Self {
        RadamOptions {
            b1: 0.9,
            b2: 0.999,
            eps: 1e-8,
            eps_root: 0.0,
            threshold: 5.0,
            nesterov: false,
        }
    }
}

/// `optax.radam(learning_rate)` with Optax's defaults.
pub fn radam(learning_rate: impl Into<Schedule>) -> Radam {
    radam_with(learning_rate, RadamOptions::default())
}

/// `optax.radam(learning_rate, b1, b2, eps, eps_root, threshold,
/// nesterov=nesterov)`.
pub fn radam_with(learning_rate: impl Into<Schedule>, options: RadamOptions) -> Radam {
    let RadamOptions {
        b1,
        b2,
        eps,
        eps_root,
        threshold,
        nesterov,
    } = options;
    (
        ScaleByRadam {
            b1,
            b2,
            eps,
            eps_root,
            threshold,
            nesterov,
        },
        scale_by_learning_rate(learning_rate),
    )
}

/// AdaBelief: `(scale_by_belief, scale_by_learning_rate)`.
pub type Adabelief = (ScaleByBelief, ScaleByLearningRate);

/// The optional arguments of `optax.adabelief`, [`Default`] being Optax's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdabeliefOptions {
    /// Decay of the first moment (0.9).
    pub b1: f64,
    /// Decay of the second moment (0.999).
    pub b2: f64,
    /// Added to the root of the second moment (1e-16).
    pub eps: f64,
    /// Added to the second moment at every step (1e-16).
    pub eps_root: f64,
    /// Whether to use Nesterov's momentum (false).
    pub nesterov: bool,
}

impl Default for AdabeliefOptions {
    fn default() -> Self {
        AdabeliefOptions {
            b1: 0.9,
            b2: 0.999,
            eps: 1e-16,
            eps_root: 1e-16,
            nesterov: false,
        }
    }
}

/// `optax.adabelief(learning_rate)` with Optax's defaults.
pub fn adabelief(learning_rate: impl Into<Schedule>) -> Adabelief {
    adabelief_with(learning_rate, AdabeliefOptions::default())
}

/// `optax.adabelief(learning_rate, b1, b2, eps, eps_root,
/// nesterov=nesterov)`.
pub fn adabelief_with(learning_rate: impl Into<Schedule>, options: AdabeliefOptions) -> Adabelief {
    let AdabeliefOptions {
        b1,
        b2,
        eps,
        eps_root,
        nesterov,
    } = options;
    (
        ScaleByBelief {
            b1,
            b2,
            eps,
            eps_root,
            nesterov,
        },
        scale_by_learning_rate(learning_rate),
    )
}

/// Lion: `(scale_by_lion, add_decayed_weights, scale_by_learning_rate)`.
pub type Lion = (ScaleByLion, AddDecayedWeights, ScaleByLearningRate);

/// `optax.lion(learning_rate)` with Optax's defaults (b1 0.9, b2 0.99,
/// weight decay 1e-3).
pub fn lion(learning_rate: impl Into<Schedule>) -> Lion {
    lion_with(learning_rate, 0.9, 0.99, 1e-3)
}

/// `optax.lion(learning_rate, b1, b2, weight_decay=weight_decay)`.
pub fn lion_with(learning_rate: impl Into<Schedule>, b1: f64, b2: f64, weight_decay: f64) -> Lion {
    (
        scale_by_lion(b1, b2),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )
}

/// SM3: `(scale_by_sm3, scale(-learning_rate))`.
pub type Sm3 = (ScaleBySm3, Scale);

/// `optax.sm3(learning_rate)` with Optax's default momentum 0.9 (a
/// constant learning rate, as Optax's).
pub fn sm3(learning_rate: f64) -> Sm3 {
    sm3_with(learning_rate, 0.9)
}

/// `optax.sm3(learning_rate, momentum)`: `scale_by_sm3(momentum, 1.0,
/// 1e-8)`, then `-learning_rate`.
pub fn sm3_with(learning_rate: f64, momentum: f64) -> Sm3 {
    (scale_by_sm3(momentum, 1.0, 1e-8), scale(-learning_rate))
}
