//! [`LayerNorm`] and [`RmsNorm`] over the last axis, as Flax's.

use oxla::DType;

use super::expect_features;
use oxla::Array;
use oxla::numpy as jnp;

/// Flax's `epsilon` default for both norms.
const DEFAULT_EPSILON: f64 = 1e-6;

/// Normalizes the last axis to zero mean and unit variance, then scales and
/// shifts, as Flax's `nn.LayerNorm` (its fast variance `E[x²] - E[x]²`,
/// clipped at 0).
///
/// ```
/// use oxla::Array;
/// use oxla_nn::LayerNorm;
/// # fn main() -> oxla::Result<()> {
/// let ln = LayerNorm::new(4);
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 2.0, 2.0, 2.0, 2.0], &[2, 4])?;
/// let y = ln.apply(&x).to_vec::<f32>()?;
/// // Row 0: (x - 2.5) / sqrt(1.25 + 1e-6); row 1 is constant, so zeros.
/// let want = [-1.3416402f32, -0.4472134, 0.4472134, 1.3416402, 0.0, 0.0, 0.0, 0.0];
/// assert!(y.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-5), "{y:?}");
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct LayerNorm {
    /// `[features]`, ones at first; `None` when not scaled.
    pub scale: Option<Array>,
    /// `[features]`, zeros at first; `None` when not shifted.
    pub bias: Option<Array>,
    /// Added to the variance.
    #[pytree(static)]
    pub epsilon: f64,
}

impl LayerNorm {
    /// A layer norm over `features` with scale and bias (f32, epsilon 1e-6).
    #[track_caller]
    pub fn new(features: i64) -> LayerNorm {
        LayerNorm {
            scale: Some(filled(features, 1.0)),
            bias: Some(filled(features, 0.0)),
            epsilon: DEFAULT_EPSILON,
        }
    }

    /// The normalized `x` (shape `[..., features]`).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        if let Some(e) = check(x, "LayerNorm", self.scale.as_ref().or(self.bias.as_ref())) {
            return e;
        }
        let mean = jnp::mean(x, Some(&[-1]), true);
        let mean2 = jnp::mean(&jnp::square(x), Some(&[-1]), true);
        let var = jnp::maximum(&(mean2 - &jnp::square(&mean)), &Array::weak_scalar(0.0f32));
        let mut mul = oxla::lax::rsqrt(&(var + self.epsilon));
        if let Some(s) = &self.scale {
            mul = mul * s;
        }
        let y = (x - &mean) * &mul;
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }
}

/// Divides the last axis by its root mean square, then scales, as Flax's
/// `nn.RMSNorm`.
///
/// ```
/// use oxla::Array;
/// use oxla_nn::RmsNorm;
/// # fn main() -> oxla::Result<()> {
/// let norm = RmsNorm::new(2);
/// let x = Array::from_slice(&[3.0f32, 4.0], &[1, 2])?;
/// let y = norm.apply(&x).to_vec::<f32>()?;                   // x / sqrt(12.5 + 1e-6)
/// assert!((y[0] - 0.8485281).abs() < 1e-5 && (y[1] - 1.1313708).abs() < 1e-5, "{y:?}");
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct RmsNorm {
    /// `[features]`, ones at first; `None` when not scaled.
    pub scale: Option<Array>,
    /// Added to the mean square.
    #[pytree(static)]
    pub epsilon: f64,
}

impl RmsNorm {
    /// An RMS norm over `features` with a scale (f32, epsilon 1e-6).
    #[track_caller]
    pub fn new(features: i64) -> RmsNorm {
        RmsNorm {
            scale: Some(filled(features, 1.0)),
            epsilon: DEFAULT_EPSILON,
        }
    }

    /// The normalized `x` (shape `[..., features]`).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        if let Some(e) = check(x, "RmsNorm", self.scale.as_ref()) {
            return e;
        }
        let mean2 = jnp::mean(&jnp::square(x), Some(&[-1]), true);
        let mut mul = oxla::lax::rsqrt(&(mean2 + self.epsilon));
        if let Some(s) = &self.scale {
            mul = mul * s;
        }
        x * &mul
    }
}

fn filled(features: i64, value: f64) -> Array {
    jnp::full(&[features], value, DType::F32)
}

/// An error array when `x`'s last dimension is not the parameters' size.
#[track_caller]
fn check(x: &Array, layer: &str, parameter: Option<&Array>) -> Option<Array> {
    let features = parameter.and_then(|p| p.shape_or_empty().first().copied())?;
    expect_features(layer, x, features).err()
}
