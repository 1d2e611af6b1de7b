//! [`MguCell`]: Flax's `nn.MGUCell`, the minimal gated unit.

use oxla::random::{IntoKey, Key};
use oxla::{Array, DType};

use super::{RnnCell, check_step, flax_named_pytree, gate, zero_state};
use crate::initializers::{self, Initializer};
use crate::{Activation, Linear};

/// A minimal gated unit (Zhou et al. 2016), as Flax's `nn.MGUCell`:
///
/// ```text
/// f = σ(x·if + b_if + h·hf)
/// n = tanh(x·in + b_in + f * (h·hn + b_hn))     (without reset_gate: + h·hn)
/// h' = (1 - f) * n + f * h
/// ```
///
/// The carry is `h` `[*batch, features]`, and so is the output `h'`. The
/// input layers `if` and `in` have biases, `if`'s starting at one (Flax's
/// `forget_bias_init`); of the hidden layers only `hn` has one, and only
/// with `reset_gate`. In the pytree the gates carry Flax's names: `if`
/// and `in`, not `if_` and `in_`.
///
/// ```
/// use oxla_nn::{MguCell, RnnCell};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let cell = MguCell::new(Key::new(0), 3, 4);
/// assert_eq!(cell.if_.bias.as_ref().unwrap().to_vec::<f32>()?, vec![1.0; 4]);
/// let (h, _) = cell.apply(cell.initialize_carry(&[2, 3]), &jnp::ones(&[2, 3], DType::F32));
/// assert_eq!(h.shape(), &[2, 4]);
/// assert_eq!(
///     oxla_train::checkpoint::tensor_names(&cell),
///     ["if.kernel", "if.bias", "in.kernel", "in.bias", "hf.kernel", "hn.kernel", "hn.bias"]
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct MguCell {
    /// Forget gate, input side: `[in_features, features]`, bias ones.
    pub if_: Linear,
    /// Candidate, input side (Flax's `in`), bias zeros.
    pub in_: Linear,
    /// Forget gate, hidden side: `[features, features]`, no bias.
    pub hf: Linear,
    /// Candidate, hidden side, with a bias when `reset_gate`.
    pub hn: Linear,
    /// The gate's nonlinearity (Flax's `gate_fn`, sigmoid by default).
    pub gate_fn: Activation,
    /// The candidate's nonlinearity (Flax's `activation_fn`, tanh).
    pub activation_fn: Activation,
    /// Whether the forget gate scales the candidate's hidden term
    /// (Flax's `reset_gate`, true by default).
    pub reset_gate: bool,
}

flax_named_pytree!(MguCell {
    if_ => "if", in_ => "in", hf => "hf", hn => "hn",
} static { gate_fn, activation_fn, reset_gate });

impl MguCell {
    /// A cell with Flax's default initializers (input kernels LeCun
    /// normal, hidden kernels orthogonal, the forget bias ones, the
    /// candidate's zeros) in f32, with the reset gate.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, features: i64) -> MguCell {
        MguCell::with_init(
            key,
            in_features,
            features,
            initializers::lecun_normal(),
            initializers::orthogonal(),
            DType::F32,
            true,
        )
    }

    /// A cell with the given kernel initializers, parameter dtype and
    /// `reset_gate` (biases as Flax's defaults, sigmoid gate, tanh).
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_init: Initializer,
        recurrent_kernel_init: Initializer,
        dtype: DType,
        reset_gate: bool,
    ) -> MguCell {
        let key: Key = key.into_key();
        let mut k = oxla::random::split(key, 4).into_iter();
        let mut next = || k.next().expect("split gives as many keys as asked for");
        let hidden = |k: Key, bias| gate(k, features, features, recurrent_kernel_init, bias, dtype);
        MguCell {
            if_: Linear::with_init(
                next(),
                in_features,
                features,
                kernel_init,
                Some(initializers::ones()),
                dtype,
            ),
            in_: gate(next(), in_features, features, kernel_init, true, dtype),
            hf: hidden(next(), false),
            hn: hidden(next(), reset_gate),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
            reset_gate,
        }
    }
}

impl RnnCell for MguCell {
    type Carry = Array;
    const NAME: &'static str = "MguCell";

    fn in_features(&self) -> i64 {
        self.if_.in_features()
    }

    fn features(&self) -> i64 {
        self.if_.out_features()
    }

    /// `(h', h')` for the carry `h` and `x` `[*batch, in_features]`.
    #[track_caller]
    fn apply(&self, h: Array, x: &Array) -> (Array, Array) {
        if let Err(failed) = check_step(self, x, &[&h]) {
            return failed;
        }
        let f = self.gate_fn.apply(&(self.if_.apply(x) + self.hf.apply(&h)));
        let mut hidden = self.hn.apply(&h);
        if self.reset_gate {
            hidden = hidden * &f;
        }
        let n = self.activation_fn.apply(&(self.in_.apply(x) + hidden));
        let new_h = (-&f + 1.0) * n + f * &h;
        (new_h.clone(), new_h)
    }

    fn initialize_carry(&self, input_shape: &[i64]) -> Array {
        zero_state(input_shape, self.features(), &self.hf.kernel)
    }
}
