//! oxla's CheckpointManager against Orbax's, in one run, on the same
//! training state: a GPT-style decoder's parameters (vocabulary 4096,
//! d_model 320, 8 heads, 6 layers, context 256: 8.9M parameters) and its
//! AdamW moments, about 107 MB of f32. oxla writes the state as a
//! safetensors file that bench/orbax_checkpoint_twin.py loads, so both
//! save the same arrays. For each side, over several rounds: the time
//! until `save` returns (when the train step may go on), until the save is
//! committed, and to restore every array; the rise of the process's peak
//! resident memory from before the first save (the peak reset then) to
//! the end of the last save (restores come after), oxla's side in a
//! process of its own; the bytes on disk.
//! Prints a markdown table with ratios and writes
//! target/bench/checkpoint_vs_orbax.json.
//!
//! `cargo run --release -p oxla-bench --bin checkpoint_vs_orbax`

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use oxla::random::{self, Key};
use oxla_bench::twin::Twin;
use oxla_nn::TransformerLm;
use oxla_optim::{self as optim, GradientTransformation};
use oxla_train::checkpoint::{self, CheckpointManager, CheckpointManagerOptions};
use serde_json::{Value, json};

const ROUNDS: usize = 5;

type State = (TransformerLm, optim::StateOf<optim::AdamW, TransformerLm>);

/// The state after one AdamW update (moments that are not zeros, which
/// would compress as no trained state does).
fn state() -> anyhow::Result<State> {
    let model = TransformerLm::new(Key::new(0), 4096, 320, 8, 6, 256);
    let opt = optim::adamw(1e-3, 1e-2);
    let opt_state = opt.init(&model);
    let grads = oxla::pytree::tree_map(&model, |p| {
        random::normal(Key::new(1), p.shape(), p.dtype())
    })?;
    let (updates, opt_state) = opt.update(grads, opt_state, &model)?;
    Ok((optim::apply_updates(&model, &updates)?, opt_state))
}

/// A field of /proc/self/status, in kB.
fn status_kb(field: &str) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .with_context(|| format!("{field} in /proc/self/status"))?;
    Ok(line.split_whitespace().nth(1).context("a value")?.parse()?)
}

/// Resets the process's peak resident memory (VmHWM) to its current size.
fn reset_peak() -> anyhow::Result<()> {
    Ok(std::fs::write("/proc/self/clear_refs", "5")?)
}

fn disk_bytes(path: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        total += if entry.file_type()?.is_dir() {
            disk_bytes(&entry.path())?
        } else {
            entry.metadata()?.len()
        };
    }
    Ok(total)
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn numbers(v: &Value) -> anyhow::Result<Vec<f64>> {
    v.as_array()
        .context("a list")?
        .iter()
        .map(|x| x.as_f64().context("a number"))
        .collect()
}

/// The flag that makes this binary the oxla side, in a process of its
/// own whose memory holds nothing but the state (the parent's host copies,
/// freed, would stay resident in its heap and hide the saves' memory).
const OXLA_SIDE: &str = "--oxla-side";

/// The oxla side: saves and restores in `root`, printing its measurements
/// as one JSON line.
fn oxla_side(root: &Path) -> anyhow::Result<()> {
    let state = state()?;
    let like = self::state()?;
    let mut manager =
        CheckpointManager::open(root, CheckpointManagerOptions::default().max_to_keep(2))?;
    let mut ours: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    // Peak memory: the rise over the saves from before the first one
    // (buffers a library keeps between saves count).
    reset_peak()?;
    let baseline = status_kb("VmRSS")?;
    manager.save(0, &state, BTreeMap::new())?;
    manager.wait_until_finished()?;
    for step in 1..=ROUNDS as u64 {
        let start = Instant::now();
        manager.save(step, &state, BTreeMap::new())?;
        let returned = start.elapsed();
        manager.wait_until_finished()?;
        let done = start.elapsed();
        ours.entry("save_returns_ms")
            .or_default()
            .push(returned.as_secs_f64() * 1e3);
        ours.entry("save_total_ms")
            .or_default()
            .push(done.as_secs_f64() * 1e3);
    }
    let peak = (status_kb("VmHWM")? - baseline) / 1024.0;
    ours.insert("peak_mb", vec![peak]);
    for step in ROUNDS as u64 - 1..=ROUNDS as u64 {
        let start = Instant::now();
        let restored = manager.restore(step, &like)?;
        for leaf in oxla::pytree::tree_leaves(&restored) {
            leaf.block_until_ready()?;
        }
        ours.entry("restore_ms")
            .or_default()
            .push(start.elapsed().as_secs_f64() * 1e3);
    }
    println!("{}", serde_json::to_string(&ours)?);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, root] = args.as_slice()
        && flag == OXLA_SIDE
    {
        return oxla_side(Path::new(root));
    }
    let dir = tempfile::tempdir()?;
    let state = state()?;
    let parameters: usize = oxla::pytree::tree_leaves(&state.0)
        .iter()
        .map(|l| l.shape().iter().product::<i64>() as usize)
        .sum();
    let state_file = dir.path().join("state.safetensors");
    checkpoint::save(&state_file, &state)?;
    drop(state);
    let rounds = ROUNDS.to_string();
    let (_twin, orbax) = Twin::start_with_args(
        "orbax_checkpoint_twin.py",
        &[&state_file, dir.path(), Path::new(&rounds)],
    )?;
    let root = dir.path().join("oxla");
    let side = std::process::Command::new(std::env::current_exe()?)
        .args([OXLA_SIDE.as_ref(), root.as_os_str()])
        .output()?;
    anyhow::ensure!(
        side.status.success(),
        "the oxla side failed: {}",
        String::from_utf8_lossy(&side.stderr)
    );
    let ours: BTreeMap<String, Vec<f64>> = serde_json::from_slice(&side.stdout)
        .with_context(|| String::from_utf8_lossy(&side.stdout).into_owned())?;
    let our_bytes = disk_bytes(&root.join(ROUNDS.to_string()))?;

    println!(
        "checkpoint of a {:.1}M-parameter decoder + AdamW state, {ROUNDS} rounds, medians\n",
        parameters as f64 / 1e6
    );
    println!("| workload | Orbax | oxla | Orbax / oxla |");
    println!("|---|---|---|---|");
    let mut table = serde_json::Map::new();
    for (key, what, unit) in [
        ("save_returns_ms", "save, until the step may go on", "ms"),
        ("save_total_ms", "save, until committed", "ms"),
        ("restore_ms", "restore", "ms"),
        ("peak_mb", "peak memory above the state, saving", "MB"),
    ] {
        let theirs = median(&numbers(&orbax[key])?);
        let mine = median(&ours[key]);
        println!(
            "| {what} | {theirs:.1} {unit} | {mine:.1} {unit} | {:.2}× |",
            theirs / mine
        );
        table.insert(
            key.into(),
            json!({"orbax": theirs, "oxla": mine, "ratio": theirs / mine}),
        );
    }
    let orbax_bytes = orbax["bytes"].as_f64().context("bytes")?;
    println!(
        "| bytes on disk | {:.1} MB | {:.1} MB | {:.2}× |",
        orbax_bytes / 1e6,
        our_bytes as f64 / 1e6,
        orbax_bytes / our_bytes as f64
    );
    table.insert(
        "bytes".into(),
        json!({"orbax": orbax_bytes, "oxla": our_bytes, "parameters": parameters}),
    );
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(
        out.join("checkpoint_vs_orbax.json"),
        serde_json::to_string_pretty(&Value::Object(table))?,
    )?;
    Ok(())
}
