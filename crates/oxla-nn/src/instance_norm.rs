//! [`InstanceNorm`]: per-example, per-channel normalization over the
//! spatial axes, as Flax's `nn.InstanceNorm` (channels last).

use oxla::numpy as jnp;
use oxla::{Array, DType};

use super::norm_stats::{check_scaled_layer, compute_stats, normalize};

/// Flax's `epsilon` default for `InstanceNorm`.
const DEFAULT_EPSILON: f64 = 1e-6;

/// Normalizes each example's channel (the last axis) over the axes between
/// the batch (the first) and the channels, then scales and shifts per
/// channel, as Flax's `nn.InstanceNorm` (`feature_axes=-1`).
///
/// ```
/// use oxla::{DType, numpy as jnp, random::{self, Key}};
/// use oxla_nn::InstanceNorm;
/// # fn main() -> oxla::Result<()> {
/// let norm = InstanceNorm::new(3);
/// let x = random::normal(Key::new(0), &[2, 4, 4, 3], DType::F32);   // NHWC
/// let y = norm.apply(&x);
/// let means = jnp::mean(&y, Some(&[1, 2]), false).to_vec::<f32>()?;   // per example and channel
/// assert!(means.iter().all(|m| m.abs() < 1e-5), "{means:?}");
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct InstanceNorm {
    /// `[channels]`, ones at first; `None` when not scaled.
    pub scale: Option<Array>,
    /// `[channels]`, zeros at first; `None` when not shifted.
    pub bias: Option<Array>,
    /// Added to the variance.
    #[pytree(static)]
    pub epsilon: f64,
    /// The variance as `E[x²] - E[x]²` clipped at 0 (Flax's default), else
    /// as `E[(x - E[x])²]`.
    #[pytree(static)]
    pub use_fast_variance: bool,
}

impl InstanceNorm {
    /// An instance norm over `channels` with scale and bias, f32, epsilon
    /// 1e-6 (Flax's defaults).
    pub fn new(channels: i64) -> InstanceNorm {
        InstanceNorm {
            scale: Some(jnp::ones(&[channels], DType::F32)),
            bias: Some(jnp::zeros(&[channels], DType::F32)),
            epsilon: DEFAULT_EPSILON,
            use_fast_variance: true,
        }
    }

    /// The same layer with another epsilon.
    pub fn with_epsilon(mut self, epsilon: f64) -> InstanceNorm {
        self.epsilon = epsilon;
        self
    }

    /// The normalized `x` `[batch, ..., channels]` (rank 2 or more).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        const METHOD: &str = "InstanceNorm.apply";
        let (scale, bias) = (self.scale.as_ref(), self.bias.as_ref());
        if let Some(e) = check_scaled_layer(METHOD, self, scale, bias, x, 2) {
            return e;
        }
        let axes: Vec<i64> = (1..x.ndim_or_zero() as i64 - 1).collect();
        let (mean, var) = compute_stats(x, &axes, self.use_fast_variance);
        normalize(
            x,
            (&mean, &var),
            &axes,
            self.epsilon,
            self.scale.as_ref(),
            self.bias.as_ref(),
        )
    }
}
