//! A convolutional MNIST classifier: two 3×3 convolutions with 2×2 max
//! pooling, a dense layer with dropout, AdamW on a warmup-cosine schedule
//! after global-norm clipping. It saves a checkpoint (parameters, optimizer
//! state, step) every `--checkpoint-every` steps and at the end, and
//! `--resume` continues from it: the data order comes from the seed and the
//! epoch, and dropout's key from the seed and the step, so a resumed run
//! ends bit for bit where an uninterrupted one does. The same program in
//! Flax NNX + Optax + Orbax is `examples/flax/cnn.py`.
//!
//! ```sh
//! cargo run --release -p oxla --example cnn
//! cargo run --release -p oxla --example cnn -- --steps 40 --checkpoint-every 20
//! cargo run --release -p oxla --example cnn -- --steps 80 --resume   # continues from step 40
//! ```

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Parser;
use oxla::random::{Key, fold_in, split};
use oxla::{Array, DType, Pytree, jit, numpy as jnp, value_and_grad};
use oxla_nn::{self as nn, Conv2d, Dropout, Linear, Padding};
use oxla_optim::{self as optim, GradientTransformation, losses};
use oxla_train::checkpoint;
use oxla_train::datasets::{self, Mnist, Split};

/// Train a CNN on MNIST with oxla, with checkpoints and resume.
#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1)]
    epochs: usize,
    /// Stop after this many steps in all (the default: every epoch).
    #[arg(long)]
    steps: Option<usize>,
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Peak learning rate (linear warmup, then cosine decay).
    #[arg(long, default_value_t = 1e-3)]
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
    /// Where the checkpoint goes.
    #[arg(long, default_value = "target/cnn-run")]
    out: PathBuf,
    #[arg(long, default_value_t = 100)]
    checkpoint_every: usize,
    /// Continue from the checkpoint in `--out`.
    #[arg(long)]
    resume: bool,
}

/// The model: its parameters are the pytree's leaves, dropout's rate a
/// static field.
#[derive(Pytree, Clone)]
struct Cnn {
    conv1: Conv2d,
    conv2: Conv2d,
    dense1: Linear,
    dense2: Linear,
    dropout: Dropout,
}

impl Cnn {
    fn new(key: Key) -> Cnn {
        let [k1, k2, k3, k4]: [Key; 4] = split(key, 4).try_into().expect("four keys");
        Cnn {
            conv1: Conv2d::new(k1, 1, 32, [3, 3]),
            conv2: Conv2d::new(k2, 32, 64, [3, 3]),
            dense1: Linear::new(k3, 7 * 7 * 64, 256),
            dense2: Linear::new(k4, 256, 10),
            dropout: Dropout::new(0.5),
        }
    }

    /// Logits of `[batch, 784]` images; dropout when given a key (training).
    fn apply(&self, images: &Array, dropout: Option<Key>) -> Array {
        let pool = |x: Array| nn::max_pool(&x, &[2, 2], &[2, 2], &Padding::Valid);
        let x = images.reshape(&[-1, 28, 28, 1]);
        let x = pool(nn::relu(&self.conv1.apply(&x)));
        let x = pool(nn::relu(&self.conv2.apply(&x)));
        let x = nn::relu(&self.dense1.apply(&x.reshape(&[-1, 7 * 7 * 64])));
        self.dense2.apply(&self.dropout.apply(&x, dropout))
    }
}

type Optimizer = (optim::ClipByGlobalNorm, optim::AdamW);
type OptState = optim::StateOf<Optimizer, Cnn>;

fn main() -> Result<()> {
    let args = Args::parse();
    let mnist = Mnist::load(&args.data.unwrap_or_else(|| datasets::dir("mnist")))?;
    let steps_per_epoch = mnist.count(Split::Train) / args.batch_size;
    // The schedule spans every epoch; `--steps` only stops early (so a run
    // stopped and resumed follows the same schedule as one that is not).
    let schedule_steps = steps_per_epoch * args.epochs;
    let total_steps = args.steps.unwrap_or(schedule_steps).min(schedule_steps);
    let (lr, warmup) = (args.learning_rate, (schedule_steps / 20).max(1) as i64);
    let schedule =
        optim::Schedule::warmup_cosine_decay(0.0, lr, warmup, schedule_steps as i64, lr / 100.0);
    let opt: Optimizer = (
        optim::clip_by_global_norm(1.0),
        optim::adamw(schedule, args.weight_decay),
    );
    let [init_key, shuffle_key, dropout_key]: [Key; 3] = split(Key::new(args.seed), 3)
        .try_into()
        .expect("three keys");
    let model = Cnn::new(init_key);
    let opt_state = opt.init(&model);
    let path = args.out.join("checkpoint.safetensors");
    let (mut model, mut opt_state, mut step) = if args.resume {
        let (model, opt_state, step) =
            checkpoint::load(&path, &(model, opt_state, Array::scalar(0i32)?))
                .with_context(|| format!("resuming from {}", path.display()))?;
        let step = step.item::<i32>()? as usize;
        println!("resumed from step {step}");
        (model, opt_state, step)
    } else {
        (model, opt_state, 0)
    };

    let train_step = jit(
        |(model, opt_state, images, labels, key): (Cnn, OptState, Array, Array, Key)| {
            let loss = |m: Cnn| {
                let logits = m.apply(&images, Some(key.duplicate()));
                losses::softmax_cross_entropy_with_integer_labels(&logits, &labels).mean()
            };
            let (value, grads) = value_and_grad(loss).call(model.clone())?;
            let (updates, opt_state) = opt.update(grads, opt_state, &model)?;
            oxla::Result::Ok((optim::apply_updates(&model, &updates)?, opt_state, value))
        },
    )
    .donate(&[0, 1]); // parameters and optimizer state are updated in place
    let save = |model: &Cnn, opt_state: &OptState, step: usize| -> Result<()> {
        std::fs::create_dir_all(&args.out)?;
        let step = Array::scalar(step as i32)?;
        Ok(checkpoint::save(
            &path,
            &(model.clone(), opt_state.clone(), step),
        )?)
    };

    while step < total_steps {
        let (epoch, skip) = (step / steps_per_epoch, step % steps_per_epoch);
        let epoch_key = fold_in(shuffle_key.duplicate(), epoch as u32);
        let batches = mnist.epoch(Split::Train, Some(epoch_key), args.batch_size)?;
        for batch in batches.skip(skip).take(total_steps - step) {
            let batch = batch?;
            let key = fold_in(dropout_key.duplicate(), step as u32);
            let loss;
            (model, opt_state, loss) =
                train_step.call((model, opt_state, batch.inputs, batch.labels, key))?;
            step += 1;
            if step % 50 == 0 {
                println!("step {step}: loss {:.4}", loss.item::<f32>()?);
            }
            if step % args.checkpoint_every == 0 {
                save(&model, &opt_state, step)?;
            }
        }
    }
    save(&model, &opt_state, step)?;

    let evaluate = jit(|(model, images, labels): (Cnn, Array, Array)| {
        let predictions = model.apply(&images, None).argmax(-1);
        jnp::equal(&predictions, &labels).astype(DType::I32).sum()
    });
    let mut hits = 0;
    for batch in mnist.epoch(Split::Test, None, 1000)? {
        let batch = batch?;
        hits += evaluate
            .call((model.clone(), batch.inputs, batch.labels))?
            .item::<i32>()?;
    }
    let accuracy = f64::from(hits) / mnist.count(Split::Test) as f64;
    println!(
        "step {step}: held-out accuracy {:.2}%; checkpoint {}",
        accuracy * 100.0,
        path.display()
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
