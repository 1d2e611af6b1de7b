//! oxla's control flow against JAX's on a GRU training step (a scan over
//! 256 steps, hidden 256, batch 32, with value_and_grad and an SGD update),
//! in one run: (a) trace + lower of a fresh function each time on both
//! sides, (b) steady-state runs of the compiled step (blocks of oxla and
//! JAX steps alternate), (c) the compiler's temporary bytes of the step.
//! JAX's side is bench/jax_control_twin.py in oxla's venv (ci/setup makes
//! it).
//!
//! `cargo run --release -p oxla-bench --bin control_vs_jax`

use oxla::jit;
use oxla_bench::gru::{gru_args, gru_train_step};
use oxla_bench::median_us;
use oxla_bench::twin::Twin;

fn main() -> anyhow::Result<()> {
    let (mut twin, jax) = Twin::start("jax_control_twin.py")?;
    let args = gru_args()?;
    let lower_us = median_us(
        || {
            let fresh = jit(gru_train_step);
            fresh.lower(&args)?;
            Ok(())
        },
        5,
        9,
    )?;
    let step = jit(gru_train_step);
    let temp = step.memory_stats(&args)?.temp_size_in_bytes as f64;
    let (run_us, jax_run_us) = twin.alternate(9, 10, || {
        step.call(args.clone())?.1.block_until_ready()?;
        Ok(())
    })?;
    let loss = step.call(args.clone())?.1.item::<f32>()?;

    println!("GRU training step (scan of 256 steps, hidden 256, batch 32); loss {loss:.4}");
    println!("| workload | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|");
    for (name, ours, theirs, target) in [
        (
            "(a) trace + lower (µs)",
            lower_us,
            jax["step_trace_lower"].as_f64().unwrap_or(f64::NAN),
            "<= 0.1",
        ),
        ("(b) compiled step (µs)", run_us, jax_run_us, "<= 1.05"),
        (
            "(c) step temporaries (bytes)",
            temp,
            jax["step_temp"].as_f64().unwrap_or(f64::NAN),
            "-",
        ),
    ] {
        println!(
            "| {name} | {theirs:.1} | {ours:.1} | {:.3} | {target} |",
            ours / theirs
        );
    }
    println!("JAX's loss {:.4}", jax["loss"].as_f64().unwrap_or(f64::NAN));
    Ok(())
}
