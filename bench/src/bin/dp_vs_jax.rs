//! A data-parallel training step on 8 CPU devices, oxla against JAX in
//! one run: the MLP SGD step of bench/src/mlp.rs (784-512-512-10) on a
//! global batch of 1024 split over mesh ('data': 8), parameters replicated
//! and donated; XLA inserts the gradient all-reduce on both sides. Blocks
//! of oxla and JAX steps alternate. JAX's side is bench/jax_dp_twin.py in
//! oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin dp_vs_jax`

use oxla::sharding::device_put_tree;
use oxla::{Mesh, NamedSharding, P, jit};
use oxla_bench::mlp::{mlp_batch, mlp_params, train_step};
use oxla_bench::twin::Twin;

const BATCH: i64 = 1024;

fn main() -> anyhow::Result<()> {
    oxla::set_cpu_device_count(8)?;
    let (mut twin, jax) = Twin::start("jax_dp_twin.py")?;
    let mesh = Mesh::new(&[("data", 8)])?;
    let replicated = NamedSharding::replicated(&mesh);
    let rows = NamedSharding::new(&mesh, P!["data"]);
    let mut params = device_put_tree(&mlp_params()?, |_, _| replicated.clone())?;
    let (x, y) = mlp_batch(BATCH)?;
    let (x, y) = (oxla::device_put(&x, &rows)?, oxla::device_put(&y, &rows)?);
    let step = jit(train_step).donate(&[0]);
    let (first, first_loss) = step.call((params, x.clone(), y.clone()))?;
    params = first;
    let mut slot = Some(params);
    let (ours, theirs) = twin.alternate(9, 20, || {
        let current = slot.take().expect("parameters");
        let (next, loss) = step.call((current, x.clone(), y.clone()))?;
        loss.block_until_ready()?;
        slot = Some(next);
        Ok(())
    })?;
    println!(
        "Data-parallel MLP SGD step, 784-512-512-10, global batch {BATCH} over 8 CPU devices \
         (mesh ('data': 8), parameters replicated); first losses: oxla {:.4}, JAX {:.4}",
        first_loss.item::<f32>()?,
        jax["loss"].as_f64().unwrap_or(f64::NAN)
    );
    println!("| workload | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| data-parallel step (µs) | {theirs:.1} | {ours:.1} | {:.3} | <= 1.05 |",
        ours / theirs
    );
    Ok(())
}
