//! [`LstmCell`]: Flax's `nn.LSTMCell`.

use oxla::random::{IntoKey, Key};
use oxla::{Array, DType};

use super::{RnnCell, check_step, flax_named_pytree, gate, zero_state};
use crate::initializers::{self, Initializer};
use crate::{Activation, Linear};

/// A long short-term memory cell, as Flax's `nn.LSTMCell` (whose
/// parameters `nn.OptimizedLSTMCell` shares):
///
/// ```text
/// i = σ(x·ii + h·hi + b_hi)     f = σ(x·if + h·hf + b_hf)
/// g = tanh(x·ig + h·hg + b_hg)  o = σ(x·io + h·ho + b_ho)
/// c' = f * c + i * g            h' = o * tanh(c')
/// ```
///
/// The carry is `(c, h)`, both `[*batch, features]`; the output is `h'`.
/// The input gates `ii, if, ig, io` have no bias, the hidden gates
/// `hi, hf, hg, ho` do (the sums need only one). In the pytree (and so in
/// checkpoints) the gates carry Flax's names: `if`, not `if_`.
///
/// ```
/// use oxla_nn::{LstmCell, RnnCell};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let cell = LstmCell::new(Key::new(0), 3, 4);             // 3 input features, 4 hidden
/// let x = jnp::ones(&[2, 3], DType::F32);                  // [batch, features]
/// let carry = cell.initialize_carry(&[2, 3]);              // zeros (c, h), each [2, 4]
/// let ((c, h), y) = cell.apply(carry, &x);
/// assert_eq!((c.shape(), y.shape()), (&[2i64, 4][..], &[2i64, 4][..]));
/// assert_eq!(h.to_vec::<f32>()?, y.to_vec::<f32>()?);
/// assert_eq!(
///     oxla_train::checkpoint::tensor_names(&cell)[..3],
///     ["ii.kernel", "if.kernel", "ig.kernel"]
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct LstmCell {
    /// Input gate, input side: `[in_features, features]`, no bias.
    pub ii: Linear,
    /// Forget gate, input side (Flax's `if`).
    pub if_: Linear,
    /// Cell candidate, input side.
    pub ig: Linear,
    /// Output gate, input side.
    pub io: Linear,
    /// Input gate, hidden side: `[features, features]` and a bias.
    pub hi: Linear,
    /// Forget gate, hidden side.
    pub hf: Linear,
    /// Cell candidate, hidden side.
    pub hg: Linear,
    /// Output gate, hidden side.
    pub ho: Linear,
    /// The gates' nonlinearity (Flax's `gate_fn`, sigmoid by default).
    pub gate_fn: Activation,
    /// The candidate's and output's nonlinearity (Flax's `activation_fn`,
    /// tanh by default).
    pub activation_fn: Activation,
}

flax_named_pytree!(LstmCell {
    ii => "ii", if_ => "if", ig => "ig", io => "io",
    hi => "hi", hf => "hf", hg => "hg", ho => "ho",
} static { gate_fn, activation_fn });

impl LstmCell {
    /// A cell with Flax's default initializers (input kernels LeCun
    /// normal, hidden kernels orthogonal, biases zero) in f32, each gate
    /// from its own split of `key`.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, features: i64) -> LstmCell {
        LstmCell::with_init(
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
    ) -> LstmCell {
        let key: Key = key.into_key();
        let input = |k: Key| gate(k, in_features, features, kernel_init, false, dtype);
        let hidden = |k: Key| gate(k, features, features, recurrent_kernel_init, true, dtype);
        let mut k = oxla::random::split(key, 8).into_iter();
        let mut next = || k.next().expect("split gives as many keys as asked for");
        LstmCell {
            ii: input(next()),
            if_: input(next()),
            ig: input(next()),
            io: input(next()),
            hi: hidden(next()),
            hf: hidden(next()),
            hg: hidden(next()),
            ho: hidden(next()),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
        }
    }
}

impl RnnCell for LstmCell {
    type Carry = (Array, Array);
    const NAME: &'static str = "LstmCell";

    fn in_features(&self) -> i64 {
        self.ii.in_features()
    }

    fn features(&self) -> i64 {
        self.ii.out_features()
    }

    /// `((c', h'), h')` for the carry `(c, h)` and `x` `[*batch, in_features]`.
    #[track_caller]
    fn apply(&self, (c, h): (Array, Array), x: &Array) -> ((Array, Array), Array) {
        if let Err(failed) = check_step(self, x, &[&c, &h]) {
            return failed;
        }
        let pre = |input: &Linear, hidden: &Linear| input.apply(x) + hidden.apply(&h);
        let i = self.gate_fn.apply(&pre(&self.ii, &self.hi));
        let f = self.gate_fn.apply(&pre(&self.if_, &self.hf));
        let g = self.activation_fn.apply(&pre(&self.ig, &self.hg));
        let o = self.gate_fn.apply(&pre(&self.io, &self.ho));
        let new_c = f * &c + i * g;
        let new_h = o * self.activation_fn.apply(&new_c);
        ((new_c, new_h.clone()), new_h)
    }

    fn initialize_carry(&self, input_shape: &[i64]) -> (Array, Array) {
        let zeros = zero_state(input_shape, self.features(), &self.hi.kernel);
        (zeros.clone(), zeros)
    }
}
