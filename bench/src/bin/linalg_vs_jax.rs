//! Linear algebra and FFTs, oxla against JAX in one run: jitted
//! `cholesky`, `solve` (16 right-hand sides), `eigh`, `svd` (reduced) and
//! `qr` of f32 matrices 256×256, 1024×1024 and a batch of 64 32×32, and
//! `fft` (complex64) and `rfft` (float32) of 2^20 points, on the same
//! inputs (written by JAX's side, bench/jax_linalg_twin.py in oxla's venv).
//! On the CPU both call LAPACK: JAX the OpenBLAS SciPy bundles, oxla the
//! same build (`scipy-openblas32`, which ci/setup puts in
//! `$OXLA_HOME/lapack`), else the system's. Blocks of oxla and JAX calls
//! alternate.
//!
//! `cargo run --release -p oxla-bench --bin linalg_vs_jax`

use oxla::numpy::linalg as la;
use oxla::{Array, jit};
use oxla_bench::twin::Twin;

/// Calls per timing block for a step: about a tenth of a second each.
fn calls_for(step: &str) -> usize {
    match step {
        s if s.ends_with("_1024") && (s.starts_with("svd") || s.starts_with("eigh")) => 2,
        s if s.ends_with("_1024") => 5,
        "fft" | "rfft" => 10,
        _ => 20,
    }
}

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (mut twin, jax) = Twin::start_with_args("jax_linalg_twin.py", &[dir.path()])?;
    let load = |name: &str| Array::from_npy(dir.path().join(format!("{name}.npy")));
    let cholesky = jit(|a: Array| la::cholesky(&a, false));
    let solve = jit(|(a, b): (Array, Array)| la::solve(&a, &b));
    let eigh = jit(|a: Array| la::eigh(&a, false, true));
    let svd = jit(|a: Array| la::svd(&a, false, false));
    let qr = jit(|a: Array| la::qr(&a, la::QrMode::Reduced));
    let fft = jit(|z: Array| oxla::numpy::fft::fft(&z, None, -1, oxla::numpy::fft::Norm::Backward));
    let rfft =
        jit(|x: Array| oxla::numpy::fft::rfft(&x, None, -1, oxla::numpy::fft::Norm::Backward));
    let steps: Vec<String> = serde_json::from_value(jax["steps"].clone())?;
    println!("| workload | JAX (ms) | oxla (ms) | oxla / JAX |");
    println!("|---|---|---|---|");
    for step in &steps {
        let (op, label) = step.split_once('_').unwrap_or((step.as_str(), ""));
        let (a, spd, b) = if label.is_empty() {
            (None, None, None)
        } else {
            (
                Some(load(&format!("a_{label}"))?),
                Some(load(&format!("spd_{label}"))?),
                Some(load(&format!("b_{label}"))?),
            )
        };
        let (z, x) = (load("z")?, load("x")?);
        let run = || -> anyhow::Result<()> {
            match op {
                "cholesky" => cholesky.call(spd.clone().unwrap())?.block_until_ready()?,
                "solve" => solve
                    .call((a.clone().unwrap(), b.clone().unwrap()))?
                    .block_until_ready()?,
                "eigh" => eigh.call(spd.clone().unwrap())?.0.block_until_ready()?,
                "svd" => svd.call(a.clone().unwrap())?.1.block_until_ready()?,
                "qr" => qr.call(a.clone().unwrap())?.1.block_until_ready()?,
                "fft" => fft.call(z.clone())?.block_until_ready()?,
                "rfft" => rfft.call(x.clone())?.block_until_ready()?,
                other => anyhow::bail!("JAX's twin serves an unknown step {other}"),
            };
            Ok(())
        };
        let (ours, theirs) = twin.alternate_named(step, 5, calls_for(step), run)?;
        println!(
            "| {step} | {:.3} | {:.3} | {:.2} |",
            theirs / 1e3,
            ours / 1e3,
            ours / theirs
        );
    }
    Ok(())
}
