//! A GPT-style decoder language model trained on five Shakespeare plays
//! (installed by ci/setup), with the pieces of a real training run:
//!
//! - a byte-level BPE tokenizer (Hugging Face's `tokenizers`) trained on
//!   the text at start-up and cached in `--out`, so a resumed run reads the
//!   same one;
//! - FSDP over 8 CPU devices: a mesh ('data': 8), each parameter and
//!   optimizer-state leaf split along its largest dimension 8 divides, each
//!   batch along its rows, one jitted train step with its parameters and
//!   optimizer state donated;
//! - bf16 compute with f32 parameters and loss (a jmp `Policy`; the
//!   default preset computes in f32 on the CPU plugin, where XLA emulates
//!   bf16 nine times slower: `--policy` chooses);
//! - AdamW on a warmup-cosine schedule with global-norm clipping, wrapped
//!   in `MultiSteps` to accumulate `--accumulate` micro-batches per update;
//! - a Grain-style loader (`oxla_train::data`) of token windows shuffled
//!   per epoch from the seed, with prefetch;
//! - TensorBoard scalars in `<out>/tb` (loss, learning rate, tokens/s);
//! - asynchronous checkpoints every `--checkpoint-every` steps (the last 2
//!   kept) holding the loader's position, so `--resume` continues as if
//!   never stopped (`ci/check_gpt_resume` kills a run and checks that).
//!
//! It samples text before and after training and fails unless the final
//! held-out loss is below `--max-loss` (the default preset reaches its
//! bar in about a minute and a half on 2 cores; with bf16 compute, 17
//! minutes).
//!
//! ```sh
//! cargo run --release -p oxla --example gpt                 # ~10M parameters
//! cargo run --release -p oxla --example gpt -- --short      # CI-sized
//! cargo run --release -p oxla --example gpt -- --resume     # continue in --out
//! ```

mod checkpoints;
mod config;
mod data;
mod fsdp;
mod sample;
mod tokenizer;

use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use oxla::random::{self, Key};
use oxla::{Array, jit, numpy as jnp, value_and_grad};
use oxla_nn::TransformerLm;
use oxla_optim::{self as optim, GradientTransformation, Schedule};
use oxla_train::datasets::{self, CharText};
use oxla_train::precision::Policy;
use oxla_train::tensorboard::SummaryWriter;

use checkpoints::Checkpoints;
use config::{Args, Config};
use data::TokenWindows;
use fsdp::Fsdp;

const PLAYS: [&str; 5] = [
    "hamlet.txt",
    "macbeth.txt",
    "lear.txt",
    "othello.txt",
    "julius_caesar.txt",
];

type Optimizer = optim::MultiSteps<(optim::ClipByGlobalNorm, optim::AdamW)>;
type OptState = optim::StateOf<Optimizer, TransformerLm>;

/// Mean next-token cross entropy of `tokens` `[batch, length + 1]`, the
/// model run in `policy`'s compute dtype and the loss taken in its output
/// dtype.
fn loss(model: &TransformerLm, tokens: &Array, policy: &Policy) -> Array {
    let compute = match policy.cast_to_compute(model) {
        Ok(m) => m,
        Err(e) => return Array::error(e),
    };
    let [batch, length] = match tokens.shape() {
        &[b, l] => [b, l],
        shape => {
            return Array::error(oxla::Error::InvalidArgument(format!(
                "gpt loss: the tokens are [batch, length + 1], got {shape:?}"
            )));
        }
    };
    let inputs = oxla::lax::slice(tokens, &[0, 0], &[batch, length - 1], None);
    let targets = oxla::lax::slice(tokens, &[0, 1], &[batch, length], None);
    let logits = match policy.cast_to_output(&compute.apply(&inputs)) {
        Ok(l) => l,
        Err(e) => return Array::error(e),
    };
    let losses = optim::losses::softmax_cross_entropy_with_integer_labels(&logits, &targets);
    jnp::mean(&losses, None, false)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let config = Config::from_args(&args);
    // Before any array exists: the CPU client is made with its devices.
    oxla::set_cpu_device_count(args.devices)?;
    let fsdp = Fsdp::new(args.devices)?;
    for (what, rows) in [
        ("--batch-size", config.batch_size),
        ("the held-out windows", config.eval_windows),
    ] {
        if rows as i64 % fsdp.devices() != 0 {
            bail!(
                "{what} ({rows}) must be a multiple of the {} devices (--devices)",
                fsdp.devices()
            );
        }
    }
    let on_cpu = oxla::client()?.platform_name()? == "cpu";
    let policy = Policy::parse(args.policy_text(on_cpu))?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {:?}", args.out))?;
    let mut checkpoints = Checkpoints::open(&args.out.join("checkpoints"))?;
    if !args.resume && checkpoints.latest()?.is_some() {
        bail!(
            "{} has checkpoints: pass --resume to continue them, or another --out",
            args.out.display()
        );
    }

    // The text and its tokens.
    let chars =
        CharText::load(&datasets::dir("shakespeare"), &PLAYS).context("loading the plays")?;
    let text = chars.decode(&chars.ids);
    let started = Instant::now();
    let (tokenizer, trained) =
        tokenizer::load_or_train(&args.out.join("tokenizer.json"), &text, config.vocab_size)?;
    let ids = tokenizer::encode(&tokenizer, &text)?;
    println!(
        "tokenizer: byte-level BPE of {} tokens ({} in {:.1} s); {} characters are {} tokens",
        tokenizer.get_vocab_size(true),
        if trained { "trained" } else { "cached" },
        started.elapsed().as_secs_f64(),
        text.chars().count(),
        ids.len()
    );
    let split = ids.len() * 9 / 10;
    let train_windows = TokenWindows::new(&ids[..split], config.length)?;
    let held_out = TokenWindows::new(&ids[split..], config.length)?;
    let eval_batch = fsdp.place_batch(&data::first_windows(&held_out, config.eval_windows)?)?;
    let mut loader = data::loader(train_windows, config.batch_size, args.seed)?;

    // The model and optimizer, split over the devices.
    let init_key = random::fold_in(Key::new(args.seed), 0);
    // The same key for the samples before and after training.
    let sample_key = || random::fold_in(Key::new(args.seed), 1);
    let vocab = tokenizer.get_vocab_size(true) as i64;
    let model = TransformerLm::new(
        init_key,
        vocab,
        config.d_model,
        config.heads,
        config.layers,
        config.length as i64,
    );
    println!(
        "GPT: {} blocks, d_model {}, {} heads, context {}, {} parameters; policy {policy}; \
         FSDP over {} CPU devices; {} x {} sequences per update",
        config.layers,
        config.d_model,
        config.heads,
        config.length,
        oxla_train::summary::parameter_count(&model)?,
        fsdp.devices(),
        config.accumulate,
        config.batch_size,
    );
    let schedule = Schedule::warmup_cosine_decay(
        0.0,
        config.learning_rate,
        (config.steps / 10).max(1) as i64,
        config.steps.max(2) as i64,
        config.learning_rate * 0.1,
    );
    let opt: Optimizer = optim::multi_steps(
        (
            optim::clip_by_global_norm(args.clip_norm),
            optim::adamw(schedule.clone(), args.weight_decay),
        ),
        config.accumulate,
    );
    let model = fsdp.place(&model)?;
    let state = fsdp.place(&opt.init(&model))?;

    let layouts = fsdp.clone();
    let train_step = jit(|(model, state, batch): (TransformerLm, OptState, Array)| {
        let (value, grads) =
            value_and_grad(|m: TransformerLm| loss(&m, &batch, &policy)).call(model.clone())?;
        let (updates, state) = opt.update(grads, state, &model)?;
        oxla::Result::Ok((optim::apply_updates(&model, &updates)?, state, value))
    })
    .donate(&[0, 1])
    .out_shardings_by(move |_, aval| Some(layouts.leaf(&aval.shape)));
    let evaluate = jit(|(model, batch): (TransformerLm, Array)| loss(&model, &batch, &policy));
    let sampler = sample::sampler(policy, config.length as i64);
    let prompt = tokenizer::encode(&tokenizer, "\n")?;
    // The same prompt, key and length before and after training.
    let print_sample = |when: &str, model: &TransformerLm| -> Result<()> {
        let text = sampler.sample(
            model,
            &tokenizer,
            &prompt,
            sample_key(),
            config.sample_tokens,
            args.temperature,
        )?;
        println!(
            "sample {when} training (temperature {}):\n---\n{text}\n---",
            args.temperature
        );
        Ok(())
    };

    // Where the run starts: step 1, or after the latest checkpoint.
    let (mut model, mut state, first_step) = match args.resume {
        false => (model, state, 1),
        true => {
            match checkpoints.restore_latest(&(model.clone(), state.clone()), loader.state())? {
                None => {
                    println!(
                        "no checkpoint in {} yet: starting at step 1",
                        args.out.display()
                    );
                    (model, state, 1)
                }
                Some(restored) => {
                    loader.restore(&restored.loader)?;
                    println!(
                        "resumed from step {} (data epoch {}, window {})",
                        restored.step, restored.loader.epoch, restored.loader.position
                    );
                    let (model, state) = restored.state;
                    (model, state, restored.step + 1)
                }
            }
        }
    };
    let held_out_loss = |model: &TransformerLm| -> Result<f32> {
        Ok(evaluate
            .call((model.clone(), eval_batch.clone()))?
            .item::<f32>()?)
    };
    if first_step == 1 {
        println!(
            "held-out loss before training: {:.3} (uniform guessing: {:.3})",
            held_out_loss(&model)?,
            (vocab as f32).ln()
        );
        print_sample("before", &model)?;
    }

    let mut writer = SummaryWriter::new(args.out.join("tb"))?;
    let tokens_per_step = (config.accumulate as usize * config.batch_size * config.length) as f64;
    let started = Instant::now();
    let mut last_loss = f32::NAN;
    for step in first_step..=config.steps {
        let mut total = 0.0;
        for _ in 0..config.accumulate {
            let batch = loader.next().context("the loader ended")??;
            let batch = fsdp.place_batch(&batch)?;
            let value;
            (model, state, value) = train_step.call((model, state, batch))?;
            total += value.item::<f32>()?;
        }
        last_loss = total / config.accumulate as f32;
        let rate =
            (step - first_step + 1) as f64 * tokens_per_step / started.elapsed().as_secs_f64();
        let learning_rate = schedule
            .value(&Array::scalar((step - 1) as i32)?)
            .item::<f32>()?;
        writer.add_scalar("train/loss", last_loss, step as i64)?;
        writer.add_scalar("train/learning_rate", learning_rate, step as i64)?;
        writer.add_scalar("train/tokens_per_second", rate, step as i64)?;
        if step % config.eval_every == 0 || step == config.steps {
            let held = held_out_loss(&model)?;
            writer.add_scalar("eval/loss", held, step as i64)?;
            println!(
                "step {step}: loss {last_loss:.3}, held-out {held:.3}, lr {learning_rate:.2e}, \
                 {rate:.0} tokens/s"
            );
        }
        if step % config.checkpoint_every == 0 || step == config.steps {
            checkpoints.save(
                step,
                &(model.clone(), state.clone()),
                &loader.state(),
                last_loss.into(),
            )?;
        }
    }
    checkpoints.wait()?;
    writer.flush()?;
    let trained_steps = (config.steps + 1).saturating_sub(first_step);
    let final_loss = held_out_loss(&model)?;
    println!(
        "trained {trained_steps} steps in {:.1} s; final train loss {last_loss:.6}; \
         final held-out loss {final_loss:.6}",
        started.elapsed().as_secs_f64(),
    );
    print_sample("after", &model)?;
    // A NaN loss fails too.
    if f64::from(final_loss) >= config.max_loss || final_loss.is_nan() {
        bail!(
            "the final held-out loss {final_loss:.3} is not below the bar --max-loss {}",
            config.max_loss
        );
    }
    println!(
        "held-out loss {final_loss:.3} < {} (the bar)",
        config.max_loss
    );
    Ok(())
}
