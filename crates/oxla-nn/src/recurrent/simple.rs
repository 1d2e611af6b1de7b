//! [`SimpleCell`]: Flax's `nn.SimpleCell`, the Elman RNN step.

use oxla::random::{IntoKey, Key};
use oxla::{Array, DType};

use super::{RnnCell, check_step, gate, zero_state};
use crate::initializers::{self, Initializer};
use crate::{Activation, Linear};

/// The simple (Elman) recurrent cell, as Flax's `nn.SimpleCell`:
///
/// ```text
/// h' = tanh(x·i + b_i + h·h)            (residual: tanh(x·i + b_i + h·h + h))
/// ```
///
/// The carry is `h` `[*batch, features]`, and so is the output `h'`. Only
/// the input layer `i` has a bias (the two are summed); `h` has none.
///
/// ```
/// use oxla_nn::{RnnCell, SimpleCell};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let cell = SimpleCell::new(Key::new(0), 3, 4);
/// let x = jnp::ones(&[2, 3], DType::F32);
/// let (h, y) = cell.apply(cell.initialize_carry(&[2, 3]), &x);
/// assert_eq!((h.shape(), y.shape()), (&[2i64, 4][..], &[2i64, 4][..]));
/// assert_eq!(oxla_train::checkpoint::tensor_names(&cell), ["i.kernel", "i.bias", "h.kernel"]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct SimpleCell {
    /// The input layer: `[in_features, features]` and a bias.
    pub i: Linear,
    /// The hidden layer: `[features, features]`, no bias.
    pub h: Linear,
    /// The nonlinearity (Flax's `activation_fn`, tanh by default).
    #[pytree(static)]
    pub activation_fn: Activation,
    /// Adds `h` before the activation (Flax's `residual`).
    #[pytree(static)]
    pub residual: bool,
}

impl SimpleCell {
    /// A cell with Flax's default initializers (input kernel LeCun
    /// normal, hidden kernel orthogonal, bias zero) in f32, tanh, no
    /// residual.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, features: i64) -> SimpleCell {
        SimpleCell::with_init(
            key,
            in_features,
            features,
            initializers::lecun_normal(),
            initializers::orthogonal(),
            DType::F32,
        )
    }

    /// A cell with the given input and hidden kernel initializers and
    /// parameter dtype (bias zero, tanh, no residual).
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_init: Initializer,
        recurrent_kernel_init: Initializer,
        dtype: DType,
    ) -> SimpleCell {
        let key: Key = key.into_key();
        let (input_key, hidden_key) = oxla::random::split2(key);
        SimpleCell {
            i: gate(input_key, in_features, features, kernel_init, true, dtype),
            h: gate(
                hidden_key,
                features,
                features,
                recurrent_kernel_init,
                false,
                dtype,
            ),
            activation_fn: Activation::Tanh,
            residual: false,
        }
    }
}

impl RnnCell for SimpleCell {
    type Carry = Array;
    const NAME: &'static str = "SimpleCell";

    fn in_features(&self) -> i64 {
        self.i.in_features()
    }

    fn features(&self) -> i64 {
        self.i.out_features()
    }

    /// `(h', h')` for the carry `h` and `x` `[*batch, in_features]`.
    #[track_caller]
    fn apply(&self, h: Array, x: &Array) -> (Array, Array) {
        if let Err(failed) = check_step(self, x, &[&h]) {
            return failed;
        }
        let mut pre = self.i.apply(x) + self.h.apply(&h);
        if self.residual {
            pre = pre + &h;
        }
        let new_h = self.activation_fn.apply(&pre);
        (new_h.clone(), new_h)
    }

    fn initialize_carry(&self, input_shape: &[i64]) -> Array {
        zero_state(input_shape, self.features(), &self.h.kernel)
    }
}
