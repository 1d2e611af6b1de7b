//! [`GluMlp`]: the gated feed-forward block of LLaMA-style transformers
//! (SwiGLU, GeGLU, GLU).

use oxla::{Array, DType};

use super::expect_features;
use super::initializers::{self, Initializer};
use super::linear::{Activation, Linear};
use oxla::random::{IntoKey, Key, split};

/// `down(activation(gate(x)) * up(x))`: a gated MLP, as LLaMA's
/// feed-forward block. `gate` and `up` widen `features` to `hidden`,
/// `down` narrows back; each is a [`Linear`] (Flax `Dense`) named as the
/// Flax module `gate`, `up`, `down` would name it. The activation picks the
/// variant: [`Activation::Silu`] is SwiGLU (LLaMA), [`Activation::Gelu`]
/// GeGLU (tanh-approximate GELU, Flax's `nn.gelu` default),
/// [`Activation::Sigmoid`] the original GLU, [`Activation::Relu`] ReGLU.
///
/// ```
/// use oxla_nn::{Activation, GluMlp};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let ffn = GluMlp::swiglu(Key::new(0), 8, 32);        // 8 → 32 → 8, no biases
/// assert_eq!(ffn.gate.kernel.shape(), &[8, 32]);
/// assert_eq!(ffn.down.kernel.shape(), &[32, 8]);
/// assert!(ffn.up.bias.is_none());
/// let y = ffn.apply(&jnp::ones(&[2, 5, 8], DType::F32));
/// assert_eq!(y.shape(), &[2, 5, 8]);
/// assert_eq!(
///     oxla_train::checkpoint::tensor_names(&ffn),
///     vec!["gate.kernel", "up.kernel", "down.kernel"]
/// );
/// // An input of another width names the layer and the caller's line.
/// let e = ffn.apply(&jnp::ones(&[2, 7], DType::F32)).check().map(|_| ()).unwrap_err();
/// assert!(e.to_string().contains("GluMlp.apply of f32[2,7]"));
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct GluMlp {
    /// `features → hidden`, through the activation.
    pub gate: Linear,
    /// `features → hidden`, the linear path the gate multiplies.
    pub up: Linear,
    /// `hidden → features` (or the output width it was built with).
    pub down: Linear,
    /// The gate's nonlinearity (static: part of the jit cache key).
    #[pytree(static)]
    pub activation: Activation,
}

impl GluMlp {
    /// A gated MLP `features → hidden → features` without biases (as
    /// LLaMA's), kernels LeCun normal (Flax's `Dense` default), f32; `gate`,
    /// `up` and `down` are drawn from three splits of `key`.
    #[track_caller]
    pub fn new(key: impl IntoKey, features: i64, hidden: i64, activation: Activation) -> GluMlp {
        GluMlp::with_init(
            key,
            [features, hidden, features],
            activation,
            initializers::lecun_normal(),
            None,
            DType::F32,
        )
    }

    /// SwiGLU (`activation` [`Activation::Silu`]), as [`new`](Self::new).
    #[track_caller]
    pub fn swiglu(key: impl IntoKey, features: i64, hidden: i64) -> GluMlp {
        GluMlp::new(key, features, hidden, Activation::Silu)
    }

    /// A gated MLP through `[in_features, hidden, out_features]` with the
    /// given kernel and bias initializers (`None`: no biases) in `dtype`.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        [in_features, hidden, out_features]: [i64; 3],
        activation: Activation,
        kernel_init: Initializer,
        bias_init: Option<Initializer>,
        dtype: DType,
    ) -> GluMlp {
        let key: Key = key.into_key();
        let mut keys = split(key, 3).into_iter();
        let mut linear = |from, to| {
            let key = keys.next().expect("three keys were split");
            Linear::with_init(key, from, to, kernel_init, bias_init, dtype)
        };
        GluMlp {
            gate: linear(in_features, hidden),
            up: linear(in_features, hidden),
            down: linear(hidden, out_features),
            activation,
        }
    }

    /// `down(activation(gate(x)) * up(x))` for `x` `[..., in_features]`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        if let Err(e) = expect_features("GluMlp", x, self.gate.in_features()) {
            return e;
        }
        if let Err(e) = self.check_widths() {
            return e;
        }
        let gated = self.activation.apply(&self.gate.apply(x)) * self.up.apply(x);
        self.down.apply(&gated)
    }

    /// An error unless `up` reads what `gate` reads and `down` reads what
    /// both give (a struct assembled by hand may not).
    #[track_caller]
    fn check_widths(&self) -> Result<(), Array> {
        let (gate, up, down) = (&self.gate, &self.up, &self.down);
        if up.in_features() == gate.in_features()
            && up.out_features() == gate.out_features()
            && down.in_features() == gate.out_features()
        {
            return Ok(());
        }
        let location = oxla::Location::from_caller(std::panic::Location::caller());
        let kernel = |l: &Linear| l.kernel.aval().map(ToString::to_string).unwrap_or_default();
        Err(Array::error(oxla::Error::InvalidArgument(format!(
            "{location}: GluMlp.apply: the kernels gate {}, up {} and down {} do not chain: gate \
             and up must be [in, hidden] and down [hidden, out]",
            kernel(gate),
            kernel(up),
            kernel(down),
        ))))
    }
}
