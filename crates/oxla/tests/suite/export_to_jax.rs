//! oxla functions written as jax.export files (`Jit::export`) and run by
//! Python JAX at test time (reference/exported_by_oxla.py): an MLP loss
//! over a `#[derive(Pytree)]` struct with integer labels, called directly,
//! inside `jax.jit` and differentiated with `jax.grad` through the vjp oxla
//! wrote; a function differentiated twice through the vjp of its vjp; a
//! function whose captured arrays are embedded as constants; and the errors
//! for what JAX cannot express.

use std::path::Path;

use oxla::{Array, Error, ExportOptions, Exported, Pytree, Static, grad, jit, lax, numpy as jnp};
use oxla_nn as nn;
use oxla_testing::{Tolerance, assert_matches_jax};

#[derive(Debug, Clone, Pytree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

/// Mean cross-entropy of a 2-layer MLP; the labels are int32 classes.
fn mlp_loss((p, x, labels): (Mlp, Array, Array)) -> Array {
    let h = nn::relu(&(jnp::matmul(&x, &p.w1) + &p.b1));
    let logits = jnp::matmul(&h, &p.w2) + &p.b2;
    let y = nn::one_hot(&labels, 3);
    jnp::mean(
        &-jnp::sum(&(nn::log_softmax(&logits, None) * &y), Some(&[-1]), false),
        None,
        false,
    )
}

fn values(n: usize, scale: f32, phase: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 + phase) * 0.37).sin() * scale)
        .collect()
}

fn mlp_setup() -> (Mlp, Array, Array) {
    let a = |n, shape: &[i64], scale, phase| {
        Array::from_slice(&values(n, scale, phase), shape).unwrap()
    };
    let params = Mlp {
        w1: a(20, &[5, 4], 0.5, 0.0),
        b1: a(4, &[4], 0.1, 1.0),
        w2: a(12, &[4, 3], 0.5, 2.0),
        b2: a(3, &[3], 0.1, 3.0),
    };
    let x = a(30, &[6, 5], 1.0, 4.0);
    let labels = Array::from_slice(&[0i32, 2, 1, 1, 0, 2], &[6]).unwrap();
    (params, x, labels)
}

fn second_order_fn(x: Array) -> Array {
    jnp::sum(&(jnp::sin(&x) * &x * &x), None, false)
}

fn floats(v: &serde_json::Value) -> Vec<f32> {
    match v {
        serde_json::Value::Array(items) => items.iter().flat_map(floats).collect(),
        other => vec![other.as_f64().unwrap() as f32],
    }
}

fn assert_close(got: &Array, want: &serde_json::Value, what: &str) {
    let shape = got.shape().to_vec();
    let want = Array::from_slice(&floats(want), &shape).unwrap();
    assert_matches_jax(
        &got.to_host().unwrap(),
        &want.to_host().unwrap(),
        Tolerance::OTHER_XLA_BUILD,
        what,
    );
}

#[test]
fn jax_calls_jits_and_differentiates_what_oxla_exports() {
    let dir = tempfile::tempdir().unwrap();
    let (params, x, labels) = mlp_setup();
    let loss = jit(mlp_loss).named("mlp_loss");
    let args = (params.clone(), x.clone(), labels.clone());
    let exported = loss
        .export(&args, &ExportOptions::new().vjp_order(1))
        .unwrap();
    std::fs::write(dir.path().join("mlp.jaxexport"), exported.to_bytes()).unwrap();
    // The vjp is staged whole, as jit stages: the zeros of relu's rule are
    // broadcasts in the program, not arrays computed while tracing and
    // embedded as constants (only scalar constants appear).
    let vjp = exported.vjp.as_ref().expect("the vjp was written");
    let vjp_text = oxla_export::artifact_to_text(&vjp.mlir_module).unwrap();
    for line in vjp_text
        .lines()
        .filter(|l| l.contains("\"vhlo.constant_v1\""))
    {
        let result = line.rsplit("-> ").next().unwrap_or("");
        assert!(
            result.starts_with("(!vhlo.tensor_v1<!vhlo."),
            "a non-scalar constant in the vjp: {line}"
        );
    }
    for (key, value) in [
        ("w1", &params.w1),
        ("b1", &params.b1),
        ("w2", &params.w2),
        ("b2", &params.b2),
    ] {
        value
            .to_npy(dir.path().join(format!("mlp.params_{key}.npy")))
            .unwrap();
    }
    x.to_npy(dir.path().join("mlp.x.npy")).unwrap();
    labels.to_npy(dir.path().join("mlp.labels.npy")).unwrap();

    let second = jit(second_order_fn).named("second_order");
    let x2 = Array::from_slice(&values(7, 1.5, 0.5), &[7]).unwrap();
    let exported2 = second
        .export(&x2, &ExportOptions::new().vjp_order(2))
        .unwrap();
    std::fs::write(
        dir.path().join("second_order.jaxexport"),
        exported2.to_bytes(),
    )
    .unwrap();
    x2.to_npy(dir.path().join("second_order.x.npy")).unwrap();

    let table = Array::from_slice(&[0.5f32, -1.25, 2.0], &[3]).unwrap();
    let mask = Array::from_slice(&[true, false, true], &[3]).unwrap();
    let with_constants = jit(move |x: Array| jnp::where_(&mask, &(&x * &table), &-&x));
    let x3 = Array::from_slice(&values(6, 2.0, 1.0), &[2, 3]).unwrap();
    let exported3 = with_constants.export(&x3, &ExportOptions::new()).unwrap();
    std::fs::write(dir.path().join("constants.jaxexport"), exported3.to_bytes()).unwrap();
    x3.to_npy(dir.path().join("constants.x.npy")).unwrap();

    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/exported_by_oxla.py");
    let out: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[dir.path()])).unwrap();

    assert_eq!(
        out["in_tree"],
        "PyTreeDef((({'b1': *, 'b2': *, 'w1': *, 'w2': *}, *, *), {}))"
    );
    assert_eq!(out["out_tree"], "PyTreeDef(*)");
    assert_eq!(
        out["vjp_in_avals"].to_string(),
        r#"["float32[4]","float32[3]","float32[5,4]","float32[4,3]","float32[6,5]","int32[6]","float32[]"]"#
    );
    assert_eq!(
        out["vjp_out_avals"].to_string(),
        r#"["float32[4]","float32[3]","float32[5,4]","float32[4,3]","float32[6,5]","float0[6]"]"#
    );
    let value = loss.call(args.clone()).unwrap();
    assert_close(&value, &out["loss"], "loss");
    assert_close(&value, &out["jit_loss"], "loss in jax.jit");
    let grads = grad(|p: Mlp| mlp_loss((p, x.clone(), labels.clone())))
        .call(params)
        .unwrap();
    for (key, g) in [
        ("w1", &grads.w1),
        ("b1", &grads.b1),
        ("w2", &grads.w2),
        ("b2", &grads.b2),
    ] {
        assert_close(g, &out["grads"][key], &format!("grad {key}"));
    }
    let second_derivative =
        grad(|v: Array| jnp::sum(&grad(second_order_fn).call(v).unwrap(), None, false))
            .call(x2)
            .unwrap();
    assert_close(
        &second_derivative,
        &out["second_derivative"],
        "second derivative",
    );
    let want = with_constants.call(x3).unwrap();
    assert_close(&want, &out["with_constants"], "embedded constants");
}

#[test]
fn an_export_reads_back_with_its_producer_and_runs_in_oxla() {
    let (params, x, labels) = mlp_setup();
    let loss = jit(mlp_loss).named("mlp_loss");
    let args = (params.clone(), x.clone(), labels.clone());
    let exported = loss.export(&args, &ExportOptions::new()).unwrap();
    let mut back = Exported::from_bytes(&exported.to_bytes()).unwrap();
    // The reader infers the layout's format from the fields present.
    back.format_version = exported.format_version;
    assert!(back == exported, "the export reads back differently");
    assert_eq!(
        back.producer(),
        oxla_export::Producer::Oxla(env!("CARGO_PKG_VERSION").to_string())
    );
    // A portable artifact for the oldest StableHLO that reads its ops
    // (exponential_v2 and log_v2 are StableHLO 1.10's).
    assert_eq!(
        back.module_form().to_string(),
        "StableHLO portable artifact for StableHLO v1.10.0"
    );
    assert_eq!(back.function_name, "mlp_loss");
    assert_eq!(
        back.platforms,
        vec![oxla_testing::platform().name().to_string()]
    );
    assert!(back.vjp.is_none());
    // oxla runs its own export as it runs JAX's: leaves in JAX's order.
    let loaded = oxla_export::LoadedExport::new(oxla::client().unwrap(), &back).unwrap();
    let leaves = [&params.b1, &params.b2, &params.w1, &params.w2, &x, &labels];
    let inputs: Vec<_> = leaves.iter().map(|a| a.to_host().unwrap()).collect();
    let outputs = loaded.call(&inputs).unwrap();
    let want = loss.call(args.clone()).unwrap().to_host().unwrap();
    assert_matches_jax(
        &outputs[0],
        &want,
        Tolerance::Ulps(0),
        "the export run by oxla",
    );
    // oxla calls its own export inside a jit, merged into the program.
    let callable = oxla::ExportedFn::new(back).unwrap();
    let dict: std::collections::BTreeMap<String, Array> = [
        ("w1", &params.w1),
        ("b1", &params.b1),
        ("w2", &params.w2),
        ("b2", &params.b2),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), (*v).clone()))
    .collect();
    let in_jit = jit(
        |(p, x, labels): (std::collections::BTreeMap<String, Array>, Array, Array)| {
            callable.call::<_, Array>((p, x, labels)).unwrap()
        },
    );
    let merged = in_jit
        .call((dict, x.clone(), labels.clone()))
        .unwrap()
        .to_host()
        .unwrap();
    assert_matches_jax(
        &merged,
        &want,
        Tolerance::Ulps(0),
        "the export inside a jit",
    );
    // For several platforms the module takes the platform index first (a
    // global constant), which the caller passes.
    let multi = loss
        .export(&args, &ExportOptions::new().platforms(&["cpu", "cuda"]))
        .unwrap();
    assert_eq!(multi.platforms, vec!["cpu".to_string(), "cuda".to_string()]);
    assert!(multi.uses_global_constants);
    let loaded = oxla_export::LoadedExport::new(oxla::client().unwrap(), &multi).unwrap();
    let outputs = loaded.call(&inputs).unwrap();
    assert_matches_jax(
        &outputs[0],
        &want,
        Tolerance::Ulps(0),
        "the two-platform export",
    );
}

/// A program with CHLO ops (erf, atan, lgamma), which the artifact keeps
/// between casts, called back inside a jit: the same values as the jit
/// itself.
#[test]
fn an_export_with_chlo_ops_runs_inside_a_jit() {
    let f = jit(|x: Array| lax::erf(&x) + lax::atan(&x) * lax::lgamma(&(&x + 2.0)));
    let x = Array::from_slice(&values(6, 1.5, 0.3), &[2, 3]).unwrap();
    let exported = f.export(&x, &ExportOptions::new()).unwrap();
    let text = oxla_export::artifact_to_text(&exported.mlir_module).unwrap();
    assert!(text.contains("\"chlo.erf\""), "{text}");
    let callable = oxla::ExportedFn::new(exported).unwrap();
    let twice = jit(|x: Array| callable.call::<_, Array>(x).unwrap() * 2.0);
    let got = twice.call(x.clone()).unwrap().to_host().unwrap();
    let want = (f.call(x).unwrap() * 2.0).to_host().unwrap();
    assert_matches_jax(&got, &want, Tolerance::Ulps(0), "erf + atan * lgamma");
}

#[test]
fn what_jax_cannot_express_is_a_clear_error() {
    let f = jit(|(x, scale): (Array, Static<i64>)| &x * scale.0 as f64);
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = f
        .export(&(x, Static(3)), &ExportOptions::new())
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            Error::Usage {
                function: "export",
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains("input[1] is the static value 3"), "{text}");
    assert!(text.contains("export_to_jax.rs"), "{text}");
}
