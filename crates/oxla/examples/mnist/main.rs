//! oxla's main job: an MLP classifier (784-512-512-10, ReLU) trained on
//! MNIST with AdamW on the XLA CPU plugin, then evaluated on the 10,000
//! held-out test images.
//!
//! The train step (forward, `value_and_grad`, AdamW update) is one jitted
//! program whose parameters and optimizer state are donated, so each step
//! updates them in place; the host only shuffles and feeds batches. The run
//! writes a loss/accuracy curve (PNG), the metrics (JSON) and a safetensors
//! checkpoint of the parameters and optimizer state; a second run finds its
//! executables in oxla's persistent compile cache and says so. The same
//! program in Flax NNX + Optax + Orbax is `examples/flax/mnist.py`.
//!
//! ```sh
//! bash ci/setup   # installs the pinned MNIST files
//! cargo run --release -p oxla --example mnist
//! cargo run --release -p oxla --example mnist -- --steps 150 --min-accuracy 0.9   # short
//! ```

mod plot;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use oxla::random::{Key, fold_in, split2};
use oxla::{Array, DType, jit, numpy as jnp, value_and_grad};
use oxla_nn::{Activation, Mlp};
use oxla_optim::{self as optim, GradientTransformation, losses};
use oxla_train::checkpoint;
use oxla_train::datasets::{self, Mnist, Split};

/// Train an MLP on MNIST with oxla.
#[derive(Parser)]
struct Args {
    /// Epochs over the 60,000 training images.
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Stop after this many steps (a short run; the default is all epochs).
    #[arg(long)]
    steps: Option<usize>,
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Peak learning rate (linear warmup, then cosine decay).
    #[arg(long, default_value_t = 2e-3)]
    learning_rate: f64,
    #[arg(long, default_value_t = 1e-4)]
    weight_decay: f64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Fail unless the held-out accuracy reaches this.
    #[arg(long, default_value_t = 0.97)]
    min_accuracy: f64,
    /// Where the MNIST IDX files are (default: where ci/setup puts them).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Where the curve, metrics and checkpoint go.
    #[arg(long, default_value = "target/mnist-run")]
    out: PathBuf,
}

const LAYERS: [i64; 4] = [784, 512, 512, 10];

type OptState = optim::StateOf<optim::AdamW, Mlp>;

/// Mean cross entropy of the model's logits against integer labels.
fn loss(model: &Mlp, images: &Array, labels: &Array) -> Array {
    losses::softmax_cross_entropy_with_integer_labels(&model.apply(images), labels).mean()
}

/// Number of correct predictions in a batch.
fn correct(model: &Mlp, images: &Array, labels: &Array) -> Array {
    jnp::equal(&model.apply(images).argmax(-1), labels)
        .astype(DType::I32)
        .sum()
}

fn main() -> Result<()> {
    let args = Args::parse();
    let mnist = Mnist::load(&args.data.unwrap_or_else(|| datasets::dir("mnist")))?;
    let steps_per_epoch = mnist.count(Split::Train) / args.batch_size;
    let total_steps = args
        .steps
        .unwrap_or(usize::MAX)
        .min(steps_per_epoch * args.epochs);
    println!(
        "MNIST: MLP {LAYERS:?}, AdamW, batch {}, {total_steps} steps",
        args.batch_size
    );

    let lr = args.learning_rate;
    let warmup = (total_steps / 20).max(1) as i64;
    let schedule = optim::Schedule::warmup_cosine_decay(
        0.0,
        lr,
        warmup,
        total_steps.max(2) as i64,
        lr / 100.0,
    );
    let opt = optim::adamw(schedule, args.weight_decay);
    let (init_key, shuffle_key) = split2(Key::new(args.seed));
    let mut model = Mlp::new(init_key, &LAYERS, Activation::Relu);
    let mut opt_state = opt.init(&model);

    let train_step = jit(
        |(model, opt_state, images, labels): (Mlp, OptState, Array, Array)| {
            let (value, grads) =
                value_and_grad(|m: Mlp| loss(&m, &images, &labels)).call(model.clone())?;
            let (updates, opt_state) = opt.update(grads, opt_state, &model)?;
            oxla::Result::Ok((optim::apply_updates(&model, &updates)?, opt_state, value))
        },
    )
    .donate(&[0, 1]); // parameters and optimizer state are updated in place
    let evaluate =
        jit(|(model, images, labels): (Mlp, Array, Array)| correct(&model, &images, &labels));
    let test_accuracy = |model: &Mlp| -> Result<f64> {
        let mut hits = 0;
        for batch in mnist.epoch(Split::Test, None, 1000)? {
            let batch = batch?;
            hits += evaluate
                .call((model.clone(), batch.inputs, batch.labels))?
                .item::<i32>()?;
        }
        Ok(f64::from(hits) / mnist.count(Split::Test) as f64)
    };

    // Compile ahead of time, and say whether the disk cache had the program.
    let batch = mnist
        .epoch(Split::Train, None, args.batch_size)?
        .next()
        .context("no data")??;
    let report =
        train_step.compile(&(model.clone(), opt_state.clone(), batch.inputs, batch.labels))?;
    println!("train step: {report}");

    let style =
        ProgressStyle::with_template("epoch {prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")?;
    let bar = ProgressBar::new(total_steps as u64).with_style(style.progress_chars("=> "));
    let (mut curve, mut recent_losses, mut step) = (plot::Curve::default(), Vec::new(), 0);
    let started = Instant::now();
    for epoch in 0..args.epochs {
        bar.set_prefix((epoch + 1).to_string());
        let (epoch_key, epoch_started) = (
            fold_in(shuffle_key.duplicate(), epoch as u32),
            Instant::now(),
        );
        for batch in mnist
            .epoch(Split::Train, Some(epoch_key), args.batch_size)?
            .take(total_steps - step)
        {
            let batch = batch?;
            let value;
            (model, opt_state, value) =
                train_step.call((model, opt_state, batch.inputs, batch.labels))?;
            recent_losses.push(value);
            step += 1;
            bar.inc(1);
            // Read the losses back every 25 steps (reading each one would wait
            // for every step to finish before feeding the next).
            if step % 25 == 0 || step == total_steps {
                let count = recent_losses.len() as f32;
                let sum: f32 = recent_losses
                    .drain(..)
                    .map(|l| l.item::<f32>())
                    .sum::<oxla::Result<_>>()?;
                curve.loss.push((step, f64::from(sum / count)));
                let rate =
                    (step - epoch * steps_per_epoch) as f64 / epoch_started.elapsed().as_secs_f64();
                bar.set_message(format!(
                    "loss {:.4}, {:.0} examples/s",
                    sum / count,
                    rate * args.batch_size as f64
                ));
            }
        }
        let accuracy = test_accuracy(&model)?;
        curve.accuracy.push((step, accuracy));
        bar.suspend(|| {
            println!(
                "epoch {}: step {step}, held-out accuracy {:.2}%",
                epoch + 1,
                accuracy * 100.0
            )
        });
        if step == total_steps {
            break;
        }
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let accuracy = curve.accuracy.last().map_or(0.0, |&(_, a)| a);
    let examples_per_second = (step * args.batch_size) as f64 / seconds;
    println!(
        "trained {step} steps in {seconds:.1} s ({examples_per_second:.0} examples/s); held-out accuracy {:.2}%",
        accuracy * 100.0
    );

    std::fs::create_dir_all(&args.out)?;
    checkpoint::save(args.out.join("checkpoint.safetensors"), &(model, opt_state))?;
    plot::draw(&curve, &args.out.join("curve.png"))?;
    let metrics = serde_json::json!({
        "steps": step, "seconds": seconds, "batch_size": args.batch_size,
        "loss": curve.loss, "accuracy": curve.accuracy,
    });
    std::fs::write(args.out.join("metrics.json"), metrics.to_string())?;
    println!(
        "wrote checkpoint.safetensors, curve.png and metrics.json to {}",
        args.out.display()
    );
    if accuracy < args.min_accuracy {
        bail!(
            "held-out accuracy {:.2}% is below the required {:.2}%",
            accuracy * 100.0,
            args.min_accuracy * 100.0
        );
    }
    Ok(())
}
