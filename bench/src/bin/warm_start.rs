//! Process start to first result of the jitted MLP forward and loss,
//! cold (empty compile cache) and warm (the cache filled by an earlier
//! process), for oxla and for JAX with its persistent compilation cache
//! (`jax_compilation_cache_dir`, minimum compile time 0), in one run.
//!
//! `cargo run --release -p oxla-bench --bin warm_start`
//! (`warm_start child` is one oxla process: compute the loss once, print it.)

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use oxla::jit;

fn child() -> anyhow::Result<()> {
    let loss = jit(oxla_bench::mlp::mlp_loss).call(oxla_bench::mlp::mlp_args()?)?;
    println!("{}", loss.item::<f32>()?);
    Ok(())
}

/// Wall time of one process run of `command`.
fn timed(command: &mut Command) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let out = command.output().context("running a benchmark process")?;
    let elapsed = start.elapsed();
    ensure!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(elapsed)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("child") {
        return child();
    }
    let runs = 5;
    let exe = std::env::current_exe()?;
    let oxla_cache = tempfile::tempdir()?;
    let oxla_run = || {
        let mut c = Command::new(&exe);
        c.arg("child").env("OXLA_CACHE_DIR", oxla_cache.path());
        c
    };
    let python = oxla_pjrt::oxla_home().join("venv/bin/python");
    let twin = Path::new(env!("CARGO_MANIFEST_DIR")).join("jax_warm_start.py");
    let jax_cache = tempfile::tempdir()?;
    let jax_run = || {
        let mut c = Command::new(&python);
        c.arg(&twin).arg(jax_cache.path());
        c
    };
    // Cold: an empty cache each time; warm: the cache the cold run filled.
    let mut cold = (Vec::new(), Vec::new());
    let mut warm = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for d in [oxla_cache.path(), jax_cache.path()] {
            std::fs::remove_dir_all(d).ok();
            std::fs::create_dir_all(d)?;
        }
        cold.0.push(timed(&mut oxla_run())?);
        cold.1.push(timed(&mut jax_run())?);
        warm.0.push(timed(&mut oxla_run())?);
        warm.1.push(timed(&mut jax_run())?);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (oc, jc, ow, jw) = (
        median(cold.0),
        median(cold.1),
        median(warm.0),
        median(warm.1),
    );
    println!("| process start to first result (median of {runs}, ms) | JAX | oxla | oxla / JAX |");
    println!("|---|---|---|---|");
    println!(
        "| cold (empty compile cache) | {:.1} | {:.1} | {:.3} |",
        ms(jc),
        ms(oc),
        ms(oc) / ms(jc)
    );
    println!(
        "| warm (cache filled by an earlier process) | {:.1} | {:.1} | {:.3} (target <= 0.3) |",
        ms(jw),
        ms(ow),
        ms(ow) / ms(jw)
    );
    Ok(())
}
