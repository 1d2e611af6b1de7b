//! A data-parallel training step on 8 CPU devices, oxla against JAX in
//! one run: the MLP SGD step of bench/src/mlp.rs (784-512-512-10) on a
//! global batch of 1024 split over mesh ('data': 8), parameters replicated
//! and donated, written two ways on both sides:
//! - a jit of the whole step, where XLA inserts the gradient all-reduce;
//! - a shard_map whose body takes the gradient of its block, with JAX's
//!   default check_vma on both sides (the replicated parameters'
//!   cotangents are summed over the devices by the varying-axes types).
//!
//! Blocks of oxla and JAX steps alternate. JAX's side is
//! bench/jax_dp_twin.py in oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin dp_vs_jax`

use oxla::sharding::{collectives::pmean, device_put_tree, shard_map};
use oxla::{Array, Mesh, NamedSharding, P, jit};
use oxla_bench::mlp::{LEARNING_RATE, Layer, mlp_batch, mlp_loss, mlp_params, train_step};
use oxla_bench::twin::Twin;

const BATCH: i64 = 1024;

/// Parameters and a batch: what a step takes.
type StepArgs = (Vec<Layer>, Array, Array);
/// Updated parameters and the loss: what a step gives.
type StepOut = oxla::Result<(Vec<Layer>, Array)>;
const DEVICES: usize = 8;

/// The SGD step as a per-device body over `mesh`: the mean of the
/// devices' gradients (check_vma sums them; the body divides), as
/// bench/jax_dp_twin.py's `shard_map_step`.
fn shard_map_step(mesh: &Mesh) -> impl Fn(StepArgs) -> StepOut + Clone + use<> {
    let mesh = mesh.clone();
    move |(params, x, y): (Vec<Layer>, Array, Array)| {
        let body =
            |(params, x, y): (Vec<Layer>, Array, Array)| -> oxla::Result<(Vec<Layer>, Array)> {
                let (loss, grads) =
                    oxla::value_and_grad(|p: Vec<Layer>| mlp_loss((p, x.clone(), y.clone())))
                        .call(params.clone())?;
                let scale = LEARNING_RATE / DEVICES as f64;
                let updated = params
                    .iter()
                    .zip(&grads)
                    .map(|((w, b), (gw, gb))| (w - &(gw * scale), b - &(gb * scale)))
                    .collect();
                Ok((updated, pmean(&loss, &["data"])))
            };
        shard_map(
            body,
            &mesh,
            vec![P![], P!["data"], P!["data"]],
            vec![P![], P![]],
        )
        .call((params, x, y))?
    }
}

fn main() -> anyhow::Result<()> {
    oxla::set_cpu_device_count(DEVICES)?;
    let (mut twin, jax) = Twin::start("jax_dp_twin.py")?;
    let mesh = Mesh::new(&[("data", DEVICES)])?;
    let replicated = NamedSharding::replicated(&mesh);
    let rows = NamedSharding::new(&mesh, P!["data"]);
    let (x, y) = mlp_batch(BATCH)?;
    let (x, y) = (oxla::device_put(&x, &rows)?, oxla::device_put(&y, &rows)?);
    let jitted = jit(train_step).donate(&[0]);
    let mapped = jit(shard_map_step(&mesh)).donate(&[0]);
    let mut rows_out = Vec::new();
    let mut losses = Vec::new();
    for (name, label) in [
        ("jit", "jit of the step"),
        ("shard_map", "shard_map step, check_vma"),
    ] {
        let params = device_put_tree(&mlp_params()?, |_, _| replicated.clone())?;
        let step = |params: Vec<Layer>| match name {
            "jit" => jitted.call((params, x.clone(), y.clone())),
            _ => mapped.call((params, x.clone(), y.clone())),
        };
        let (first, first_loss) = step(params)?;
        losses.push(first_loss.item::<f32>()?);
        let mut slot = Some(first);
        let (ours, theirs) = twin.alternate_named(name, 9, 20, || {
            let current = slot.take().expect("parameters");
            let (next, loss) = step(current)?;
            loss.block_until_ready()?;
            slot = Some(next);
            Ok(())
        })?;
        rows_out.push(format!(
            "| {label} (µs) | {theirs:.1} | {ours:.1} | {:.3} | <= 1.05 |",
            ours / theirs
        ));
    }
    println!(
        "Data-parallel MLP SGD step, 784-512-512-10, global batch {BATCH} over {DEVICES} CPU \
         devices (mesh ('data': {DEVICES}), parameters replicated); first losses: oxla {:.4} \
         (jit) and {:.4} (shard_map), JAX {:.4} and {:.4}",
        losses[0],
        losses[1],
        jax["loss"].as_f64().unwrap_or(f64::NAN),
        jax["shard_map_loss"].as_f64().unwrap_or(f64::NAN),
    );
    println!("| workload | JAX | oxla | oxla / JAX | target |");
    println!("|---|---|---|---|---|");
    for row in rows_out {
        println!("{row}");
    }
    Ok(())
}
