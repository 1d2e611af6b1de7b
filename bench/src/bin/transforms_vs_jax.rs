//! oxla's transformations against JAX's on the same workloads, in one run:
//! (a) trace + lower of an MLP training step (`value_and_grad` plus an SGD
//! update over the parameter pytree; 784-512-512-10, batch 128; a fresh
//! function each time on both sides), (b) steady-state runs of that
//! compiled step, (c) the compiler's peak temporary memory of grad of a
//! 16-layer MLP with and without checkpoint (nothing_saveable). JAX's side
//! is bench/jax_transforms_twin.py in oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin transforms_vs_jax`

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use oxla::{Array, DType, RematPolicy, grad, jit, lax, numpy as jnp};
use oxla_bench::median_us;
use oxla_bench::mlp::{deep_loss, mlp_args, train_step};

fn main() -> anyhow::Result<()> {
    let python = oxla_pjrt::oxla_home().join("venv/bin/python");
    let twin = Path::new(env!("CARGO_MANIFEST_DIR")).join("jax_transforms_twin.py");
    let output = Command::new(&python)
        .arg(&twin)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let jax: serde_json::Value = serde_json::from_slice(&output.stdout)?;

    let args = mlp_args()?;
    let lower_us = median_us(
        || {
            let fresh = jit(train_step);
            fresh.lower(&args)?;
            Ok(())
        },
        5,
        9,
    )?;
    let step = jit(train_step);
    step.call(args.clone())??.1.block_until_ready()?;
    let run_us = median_us(
        || {
            step.call(args.clone())??.1.block_until_ready()?;
            Ok(())
        },
        50,
        9,
    )?;

    let layers: Vec<Array> = (0..16)
        .map(|i| {
            lax::mul(
                &jnp::eye(256, DType::F32),
                &Array::weak_scalar(0.9 + 0.001 * i as f32),
            )
        })
        .collect();
    let xb = jnp::ones(&[512, 256], DType::F32)?;
    let temp = |policy: Option<RematPolicy>| -> anyhow::Result<i64> {
        let f = jit(move |(l, x): (Vec<Array>, Array)| {
            grad(|l: Vec<Array>| deep_loss(&l, &x, policy.as_ref())).call(l)
        });
        Ok(f.memory_stats(&(layers.clone(), xb.clone()))?
            .temp_size_in_bytes)
    };
    let (plain, remat) = (temp(None)?, temp(Some(RematPolicy::NothingSaveable))?);

    println!("| workload | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|");
    for (name, ours, key, target) in [
        (
            "(a) MLP train step trace + lower (µs)",
            lower_us,
            "step_trace_lower",
            "<= 0.1",
        ),
        (
            "(b) MLP train step compiled run (µs)",
            run_us,
            "step_run",
            "<= 1.05",
        ),
        (
            "(c) grad of 16-layer MLP, temp bytes, no checkpoint",
            plain as f64,
            "deep_temp_plain",
            "-",
        ),
        (
            "(c) same with checkpoint(nothing_saveable)",
            remat as f64,
            "deep_temp_remat",
            "< no checkpoint",
        ),
    ] {
        let theirs = jax[key].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {name} | {theirs:.1} | {ours:.1} | {:.3} | {target} |",
            ours / theirs
        );
    }
    Ok(())
}
