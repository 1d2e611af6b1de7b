//! oxla's main job: an MLP classifier (784-512-512-10, ReLU) trained on
//! MNIST with AdamW on the XLA CPU plugin, then evaluated on the 10,000
//! held-out test images.
//!
//! The train step (forward, `value_and_grad`, AdamW update) is one jitted
//! program whose parameters and optimizer state are donated, so each step
//! updates them in place; the host only shuffles and feeds batches. The run
//! writes a loss/accuracy curve (PNG), the metrics (JSON) and a safetensors
//! checkpoint of the parameters and optimizer state; a second run finds its
//! executables in oxla's persistent compile cache and says so.
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
use oxla::datasets::{self, Mnist, Split};
use oxla::nn::{Activation, Mlp};
use oxla::optim::{self, GradientTransformation, losses};
use oxla::random::Key;
use oxla::{Array, CompileSource, DType, checkpoint, jit, numpy as jnp, value_and_grad};

/// Train an MLP on MNIST with oxla.
#[derive(Parser, Debug)]
struct Args {
    /// Epochs over the 60,000 training images.
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Stop after this many steps (a short run; the default is all epochs).
    #[arg(long)]
    steps: Option<usize>,
    /// Examples per step.
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Peak learning rate (linear warmup, then cosine decay).
    #[arg(long, default_value_t = 2e-3)]
    learning_rate: f64,
    /// AdamW weight decay.
    #[arg(long, default_value_t = 1e-4)]
    weight_decay: f64,
    /// Seed of the initial parameters and the shuffling.
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
    let logits = model.apply(images);
    jnp::mean(
        &losses::softmax_cross_entropy_with_integer_labels(&logits, labels),
        None,
        false,
    )
}

/// Number of correct predictions in a batch.
fn correct(model: &Mlp, images: &Array, labels: &Array) -> Array {
    let predicted = jnp::argmax(&model.apply(images), Some(-1));
    let hits = jnp::equal(&predicted, labels);
    jnp::sum(
        &oxla::lax::convert_element_type(&hits, DType::I32),
        None,
        false,
    )
}

fn main() -> Result<()> {
    let args = Args::parse();
    let data_dir = args.data.clone().unwrap_or_else(|| datasets::dir("mnist"));
    let mnist = Mnist::load(&data_dir).context("loading MNIST")?;
    let train_count = mnist.count(Split::Train);
    let steps_per_epoch = train_count / args.batch_size;
    let total_steps = args
        .steps
        .unwrap_or(usize::MAX)
        .min(steps_per_epoch * args.epochs);
    println!(
        "MNIST from {}: {} training and {} test images; MLP {:?}, AdamW, batch {}, {} steps",
        data_dir.display(),
        train_count,
        mnist.count(Split::Test),
        LAYERS,
        args.batch_size,
        total_steps
    );

    let schedule = optim::Schedule::warmup_cosine_decay(
        0.0,
        args.learning_rate,
        (total_steps / 20).max(1) as i64,
        total_steps.max(2) as i64,
        args.learning_rate * 0.01,
    );
    let opt = optim::adamw(schedule, args.weight_decay);
    let (init_key, shuffle_key) = oxla::random::split2(Key::new(args.seed));
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
    // Parameters and optimizer state are donated: updated in place.
    .donate(&[0, 1]);
    let evaluate =
        jit(|(model, images, labels): (Mlp, Array, Array)| correct(&model, &images, &labels));

    // Compile ahead of time, and say where the executables came from.
    let first: Vec<usize> = (0..args.batch_size).collect();
    let example_batch = mnist
        .batches(Split::Train, &first, args.batch_size)
        .next()
        .context("an empty training set")??;
    let report = train_step.compile(&(
        model.clone(),
        opt_state.clone(),
        example_batch.inputs.clone(),
        example_batch.labels.clone(),
    ))?;
    describe_compile("train step", &report);

    let mut curve = plot::Curve::default();
    let bar = ProgressBar::new(total_steps as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} epoch {prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})",
        )?
        .progress_chars("=> "),
    );
    let started = Instant::now();
    let mut key = shuffle_key;
    let mut step = 0usize;
    let mut recent_loss = Vec::new();
    'epochs: for epoch in 0..args.epochs {
        bar.set_prefix(format!("{}", epoch + 1));
        let (next, epoch_key) = oxla::random::split2(key);
        key = next;
        let permutation: Vec<usize> = oxla::random::permutation(epoch_key, train_count as i64)
            .to_vec::<i32>()?
            .into_iter()
            .map(|i| i as usize)
            .collect();
        let epoch_started = Instant::now();
        let mut epoch_examples = 0usize;
        for batch in mnist.batches(Split::Train, &permutation, args.batch_size) {
            if step == total_steps {
                break 'epochs;
            }
            let batch = batch?;
            let value;
            (model, opt_state, value) =
                train_step.call((model, opt_state, batch.inputs, batch.labels))?;
            recent_loss.push(value);
            step += 1;
            epoch_examples += args.batch_size;
            // Read the losses back every 25 steps (reading each would
            // wait for every step to finish before feeding the next).
            if step.is_multiple_of(25) || step == total_steps {
                let mean = recent_loss
                    .drain(..)
                    .map(|l| l.item::<f32>())
                    .collect::<oxla::Result<Vec<f32>>>()?;
                let mean = mean.iter().sum::<f32>() / mean.len() as f32;
                curve.loss.push((step, f64::from(mean)));
                let rate = epoch_examples as f64 / epoch_started.elapsed().as_secs_f64();
                bar.set_message(format!("loss {mean:.4}, {rate:.0} examples/s"));
            }
            bar.set_position(step as u64);
        }
        let accuracy = test_accuracy(&evaluate, &model, &mnist)?;
        curve.accuracy.push((step, accuracy));
        bar.suspend(|| {
            println!(
                "epoch {}: step {step}, held-out accuracy {:.2}%",
                epoch + 1,
                accuracy * 100.0
            )
        });
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let accuracy = match curve.accuracy.last() {
        Some(&(s, a)) if s == step => a,
        _ => {
            let a = test_accuracy(&evaluate, &model, &mnist)?;
            curve.accuracy.push((step, a));
            a
        }
    };
    println!(
        "trained {step} steps in {seconds:.1} s ({:.0} examples/s); held-out accuracy {:.2}%",
        (step * args.batch_size) as f64 / seconds,
        accuracy * 100.0
    );

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let checkpoint_path = args.out.join("checkpoint.safetensors");
    checkpoint::save(&checkpoint_path, &(model.clone(), opt_state.clone()))
        .context("writing the checkpoint")?;
    let curve_path = args.out.join("curve.png");
    plot::draw(&curve, &curve_path).context("drawing the training curve")?;
    let metrics = args.out.join("metrics.json");
    std::fs::write(&metrics, curve.to_json(step, seconds, args.batch_size))?;
    println!(
        "wrote {}, {} and {}",
        checkpoint_path.display(),
        curve_path.display(),
        metrics.display()
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

/// Says whether the plugin compiled an executable or the disk cache had it.
fn describe_compile(what: &str, report: &oxla::CompileReport) {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    match report.source {
        CompileSource::Compiled { compile } => println!(
            "{what}: traced in {:.1} ms, lowered in {:.1} ms, compiled in {:.0} ms \
             (stored in the disk cache: the next run loads it)",
            ms(report.trace),
            ms(report.lower),
            ms(compile)
        ),
        CompileSource::DiskHit { load, saved } => println!(
            "{what}: found in the disk cache: loaded in {:.1} ms instead of compiling for {:.0} ms \
             (traced in {:.1} ms, lowered in {:.1} ms)",
            ms(load),
            ms(saved),
            ms(report.trace),
            ms(report.lower)
        ),
    }
}

/// Accuracy on the 10,000 test images, in batches of 1,000.
fn test_accuracy(
    evaluate: &oxla::Jit<(Mlp, Array, Array), Array, impl Fn((Mlp, Array, Array)) -> Array>,
    model: &Mlp,
    mnist: &Mnist,
) -> Result<f64> {
    let count = mnist.count(Split::Test);
    let order: Vec<usize> = (0..count).collect();
    let mut hits = 0i64;
    for batch in mnist.batches(Split::Test, &order, 1000) {
        let batch = batch?;
        hits += i64::from(
            evaluate
                .call((model.clone(), batch.inputs, batch.labels))?
                .item::<i32>()?,
        );
    }
    Ok(hits as f64 / (count - count % 1000) as f64)
}
