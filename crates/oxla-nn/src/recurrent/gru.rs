//! [`GruCell`]: Flax's `nn.GRUCell`.

use oxla::random::{IntoKey, Key};
use oxla::{Array, DType};

use super::{RnnCell, check_step, flax_named_pytree, gate, zero_state};
use crate::initializers::{self, Initializer};
use crate::{Activation, Linear};

/// A gated recurrent unit, as Flax's `nn.GRUCell`:
///
/// ```text
/// r = σ(x·ir + b_ir + h·hr)     z = σ(x·iz + b_iz + h·hz)
/// n = tanh(x·in + b_in + r * (h·hn + b_hn))
/// h' = (1 - z) * n + z * h
/// ```
///
/// The carry is `h` `[*batch, features]`, and so is the output `h'`. The
/// input gates `ir, iz, in` have biases; of the hidden gates only `hn`
/// does (it is not summed directly with `in`). In the pytree (and so in
/// checkpoints) the gates carry Flax's names: `in`, not `in_`.
///
/// ```
/// use oxla_nn::{GruCell, RnnCell};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let cell = GruCell::new(Key::new(0), 3, 4);
/// let x = jnp::ones(&[2, 3], DType::F32);
/// let (h, y) = cell.apply(cell.initialize_carry(&[2, 3]), &x);
/// assert_eq!(h.shape(), &[2, 4]);
/// assert_eq!(h.to_vec::<f32>()?, y.to_vec::<f32>()?);
/// assert!(cell.hr.bias.is_none() && cell.hn.bias.is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct GruCell {
    /// Reset gate, input side: `[in_features, features]` and a bias.
    pub ir: Linear,
    /// Update gate, input side.
    pub iz: Linear,
    /// Candidate, input side (Flax's `in`).
    pub in_: Linear,
    /// Reset gate, hidden side: `[features, features]`, no bias.
    pub hr: Linear,
    /// Update gate, hidden side, no bias.
    pub hz: Linear,
    /// Candidate, hidden side, with a bias.
    pub hn: Linear,
    /// The gates' nonlinearity (Flax's `gate_fn`, sigmoid by default).
    pub gate_fn: Activation,
    /// The candidate's nonlinearity (Flax's `activation_fn`, tanh by
    /// default).
    pub activation_fn: Activation,
}

flax_named_pytree!(GruCell {
    ir => "ir", iz => "iz", in_ => "in",
    hr => "hr", hz => "hz", hn => "hn",
} static { gate_fn, activation_fn });

impl GruCell {
    /// A cell with Flax's default initializers (input kernels LeCun
    /// normal, hidden kernels orthogonal, biases zero) in f32, each gate
    /// from its own split of `key`.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, features: i64) -> GruCell {
        GruCell::with_init(
            key,
            in_features,
            features,
            initializers::lecun_normal(),
            initializers::orthogonal(),
            DType::F32,
        )
    }

    /// A cell with the given input and hidden kernel initializers and
    /// parameter dtype (biases zero, sigmoid gates, tanh activation).
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_init: Initializer,
        recurrent_kernel_init: Initializer,
        dtype: DType,
    ) -> GruCell {
        let key: Key = key.into_key();
        let input = |k: Key| gate(k, in_features, features, kernel_init, true, dtype);
        let hidden = |k: Key, bias| gate(k, features, features, recurrent_kernel_init, bias, dtype);
        let mut k = oxla::random::split(key, 6).into_iter();
        let mut next = || k.next().expect("split gives as many keys as asked for");
        GruCell {
            ir: input(next()),
            iz: input(next()),
            in_: input(next()),
            hr: hidden(next(), false),
            hz: hidden(next(), false),
            hn: hidden(next(), true),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
        }
    }
}

impl RnnCell for GruCell {
    type Carry = Array;
    const NAME: &'static str = "GruCell";

    fn in_features(&self) -> i64 {
        self.ir.in_features()
    }

    fn features(&self) -> i64 {
        self.ir.out_features()
    }

    /// `(h', h')` for the carry `h` and `x` `[*batch, in_features]`.
    #[track_caller]
    fn apply(&self, h: Array, x: &Array) -> (Array, Array) {
        if let Err(failed) = check_step(self, x, &[&h]) {
            return failed;
        }
        let r = self.gate_fn.apply(&(self.ir.apply(x) + self.hr.apply(&h)));
        let z = self.gate_fn.apply(&(self.iz.apply(x) + self.hz.apply(&h)));
        let n = self
            .activation_fn
            .apply(&(self.in_.apply(x) + r * self.hn.apply(&h)));
        let new_h = (-&z + 1.0) * n + z * &h;
        (new_h.clone(), new_h)
    }

    fn initialize_carry(&self, input_shape: &[i64]) -> Array {
        zero_state(input_shape, self.features(), &self.hn.kernel)
    }
}
