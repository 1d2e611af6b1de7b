//! Text from the model: one token at a time from the logits of the last
//! `length` tokens, drawn at a temperature with a fixed key (or greedily
//! at temperature 0), so a run prints the same samples every time.

use anyhow::Result;
use oxla::random::{self, Key};
use oxla::{Array, Jit, jit, numpy as jnp};
use oxla_nn::TransformerLm;
use oxla_train::precision::Policy;
use tokenizers::Tokenizer;

use crate::tokenizer;

/// The inputs of the next-token program: the model, a `[1, length]`
/// context and the position whose logits are wanted.
type NextIn = (TransformerLm, Array, Array);

/// The jitted next-token logits of a model, for sampling.
pub struct Sampler<F: Fn(NextIn) -> Array> {
    next_logits: Jit<NextIn, Array, F>,
    length: i64,
}

/// A sampler over contexts of `length` tokens, computing in `policy`'s
/// compute dtype and returning f32 logits.
pub fn sampler(policy: Policy, length: i64) -> Sampler<impl Fn(NextIn) -> Array> {
    let next_logits = jit(move |(model, context, position): NextIn| {
        let model = match policy.cast_to_compute(&model) {
            Ok(m) => m,
            Err(e) => return Array::error(e),
        };
        let logits = model.apply(&context);
        let row = oxla::lax::dynamic_slice(
            &logits,
            &[
                &Array::weak_scalar(0i32),
                &position,
                &Array::weak_scalar(0i32),
            ],
            &[1, 1, logits.shape()[2]],
        );
        jnp::reshape(&row, &[-1]).astype(oxla::DType::F32)
    });
    Sampler {
        next_logits,
        length,
    }
}

impl<F: Fn(NextIn) -> Array> Sampler<F> {
    /// `count` tokens after `prompt` (its ids), decoded with the prompt.
    pub fn sample(
        &self,
        model: &TransformerLm,
        tokenizer: &Tokenizer,
        prompt: &[u32],
        key: Key,
        count: usize,
        temperature: f64,
    ) -> Result<String> {
        let length = self.length as usize;
        let mut ids: Vec<i32> = prompt.iter().map(|&i| i as i32).collect();
        let mut key = key;
        for _ in 0..count {
            let window = &ids[ids.len().saturating_sub(length)..];
            let position = window.len() as i32 - 1;
            let mut padded = window.to_vec();
            padded.resize(length, 0);
            let context = Array::from_slice(&padded, &[1, self.length])?;
            let logits =
                self.next_logits
                    .call((model.clone(), context, Array::scalar(position)?))?;
            let (draw, next) = random::split2(key);
            key = next;
            let choice = if temperature > 0.0 {
                random::categorical(draw, &(logits / temperature), -1, None, true)
            } else {
                logits.argmax(-1)
            };
            ids.push(choice.item::<i32>()?);
        }
        let ids: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
        tokenizer::decode(tokenizer, &ids)
    }
}
