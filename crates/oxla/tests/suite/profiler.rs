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
    let of = |name: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["name"] == name).collect()
    };
    for e in events {
        assert_eq!(e["ph"], "X");
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
    assert_eq!(compiled, 1, "{events:?}");
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
