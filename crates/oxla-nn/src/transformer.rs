//! A decoder-only transformer: pre-LayerNorm blocks of causal self-attention
//! and a GELU MLP, token and learned position embeddings, a final norm and
//! a linear head over the vocabulary.

use oxla::DType;

use super::attention::{MultiHeadAttention, make_causal_mask};
use super::embedding::Embedding;
use super::initializers;
use super::layer_input_error;
use super::linear::{Activation, Linear, Mlp};
use super::normalization::LayerNorm;
use oxla::Array;
use oxla::numpy as jnp;
use oxla::random::{IntoKey, Key, split};

/// `x + attention(ln1(x))`, then `x + mlp(ln2(x))` (GPT-2's pre-norm block;
/// the MLP widens `d_model` by `mlp_ratio` with GELU).
///
/// ```
/// use oxla_nn::{TransformerBlock, make_causal_mask};
/// use oxla::random::{self, Key};
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let block = TransformerBlock::new(Key::new(0), 16, 4, 4);   // d_model 16, 4 heads
/// let x = random::normal(Key::new(1), &[2, 5, 16], DType::F32);   // [batch, length, d_model]
/// let mask = make_causal_mask(&jnp::zeros(&[2, 5], DType::I32));  // [batch, 1, length, length]
/// let y = block.apply(&x, Some(&mask));
/// assert_eq!(y.shape(), &[2, 5, 16]);
/// assert!(y.to_vec::<f32>()?.iter().all(|v| v.is_finite()));
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct TransformerBlock {
    /// Norm before attention.
    pub ln1: LayerNorm,
    /// Multi-head self-attention.
    pub attention: MultiHeadAttention,
    /// Norm before the MLP.
    pub ln2: LayerNorm,
    /// `d_model → mlp_ratio·d_model → d_model`.
    pub mlp: Mlp,
}

impl TransformerBlock {
    /// A block over `d_model` features with `num_heads` heads.
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        d_model: i64,
        num_heads: i64,
        mlp_ratio: i64,
    ) -> TransformerBlock {
        let key: Key = key.into_key();
        let mut keys = split(key, 2).into_iter();
        let (attention_key, mlp_key) = (keys.next(), keys.next());
        TransformerBlock {
            ln1: LayerNorm::new(d_model),
            attention: MultiHeadAttention::new(
                attention_key.expect("two keys"),
                d_model,
                num_heads,
            ),
            ln2: LayerNorm::new(d_model),
            mlp: Mlp::new(
                mlp_key.expect("two keys"),
                &[d_model, mlp_ratio * d_model, d_model],
                Activation::Gelu,
            ),
        }
    }

    /// The block's output for `x` `[..., length, d_model]` under `mask`.
    #[track_caller]
    pub fn apply(&self, x: &Array, mask: Option<&Array>) -> Array {
        let x = x + &self.attention.apply(&self.ln1.apply(x), mask);
        &x + &self.mlp.apply(&self.ln2.apply(&x))
    }
}

/// A causal (decoder-only) transformer language model.
///
/// ```
/// use oxla_nn::TransformerLm;
/// use oxla::random::Key;
/// use oxla::{Array, jit};
/// # fn main() -> oxla::Result<()> {
/// // 32 tokens, d_model 16, 2 heads, 1 block, sequences up to 8.
/// let lm = TransformerLm::new(Key::new(0), 32, 16, 2, 1, 8);
/// let tokens = Array::from_slice(&[1i32, 5, 7, 2, 0, 3], &[1, 6])?;
/// assert_eq!(lm.apply(&tokens).shape(), &[1, 6, 32]);          // next-token logits
/// let loss = jit(|(lm, t): (TransformerLm, Array)| lm.loss(&t)).call((lm, tokens))?;
/// let loss = loss.item::<f32>()?;
/// assert!(loss.is_finite() && loss > 1.0 && loss < 10.0, "{loss}");   // about ln 32 untrained
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct TransformerLm {
    /// Token embeddings `[vocab, d_model]`.
    pub token_embedding: Embedding,
    /// Learned position embeddings `[max_length, d_model]`.
    pub position_embedding: Array,
    /// The blocks, first to last.
    pub blocks: Vec<TransformerBlock>,
    /// Norm after the last block.
    pub ln_final: LayerNorm,
    /// `d_model → vocab` logits.
    pub head: Linear,
}

impl TransformerLm {
    /// A model over `vocab` tokens with `num_layers` blocks of `d_model`
    /// features and `num_heads` heads (MLP ratio 4), for sequences up to
    /// `max_length`; position embeddings drawn from a normal of standard
    /// deviation 0.02, the rest with Flax's default initializers, f32.
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        vocab: i64,
        d_model: i64,
        num_heads: i64,
        num_layers: usize,
        max_length: i64,
    ) -> TransformerLm {
        let key: Key = key.into_key();
        let mut keys = split(key, num_layers + 3).into_iter();
        let mut next = || keys.next().expect("enough keys were split");
        let token_embedding = Embedding::new(next(), vocab, d_model);
        let position_embedding =
            initializers::normal(0.02).init(next(), &[max_length, d_model], DType::F32);
        let blocks = (0..num_layers)
            .map(|_| TransformerBlock::new(next(), d_model, num_heads, 4))
            .collect();
        TransformerLm {
            token_embedding,
            position_embedding,
            blocks,
            ln_final: LayerNorm::new(d_model),
            head: Linear::new(next(), d_model, vocab),
        }
    }

    /// Next-token logits `[..., length, vocab]` for integer `tokens`
    /// `[..., length]`, each position seeing itself and the ones before.
    #[track_caller]
    pub fn apply(&self, tokens: &Array) -> Array {
        let length = tokens.shape_or_empty().last().copied().unwrap_or(0);
        let max_length = self
            .position_embedding
            .shape_or_empty()
            .first()
            .copied()
            .unwrap_or(0);
        if tokens.ndim_or_zero() == 0 || length > max_length {
            return layer_input_error(
                "TransformerLm",
                tokens,
                &format!("the tokens need a sequence axis of at most {max_length} positions"),
            );
        }
        let positions = oxla::lax::slice(
            &self.position_embedding,
            &[0, 0],
            &[length, self.position_embedding.shape_or_empty()[1]],
            None,
        );
        let mut x = self.token_embedding.apply(tokens) + positions;
        let mask = make_causal_mask(tokens);
        for block in &self.blocks {
            x = block.apply(&x, Some(&mask));
        }
        self.head.apply(&self.ln_final.apply(&x))
    }

    /// Mean next-token cross entropy of `tokens` `[..., length + 1]`: the
    /// model reads all but the last and predicts all but the first.
    #[track_caller]
    pub fn loss(&self, tokens: &Array) -> Array {
        let length = tokens.shape_or_empty().last().copied().unwrap_or(0);
        let rank = tokens.ndim_or_zero();
        let take = |start: i64, stop: i64| {
            let mut lo = vec![0; rank];
            let mut hi = tokens.shape_or_empty().to_vec();
            if let (Some(l), Some(h)) = (lo.last_mut(), hi.last_mut()) {
                (*l, *h) = (start, stop);
            }
            oxla::lax::slice(tokens, &lo, &hi, None)
        };
        let logits = self.apply(&take(0, length - 1));
        let losses =
            crate::losses::softmax_cross_entropy_with_integer_labels(&logits, &take(1, length));
        jnp::mean(&losses, None, false)
    }
}
