//! oxla's jit against JAX's on the same workloads, in one run:
//! (a) a jitted tiny function called on a cache hit, (b) trace + lower of
//! an MLP forward and loss (784-512-512-10, batch 128), (c) steady-state
//! runs of that compiled function. JAX's side is bench/jax_twin.py in
//! oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin jit_vs_jax`

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use oxla::{Array, DType, jit, numpy as jnp};
use oxla_bench::median_us;
use oxla_bench::mlp::mlp_loss;

fn main() -> anyhow::Result<()> {
    let python = oxla_pjrt::oxla_home().join("venv/bin/python");
    let twin = Path::new(env!("CARGO_MANIFEST_DIR")).join("jax_twin.py");
    let output = Command::new(&python)
        .arg(&twin)
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let jax: serde_json::Value = serde_json::from_slice(&output.stdout)?;

    // (a) tiny function, cache hit.
    let tiny = jit(|x: Array| x + 1.0);
    let x4 = jnp::ones(&[4], DType::F32);
    tiny.call(x4.clone())?.block_until_ready()?;
    let tiny_us = median_us(|| Ok(tiny.call(x4.clone()).map(drop)?), 2000, 15)?;

    // (b) trace + lower of the MLP loss.
    let args = oxla_bench::mlp::mlp_args()?;
    let lower_us = median_us(
        || {
            let fresh = jit(mlp_loss);
            fresh.lower(&args)?;
            Ok(())
        },
        5,
        9,
    )?;

    // (c) steady state.
    let compiled = jit(mlp_loss);
    let loss = compiled.call(args.clone())?.item::<f32>()?;
    let run_us = median_us(
        || {
            compiled.call(args.clone())?.block_until_ready()?;
            Ok(())
        },
        50,
        9,
    )?;

    println!("| workload (median µs per call) | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|");
    for (name, ours, key, target) in [
        (
            "(a) jitted tiny fn, cache hit",
            tiny_us,
            "tiny_call",
            "<= 0.5",
        ),
        (
            "(b) MLP trace + lower",
            lower_us,
            "mlp_trace_lower",
            "<= 0.1",
        ),
        ("(c) MLP compiled run", run_us, "mlp_run", "<= 1.05"),
    ] {
        let theirs = jax[key].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {name} | {theirs:.2} | {ours:.2} | {:.3} | {target} |",
            ours / theirs
        );
    }
    println!(
        "(losses on each side's own random data: JAX {:.4}, oxla {loss:.4})",
        jax["mlp_loss"].as_f64().unwrap_or(f64::NAN)
    );
    Ok(())
}
