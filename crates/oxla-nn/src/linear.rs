//! Dense layers: [`Linear`] (Flax's `Dense`) and a multi-layer perceptron.

use oxla::DType;

use super::initializers::{self, Initializer};
use super::{activations, expect_features};
use oxla::Array;
use oxla::numpy as jnp;
use oxla::random::{IntoKey, Key, split, split2};

/// `x @ kernel + bias` over the last axis, as Flax's `nn.Dense`: `kernel`
/// is `[in_features, out_features]` (LeCun normal by default), `bias` is
/// `[out_features]` (zeros) or absent.
///
/// A layer is a pytree: `jit`, `grad` and the optimizers take it whole,
/// and its gradient is a `Linear` too.
///
/// ```
/// use oxla_nn::{Linear, initializers};
/// use oxla::random::Key;
/// use oxla::{DType, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let layer = Linear::new(Key::new(0), 3, 2);
/// assert_eq!(layer.kernel.shape(), &[3, 2]);
/// let x = jnp::ones(&[4, 3], DType::F32);
/// assert_eq!(layer.apply(&x).shape(), &[4, 2]);
///
/// // With chosen initializers: a kernel of ones and a zero bias.
/// let ones = Linear::with_init(Key::new(0), 3, 2, initializers::ones(), Some(initializers::zeros()), DType::F32);
/// assert_eq!(ones.apply(&x).to_vec::<f32>()?, vec![3.0; 8]);
/// let g = grad(|l: Linear| jnp::sum(&l.apply(&x), None, false)).call(ones)?;
/// assert_eq!(g.kernel.to_vec::<f32>()?, vec![4.0; 6]);        // Σ over the batch of x
/// assert_eq!(g.bias.unwrap().to_vec::<f32>()?, vec![4.0, 4.0]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Linear {
    /// `[in_features, out_features]`.
    pub kernel: Array,
    /// `[out_features]`, or `None` for a layer without bias.
    pub bias: Option<Array>,
}

impl Linear {
    /// A layer with Flax's default initializers (LeCun normal kernel, zero
    /// bias), in f32; the kernel is drawn from the first half of `key`.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, out_features: i64) -> Linear {
        let key: Key = key.into_key();
        Linear::with_init(
            key,
            in_features,
            out_features,
            initializers::lecun_normal(),
            Some(initializers::zeros()),
            DType::F32,
        )
    }

    /// A layer with the given kernel and bias initializers (`None`: no
    /// bias) and parameter dtype.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        out_features: i64,
        kernel_init: Initializer,
        bias_init: Option<Initializer>,
        dtype: DType,
    ) -> Linear {
        let key: Key = key.into_key();
        let (kernel_key, bias_key) = split2(key);
        Linear {
            kernel: kernel_init.init(kernel_key, &[in_features, out_features], dtype),
            bias: bias_init.map(|init| init.init(bias_key, &[out_features], dtype)),
        }
    }

    /// Number of input features.
    pub fn in_features(&self) -> i64 {
        self.kernel.shape_or_empty().first().copied().unwrap_or(0)
    }

    /// Number of output features.
    pub fn out_features(&self) -> i64 {
        self.kernel.shape_or_empty().get(1).copied().unwrap_or(0)
    }

    /// `x @ kernel + bias` for `x` of shape `[..., in_features]`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        if let Err(e) = expect_features("Linear", x, self.in_features()) {
            return e;
        }
        let y = jnp::matmul(x, &self.kernel);
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }
}

/// The nonlinearity between the layers of an [`Mlp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// [`relu`](super::relu).
    Relu,
    /// [`gelu`](super::gelu) (tanh approximation).
    Gelu,
    /// [`silu`](super::silu).
    Silu,
    /// `tanh`.
    Tanh,
    /// [`sigmoid`](super::sigmoid).
    Sigmoid,
}

impl Activation {
    /// The activation of `x`.
    #[track_caller]
    pub fn apply(self, x: &Array) -> Array {
        match self {
            Activation::Relu => activations::relu(x),
            Activation::Gelu => activations::gelu(x),
            Activation::Silu => activations::silu(x),
            Activation::Tanh => jnp::tanh(x),
            Activation::Sigmoid => activations::sigmoid(x),
        }
    }
}

/// A multi-layer perceptron: [`Linear`] layers with `activation` between
/// them (not after the last). The activation is a static field: part of
/// the jit cache key, not a parameter.
///
/// ```
/// use oxla_nn::{Activation, Mlp};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let mlp = Mlp::new(Key::new(0), &[4, 8, 2], Activation::Relu);
/// assert_eq!(mlp.layers.len(), 2);
/// let y = mlp.apply(&jnp::ones(&[5, 4], DType::F32));
/// assert_eq!(y.shape(), &[5, 2]);
/// assert!(y.to_vec::<f32>()?.iter().all(|v| v.is_finite()));
/// assert_eq!(
///     oxla_train::checkpoint::tensor_names(&mlp),
///     vec!["layers[0].kernel", "layers[0].bias", "layers[1].kernel", "layers[1].bias"]
/// );
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Mlp {
    /// The layers, first to last.
    pub layers: Vec<Linear>,
    /// The nonlinearity between layers.
    #[pytree(static)]
    pub activation: Activation,
}

impl Mlp {
    /// An MLP through `sizes` (`[784, 512, 512, 10]` is three layers), each
    /// layer from its own split of `key` with Flax's default initializers.
    #[track_caller]
    pub fn new(key: impl IntoKey, sizes: &[i64], activation: Activation) -> Mlp {
        let key: Key = key.into_key();
        let count = sizes.len().saturating_sub(1);
        let keys = if count == 0 {
            Vec::new()
        } else {
            split(key, count)
        };
        let layers = keys
            .into_iter()
            .zip(sizes.windows(2))
            .map(|(k, w)| Linear::new(k, w[0], w[1]))
            .collect();
        Mlp { layers, activation }
    }

    /// The network's output for `x` of shape `[..., sizes[0]]`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        let mut h = x.clone();
        let last = self.layers.len().saturating_sub(1);
        for (i, layer) in self.layers.iter().enumerate() {
            h = layer.apply(&h);
            if i < last {
                h = self.activation.apply(&h);
            }
        }
        h
    }
}
