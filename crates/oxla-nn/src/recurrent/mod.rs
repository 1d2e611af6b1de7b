//! Flax's recurrent layers: the cells [`LstmCell`], [`GruCell`],
//! [`SimpleCell`], [`MguCell`] and [`ConvLstmCell`] (one time step),
//! [`Rnn`], which runs a cell over a sequence with one `lax::scan`, and [`Bidirectional`], two of them in opposite directions.
//!
//! A cell's gate layers are [`Linear`]s named as Flax names its `Dense`
//! sub-modules (`ii`, `if`, ..., `hn`), so Flax's parameter tree loads
//! leaf for leaf and checkpoints carry Flax's names.

mod bidirectional;
mod conv_lstm;
mod gru;
mod lstm;
mod mgu;
mod rnn;
mod simple;

pub use bidirectional::Bidirectional;
pub use conv_lstm::ConvLstmCell;
pub use gru::GruCell;
pub use lstm::LstmCell;
pub use mgu::MguCell;
pub use rnn::{Rnn, flip_sequences};
pub use simple::SimpleCell;

use oxla::{Array, DType, Pytree};

use super::Linear;
use super::initializers::{self, Initializer};
use oxla::random::{IntoKey, Key};

/// A recurrent cell: one time step `(carry, x) -> (carry, y)` over inputs
/// `[..., in_features]`, as Flax's `RNNCellBase`. [`Rnn`] scans any cell
/// over a sequence.
pub trait RnnCell: Pytree<Value = Self> + Clone {
    /// The state carried from step to step: `(c, h)` for an LSTM, `h`
    /// for a GRU.
    type Carry: Pytree<Value = Self::Carry> + Clone;

    /// The layer's name in error messages.
    const NAME: &'static str;

    /// The size of the last axis of the inputs.
    fn in_features(&self) -> i64;

    /// The size of the hidden state and of the outputs.
    fn features(&self) -> i64;

    /// The number of trailing axes of a step's input that are not batch
    /// axes (Flax's `num_feature_axes`): 1 for `[*batch, features]`, the
    /// spatial axes plus one for a convolutional cell. [`Rnn`]'s time
    /// axis sits just before them.
    fn num_feature_axes(&self) -> usize {
        1
    }

    /// One step: the new carry and the output (Flax's `__call__`).
    #[track_caller]
    fn apply(&self, carry: Self::Carry, x: &Array) -> (Self::Carry, Array);

    /// The initial carry for a step input of shape `input_shape`
    /// (`[*batch, in_features]`): zeros of shape `[*batch, features]` in
    /// the parameters' dtype, Flax's default `carry_init` (which draws
    /// nothing, so no key is needed).
    fn initialize_carry(&self, input_shape: &[i64]) -> Self::Carry;

    /// The initial carry for a step input of shape `input_shape`, each
    /// leaf drawn by `carry_init` (Flax's `carry_init` attribute with
    /// `initialize_carry(rng, input_shape)`): a carry of one array takes
    /// `key` itself, a carry of several (an LSTM's `(c, h)`) one split of
    /// it each, in order, as Flax's cells split theirs.
    ///
    /// ```
    /// use oxla_nn::{LstmCell, RnnCell, initializers};
    /// use oxla::random::Key;
    /// let cell = LstmCell::new(Key::new(0), 3, 4);
    /// let (c, h) = cell.initialize_carry_with(Key::new(1), &[2, 3], initializers::normal(0.1));
    /// assert_eq!((c.shape(), h.shape()), (&[2i64, 4][..], &[2i64, 4][..]));
    /// ```
    #[track_caller]
    fn initialize_carry_with(
        &self,
        key: impl IntoKey,
        input_shape: &[i64],
        carry_init: Initializer,
    ) -> Self::Carry {
        let template = self.initialize_carry(input_shape);
        let (leaves, def) = template.flatten();
        let key: Key = key.into_key();
        let keys = match leaves.len() {
            1 => vec![key],
            n => oxla::random::split(key, n),
        };
        let mut drawn = leaves
            .iter()
            .zip(keys)
            .map(|(leaf, key)| match leaf.aval() {
                Ok(a) => carry_init.init(key, &a.shape, a.dtype),
                Err(_) => leaf.clone(),
            });
        Self::Carry::unflatten_from(&def, &mut drawn)
            .expect("a structure rebuilds from as many leaves as it has")
    }
}

/// Implements [`Pytree`] for a cell whose gate layers carry Flax's names,
/// some of which (`if`, `in`) are Rust keywords and so cannot be field
/// names: each `field => "name"` is a child named as Flax names it; the
/// `static` fields are hyper-parameters, as `#[pytree(static)]` makes them.
macro_rules! flax_named_pytree {
    ($ty:ident { $($field:ident => $name:literal),* $(,)? } static { $($sfield:ident),* $(,)? }) => {
        impl ::oxla::Pytree for $ty {
            type Value = Self;

            fn into_value(self) -> ::oxla::Result<Self> {
                Ok(self)
            }

            fn flatten_into(&self, leaves: &mut Vec<::oxla::Array>) -> ::oxla::TreeDef {
                ::oxla::TreeDef::Struct(
                    stringify!($ty),
                    vec![
                        $(($name, ::oxla::Pytree::flatten_into(&self.$field, leaves)),)*
                        $((
                            stringify!($sfield),
                            ::oxla::TreeDef::Static(::oxla::pytree::StaticValue::new(&self.$sfield)),
                        ),)*
                    ],
                )
            }

            fn unflatten_from(
                def: &::oxla::TreeDef,
                leaves: &mut dyn Iterator<Item = ::oxla::Array>,
            ) -> ::oxla::Result<Self> {
                let names = [$($name,)* $(stringify!($sfield),)*];
                match def {
                    ::oxla::TreeDef::Struct(name, children)
                        if *name == stringify!($ty)
                            && children.iter().map(|(n, _)| *n).eq(names.iter().copied()) =>
                    {
                        let mut children = children.iter().map(|(_, t)| t);
                        Ok(Self {
                            $($field: ::oxla::Pytree::unflatten_from(
                                children.next().expect("checked count"),
                                leaves,
                            )?,)*
                            $($sfield: ::oxla::pytree::static_field(
                                children.next().expect("checked count"),
                                stringify!($sfield),
                            )?,)*
                        })
                    }
                    other => Err(::oxla::pytree::mismatch(other, stringify!($ty))),
                }
            }
        }
    };
}
pub(crate) use flax_named_pytree;

/// A gate layer from `in_features` to `features` with Flax's initializers
/// for its side: input kernels LeCun normal, hidden ones orthogonal,
/// biases zero (`None`: no bias).
fn gate(
    key: Key,
    in_features: i64,
    features: i64,
    kernel_init: Initializer,
    bias: bool,
    dtype: DType,
) -> Linear {
    Linear::with_init(
        key,
        in_features,
        features,
        kernel_init,
        bias.then(initializers::zeros),
        dtype,
    )
}

/// Zeros of shape `[*batch, features]` for an input of `[*batch, _]`, in
/// the dtype of the cell's parameter `param` (its error, if it carries
/// one: a constructor that could not build the layer).
fn zero_state(input_shape: &[i64], features: i64, param: &Array) -> Array {
    let dtype = match param.aval() {
        Ok(a) => a.dtype,
        Err(_) => return param.clone(),
    };
    let mut shape = input_shape[..input_shape.len().saturating_sub(1)].to_vec();
    shape.push(features);
    oxla::numpy::zeros(&shape, dtype)
}

/// The error array of a cell given a hidden state whose last dimension is
/// not its `features`.
#[track_caller]
fn check_state(layer: &str, x: &Array, state: &Array, features: i64) -> Result<(), Array> {
    match state.aval() {
        Err(e) => Err(Array::error(e)),
        Ok(a) if a.shape.last() == Some(&features) => Ok(()),
        Ok(a) => Err(super::layer_input_error(
            layer,
            x,
            &format!("its carry is {a}, but the layer's hidden state has {features} features"),
        )),
    }
}

/// `template` with every leaf replaced by `error`.
fn errors_like<T: Pytree<Value = T>>(template: &T, error: &Array) -> T {
    let (leaves, def) = template.flatten();
    T::unflatten_from(&def, &mut leaves.iter().map(|_| error.clone()))
        .expect("a structure rebuilds from as many leaves as it has")
}

/// `Ok` when a step of `cell` can run on `x` with the carry's `states`
/// (the cell's own parameters carry no error, `x` has the cell's input
/// features and each state its hidden ones); else the error as the cell's
/// `(carry, output)`, naming the cell, the shapes and the caller's line.
#[track_caller]
fn check_step<C: RnnCell>(cell: &C, x: &Array, states: &[&Array]) -> Result<(), (C::Carry, Array)> {
    if let Some(e) = crate::own_error(cell) {
        return Err(cell_error(cell, e));
    }
    crate::expect_features(C::NAME, x, cell.in_features())
        .and_then(|()| {
            states
                .iter()
                .try_for_each(|state| check_state(C::NAME, x, state, cell.features()))
        })
        .map_err(|e| cell_error(cell, e))
}

/// The error `e` as the cell's `(carry, output)`.
fn cell_error<C: RnnCell>(cell: &C, e: Array) -> (C::Carry, Array) {
    let template = cell.initialize_carry(&[cell.in_features()]);
    (errors_like(&template, &e), e)
}
