//! A sharded jit written as a jax.export file (`Jit::export`) and run by
//! Python JAX on 8 CPU devices (exported_sharded.py): the named shardings
//! and device count JAX reads, and the values it computes. The program
//! holds a sharding constraint and a shard_map with a psum, which the
//! portable artifact keeps as Shardy ops between casts.

use std::path::Path;

use oxla::sharding::collectives::psum;
use oxla::sharding::{shard_map, with_sharding_constraint};
use oxla::{Array, ExportOptions, P, jit, numpy as jnp};

use crate::{inputs, mesh, named};

fn sharded_program((x, w): (Array, Array)) -> Array {
    let h = jnp::matmul(&x, &w);
    let h = with_sharding_constraint(&h, &named(P!["data", None]));
    let summed = shard_map(
        |h: Array| psum(&h, &["model"]),
        &mesh(),
        vec![P!["data", "model"]],
        vec![P!["data", None]],
    )
    .call(h.clone())
    .unwrap();
    jnp::tanh(&h) * jnp::mean(&summed, None, false)
}

#[test]
fn a_sharded_jit_exports_with_its_shardings_and_runs_in_jax() {
    let (x, w) = inputs();
    let f = jit(sharded_program)
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
    assert!(matches!(
        exported.module_form(),
        oxla_export::ModuleForm::PortableArtifact(_)
    ));
    let text = oxla_export::artifact_to_text(&exported.mlir_module).unwrap();
    for op in [
        "\"sdy.mesh\"",
        "\"sdy.sharding_constraint\"",
        "\"sdy.manual_computation\"",
        "\"builtin.unrealized_conversion_cast\"",
    ] {
        assert!(text.contains(op), "{op} is not in the artifact");
    }
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

fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn assert_near(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 8.0 * f32::EPSILON * w.abs().max(1.0),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// A sharded export from JAX (8 devices, ('data': 4, 'model': 2)) called
/// inside oxla's jit sharded over the same mesh: merged into the program
/// with its shardings, the values and the gradient through its vjp are
/// JAX's; a jit on one device, or over another mesh, is told why not.
#[test]
fn a_sharded_jax_export_runs_inside_a_sharded_jit() {
    crate::eight_devices();
    let dir = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sharding/export_sharded_for_oxla.py");
    let want: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[dir.path()])).unwrap();
    let bytes = std::fs::read(dir.path().join("sharded_f.jaxexport")).unwrap();
    let callable = oxla::ExportedFn::from_bytes(&bytes).unwrap();
    let x = Array::from_npy(dir.path().join("x.npy")).unwrap();
    let w = Array::from_npy(dir.path().join("w.npy")).unwrap();

    let step = jit(|(x, w): (Array, Array)| callable.call::<_, (Array, Array)>((x, w)).unwrap())
        .in_shardings(vec![
            Some(named(P!["data", None])),
            Some(named(P![None, "model"])),
        ]);
    let text = step.lower(&(x.clone(), w.clone())).unwrap();
    assert!(
        text.contains("sdy.sharding = #sdy.sharding<@\"mesh\", [{\"data\"}, {}]>")
            || text.contains("#sdy.sharding<@mesh, [{\"data\"}, {}]>"),
        "the export's shardings are not in the program:\n{text}"
    );
    let (y, s) = step.call((x.clone(), w.clone())).unwrap();
    assert_near(&y.to_vec::<f32>().unwrap(), &floats(&want["y"]), "y");
    assert_near(&s.to_vec::<f32>().unwrap(), &floats(&want["s"]), "s");

    let grad_w = jit(|(x, w): (Array, Array)| {
        oxla::grad(|w: Array| {
            let (y, _) = callable.call::<_, (Array, Array)>((x.clone(), w)).unwrap();
            jnp::sum(&y, None, false)
        })
        .call(w)
        .unwrap()
    })
    .in_shardings(vec![
        Some(named(P!["data", None])),
        Some(named(P![None, "model"])),
    ])
    .call((x.clone(), w.clone()))
    .unwrap();
    assert_near(
        &grad_w.to_vec::<f32>().unwrap(),
        &floats(&want["grad_w"]),
        "grad w",
    );

    let single = jit(|(x, w): (Array, Array)| callable.call::<_, (Array, Array)>((x, w)).unwrap())
        .call((x.clone(), w.clone()))
        .expect_err("a one-device jit cannot call an 8-device export");
    assert!(
        single.to_string().contains(
            "is partitioned over Mesh('data': 4, 'model': 2) and the program calling it runs \
             on one device"
        ),
        "{single}"
    );
    let other = oxla::Mesh::new(&[("rows", 8)]).unwrap();
    let err = jit(|(x, w): (Array, Array)| callable.call::<_, (Array, Array)>((x, w)).unwrap())
        .in_shardings(vec![
            Some(oxla::NamedSharding::new(&other, P!["rows", None])),
            None,
        ])
        .call((x, w))
        .expect_err("another mesh");
    assert!(
        err.to_string().contains("is sharded over Mesh('rows': 8)"),
        "{err}"
    );
}
