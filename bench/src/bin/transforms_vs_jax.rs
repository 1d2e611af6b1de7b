//! oxla's transformations against JAX's on the same workloads, in one run:
//! (a) trace + lower of an MLP training step (`value_and_grad` plus an SGD
//! update over the parameter pytree; 784-512-512-10, batch 128; a fresh
//! function each time on both sides), (b) steady-state runs of that
//! compiled step (blocks of oxla and JAX steps alternate), (c) the compiler's peak temporary memory of grad of a
//! 16-layer MLP with and without checkpoint (nothing_saveable), unrolled
//! and (d) as a scan over stacked weights. JAX's side
//! is bench/jax_transforms_twin.py in oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin transforms_vs_jax`

use oxla::{Array, DType, RematPolicy, grad, jit, lax, numpy as jnp};
use oxla_bench::median_us;
use oxla_bench::mlp::{deep_loss, mlp_args, scanned_deep_loss, train_step};
use oxla_bench::twin::Twin;

fn main() -> anyhow::Result<()> {
    let (mut twin, jax) = Twin::start("jax_transforms_twin.py")?;

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
    // Steady state: alternate blocks of oxla and JAX steps.
    let step = jit(train_step);
    let (run_us, jax_run_us) = twin.alternate(9, 30, || {
        step.call(args.clone())?.1.block_until_ready()?;
        Ok(())
    })?;

    let layers: Vec<Array> = (0..16)
        .map(|i| {
            lax::mul(
                &jnp::eye(256, DType::F32),
                &Array::weak_scalar(0.9 + 0.001 * i as f32),
            )
        })
        .collect();
    let xb = jnp::ones(&[512, 256], DType::F32);
    let temp = |policy: Option<RematPolicy>| -> anyhow::Result<i64> {
        let f = jit(move |(l, x): (Vec<Array>, Array)| {
            grad(|l: Vec<Array>| deep_loss(&l, &x, policy.as_ref())).call(l)
        });
        Ok(f.memory_stats(&(layers.clone(), xb.clone()))?
            .temp_size_in_bytes)
    };
    let (plain, remat) = (temp(None)?, temp(Some(RematPolicy::NothingSaveable))?);
    let ws = jnp::stack(&layers.iter().collect::<Vec<_>>(), 0);
    let scan_temp = |policy: Option<RematPolicy>| -> anyhow::Result<i64> {
        let f = jit(move |(ws, x): (Array, Array)| {
            grad(|ws: Array| scanned_deep_loss(&ws, &x, policy.as_ref())).call(ws)
        });
        Ok(f.memory_stats(&(ws.clone(), xb.clone()))?
            .temp_size_in_bytes)
    };
    let (scan_plain, scan_remat) = (
        scan_temp(None)?,
        scan_temp(Some(RematPolicy::NothingSaveable))?,
    );

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
            if oxla::client()?.platform_name()? == "cpu" {
                "- (XLA CPU merges the recomputation back)"
            } else {
                "< no checkpoint"
            },
        ),
        (
            "(d) the 16 layers as a scan, temp bytes, no checkpoint",
            scan_plain as f64,
            "scan_temp_plain",
            "-",
        ),
        (
            "(d) same with a checkpointed body (nothing_saveable)",
            scan_remat as f64,
            "scan_temp_remat",
            "< no checkpoint",
        ),
    ] {
        let theirs = match key {
            "step_run" => jax_run_us,
            _ => jax[key].as_f64().unwrap_or(f64::NAN),
        };
        println!(
            "| {name} | {theirs:.1} | {ours:.1} | {:.3} | {target} |",
            ours / theirs
        );
    }
    Ok(())
}
