//! `oxla_nn`: activations and losses of `jax.nn`, parameter
//! [`initializers`], and layers in the spirit of Flax.
//!
//! A layer is a struct that derives [`Pytree`](oxla::Pytree): its
//! parameters are array leaves named as Flax names them (`kernel`, `bias`,
//! `scale`, `embedding`, ...) and its hyper-parameters are static fields, so
//! a model is one pytree that `jit`, `grad`, `vmap`, the optimizers of
//! `oxla_optim` and the checkpoints take whole. Constructors draw
//! parameters from an explicit [`Key`](oxla::random::Key) with Flax's
//! default initializers; `apply` runs the layer (Flax's `__call__`).
//!
//! Layers: [`Linear`], [`Mlp`], the gated [`GluMlp`] (SwiGLU, GeGLU),
//! [`Sequential`] (a tuple of [`Layer`]s applied in turn), [`Conv`] (1-, 2-, 3-D; with its
//! [`ConvPadding`] and [`ConvInit`]), [`ConvTranspose`], [`Conv2d`],
//! [`Embedding`], [`LayerNorm`],
//! [`RmsNorm`], [`BatchNorm`] (with its [`BatchStats`]), [`GroupNorm`],
//! [`InstanceNorm`], [`Dropout`], [`MultiHeadAttention`],
//! [`TransformerBlock`], [`TransformerLm`], the recurrent [`LstmCell`],
//! [`GruCell`], [`SimpleCell`], [`MguCell`], [`ConvLstmCell`], [`Rnn`] and
//! [`Bidirectional`]; functions: [`relu`], [`gelu`],
//! [`softmax`], [`log_softmax`], [`dot_product_attention`],
//! [`make_attention_mask`], [`make_causal_mask`], [`max_pool`],
//! ... Self-attention over a causal mask, as a decoder does it:
//!
//! ```
//! use oxla_nn::{MultiHeadAttention, make_causal_mask};
//! use oxla::random::{self, Key};
//! use oxla::{DType, numpy as jnp};
//! # fn main() -> oxla::Result<()> {
//! let attention = MultiHeadAttention::new(Key::new(0), 8, 2);   // 8 features, 2 heads of 4
//! assert_eq!(attention.query.kernel.shape(), &[8, 2, 4]);
//! let x = random::normal(Key::new(1), &[3, 5, 8], DType::F32);   // [batch, length, features]
//! let mask = make_causal_mask(&jnp::zeros(&[3, 5], DType::I32)); // position i sees 0..=i
//! let y = attention.apply(&x, Some(&mask));
//! assert_eq!(y.shape(), &[3, 5, 8]);
//! assert!(y.to_vec::<f32>()?.iter().all(|v| v.is_finite()));
//! # Ok(())
//! # }
//! ```

mod activations;
mod attention;
mod batch_norm;
mod conv;
mod dot_product_attention;
mod dropout;
mod embedding;
mod glu;
mod group_norm;
pub mod initializers;
mod instance_norm;
mod linear;
pub mod losses;
mod norm_stats;
mod normalization;
mod pooling;
mod recurrent;
mod sequential;
mod transformer;

pub use activations::{
    celu, elu, gelu, gelu_exact, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity,
    leaky_relu, log_sigmoid, log_softmax, log1mexp, logmeanexp, logsumexp, mish, one_hot, relu,
    relu6, selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid,
    squareplus, standardize, swish, tanh,
};
pub use attention::{
    MultiHeadAttention, Projection, flax_dot_product_attention, make_attention_mask,
    make_causal_mask, make_causal_mask_with,
};
pub use batch_norm::{BatchNorm, BatchStats};
pub use conv::{
    Conv, Conv2d, ConvInit, ConvLocal, ConvLocalGeometry, ConvPadding, ConvTranspose, KernelMask,
};
pub use dot_product_attention::{AttentionOptions, dot_product_attention};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use glu::GluMlp;
pub use group_norm::GroupNorm;
pub use initializers::Initializer;
pub use instance_norm::InstanceNorm;
pub use linear::{Activation, Linear, Mlp};
pub use normalization::{LayerNorm, RmsNorm};
/// The padding [`max_pool`] and [`avg_pool`] take (`lax::Padding`).
pub use oxla::lax::Padding;
pub use pooling::{avg_pool, max_pool};
pub use recurrent::{
    Bidirectional, ConvLstmCell, GruCell, LstmCell, MguCell, Rnn, RnnCell, SimpleCell,
    flip_sequences,
};
pub use sequential::{Layer, Sequential};
pub use transformer::{TransformerBlock, TransformerLm};

use oxla::Array;
use oxla::Error;

/// The error array of a layer given an input it cannot take: names the
/// layer, the input's type, what it expected and the caller's line.
#[track_caller]
fn layer_input_error(layer: &str, x: &Array, expected: &str) -> Array {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    let got = x.aval().map(ToString::to_string).unwrap_or_default();
    Array::error(Error::InvalidArgument(format!(
        "{location}: {layer}.apply of {got}: {expected}"
    )))
}

/// The error a layer's own parameters carry (its constructor was given
/// something that cannot work: 10 features in 3 heads, say), so that
/// `apply` reports the constructor's message and line rather than a
/// confusing complaint about the input.
fn own_error<L: oxla::Pytree>(layer: &L) -> Option<Array> {
    oxla::pytree::tree_leaves(layer)
        .into_iter()
        .find_map(|leaf| leaf.check().err().map(Array::error))
}

/// `x` if its last dimension is `features`, else [`layer_input_error`].
#[track_caller]
fn expect_features(layer: &str, x: &Array, features: i64) -> Result<(), Array> {
    match x.aval() {
        Err(e) => Err(Array::error(e)),
        Ok(a) if a.shape.last() == Some(&features) => Ok(()),
        Ok(_) => Err(layer_input_error(
            layer,
            x,
            &format!("the layer takes inputs whose last dimension is {features}"),
        )),
    }
}
