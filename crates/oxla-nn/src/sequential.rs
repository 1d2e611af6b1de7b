//! [`Sequential`]: layers applied one after another, as Flax's
//! `nn.Sequential`, over the [`Layer`] trait of single-input layers.
//!
//! The layers are a tuple (or a `Vec` of one layer type), not a list of
//! boxed trait objects: tuples and `Vec`s are already pytrees, so a
//! `Sequential` is one too, typed by its layers, and `jit`, `grad`, `vmap`,
//! the optimizers and the checkpoints take it whole, its gradient a
//! `Sequential` of the same layers. A `Vec<Box<dyn Layer>>` could not be
//! rebuilt from leaves (the pytree would not know which type each leaf
//! belongs to). The activations between layers are [`Activation`]s, a
//! pytree without leaves whose variant is part of the structure (and so of
//! every jit cache key), as a static field is.

use oxla::pytree::{StaticValue, static_field};
use oxla::{Array, Error, Pytree, Result, TreeDef};

use super::conv::{Conv, Conv2d, ConvTranspose};
use super::embedding::Embedding;
use super::glu::GluMlp;
use super::group_norm::GroupNorm;
use super::instance_norm::InstanceNorm;
use super::linear::{Activation, Linear, Mlp};
use super::normalization::{LayerNorm, RmsNorm};

/// A layer of one input and one output: what a [`Sequential`] chains.
/// Implemented by the crate's single-input layers ([`Linear`], [`Mlp`],
/// [`GluMlp`], [`Embedding`], [`LayerNorm`], [`RmsNorm`], [`GroupNorm`],
/// [`InstanceNorm`], [`Conv`], [`ConvTranspose`], [`Conv2d`]), by
/// [`Activation`], by tuples of layers (applied first to last), by a
/// non-empty `Vec` of one layer type and by [`Sequential`] itself; a user
/// layer joins by implementing it (and deriving [`Pytree`]).
pub trait Layer {
    /// The layer's output for `x` (the layer's own `apply`).
    #[track_caller]
    fn apply(&self, x: &Array) -> Array;
}

/// Layers applied one after another, each to the previous one's output, as
/// Flax's `nn.Sequential`: `layers` is a tuple of up to 12 [`Layer`]s (or
/// a `Vec` of one type). A pytree whose leaves are its layers' parameters,
/// named by position as Flax names them (`layers[0].kernel` for Flax's
/// `layers_0/kernel`).
///
/// ```
/// use oxla_nn::{Activation, LayerNorm, Linear, Sequential};
/// use oxla::random::{Key, split2};
/// use oxla::{Array, DType, grad, jit, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let (k0, k1) = split2(Key::new(0));
/// let model = Sequential::new((
///     Linear::new(k0, 4, 16),
///     Activation::Relu,
///     Linear::new(k1, 16, 8),
///     LayerNorm::new(8),
/// ));
/// let x = jnp::ones(&[3, 4], DType::F32);
/// assert_eq!(model.apply(&x).shape(), &[3, 8]);
/// assert_eq!(
///     oxla_train::checkpoint::tensor_names(&model),
///     vec!["layers[0].kernel", "layers[0].bias", "layers[2].kernel", "layers[2].bias",
///          "layers[3].scale", "layers[3].bias"]
/// );
/// // jit and grad take it whole; the gradient has the model's layers.
/// let y = jit(|(m, x): (Sequential<_>, Array)| m.apply(&x)).call((model.clone(), x.clone()))?;
/// assert_eq!(y.shape(), &[3, 8]);
/// let g = grad(|m: Sequential<(Linear, Activation, Linear, LayerNorm)>| {
///     jnp::sum(&jnp::sin(&m.apply(&x)), None, false)
/// })
/// .call(model)?;
/// assert_eq!(g.layers.2.kernel.shape(), &[16, 8]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Sequential<L: Layer + Pytree> {
    /// The layers, first to last.
    pub layers: L,
}

impl<L: Layer + Pytree> Sequential<L> {
    /// The chain of `layers` (a tuple of [`Layer`]s, or a `Vec` of one).
    pub fn new(layers: L) -> Sequential<L> {
        Sequential { layers }
    }

    /// Each layer applied to the previous one's output, starting from `x`;
    /// the first error (an input a layer cannot take) is the result, naming
    /// that layer and the caller's line.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.layers.apply(x)
    }
}

impl<L: Layer + Pytree> Layer for Sequential<L> {
    #[track_caller]
    fn apply(&self, x: &Array) -> Array {
        self.layers.apply(x)
    }
}

/// A non-empty stack of one layer type; an empty one is an error (Flax's
/// `Sequential` refuses no layers too).
impl<L: Layer> Layer for Vec<L> {
    #[track_caller]
    fn apply(&self, x: &Array) -> Array {
        let Some((first, rest)) = self.split_first() else {
            let location = oxla::Location::from_caller(std::panic::Location::caller());
            return Array::error(Error::InvalidArgument(format!(
                "{location}: Sequential.apply: there are no layers to apply"
            )));
        };
        rest.iter().fold(first.apply(x), |h, layer| layer.apply(&h))
    }
}

macro_rules! tuple_layer {
    ($first:ident $(, $rest:ident)*) => {
        impl<$first: Layer $(, $rest: Layer)*> Layer for ($first, $($rest,)*) {
            #[track_caller]
            #[allow(non_snake_case)]
            fn apply(&self, x: &Array) -> Array {
                let ($first, $($rest,)*) = self;
                let h = $first.apply(x);
                $(let h = $rest.apply(&h);)*
                h
            }
        }
    };
}

tuple_layer!(A);
tuple_layer!(A, B);
tuple_layer!(A, B, C);
tuple_layer!(A, B, C, D);
tuple_layer!(A, B, C, D, E);
tuple_layer!(A, B, C, D, E, F);
tuple_layer!(A, B, C, D, E, F, G);
tuple_layer!(A, B, C, D, E, F, G, H);
tuple_layer!(A, B, C, D, E, F, G, H, I);
tuple_layer!(A, B, C, D, E, F, G, H, I, J);
tuple_layer!(A, B, C, D, E, F, G, H, I, J, K);
tuple_layer!(A, B, C, D, E, F, G, H, I, J, K, M);

macro_rules! layer_by_apply {
    ($($layer:ty),*) => {$(
        impl Layer for $layer {
            #[track_caller]
            fn apply(&self, x: &Array) -> Array {
                <$layer>::apply(self, x)
            }
        }
    )*};
}

layer_by_apply!(
    Linear,
    Mlp,
    GluMlp,
    Embedding,
    LayerNorm,
    RmsNorm,
    GroupNorm,
    InstanceNorm,
    Conv,
    ConvTranspose,
    Conv2d
);

impl Layer for Activation {
    #[track_caller]
    fn apply(&self, x: &Array) -> Array {
        Activation::apply(*self, x)
    }
}

/// An activation is a pytree without leaves: its variant is part of the
/// structure (as a static field's value is), so it can sit between the
/// layers of a [`Sequential`].
impl Pytree for Activation {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, _: &mut Vec<Array>) -> TreeDef {
        TreeDef::Static(StaticValue::new(self))
    }

    fn unflatten_from(def: &TreeDef, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        static_field(def, "Activation")
    }

    fn with_leaves(&self, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(*self)
    }
}
