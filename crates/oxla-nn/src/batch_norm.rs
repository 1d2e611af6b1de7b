//! [`BatchNorm`] and its running statistics [`BatchStats`], as Flax's
//! `nn.BatchNorm` over the last axis.

use oxla::numpy as jnp;
use oxla::{Array, DType};

use super::norm_stats::{check_input, check_parameter, compute_stats, input_error, normalize};

/// Flax's `momentum` default.
const DEFAULT_MOMENTUM: f64 = 0.99;
/// Flax's `epsilon` default for `BatchNorm`.
const DEFAULT_EPSILON: f64 = 1e-5;

/// Normalizes each feature (the last axis) by statistics over all the
/// other axes, then scales and shifts, as Flax's `nn.BatchNorm` (`axis=-1`).
///
/// The trainable parameters (`scale`, `bias`) are this struct; the running
/// statistics are a separate pytree, [`BatchStats`] (Flax's `batch_stats`
/// collection), passed in and returned explicitly, so a gradient of the
/// layer never touches them and a jitted step takes and returns both.
/// [`apply_train`](Self::apply_train) normalizes by the batch's statistics
/// and returns the running statistics moved towards them (Flax's
/// `use_running_average=False`, `mutable=['batch_stats']`);
/// [`apply_eval`](Self::apply_eval) normalizes by the running statistics
/// (`use_running_average=True`).
///
/// ```
/// use oxla::{Array, jit};
/// use oxla_nn::{BatchNorm, BatchStats};
/// # fn main() -> oxla::Result<()> {
/// let bn = BatchNorm::new(2);
/// let stats = BatchStats::new(2);                  // mean 0, var 1
/// let x = Array::from_slice(&[1.0f32, 10.0, 3.0, 30.0], &[2, 2])?;
/// // A jitted training step takes the statistics and returns new ones.
/// let step = jit(|(bn, stats, x): (BatchNorm, BatchStats, Array)| bn.apply_train(&stats, &x));
/// let (y, stats) = step.call((bn.clone(), stats, x.clone()))?;
/// let y = y.to_vec::<f32>()?;                      // each column to ±1 (almost: epsilon)
/// assert!((y[0] + 1.0).abs() < 1e-4 && (y[3] - 1.0).abs() < 1e-4, "{y:?}");
/// // Running mean: 0.99 * 0 + 0.01 * [2, 20]; variance 0.99 * 1 + 0.01 * [1, 100].
/// let mean = stats.mean.to_vec::<f32>()?;
/// let var = stats.var.to_vec::<f32>()?;
/// assert!((mean[0] - 0.02).abs() < 1e-6 && (mean[1] - 0.2).abs() < 1e-6, "{mean:?}");
/// assert!((var[0] - 1.0).abs() < 1e-6 && (var[1] - 1.99).abs() < 1e-5, "{var:?}");
/// // Evaluation uses the running statistics and leaves them as they are.
/// assert_eq!(bn.apply_eval(&stats, &x).shape(), &[2, 2]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct BatchNorm {
    /// `[features]`, ones at first; `None` when not scaled (Flax's
    /// `use_scale=False`).
    pub scale: Option<Array>,
    /// `[features]`, zeros at first; `None` when not shifted (Flax's
    /// `use_bias=False`).
    pub bias: Option<Array>,
    /// Decay of the running statistics: `running = momentum * running +
    /// (1 - momentum) * batch`.
    #[pytree(static)]
    pub momentum: f64,
    /// Added to the variance.
    #[pytree(static)]
    pub epsilon: f64,
    /// The variance as `E[x²] - E[x]²` clipped at 0 (Flax's default), else
    /// as `E[(x - E[x])²]`.
    #[pytree(static)]
    pub use_fast_variance: bool,
}

/// The running statistics of a [`BatchNorm`], Flax's `batch_stats`
/// collection: state a training step updates, not a trainable parameter.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct BatchStats {
    /// `[features]`, the running mean; zeros at first.
    pub mean: Array,
    /// `[features]`, the running variance; ones at first.
    pub var: Array,
}

impl BatchStats {
    /// Fresh statistics over `features`, as Flax initializes them: mean
    /// zeros, variance ones (f32).
    pub fn new(features: i64) -> BatchStats {
        BatchStats {
            mean: jnp::zeros(&[features], DType::F32),
            var: jnp::ones(&[features], DType::F32),
        }
    }

    /// Both statistics replaced by the error `e`.
    fn error(e: Array) -> BatchStats {
        BatchStats {
            mean: e.clone(),
            var: e,
        }
    }
}

impl BatchNorm {
    /// A batch norm over `features` with scale (ones) and bias (zeros), f32,
    /// momentum 0.99 and epsilon 1e-5 (Flax's defaults). Its statistics
    /// start as [`BatchStats::new`]`(features)`.
    pub fn new(features: i64) -> BatchNorm {
        BatchNorm {
            scale: Some(jnp::ones(&[features], DType::F32)),
            bias: Some(jnp::zeros(&[features], DType::F32)),
            momentum: DEFAULT_MOMENTUM,
            epsilon: DEFAULT_EPSILON,
            use_fast_variance: true,
        }
    }

    /// The same layer with another momentum.
    pub fn with_momentum(mut self, momentum: f64) -> BatchNorm {
        self.momentum = momentum;
        self
    }

    /// The same layer with another epsilon.
    pub fn with_epsilon(mut self, epsilon: f64) -> BatchNorm {
        self.epsilon = epsilon;
        self
    }

    /// Training mode: `x` `[..., features]` normalized by its own mean and
    /// variance over every axis but the last, and `stats` moved towards
    /// them by the momentum. On a bad input both the output and the
    /// returned statistics carry the error.
    #[track_caller]
    pub fn apply_train(&self, stats: &BatchStats, x: &Array) -> (Array, BatchStats) {
        if let Some(e) = self.check("BatchNorm.apply_train", stats, x) {
            return (e.clone(), BatchStats::error(e));
        }
        let axes = reduction_axes(x);
        let (mean, var) = compute_stats(x, &axes, self.use_fast_variance);
        let y = normalize(
            x,
            (&mean, &var),
            &axes,
            self.epsilon,
            self.scale.as_ref(),
            self.bias.as_ref(),
        );
        let keep = self.momentum;
        let new = 1.0 - self.momentum;
        let stats = BatchStats {
            mean: &stats.mean * keep + mean * new,
            var: &stats.var * keep + var * new,
        };
        (y, stats)
    }

    /// Evaluation mode: `x` `[..., features]` normalized by the running
    /// statistics `stats`.
    #[track_caller]
    pub fn apply_eval(&self, stats: &BatchStats, x: &Array) -> Array {
        if let Some(e) = self.check("BatchNorm.apply_eval", stats, x) {
            return e;
        }
        normalize(
            x,
            (&stats.mean, &stats.var),
            &reduction_axes(x),
            self.epsilon,
            self.scale.as_ref(),
            self.bias.as_ref(),
        )
    }

    /// An error array when the layer, its statistics or `x` are wrong.
    #[track_caller]
    fn check(&self, method: &str, stats: &BatchStats, x: &Array) -> Option<Array> {
        if let Some(e) = super::own_error(self).or_else(|| super::own_error(stats)) {
            return Some(e);
        }
        let features = match stats.mean.shape_or_empty() {
            [f] => *f,
            _ => {
                return Some(input_error(
                    method,
                    &stats.mean,
                    "the running mean must be a vector [features]",
                ));
            }
        };
        // Not `or_else`: a closure would hide the caller's line.
        [
            check_parameter(method, "running var", Some(&stats.var), features),
            check_parameter(method, "scale", self.scale.as_ref(), features),
            check_parameter(method, "bias", self.bias.as_ref(), features),
            check_input(method, x, 1, Some(features)),
        ]
        .into_iter()
        .flatten()
        .next()
    }
}

/// Every axis of `x` but the last.
fn reduction_axes(x: &Array) -> Vec<i64> {
    (0..x.ndim_or_zero().saturating_sub(1) as i64).collect()
}
