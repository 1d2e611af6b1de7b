//! Adafactor (`optax.adafactor`): factored second moments, update
//! clipping, relative step sizes.

use oxla::DType;

use super::super::schedules::Schedule;
use super::super::transforms::{
    AddDecayedWeights, ClipByBlockRms, Ema, Scale, ScaleByFactoredRms, ScaleByLearningRate,
    ScaleByParamBlockRms, add_decayed_weights, clip_by_block_rms, scale, scale_by_factored_rms,
    scale_by_param_block_rms,
};

/// Adafactor: `(scale_by_factored_rms, clip_by_block_rms,
/// scale_by_learning_rate (not negated), scale_by_param_block_rms, ema,
/// add_decayed_weights, scale(-1))`, the optional slots `None` when their
/// option is off.
pub type Adafactor = (
    ScaleByFactoredRms,
    Option<ClipByBlockRms>,
    Option<ScaleByLearningRate>,
    Option<ScaleByParamBlockRms>,
    Option<Ema>,
    Option<AddDecayedWeights>,
    Scale,
);

/// The arguments of `optax.adafactor`, [`Default`] being Optax's defaults
/// (no learning rate among them).
#[derive(Debug, Clone, PartialEq)]
pub struct AdafactorOptions {
    /// The learning rate; `None` (the default) leaves the relative step
    /// sizes unscaled.
    pub learning_rate: Option<Schedule>,
    /// The shortest second-largest axis a leaf's second moment is factored
    /// over (128).
    pub min_dim_size_to_factor: i64,
    /// The exponent of the second moment's decay schedule (0.8).
    pub decay_rate: f64,
    /// Steps to shift that schedule by (0).
    pub decay_offset: i64,
    /// Whether to scale each update by its parameter's RMS (true).
    pub multiply_by_parameter_scale: bool,
    /// The largest RMS of each leaf's update before the learning rate
    /// (`Some(1.0)`; `None` for no clipping).
    pub clipping_threshold: Option<f64>,
    /// The decay of a momentum (an average without debiasing) over the
    /// updates (none).
    pub momentum: Option<f64>,
    /// The dtype that momentum is kept in (f32).
    pub dtype_momentum: DType,
    /// Times the parameters, added to the updates (none).
    pub weight_decay_rate: Option<f64>,
    /// Added to the squared gradients (1e-30).
    pub eps: f64,
    /// Whether to factor second moments at all (true).
    pub factored: bool,
}

impl Default for AdafactorOptions {
    fn default() -> Self {
        AdafactorOptions {
            learning_rate: None,
            min_dim_size_to_factor: 128,
            decay_rate: 0.8,
            decay_offset: 0,
            multiply_by_parameter_scale: true,
            clipping_threshold: Some(1.0),
            momentum: None,
            dtype_momentum: DType::F32,
            weight_decay_rate: None,
            eps: 1e-30,
            factored: true,
        }
    }
}

/// `optax.adafactor(learning_rate)` with Optax's other defaults.
pub fn adafactor(learning_rate: impl Into<Schedule>) -> Adafactor {
    adafactor_with(AdafactorOptions {
        learning_rate: Some(learning_rate.into()),
        ..AdafactorOptions::default()
    })
}

/// `optax.adafactor(learning_rate, min_dim_size_to_factor, decay_rate,
/// decay_offset, multiply_by_parameter_scale, clipping_threshold, momentum,
/// dtype_momentum, weight_decay_rate, eps, factored)` (every leaf decayed:
/// Optax's default mask). `adafactor_with(AdafactorOptions::default())` is
/// `optax.adafactor()`.
pub fn adafactor_with(options: AdafactorOptions) -> Adafactor {
    let AdafactorOptions {
        learning_rate,
        min_dim_size_to_factor,
        decay_rate,
        decay_offset,
        multiply_by_parameter_scale,
        clipping_threshold,
        momentum,
        dtype_momentum,
        weight_decay_rate,
        eps,
        factored,
    } = options;
    (
        scale_by_factored_rms(
            factored,
            decay_rate,
            decay_offset,
            min_dim_size_to_factor,
            eps,
        ),
        clipping_threshold.map(clip_by_block_rms),
        learning_rate.map(|schedule| ScaleByLearningRate {
            schedule,
            flip_sign: false,
        }),
        multiply_by_parameter_scale.then(|| scale_by_param_block_rms(1e-3)),
        momentum.map(|decay| Ema {
            decay,
            debias: false,
            accumulator_dtype: Some(dtype_momentum),
        }),
        weight_decay_rate.map(add_decayed_weights),
        scale(-1.0),
    )
}
