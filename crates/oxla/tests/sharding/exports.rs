//! A sharded jit written as a jax.export file (`Jit::export`) and run by
//! Python JAX on 8 CPU devices (exported_sharded.py): the named shardings
//! and device count JAX reads, and the values it computes.

use std::path::Path;

use oxla::{Array, ExportOptions, P, jit, numpy as jnp};

use crate::{inputs, named};

#[test]
fn a_sharded_jit_exports_with_its_shardings_and_runs_in_jax() {
    let (x, w) = inputs();
    let f = jit(|(x, w): (Array, Array)| jnp::tanh(&jnp::matmul(&x, &w)))
        .named("sharded")
        .in_shardings(vec![
            Some(named(P!["data", None])),
            Some(named(P![None, "model"])),
        ])
        .out_shardings(vec![Some(named(P!["data", "model"]))]);
    let exported = f
        .export(&(x.clone(), w.clone()), &ExportOptions::new())
        .unwrap();
    assert_eq!(exported.nr_devices, 8);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sharded.jaxexport"), exported.to_bytes()).unwrap();
    x.to_npy(dir.path().join("x.npy")).unwrap();
    w.to_npy(dir.path().join("w.npy")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sharding/exported_sharded.py");
    let out: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[dir.path()])).unwrap();
    assert_eq!(out["nr_devices"], 8);
    assert_eq!(
        out["in_specs"].to_string(),
        r#"["P('data',)","P(None, 'model')"]"#
    );
    assert_eq!(out["out_specs"].to_string(), r#"["P('data', 'model')"]"#);
    assert_eq!(out["out_spec"], "P('data', 'model')");
    let want = f.call((x, w)).unwrap().to_vec::<f32>().unwrap();
    let got: Vec<f32> = out["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 4.0 * f32::EPSILON * w.abs().max(1.0),
            "[{i}] {g} vs {w}"
        );
    }
}
