//! [`Bidirectional`]: two RNNs over a sequence in opposite directions, as
//! Flax's `nn.Bidirectional`.

use oxla::Array;
use oxla::numpy as jnp;

use super::rnn::Direction;
use super::{Rnn, RnnCell};

/// Runs `forward_rnn` over the sequence forwards and `backward_rnn`
/// backwards (outputs put back in the input's order, padding kept at the
/// end given `seq_lengths`), and concatenates their outputs on the last
/// axis, as Flax's `nn.Bidirectional` with its default `merge_fn` (another
/// merge: [`Bidirectional::apply_with_merge`]). Its
/// `time_major` overrides the two RNNs' own, as Flax's does; their
/// parameters sit under `forward_rnn.cell` and `backward_rnn.cell`.
///
/// ```
/// use oxla_nn::{Bidirectional, GruCell, LstmCell, Rnn};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let layer = Bidirectional::new(
///     Rnn::new(LstmCell::new(Key::new(0), 3, 4)),
///     Rnn::new(GruCell::new(Key::new(1), 3, 2)),
/// );
/// let x = jnp::ones(&[2, 5, 3], DType::F32);
/// let (((c, h), g), y) = layer.apply_with_carry(&x, None, None);
/// assert_eq!(y.shape(), &[2, 5, 6]);                 // 4 forward features, then 2 backward
/// assert_eq!((c.shape(), h.shape(), g.shape()), (&[2i64, 4][..], &[2i64, 4][..], &[2i64, 2][..]));
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Bidirectional<F: RnnCell, B: RnnCell> {
    /// The RNN run from the first element to the last.
    pub forward_rnn: Rnn<F>,
    /// The RNN run from the last element to the first.
    pub backward_rnn: Rnn<B>,
    /// Inputs and outputs are `[time, *batch, features]`.
    #[pytree(static)]
    pub time_major: bool,
}

impl<F: RnnCell, B: RnnCell> Bidirectional<F, B> {
    /// The two RNNs, batch-major (Flax's default).
    pub fn new(forward_rnn: Rnn<F>, backward_rnn: Rnn<B>) -> Self {
        Bidirectional {
            forward_rnn,
            backward_rnn,
            time_major: false,
        }
    }

    /// The merged outputs for `x` (Flax's `return_carry=False`), from
    /// both cells' zero carries.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.apply_with_carry(x, None, None).1
    }

    /// The final carries `(forward, backward)` and the merged outputs for
    /// `x` (Flax's `return_carry=True`), from `initial_carry` (`None`:
    /// zeros), with the sequences' `seq_lengths` `[*batch]` if given.
    #[track_caller]
    pub fn apply_with_carry(
        &self,
        x: &Array,
        initial_carry: Option<(F::Carry, B::Carry)>,
        seq_lengths: Option<&Array>,
    ) -> ((F::Carry, B::Carry), Array) {
        self.apply_with_merge(x, initial_carry, seq_lengths, |forward, backward| {
            jnp::concatenate(&[forward, backward], -1)
        })
    }

    /// [`apply_with_carry`](Self::apply_with_carry) with the two
    /// directions' outputs (each `[*batch, time, features]`, the backward
    /// one in the input's order) merged by `merge_fn(forward, backward)`
    /// rather than concatenated: Flax's `merge_fn`.
    ///
    /// ```
    /// use oxla_nn::{Bidirectional, GruCell, Rnn};
    /// use oxla::random::Key;
    /// use oxla::{DType, numpy as jnp};
    /// let layer = Bidirectional::new(
    ///     Rnn::new(GruCell::new(Key::new(0), 3, 4)),
    ///     Rnn::new(GruCell::new(Key::new(1), 3, 4)),
    /// );
    /// let x = jnp::ones(&[2, 5, 3], DType::F32);
    /// let (_, summed) = layer.apply_with_merge(&x, None, None, |f, b| f + b);
    /// assert_eq!(summed.shape(), &[2, 5, 4]);
    /// ```
    #[track_caller]
    pub fn apply_with_merge(
        &self,
        x: &Array,
        initial_carry: Option<(F::Carry, B::Carry)>,
        seq_lengths: Option<&Array>,
        merge_fn: impl FnOnce(&Array, &Array) -> Array,
    ) -> ((F::Carry, B::Carry), Array) {
        let (forward_carry, backward_carry) = match initial_carry {
            Some((f, b)) => (Some(f), Some(b)),
            None => (None, None),
        };
        let direction = |reverse| Direction {
            time_major: self.time_major,
            reverse,
            keep_order: reverse,
            return_carry: true,
        };
        let (carry_forward, outputs_forward) =
            self.forward_rnn
                .run(x, forward_carry, seq_lengths, direction(false));
        let (carry_backward, outputs_backward) =
            self.backward_rnn
                .run(x, backward_carry, seq_lengths, direction(true));
        let outputs = merge_fn(&outputs_forward, &outputs_backward);
        ((carry_forward, carry_backward), outputs)
    }
}
