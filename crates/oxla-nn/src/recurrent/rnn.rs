//! [`Rnn`]: a cell scanned over a sequence, as Flax's `nn.RNN`, and
//! [`flip_sequences`], its reversal that keeps padding at the end.

use oxla::lax::{self, ScanOptions};
use oxla::numpy as jnp;
use oxla::{Array, Pytree};

use super::{RnnCell, cell_error, errors_like};
use crate::{expect_features, layer_input_error, own_error};

/// Runs a cell over the time axis of a sequence with one `lax::scan`, as
/// Flax's `nn.RNN`: inputs `[*batch, time, features]` (`[time, *batch,
/// features]` when `time_major`), outputs `[*batch, time, cell features]`
/// in the same layout; for a cell with several feature axes
/// ([`RnnCell::num_feature_axes`], a [`ConvLstmCell`]'s spatial axes and
/// features) the time axis sits before all of them. The cell's parameters
/// are shared by every step; the initial carry is the cell's zeros unless one is given (one drawn
/// otherwise comes from [`RnnCell::initialize_carry_with`], Flax's
/// `carry_init`).
///
/// With `reverse` the sequence runs from its last element to its first
/// and the outputs come back in that order, or in the input's order with
/// `keep_order` too. Given `seq_lengths` (`[*batch]`, integers), a
/// reversal keeps the padding at the end ([`flip_sequences`]), and the
/// returned carry is each sequence's after its last valid element (the
/// carry at step `length - 1`; outputs past a length are not zeroed), as
/// Flax does. Flax's `return_carry` is the choice between [`Rnn::apply`]
/// and [`Rnn::apply_with_carry`]. Its parameters sit under `cell`, as
/// Flax's do.
///
/// ```
/// use oxla_nn::{LstmCell, Rnn};
/// use oxla::random::Key;
/// use oxla::{Array, DType, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let rnn = Rnn::new(LstmCell::new(Key::new(0), 3, 4));
/// let x = jnp::ones(&[2, 5, 3], DType::F32);                   // [batch, time, features]
/// assert_eq!(rnn.apply(&x).shape(), &[2, 5, 4]);
///
/// // The carry after each sequence's last valid step, and gradients.
/// let lengths = Array::from_slice(&[5i32, 2], &[2])?;
/// let ((c, h), y) = rnn.apply_with_carry(&x, None, Some(&lengths));
/// assert_eq!(h.shape(), &[2, 4]);
/// let second = y.to_vec::<f32>()?;
/// assert_eq!(h.to_vec::<f32>()?[4..], second[20 + 4..20 + 8]);  // sequence 1 at step 1
/// let g = grad(|r: Rnn<LstmCell>| jnp::sum(&r.apply(&x), None, false)).call(rnn)?;
/// assert_eq!(g.cell.hi.kernel.shape(), &[4, 4]);
/// # let _ = c;
/// # Ok(())
/// # }
/// ```
///
/// [`ConvLstmCell`]: super::ConvLstmCell
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Rnn<C: RnnCell> {
    /// The cell applied at every step.
    pub cell: C,
    /// Inputs and outputs are `[time, *batch, features]`, not `[*batch,
    /// time, features]`.
    #[pytree(static)]
    pub time_major: bool,
    /// Runs from the last element to the first.
    #[pytree(static)]
    pub reverse: bool,
    /// With `reverse`, returns the outputs in the input's order.
    #[pytree(static)]
    pub keep_order: bool,
    /// Steps per iteration of the compiled loop (`lax::scan`'s `unroll`).
    #[pytree(static)]
    pub unroll: i64,
}

/// How one call runs: the layer's flags, or a [`Bidirectional`]'s
/// overrides of them.
///
/// [`Bidirectional`]: super::Bidirectional
#[derive(Debug, Clone, Copy)]
pub(super) struct Direction {
    pub time_major: bool,
    pub reverse: bool,
    pub keep_order: bool,
    /// Whether the caller takes the carry (so that `seq_lengths` selects
    /// it from the carries of every step).
    pub return_carry: bool,
}

impl<C: RnnCell> Rnn<C> {
    /// A forward, batch-major RNN over `cell` (Flax's defaults).
    pub fn new(cell: C) -> Rnn<C> {
        Rnn {
            cell,
            time_major: false,
            reverse: false,
            keep_order: false,
            unroll: 1,
        }
    }

    /// The output sequence for `x` (Flax's `return_carry=False`), from
    /// the cell's zero carry.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.run(x, None, None, self.direction(false)).1
    }

    /// The final carry and the output sequence for `x` (Flax's
    /// `return_carry=True`), from `initial_carry` (`None`: the cell's
    /// zeros), with the sequences' `seq_lengths` `[*batch]` if given.
    #[track_caller]
    pub fn apply_with_carry(
        &self,
        x: &Array,
        initial_carry: Option<C::Carry>,
        seq_lengths: Option<&Array>,
    ) -> (C::Carry, Array) {
        self.run(x, initial_carry, seq_lengths, self.direction(true))
    }

    fn direction(&self, return_carry: bool) -> Direction {
        Direction {
            time_major: self.time_major,
            reverse: self.reverse,
            keep_order: self.keep_order,
            return_carry,
        }
    }

    /// Flax's `RNN.__call__` with the call's direction.
    #[track_caller]
    pub(super) fn run(
        &self,
        x: &Array,
        initial_carry: Option<C::Carry>,
        seq_lengths: Option<&Array>,
        direction: Direction,
    ) -> (C::Carry, Array) {
        let fail = |e: Array| cell_error(&self.cell, e);
        let layout = match self.check(x, initial_carry.as_ref(), seq_lengths, direction) {
            Ok(layout) => layout,
            Err(e) => return fail(e),
        };
        let Direction {
            time_major,
            reverse,
            keep_order,
            return_carry,
        } = direction;
        let batch_dims = layout.batch_dims;
        let inputs = if reverse {
            flip_sequences(x, seq_lengths, batch_dims, time_major)
        } else {
            x.clone()
        };
        let carry = initial_carry.unwrap_or(layout.zero_carry);
        let slice_carry = seq_lengths.is_some() && return_carry;
        let cell = &self.cell;
        let options = ScanOptions {
            unroll: self.unroll,
            ..ScanOptions::default()
        };
        let scanned = lax::scan(
            |carry: C::Carry, x: Array| {
                let (carry, y) = cell.apply(carry, &x);
                // Every step's carry, to pick each sequence's last valid one.
                let history = slice_carry.then(|| carry.clone());
                (carry, (history, y))
            },
            carry,
            jnp::moveaxis(&inputs, layout.time_axis, 0),
            options,
        );
        let (carry, (history, ys)) = match scanned {
            Ok(out) => out,
            Err(e) => return fail(Array::error(e)),
        };
        let carry = match (history, seq_lengths) {
            (Some(history), Some(lengths)) => select_last_carry(&history, lengths),
            _ => carry,
        };
        let mut outputs = jnp::moveaxis(&ys, 0, layout.time_axis);
        if reverse && keep_order {
            outputs = flip_sequences(&outputs, seq_lengths, batch_dims, time_major);
        }
        (carry, outputs)
    }

    /// The input's layout, or the error naming what does not fit.
    #[track_caller]
    fn check(
        &self,
        x: &Array,
        initial_carry: Option<&C::Carry>,
        seq_lengths: Option<&Array>,
        direction: Direction,
    ) -> Result<Layout<C::Carry>, Array> {
        if let Some(e) = own_error(self) {
            return Err(e);
        }
        let shape = x.aval().map_err(Array::error)?.shape.to_vec();
        // The cell's feature axes: `features`, or `*spatial, features`.
        let feature_axes = self.cell.num_feature_axes();
        let features = if feature_axes == 1 {
            "features"
        } else {
            "*spatial, features"
        };
        let layout = if direction.time_major {
            format!("[time, *batch, {features}]")
        } else {
            format!("[*batch, time, {features}]")
        };
        let rank = shape.len();
        if rank < feature_axes + 1 {
            return Err(layer_input_error(
                "Rnn",
                x,
                &format!("the layer takes inputs {layout}"),
            ));
        }
        expect_features("Rnn", x, self.cell.in_features())?;
        let time_axis = if direction.time_major {
            0
        } else {
            rank - feature_axes - 1
        };
        let batch: &[i64] = if direction.time_major {
            &shape[1..rank - feature_axes]
        } else {
            &shape[..time_axis]
        };
        if let Some(lengths) = seq_lengths {
            let a = lengths.aval().map_err(Array::error)?;
            if a.shape.as_slice() != batch || !a.dtype.is_int() {
                return Err(layer_input_error(
                    "Rnn",
                    x,
                    &format!(
                        "seq_lengths is {a}, but it needs integers of the batch shape {batch:?} \
                         (inputs {layout})"
                    ),
                ));
            }
        }
        let mut step_shape = shape.clone();
        step_shape.remove(time_axis);
        let zero_carry = self.cell.initialize_carry(&step_shape);
        if let Some(given) = initial_carry {
            let (given, _) = given.flatten();
            let (want, _) = zero_carry.flatten();
            let avals = |leaves: &[Array]| -> Result<Vec<oxla::Aval>, Array> {
                leaves
                    .iter()
                    .map(|l| l.aval().cloned().map_err(Array::error))
                    .collect()
            };
            let (given, want) = (avals(&given)?, avals(&want)?);
            let fits = given.len() == want.len()
                && given
                    .iter()
                    .zip(&want)
                    .all(|(g, w)| g.shape == w.shape && g.dtype == w.dtype);
            if !fits {
                let list = |a: &[oxla::Aval]| {
                    a.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(layer_input_error(
                    "Rnn",
                    x,
                    &format!(
                        "the initial carry is ({}), but {} needs ({}) for this input",
                        list(&given),
                        C::NAME,
                        list(&want)
                    ),
                ));
            }
        }
        Ok(Layout {
            time_axis: time_axis as i64,
            batch_dims: batch.len(),
            zero_carry,
        })
    }
}

/// Where an input's axes are, and the cell's zero carry for it.
struct Layout<T> {
    time_axis: i64,
    batch_dims: usize,
    zero_carry: T,
}

/// Each sequence's carry after its last valid step: `history` holds the
/// carries of every step (`[time, *batch, ...]` per leaf); a length of 0
/// picks the last step, as Flax's index -1 does.
fn select_last_carry<T: Pytree<Value = T>>(history: &T, lengths: &Array) -> T {
    let last = lengths - 1;
    let picked = oxla::pytree::tree_map(history, |h| {
        let shape = h.shape_or_empty();
        let mut index_shape = vec![1];
        index_shape.extend(lengths.shape_or_empty());
        index_shape.resize(shape.len(), 1);
        let mut wanted = shape.to_vec();
        if let Some(time) = wanted.first_mut() {
            *time = 1;
        }
        let index = jnp::broadcast_to(&jnp::reshape(&last, &index_shape), &wanted);
        jnp::squeeze(&jnp::take_along_axis(h, &index, 0), Some(&[0]))
    });
    picked.unwrap_or_else(|e| errors_like(history, &Array::error(e)))
}

/// Reverses sequences along their time axis, each within its length, as
/// Flax's `flip_sequences`: with `seq_lengths` (`[*batch]`) the first
/// `length` elements of each sequence are reversed and the padding after
/// them stays at the end (reversed too); without, the whole axis is
/// reversed. The time axis is 0 when `time_major`, else `num_batch_dims`.
///
/// ```
/// use oxla::Array;
/// use oxla_nn::flip_sequences;
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 0.0, 0.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0], &[3, 3])?;
/// let lengths = Array::from_slice(&[1i32, 2, 3], &[3])?;
/// let y = flip_sequences(&x, Some(&lengths), 1, false);
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 0.0, 0.0, 3.0, 2.0, 0.0, 6.0, 5.0, 4.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn flip_sequences(
    x: &Array,
    seq_lengths: Option<&Array>,
    num_batch_dims: usize,
    time_major: bool,
) -> Array {
    let time_axis = if time_major { 0 } else { num_batch_dims };
    let Some(lengths) = seq_lengths else {
        return jnp::flip(x, Some(&[time_axis as i64]));
    };
    let shape = x.shape_or_empty();
    let Some(&steps) = shape.get(time_axis) else {
        return layer_input_error(
            "flip_sequences",
            x,
            &format!("it has no time axis {time_axis}"),
        );
    };
    // Position t reads element (steps - 1 - t + length) mod steps.
    let backwards = jnp::arange((steps - 1) as f64, -1.0, -1.0, lengths.dtype());
    let mut backwards_shape = vec![1; num_batch_dims + 1];
    backwards_shape[time_axis] = steps;
    let backwards = jnp::reshape(&backwards, &backwards_shape);
    let lengths = jnp::expand_dims(lengths, time_axis as i64);
    let index = &(&backwards + &lengths) % steps;
    let mut index_shape = index.shape_or_empty().to_vec();
    index_shape.resize(shape.len(), 1);
    let index = jnp::broadcast_to(&jnp::reshape(&index, &index_shape), shape);
    jnp::take_along_axis(x, &index, time_axis as i64)
}
