//! oxla_train::data's loader feeding a jitted training step: the MLP
//! (784-512-512-10, batch 128, SGD) on synthetic 28×28 byte images, each
//! record mapped on the host (scaled to [0, 1], shifted by a random offset
//! of up to ±2 pixels drawn per record, blurred 3×3, standardized, its
//! label one-hot), stacked and moved to the device. Steps per second with
//! the pipeline inline (no prefetch, no workers), prefetched on a
//! background thread, and prefetched with worker threads; alongside, the
//! step alone (one batch reused) and the loader alone, which bound what
//! overlapping can reach. Rounds of the configurations alternate; the
//! median round is reported, with each configuration's ratio to the
//! inline one.
//!
//! `cargo run --release -p oxla-bench --bin data_loader`

use std::time::Instant;

use oxla::{Array, jit, value_and_grad};
use oxla_bench::mlp::{Layer, mlp_loss, mlp_params};
use oxla_optim::{self as optim, GradientTransformation};
use oxla_train::data::{DataLoader, IndexSampler, MapDataset, Rng, ShardOptions};

const RECORDS: usize = 8192;
const BATCH: usize = 128;
const STEPS: usize = 150;
const ROUNDS: usize = 5;
const SIDE: usize = 28;

type Image = (Vec<u8>, u8);
type Example = (Vec<f32>, Vec<f32>);

/// Deterministic pseudo-random images and labels.
fn images() -> Vec<Image> {
    let mut rng = Rng::new(0);
    (0..RECORDS)
        .map(|_| {
            let pixels = (0..SIDE * SIDE).map(|_| rng.below(256) as u8).collect();
            (pixels, rng.below(10) as u8)
        })
        .collect()
}

/// The host work of one record: scale, random shift, 3×3 box blur,
/// standardize, one-hot label.
fn augment((pixels, label): Image, rng: &mut Rng) -> Example {
    let (dy, dx) = (rng.below(5) as isize - 2, rng.below(5) as isize - 2);
    let at = |img: &[f32], y: isize, x: isize| -> f32 {
        if (0..SIDE as isize).contains(&y) && (0..SIDE as isize).contains(&x) {
            img[y as usize * SIDE + x as usize]
        } else {
            0.0
        }
    };
    let scaled: Vec<f32> = pixels.iter().map(|&p| f32::from(p) / 255.0).collect();
    let mut out = vec![0.0f32; SIDE * SIDE];
    for y in 0..SIDE as isize {
        for x in 0..SIDE as isize {
            let mut sum = 0.0;
            for (ky, kx) in (-1..=1).flat_map(|ky| (-1..=1).map(move |kx| (ky, kx))) {
                sum += at(&scaled, y + dy + ky, x + dx + kx);
            }
            out[y as usize * SIDE + x as usize] = sum / 9.0;
        }
    }
    let mean = out.iter().sum::<f32>() / out.len() as f32;
    let var = out.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / out.len() as f32;
    let scale = 1.0 / (var + 1e-6).sqrt();
    out.iter_mut().for_each(|v| *v = (*v - mean) * scale);
    let mut one_hot = vec![0.0f32; 10];
    one_hot[usize::from(label)] = 1.0;
    (out, one_hot)
}

fn loader(
    data: &[Image],
    workers: usize,
    prefetch: usize,
) -> anyhow::Result<DataLoader<(Array, Array)>> {
    let sampler = IndexSampler::new(data.len(), ShardOptions::no_sharding(), true, None, 0)?;
    Ok(MapDataset::source(data.to_vec())
        .random_map(augment)
        .loader(sampler)
        .worker_count(workers)
        .batch(BATCH, true)
        .to_device()
        .prefetch(prefetch)
        .build()?)
}

type Opt = optim::Sgd;
type State = optim::StateOf<Opt, Vec<Layer>>;

/// One configuration's training run: parameters, state, and its batches.
struct Run {
    name: &'static str,
    params: Vec<Layer>,
    state: State,
    batches: Box<dyn FnMut() -> anyhow::Result<(Array, Array)>>,
    steps_per_s: Vec<f64>,
}

fn main() -> anyhow::Result<()> {
    let data = images();
    let opt = optim::sgd(0.01);
    let step = jit(|(params, state, x, y): (Vec<Layer>, State, Array, Array)| {
        let (loss, grads) = value_and_grad(|p: Vec<Layer>| mlp_loss((p, x.clone(), y.clone())))
            .call(params.clone())?;
        let (updates, state) = opt.update(grads, state, &params)?;
        oxla::Result::Ok((optim::apply_updates(&params, &updates)?, state, loss))
    })
    .donate(&[0, 1]);

    let fixed = loader(&data, 0, 0)?.next().transpose()?.expect("a batch");
    let mut runs = Vec::new();
    let configurations: [(&'static str, Option<(usize, usize)>); 5] = [
        ("step alone (one batch reused)", None),
        ("inline (no prefetch, 0 workers)", Some((0, 0))),
        ("prefetch 2, 0 workers", Some((0, 2))),
        ("prefetch 2, 2 workers", Some((2, 2))),
        ("prefetch 4, 4 workers", Some((4, 4))),
    ];
    for (name, config) in configurations {
        let params = mlp_params()?;
        let state = opt.init(&params);
        let batches: Box<dyn FnMut() -> anyhow::Result<(Array, Array)>> = match config {
            None => {
                let fixed = fixed.clone();
                Box::new(move || Ok(fixed.clone()))
            }
            Some((workers, prefetch)) => {
                let mut loader = loader(&data, workers, prefetch)?;
                Box::new(move || Ok(loader.next().expect("an endless stream")?))
            }
        };
        runs.push(Run {
            name,
            params,
            state,
            batches,
            steps_per_s: Vec::new(),
        });
    }
    // The loader alone: batches made and moved to the device, no step.
    let mut alone = loader(&data, 0, 0)?;
    let mut data_only = Vec::new();

    for round in 0..=ROUNDS {
        for run in &mut runs {
            let start = Instant::now();
            let mut loss = None;
            for _ in 0..STEPS {
                let (x, y) = (run.batches)()?;
                let params = std::mem::take(&mut run.params);
                let state = run.state.clone();
                let (p, s, l) = step.call((params, state, x, y))?;
                (run.params, run.state, loss) = (p, s, Some(l));
            }
            let loss = loss.expect("steps").item::<f32>()?;
            anyhow::ensure!(loss.is_finite(), "{}: loss {loss}", run.name);
            if round > 0 {
                run.steps_per_s
                    .push(STEPS as f64 / start.elapsed().as_secs_f64());
            }
        }
        let start = Instant::now();
        let mut last = None;
        for _ in 0..STEPS {
            last = alone.next();
        }
        last.expect("an endless stream")?.0.block_until_ready()?;
        if round > 0 {
            data_only.push(STEPS as f64 / start.elapsed().as_secs_f64());
        }
    }

    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let inline = median(&runs[1].steps_per_s);
    println!(
        "MLP 784-512-512-10, batch {BATCH}, SGD; {STEPS} steps per round, median of {ROUNDS} rounds"
    );
    println!(
        "| {:<34} | {:>9} | {:>16} |",
        "configuration", "steps/s", "ratio to inline"
    );
    println!("|{}|{}|{}|", "-".repeat(36), "-".repeat(11), "-".repeat(18));
    for run in &runs {
        let s = median(&run.steps_per_s);
        println!("| {:<34} | {:>9.1} | {:>16.3} |", run.name, s, s / inline);
    }
    let d = median(&data_only);
    println!(
        "| {:<34} | {:>9.1} | {:>16.3} |",
        "loader alone (batches/s, inline)",
        d,
        d / inline
    );
    Ok(())
}
