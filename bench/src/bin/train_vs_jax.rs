//! oxla's training stack against JAX + Optax in one run, on the same models,
//! batch sizes, dtypes, data and initial parameters (oxla writes them as
//! safetensors and .npy; bench/jax_train_twin.py reads them):
//! the MLP training step (784-512-512-10, batch 128, AdamW) and the
//! transformer training step (2 layers, d_model 256, 4 heads, sequence 128,
//! batch 16, clip + AdamW), and a small MLP where dispatch dominates (20
//! layers of 64: 40 parameter leaves, batch 32, AdamW). For each: trace +
//! lower, compile, steady-state step time and training-loop throughput
//! with a fresh host batch each step (blocks of 50 steps; for both, blocks
//! of oxla's and JAX's alternate), first-call
//! latency cold (empty persistent cache) and warm (cache filled, in-memory
//! caches empty), the compiled step's peak bytes; and a tiny function's
//! dispatch. Prints a markdown table with ratios and writes
//! target/bench/train_vs_jax.json.
//!
//! `cargo run --release -p oxla-bench --bin train_vs_jax`

use std::time::{Duration, Instant};

use anyhow::Context;
use oxla::random::{self, Key};
use oxla::{Array, CompileSource, DType, Pytree, jit, numpy as jnp, value_and_grad};
use oxla_bench::median_us;
use oxla_bench::twin::Twin;
use oxla_nn::{Activation, Mlp, TransformerLm};
use oxla_optim::{self as optim, GradientTransformation, losses};
use oxla_train::checkpoint;
use serde_json::{Value, json};

/// Steps of a block of the training loop.
const LOOP_BLOCK: usize = 50;
const BATCHES: usize = 10;

/// One array of a batch on the host: its bytes, dtype and shape.
type HostPart = (Vec<u8>, DType, Vec<i64>);

/// One model's host data: each batch as its arrays' host values and shapes.
struct HostBatches {
    batches: Vec<Vec<HostPart>>,
}

impl HostBatches {
    /// Splits each of `arrays` (`[BATCHES, ...]`) into per-batch host bytes.
    fn of(arrays: &[&Array]) -> anyhow::Result<HostBatches> {
        let mut batches = vec![Vec::new(); BATCHES];
        for a in arrays {
            let host = a.to_host()?;
            let per = host.bytes.len() / BATCHES;
            for (i, batch) in batches.iter_mut().enumerate() {
                batch.push((
                    host.bytes[i * per..(i + 1) * per].to_vec(),
                    a.dtype(),
                    a.shape()[1..].to_vec(),
                ));
            }
        }
        Ok(HostBatches { batches })
    }

    /// Batch `i % BATCHES`, transferred to the device now.
    fn device(&self, i: usize) -> anyhow::Result<Vec<Array>> {
        self.batches[i % BATCHES]
            .iter()
            .map(|(bytes, dtype, shape)| Ok(Array::from_bytes(*dtype, shape, bytes)?))
            .collect()
    }
}

type Loss<P> = fn(&P, &[Array]) -> Array;

/// A training step's arguments: parameters, optimizer state, batch.
type StepArgs<P, S> = (P, S, Vec<Array>);

/// A training step's results: parameters, optimizer state, loss.
type StepOut<P, S> = oxla::Result<(P, S, Array)>;

/// A training step of `loss` with `opt` (parameters and state donated).
fn train_step<'a, P: Pytree + Clone + 'a, T: GradientTransformation<P>>(
    opt: &'a T,
    loss: Loss<P>,
) -> impl Fn(StepArgs<P, T::State>) -> StepOut<P, T::State> + 'a {
    move |(params, state, batch)| {
        let (value, grads) = value_and_grad(|p: P| loss(&p, &batch)).call(params.clone())?;
        let (updates, state) = opt.update(grads, state, &params)?;
        Ok((optim::apply_updates(&params, &updates)?, state, value))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// oxla's numbers for one model, the twin's steady-state step alongside.
fn measure<P, T>(
    name: &str,
    params: &P,
    opt: &T,
    loss: Loss<P>,
    data: &HostBatches,
    twin: &mut Twin,
) -> anyhow::Result<Value>
where
    P: Pytree + Clone,
    T: GradientTransformation<P>,
    T::State: Clone,
{
    let state = opt.init(params);
    let args = (params.clone(), state.clone(), data.device(0)?);
    let copy = |a: &(P, T::State, Vec<Array>)| -> anyhow::Result<_> {
        Ok(oxla::tree_map(a, |x| {
            Array::from_bytes(x.dtype(), x.shape(), &x.to_host().expect("host").bytes)
                .expect("copy")
        })?)
    };
    let trace_lower_us = median_us(
        || {
            jit(train_step(opt, loss)).donate(&[0, 1]).lower(&args)?;
            Ok(())
        },
        3,
        5,
    )?;
    oxla::set_compile_cache_dir(None);
    let report = jit(train_step(opt, loss)).donate(&[0, 1]).compile(&args)?;
    let compile_ms = match report.source {
        CompileSource::Compiled { compile } => ms(compile),
        CompileSource::DiskHit { .. } => anyhow::bail!("the cache was off, yet it hit"),
    };
    let cache = tempfile::tempdir()?;
    oxla::set_compile_cache_dir(Some(cache.path().to_path_buf()));
    let first_call = || -> anyhow::Result<f64> {
        let fresh = jit(train_step(opt, loss)).donate(&[0, 1]);
        let input = copy(&args)?;
        let start = Instant::now();
        fresh.call(input)?.2.block_until_ready()?;
        Ok(ms(start.elapsed()))
    };
    let cold_first_call_ms = first_call()?;
    let warm_first_call_ms = first_call()?;
    oxla::set_compile_cache_dir(None);

    let step = jit(train_step(opt, loss)).donate(&[0, 1]);
    let stats = step.memory_stats(&args)?;
    let peak_bytes = stats.argument_size_in_bytes + stats.output_size_in_bytes
        - stats.alias_size_in_bytes
        + stats.temp_size_in_bytes;
    let (p, s, first) = step.call(copy(&args)?)?;
    let first_loss = first.item::<f32>()?;

    let batch = data.device(0)?;
    let mut carried = Some((p, s));
    let (step_us, jax_step_us) = twin.alternate_named(name, 7, 10, || {
        let (p, s) = carried.take().context("carried state")?;
        let (p, s, v) = step.call((p, s, batch.clone()))?;
        v.block_until_ready()?;
        carried = Some((p, s));
        Ok(())
    })?;
    // The training loop: LOOP_BLOCK steps, each fed a fresh host batch,
    // waiting for the last loss only; blocks of it alternate with the
    // twin's, each block about a fifth of a second.
    let loops_per_block = (2e5 / (step_us * LOOP_BLOCK as f64)).ceil().max(1.0) as usize;
    let (loop_us, jax_loop_us) =
        twin.alternate_named(&format!("{name}_loop"), 7, loops_per_block, || {
            let (mut p, mut s) = carried.take().context("carried state")?;
            let mut last = None;
            for i in 0..LOOP_BLOCK {
                let (next_p, next_s, value) = step.call((p, s, data.device(i)?))?;
                (p, s, last) = (next_p, next_s, Some(value));
            }
            last.context("a loop of no steps")?.block_until_ready()?;
            carried = Some((p, s));
            Ok(())
        })?;
    let steps_per_s = |us_per_loop: f64| LOOP_BLOCK as f64 * 1e6 / us_per_loop;
    Ok(json!({
        "trace_lower_us": trace_lower_us,
        "compile_ms": compile_ms,
        "step_us": step_us,
        "jax_step_us": jax_step_us,
        "loop_steps_per_s": steps_per_s(loop_us),
        "jax_loop_steps_per_s": steps_per_s(jax_loop_us),
        "cold_first_call_ms": cold_first_call_ms,
        "warm_first_call_ms": warm_first_call_ms,
        "peak_bytes": peak_bytes,
        "first_loss": first_loss,
    }))
}

fn mlp_loss(m: &Mlp, batch: &[Array]) -> Array {
    let logits = m.apply(&batch[0]);
    jnp::mean(
        &losses::softmax_cross_entropy_with_integer_labels(&logits, &batch[1]),
        None,
        false,
    )
}

fn lm_loss(m: &TransformerLm, batch: &[Array]) -> Array {
    m.loss(&batch[0])
}

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = |name: &str| dir.path().join(name);
    let unit = |key, shape: &[i64]| {
        random::uniform(
            key,
            shape,
            DType::F32,
            &Array::weak_scalar(0.0f32),
            &Array::weak_scalar(1.0f32),
        )
    };
    let int = |key, shape: &[i64], high: i32| {
        random::randint(
            key,
            shape,
            &Array::weak_scalar(0i32),
            &Array::weak_scalar(high),
            DType::I32,
        )
    };
    let mlp = Mlp::new(Key::new(0), &[784, 512, 512, 10], Activation::Relu);
    let x = unit(Key::new(1), &[BATCHES as i64, 128, 784]);
    let y = int(Key::new(2), &[BATCHES as i64, 128], 10);
    let lm = TransformerLm::new(Key::new(3), 96, 256, 4, 2, 128);
    let tokens = int(Key::new(4), &[BATCHES as i64, 16, 129], 96);
    checkpoint::save(path("mlp.safetensors"), &mlp)?;
    checkpoint::save(path("lm.safetensors"), &lm)?;
    x.to_npy(path("mlp_x.npy"))?;
    y.to_npy(path("mlp_y.npy"))?;
    tokens.to_npy(path("lm_tokens.npy"))?;
    // Where dispatch dominates: 20 layers of 64 (40 parameter leaves),
    // batch 32.
    let small = Mlp::new(Key::new(5), &[64; 21], Activation::Relu);
    let sx = unit(Key::new(6), &[BATCHES as i64, 32, 64]);
    let sy = int(Key::new(7), &[BATCHES as i64, 32], 64);
    checkpoint::save(path("small.safetensors"), &small)?;
    sx.to_npy(path("small_x.npy"))?;
    sy.to_npy(path("small_y.npy"))?;

    let (mut twin, jax) = Twin::start_with_args("jax_train_twin.py", &[dir.path()])?;
    let mlp_row = measure(
        "mlp",
        &mlp,
        &optim::adamw(1e-3, 1e-4),
        mlp_loss,
        &HostBatches::of(&[&x, &y])?,
        &mut twin,
    )?;
    let lm_row = measure(
        "lm",
        &lm,
        &(optim::clip_by_global_norm(1.0), optim::adamw(1e-3, 1e-2)),
        lm_loss,
        &HostBatches::of(&[&tokens])?,
        &mut twin,
    )?;
    let small_row = measure(
        "small",
        &small,
        &optim::adamw(1e-3, 1e-4),
        mlp_loss,
        &HostBatches::of(&[&sx, &sy])?,
        &mut twin,
    )?;
    let tiny = jit(|v: Array| v + 1.0);
    let x4 = jnp::ones(&[4], DType::F32);
    let (tiny_us, jax_tiny_us) = twin.alternate_named("tiny", 9, 2000, || {
        tiny.call(x4.clone())?.block_until_ready()?;
        Ok(())
    })?;

    println!(
        "Training steps, oxla vs JAX + Optax (same models, parameters, data; {})",
        oxla::client()?.platform_name()?
    );
    println!("| model | measure | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|---|");
    let rows: [(&str, &str, &str, bool, &str); 7] = [
        (
            "trace + lower (µs)",
            "trace_lower_us",
            "trace_lower_us",
            false,
            "<= 0.1",
        ),
        ("compile (ms)", "compile_ms", "compile_ms", false, "-"),
        ("step (µs)", "step_us", "jax_step_us", true, "<= 1.05"),
        (
            "loop with host feeding (steps/s)",
            "loop_steps_per_s",
            "jax_loop_steps_per_s",
            true,
            ">= 1.2 MLP, 1.0 LM, 2 small",
        ),
        (
            "first call, cold (ms)",
            "cold_first_call_ms",
            "cold_first_call_ms",
            false,
            "-",
        ),
        (
            "first call, warm disk cache (ms)",
            "warm_first_call_ms",
            "warm_first_call_ms",
            false,
            "<= 0.3",
        ),
        (
            "peak bytes of the step",
            "peak_bytes",
            "peak_bytes",
            false,
            "-",
        ),
    ];
    let mut table = serde_json::Map::new();
    for (model, ours, theirs) in [
        ("mlp", &mlp_row, &jax["mlp"]),
        ("lm", &lm_row, &jax["lm"]),
        ("small", &small_row, &jax["small"]),
    ] {
        let label = match model {
            "mlp" => "MLP 784-512-512-10",
            "lm" => "transformer 2x256",
            _ => "MLP 20x64 (40 leaves), batch 32",
        };
        for (measure, our_key, their_key, from_ours, target) in rows {
            let o = ours[our_key].as_f64().unwrap_or(f64::NAN);
            let t = if from_ours {
                ours[their_key].as_f64()
            } else {
                theirs[their_key].as_f64()
            }
            .unwrap_or(f64::NAN);
            println!(
                "| {label} | {measure} | {t:.1} | {o:.1} | {:.3} | {target} |",
                o / t
            );
        }
        table.insert(model.into(), json!({ "oxla": ours, "jax": theirs }));
    }
    println!(
        "| - | tiny jitted call (µs) | {jax_tiny_us:.2} | {tiny_us:.2} | {:.3} | <= 0.5 |",
        tiny_us / jax_tiny_us
    );
    println!(
        "first losses: MLP oxla {:.5} JAX {:.5}; transformer oxla {:.5} JAX {:.5}",
        mlp_row["first_loss"],
        jax["mlp"]["first_loss"],
        lm_row["first_loss"],
        jax["lm"]["first_loss"]
    );
    table.insert(
        "tiny".into(),
        json!({ "oxla_us": tiny_us, "jax_us": jax_tiny_us }),
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(
        out.join("train_vs_jax.json"),
        serde_json::to_string_pretty(&Value::Object(table))?,
    )?;
    println!("wrote {}", out.join("train_vs_jax.json").display());
    Ok(())
}
