//! The Flax NNX + Optax + Orbax twins of the examples (`examples/flax/`,
//! the programs the examples' line counts are compared with) still run:
//! each in its short mode in the reference venv, the CNN and the GPT also
//! stopped and resumed from their Orbax checkpoints.

use std::path::{Path, PathBuf};
use std::process::Command;

use oxla_testing::{output_within, process_timeout, python};

fn twin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/flax")
        .join(name)
}

/// Runs a twin with `args`; its stdout, or a panic with its stderr.
fn run(name: &str, args: &[&str], out: &Path) -> String {
    let o = output_within(
        Command::new(python())
            .arg(twin(name))
            .args(args)
            .arg("--out")
            .arg(out)
            .env("JAX_PLATFORMS", "cpu"),
        process_timeout(),
    );
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{name} {args:?} failed ({}): {stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

#[test]
fn the_flax_mlp_twin_trains_and_writes_its_checkpoint_and_metrics() {
    let out = tempfile::tempdir().unwrap();
    let stdout = run(
        "mnist.py",
        &["--steps", "30", "--min-accuracy", "0.5"],
        out.path(),
    );
    assert!(stdout.contains("trained 30 steps"), "{stdout}");
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("metrics.json")).unwrap())
            .unwrap();
    assert_eq!(metrics["steps"], 30);
    assert!(out.path().join("checkpoint").is_dir());
}

#[test]
fn the_flax_cnn_twin_trains_stops_and_resumes_from_its_checkpoint() {
    let out = tempfile::tempdir().unwrap();
    let every = ["--checkpoint-every", "10", "--min-accuracy", "0"];
    run(
        "cnn.py",
        &[&["--steps", "10"][..], &every].concat(),
        out.path(),
    );
    let resumed = run(
        "cnn.py",
        &[&["--steps", "20", "--resume"][..], &every].concat(),
        out.path(),
    );
    assert!(resumed.contains("resumed from step 10"), "{resumed}");
}

#[test]
fn the_flax_gpt_twin_trains_to_its_bar_and_resumes_exactly_from_its_checkpoint() {
    let out = tempfile::tempdir().unwrap();
    // The short preset: 20 steps, checkpoints every 4 (the last 2 kept),
    // the run failing unless the final held-out loss is below 6.3.
    let straight = run("gpt.py", &["--short"], out.path());
    assert!(
        straight.contains("byte-level BPE of 1024 tokens (trained"),
        "{straight}"
    );
    assert!(straight.contains("FSDP over 8 CPU devices"), "{straight}");
    assert!(straight.contains("< 6.3 (the bar)"), "{straight}");
    let checkpoints = out.path().join("checkpoints");
    let names = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&checkpoints), ["16", "20"]);
    assert!(names(&out.path().join("tb"))[0].starts_with("events.out.tfevents."));
    // As if killed after step 16's checkpoint: the resumed run reads the
    // cached tokenizer and the loader's position, and ends as the
    // uninterrupted one did.
    std::fs::remove_dir_all(checkpoints.join("20")).unwrap();
    let resumed = run("gpt.py", &["--short", "--resume"], out.path());
    assert!(resumed.contains("(cached in"), "{resumed}");
    assert!(
        resumed.contains("resumed from step 16 (loader state {'next_index': 32})"),
        "{resumed}"
    );
    let last = |stdout: &str| {
        let line = stdout.lines().find(|l| l.starts_with("trained ")).unwrap();
        line.split("; ").skip(1).collect::<Vec<_>>().join("; ")
    };
    assert_eq!(last(&resumed), last(&straight), "{straight}\n{resumed}");
    assert_eq!(names(&checkpoints), ["16", "20"]);
}
