//! A model exported from JAX, fine-tuned from oxla and from JAX, in one run:
//! an MLP loss (784-512-512-10, batch 256) exported with its vjp by
//! bench/jax_exports_twin.py; (a) reading the export (oxla: flatbuffer +
//! VHLO reader; JAX: `jax.export.deserialize`), (b) trace + lower of the
//! jitted SGD step whose loss is the export (grad through its vjp), (c)
//! steady-state steps, alternating blocks of oxla and JAX, (d) writing the
//! same loss as a jax.export file with its vjp (oxla: `Jit::export` +
//! `to_bytes`, a portable artifact from oxla's VHLO writer; JAX:
//! `export(...).serialize(vjp_order=1)`).
//!
//! `cargo run --release -p oxla-bench --bin exports_vs_jax`

use std::collections::BTreeMap;

use oxla::{Array, ExportOptions, ExportedFn, jit, numpy as jnp, value_and_grad};
use oxla_bench::median_us;
use oxla_bench::twin::Twin;
use oxla_nn as nn;

type Params = BTreeMap<String, Array>;

/// The twin's loss: a 3-layer ReLU MLP's mean cross-entropy.
fn mlp_loss((p, x, y): (Params, Array, Array)) -> Array {
    let mut h = x;
    for i in 0..3 {
        h = jnp::matmul(&h, &p[&format!("w{i}")]) + &p[&format!("b{i}")];
        if i < 2 {
            h = nn::relu(&h);
        }
    }
    -jnp::mean(
        &jnp::sum(&(nn::log_softmax(&h, None) * &y), Some(&[-1]), false),
        None,
        false,
    )
}

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (mut twin, jax) = Twin::start_with_args("jax_exports_twin.py", &[dir.path()])?;
    let bytes = std::fs::read(dir.path().join("mlp.jaxexport"))?;
    let read_us = median_us(
        || {
            ExportedFn::from_bytes(&bytes)?;
            Ok(())
        },
        20,
        9,
    )?;
    let model = ExportedFn::from_bytes(&bytes)?;
    let mut params = Params::new();
    for i in 0..3 {
        for kind in ["w", "b"] {
            let name = format!("{kind}{i}");
            params.insert(
                name.clone(),
                Array::from_npy(dir.path().join(format!("{name}.npy")))?,
            );
        }
    }
    let x = Array::from_npy(dir.path().join("x.npy"))?;
    let y = Array::from_npy(dir.path().join("y.npy"))?;
    let step_fn = |(p, x, y): (Params, Array, Array)| {
        let (value, grads) =
            value_and_grad(|p: Params| model.call::<_, Array>((p, x.clone(), y.clone())).unwrap())
                .call(p.clone())
                .unwrap();
        let updated: Params = p
            .iter()
            .map(|(k, w)| (k.clone(), w - &(&grads[k] * 0.01)))
            .collect();
        (value, updated)
    };
    let args = (params, x, y);
    let lower_us = median_us(
        || {
            jit(step_fn).lower(&args)?;
            Ok(())
        },
        3,
        7,
    )?;
    let export_us = median_us(
        || {
            jit(mlp_loss)
                .export(&args, &ExportOptions::new().vjp_order(1))?
                .to_bytes();
            Ok(())
        },
        3,
        7,
    )?;
    let step = jit(step_fn);
    let (run_us, jax_run_us) = twin.alternate(9, 10, || {
        step.call(args.clone())?.0.block_until_ready()?;
        Ok(())
    })?;
    let loss = step.call(args.clone())?.0.item::<f32>()?;

    println!("MLP 784-512-512-10, batch 256, exported from JAX with its vjp; loss {loss:.4}");
    println!("| workload | JAX | oxla | oxla / JAX |");
    println!("|---|---|---|---|");
    for (name, ours, theirs) in [
        (
            "(a) read the export (µs)",
            read_us,
            jax["deserialize"].as_f64().unwrap_or(f64::NAN),
        ),
        (
            "(b) trace + lower the step (µs)",
            lower_us,
            jax["step_trace_lower"].as_f64().unwrap_or(f64::NAN),
        ),
        ("(c) compiled step (µs)", run_us, jax_run_us),
        (
            "(d) export the loss with its vjp and serialize (µs)",
            export_us,
            jax["export_serialize"].as_f64().unwrap_or(f64::NAN),
        ),
    ] {
        println!(
            "| {name} | {theirs:.1} | {ours:.1} | {:.3} |",
            ours / theirs
        );
    }
    println!("JAX's loss {:.4}", jax["loss"].as_f64().unwrap_or(f64::NAN));
    Ok(())
}
