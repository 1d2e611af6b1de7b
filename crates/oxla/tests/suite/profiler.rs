//! `profiler::trace`: the Chrome trace JSON it writes holds oxla's spans
//! (trace, lower, compile or disk-cache load, execute, transfers) with the
//! jit's name, on one timeline.

use oxla::{Array, jit, numpy as jnp, profiler};

#[test]
fn a_trace_holds_the_spans_of_a_jit_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let ((), path) = profiler::trace(dir.path().join("run1"), || {
        let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
        let f = jit(|x: Array| jnp::sum(&jnp::sin(&x), None, false)).named("profiled_step");
        for _ in 0..3 {
            f.call(x.clone()).unwrap().to_host().unwrap();
        }
    })
    .unwrap();
    assert!(path.ends_with(profiler::TRACE_FILE));
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = document["traceEvents"].as_array().unwrap();
    // Other tests' threads may record too: count this jit's spans.
    let of = |name: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| e["name"] == name)
            .filter(|e| name == "transfer" || e["args"]["function"] == "profiled_step")
            .collect()
    };
    for e in events {
        // Spans are complete events; a plugin's profiler (the GPU plugins')
        // also names its processes and threads in metadata events.
        if e["ph"] == "M" {
            assert!(e["args"]["name"].is_string(), "{e}");
            continue;
        }
        assert_eq!(e["ph"], "X", "{e}");
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
    }
    for name in ["trace", "lower", "execute"] {
        assert!(
            of(name)
                .iter()
                .any(|e| e["args"]["function"] == "profiled_step"),
            "no {name} span of profiled_step in {events:?}"
        );
    }
    assert_eq!(of("execute").len(), 3, "one execute span per call");
    let compiled = of("compile").len() + of("disk-cache load").len();
    assert_eq!(
        compiled,
        1,
        "{}",
        serde_json::to_string_pretty(&document).unwrap()
    );
    assert!(
        of("transfer")
            .iter()
            .any(|e| e["args"]["direction"] == "host-to-device")
    );
    assert!(
        of("transfer")
            .iter()
            .any(|e| e["args"]["direction"] == "device-to-host")
    );
    // Spans nest in time: the compile lies after the trace began.
    let trace_start = of("trace")[0]["ts"].as_f64().unwrap();
    let execute_start = of("execute")[0]["ts"].as_f64().unwrap();
    assert!(execute_start > trace_start);
    assert!(
        document["otherData"]["plugin_profiler"]
            .as_str()
            .unwrap()
            .contains("PJRT profiler extension")
    );
}

/// `save_device_memory_profile`: the live arrays by size with the lines
/// that made them; a dropped array leaves the profile.
#[test]
fn the_memory_profile_lists_live_arrays_with_the_lines_that_made_them() {
    let big = Array::from_slice(&vec![1.0f32; 4096], &[64, 64]).unwrap();
    let line_of_big = line!() - 1;
    let doubled = jit(|x: Array| &x * 2.0).call(big.clone()).unwrap();
    let line_of_doubled = line!() - 1;
    let temporary = Array::from_slice(&vec![0u8; 777_777], &[777_777]).unwrap();
    let live = oxla::memory::live_arrays();
    let here = |line: u32| format!("profiler.rs:{line}:");
    let find = |line: u32| {
        live.iter()
            .find(|a| a.location.to_string().contains(&here(line)))
            .unwrap_or_else(|| panic!("no live array made at line {line}: {live:?}"))
    };
    assert_eq!(find(line_of_big).aval.to_string(), "f32[64,64]");
    assert!(find(line_of_big).bytes >= 64 * 64 * 4);
    assert_eq!(find(line_of_doubled).aval.to_string(), "f32[64,64]");
    let text = oxla::memory::device_memory_summary();
    assert!(text.starts_with("oxla device memory profile: "), "{text}");
    assert!(
        text.contains(&here(line_of_big)) && text.contains("u8[777777]"),
        "{text}"
    );
    // The file is a gzip-compressed pprof profile laid out as JAX's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.prof");
    oxla::memory::save_device_memory_profile(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    let ours = oxla_pprof::read(&bytes).unwrap();
    let string = |p: &oxla_pprof::Profile, i: i64| p.string_table[i as usize].clone();
    let big_sample = ours
        .sample
        .iter()
        .find(|s| {
            let location = ours
                .location
                .iter()
                .find(|l| l.id == s.location_id[0])
                .unwrap();
            let function = ours
                .function
                .iter()
                .find(|f| f.id == location.line[0].function_id)
                .unwrap();
            location.line[0].line == i64::from(line_of_big)
                && string(&ours, function.filename).ends_with("profiler.rs")
        })
        .expect("a sample at the line that made `big`");
    assert_eq!(big_sample.value, vec![1, 64 * 64 * 4]);
    let labels: Vec<(String, String)> = big_sample
        .label
        .iter()
        .map(|l| (string(&ours, l.key), string(&ours, l.str)))
        .collect();
    assert!(
        labels.contains(&("shape".into(), "f32[64,64]".into())),
        "{labels:?}"
    );
    let jax_profile = dir.path().join("jax.prof");
    oxla_testing::run_python(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/suite/reference/device_memory_profile.py"),
        &[&jax_profile],
    );
    let theirs = oxla_pprof::read(&std::fs::read(&jax_profile).unwrap()).unwrap();
    let types = |p: &oxla_pprof::Profile| -> Vec<(String, String)> {
        p.sample_type
            .iter()
            .map(|t| (string(p, t.r#type), string(p, t.unit)))
            .collect()
    };
    assert_eq!(types(&ours), types(&theirs));
    let kinds = |p: &oxla_pprof::Profile| -> Vec<String> {
        p.sample
            .iter()
            .flat_map(|s| &s.label)
            .filter(|l| string(p, l.key) == "kind")
            .map(|l| string(p, l.str))
            .collect()
    };
    assert!(kinds(&theirs).contains(&"buffer".to_string()));
    assert!(kinds(&ours).iter().all(|k| k == "buffer"));
    drop(temporary);
    assert!(
        !oxla::memory::live_arrays()
            .iter()
            .any(|a| a.aval.to_string() == "u8[777777]"),
        "the dropped array is still listed"
    );
    drop((big, doubled));
}

/// A program with its own global `tracing` subscriber: with
/// `profiler::layer()` added to it, both its layer and the profile see
/// oxla's spans; without it, `trace` is an error that says to add it. The
/// global subscriber is process-wide, so each case runs in a child.
#[test]
fn the_profiler_coexists_with_a_programs_own_subscriber() {
    use oxla_testing::BoundedOutput;
    for (with_layer, expected) in [
        ("1", "profile with the program's subscriber checked"),
        ("0", "refusal without the layer checked"),
    ] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "profiler::own_subscriber_child",
                "--exact",
                "--ignored",
                "--test-threads=1",
                "--nocapture",
            ])
            .env("OXLA_TEST_PROFILER_LAYER", with_layer)
            .output_bounded();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains(expected),
            "the child (layer {with_layer}) failed:\n{stdout}\n{stderr}"
        );
    }
}

#[test]
#[ignore = "run in a child process by the_profiler_coexists_with_a_programs_own_subscriber"]
fn own_subscriber_child() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tracing_subscriber::layer::{Layer, SubscriberExt};

    /// The program's own layer: counts the spans it sees.
    struct Count(Arc<AtomicUsize>);
    impl<S: tracing::Subscriber> Layer<S> for Count {
        fn on_new_span(
            &self,
            _: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let Ok(with_layer) = std::env::var("OXLA_TEST_PROFILER_LAYER") else {
        eprintln!("own_subscriber_child: skipped (run by its parent test)");
        return;
    };
    let seen = Arc::new(AtomicUsize::new(0));
    let registry = tracing_subscriber::registry().with(Count(seen.clone()));
    let run = || {
        let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let f = jit(|x: Array| jnp::sum(&jnp::cos(&x), None, false)).named("own_subscriber");
        f.call(x).unwrap().to_host().unwrap();
    };
    let dir = tempfile::tempdir().unwrap();
    if with_layer == "1" {
        tracing::subscriber::set_global_default(registry.with(profiler::layer())).unwrap();
        let ((), path) = profiler::trace(dir.path(), run).unwrap();
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let events = document["traceEvents"].as_array().unwrap();
        assert!(
            events
                .iter()
                .any(|e| e["name"] == "execute" && e["args"]["function"] == "own_subscriber"),
            "no execute span in {events:?}"
        );
        // The program's layer saw oxla's spans too, and still sees spans
        // after the profile (nothing was filtered out for it).
        let during = seen.load(Ordering::Relaxed);
        assert!(during > 0, "the program's layer saw no span");
        tracing::info_span!("the_programs_own_span").in_scope(|| {});
        assert!(seen.load(Ordering::Relaxed) > during);
        println!("profile with the program's subscriber checked");
    } else {
        tracing::subscriber::set_global_default(registry).unwrap();
        let e = profiler::trace(dir.path(), run).unwrap_err().to_string();
        assert!(e.contains("oxla::profiler::layer()"), "{e}");
        println!("refusal without the layer checked");
    }
}
