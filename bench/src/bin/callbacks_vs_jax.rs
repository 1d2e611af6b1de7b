//! Host callbacks, oxla against JAX in one run: jitted functions on
//! `f32[1024]` that call the host from inside the compiled program. (a) no
//! callback (the floor), (b) a pure callback returning `x * 2`, (c) an
//! ordered io callback that counts its calls, (d) the pure callback under
//! vmap over 8 rows with the sequential method (8 host calls per call).
//! Blocks of oxla and JAX calls alternate. JAX's side is
//! bench/jax_callbacks_twin.py in oxla's venv (ci/setup makes it).
//!
//! `cargo run --release -p oxla-bench --bin callbacks_vs_jax`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxla::{Array, Aval, DType, HostArray, VmapMethod, io_callback, jit, pure_callback, vmap};
use oxla_bench::twin::Twin;

const SIZE: usize = 1024;

/// The host's `x * 2` on f32 data.
fn doubled(args: &[HostArray]) -> oxla::callback::CallbackOutput {
    let x = &args[0];
    let bytes: Vec<u8> = x
        .bytes
        .chunks_exact(4)
        .flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) * 2.0).to_le_bytes())
        .collect();
    Ok(vec![HostArray::new(
        x.element_type(),
        x.dims.clone(),
        bytes,
    )])
}

/// `pure_callback(doubled) + 1`.
fn pure(x: Array) -> Array {
    let spec = Aval::new(DType::F32, &[SIZE as i64]);
    let y = pure_callback(doubled, &[spec], &[&x], VmapMethod::Sequential)
        .expect("the callback binds")
        .remove(0);
    y + 1.0
}

fn main() -> anyhow::Result<()> {
    let (mut twin, jax) = Twin::start("jax_callbacks_twin.py")?;
    let values: Vec<f32> = (0..SIZE).map(|i| i as f32 / SIZE as f32).collect();
    let x = Array::from_slice(&values, &[SIZE as i64])?;
    let rows: Vec<f32> = (0..8 * SIZE).map(|i| i as f32 / SIZE as f32).collect();
    let rows = Array::from_slice(&rows, &[8, SIZE as i64])?;
    let calls = Arc::new(AtomicUsize::new(0));

    let none = jit(|v: Array| v * 2.0 + 1.0);
    let pure_step = jit(pure);
    let counter = calls.clone();
    let io_step = jit(move |v: Array| {
        let counter = counter.clone();
        io_callback(
            move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
                Ok(Vec::new())
            },
            &[],
            &[&v],
        )
        .expect("the callback binds");
        v + 1.0
    });
    let batched = vmap(pure);
    let vmap_step = jit(move |v: Array| batched.call(v).expect("vmap of the callback"));

    // The callbacks compute what JAX's do.
    let want: Vec<f32> = values.iter().map(|v| v * 2.0 + 1.0).collect();
    anyhow::ensure!(pure_step.call(x.clone())?.to_vec::<f32>()? == want);

    let mut rows_table = Vec::new();
    for (name, label) in [
        ("none", "(a) no callback (µs)"),
        ("pure", "(b) pure_callback (µs)"),
        ("io", "(c) ordered io_callback (µs)"),
        ("vmap", "(d) vmap, sequential: 8 calls (µs)"),
    ] {
        let (ours, theirs) = twin.alternate_named(name, 9, 200, || {
            let out = match name {
                "none" => none.call(x.clone())?,
                "pure" => pure_step.call(x.clone())?,
                "io" => io_step.call(x.clone())?,
                _ => vmap_step.call(rows.clone())?,
            };
            out.block_until_ready()?;
            Ok(())
        })?;
        rows_table.push((label, ours, theirs));
    }
    println!(
        "Host callbacks inside jit on f32[{SIZE}] (io callback ran {} times; JAX's had run {} after \
         its warm-up)",
        calls.load(Ordering::Relaxed),
        jax["io_calls_after_warmup"]
    );
    println!("| workload | JAX | oxla | oxla / JAX |");
    println!("|---|---|---|---|");
    for (label, ours, theirs) in rows_table {
        println!(
            "| {label} | {theirs:.1} | {ours:.1} | {:.3} |",
            ours / theirs
        );
    }
    Ok(())
}
