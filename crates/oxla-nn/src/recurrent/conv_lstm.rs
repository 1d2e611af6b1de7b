//! [`ConvLstmCell`]: Flax's `nn.ConvLSTMCell`.

use oxla::Array;
use oxla::numpy as jnp;
use oxla::random::{IntoKey, Key};

use super::{RnnCell, check_step, zero_state};
use crate::activations;
use crate::conv::{Conv, ConvInit, ConvPadding};

/// A convolutional LSTM cell (Shi et al. 2015), as Flax's
/// `nn.ConvLSTMCell`: the LSTM's gates computed by two convolutions with
/// `4 * features` outputs each, `ih` over the input and `hh` over the
/// hidden state, split on the last axis into `i, g, f, o`:
///
/// ```text
/// i, g, f, o = split(ih(x) + hh(h), 4)
/// c' = σ(f + 1) * c + σ(i) * tanh(g)      h' = σ(o) * tanh(c')
/// ```
///
/// Inputs are `[*batch, *spatial, in_features]`; the carry `(c, h)` and
/// the output `h'` are `[*batch, *spatial, features]` (SAME padding, by
/// default). Its [`RnnCell::num_feature_axes`] is the number of spatial
/// axes plus one, so [`Rnn`](super::Rnn) finds the time axis before the
/// spatial ones: `[*batch, time, *spatial, features]`.
///
/// ```
/// use oxla_nn::{ConvLstmCell, Rnn, RnnCell};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let cell = ConvLstmCell::new(Key::new(0), 3, 4, &[2, 2]);
/// assert_eq!(cell.ih.kernel.shape(), &[2, 2, 3, 16]);
/// let x = jnp::ones(&[2, 5, 5, 3], DType::F32);             // [batch, height, width, features]
/// let ((c, h), _) = cell.apply(cell.initialize_carry(&[2, 5, 5, 3]), &x);
/// assert_eq!((c.shape(), h.shape()), (&[2i64, 5, 5, 4][..], &[2i64, 5, 5, 4][..]));
/// let y = Rnn::new(cell).apply(&jnp::ones(&[2, 7, 5, 5, 3], DType::F32));
/// assert_eq!(y.shape(), &[2, 7, 5, 5, 4]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct ConvLstmCell {
    /// The input's convolution: `[*window, in_features, 4 * features]`.
    pub ih: Conv,
    /// The hidden state's convolution: `[*window, features, 4 * features]`.
    pub hh: Conv,
}

impl ConvLstmCell {
    /// A cell of `kernel_size` windows with Flax's defaults (LeCun normal
    /// kernels, zero biases, f32, strides 1, SAME padding).
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
    ) -> ConvLstmCell {
        ConvLstmCell::with_init(
            key,
            in_features,
            features,
            kernel_size,
            &ConvInit::default(),
        )
    }

    /// A cell whose two convolutions draw their parameters as `init` says
    /// (`bias_init: None` is Flax's `use_bias=False`).
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        init: &ConvInit,
    ) -> ConvLstmCell {
        let key: Key = key.into_key();
        let (input_key, hidden_key) = oxla::random::split2(key);
        ConvLstmCell {
            ih: Conv::with_init(input_key, in_features, 4 * features, kernel_size, 1, init),
            hh: Conv::with_init(hidden_key, features, 4 * features, kernel_size, 1, init),
        }
    }

    /// The same cell with other strides for both convolutions.
    pub fn with_strides(self, strides: &[i64]) -> ConvLstmCell {
        ConvLstmCell {
            ih: self.ih.with_strides(strides),
            hh: self.hh.with_strides(strides),
        }
    }

    /// The same cell with other padding for both convolutions.
    pub fn with_padding(self, padding: impl Into<ConvPadding>) -> ConvLstmCell {
        let padding = padding.into();
        ConvLstmCell {
            ih: self.ih.with_padding(padding.clone()),
            hh: self.hh.with_padding(padding),
        }
    }
}

impl RnnCell for ConvLstmCell {
    type Carry = (Array, Array);
    const NAME: &'static str = "ConvLstmCell";

    fn in_features(&self) -> i64 {
        let shape = self.ih.kernel.shape_or_empty();
        shape.len().checked_sub(2).map_or(0, |i| shape[i])
    }

    fn features(&self) -> i64 {
        self.ih.kernel.shape_or_empty().last().map_or(0, |f| f / 4)
    }

    fn num_feature_axes(&self) -> usize {
        self.ih.kernel.shape_or_empty().len().saturating_sub(1)
    }

    /// `((c', h'), h')` for the carry `(c, h)` and `x` `[*batch, *spatial,
    /// in_features]`.
    #[track_caller]
    fn apply(&self, (c, h): (Array, Array), x: &Array) -> ((Array, Array), Array) {
        if let Err(failed) = check_step(self, x, &[&c, &h]) {
            return failed;
        }
        let gates = self.ih.apply(x) + self.hh.apply(&h);
        // numpy's split gives four sections, or four copies of its error.
        let sections = jnp::split(&gates, 4, -1);
        let [i, g, f, o] = [0, 1, 2, 3].map(|k| sections[k].clone());
        let sigmoid = activations::sigmoid;
        let new_c = sigmoid(&(f + 1.0)) * &c + sigmoid(&i) * jnp::tanh(&g);
        let new_h = sigmoid(&o) * jnp::tanh(&new_c);
        ((new_c, new_h.clone()), new_h)
    }

    fn initialize_carry(&self, input_shape: &[i64]) -> (Array, Array) {
        let zeros = zero_state(input_shape, self.features(), &self.hh.kernel);
        (zeros.clone(), zeros)
    }
}
