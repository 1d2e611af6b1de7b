//! Functions exported from JAX called inside oxla functions (`ExportedFn`),
//! against JAX at test time (reference/export_for_oxla.py): an MLP loss
//! fine-tuned for 20 SGD steps through the export's vjp inside one jitted
//! step (its modules StableHLO portable artifacts, read by oxla's VHLO
//! reader), a per-example function under vmap (its module generic text),
//! the same function from both forms, a shape-polymorphic MLP loss trained
//! at two batch sizes, and the clear errors (no vjp, forward mode, wrong
//! inputs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use oxla::{Array, ExportedFn, jit, jvp, value_and_grad, vmap};
use oxla_testing::{Tolerance, assert_matches_jax};

type Params = BTreeMap<String, Array>;

/// The exports and JAX's values, made once per test binary.
fn fixture() -> &'static (tempfile::TempDir, serde_json::Value) {
    static FIXTURE: OnceLock<(tempfile::TempDir, serde_json::Value)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/export_for_oxla.py");
        let out = oxla_testing::run_python(&script, &[dir.path()]);
        (dir, serde_json::from_slice(&out).unwrap())
    })
}

fn file(name: &str) -> PathBuf {
    fixture().0.path().join(name)
}

fn load(name: &str) -> ExportedFn {
    ExportedFn::from_bytes(&std::fs::read(file(name)).unwrap()).unwrap()
}

fn npy(name: &str) -> Array {
    Array::from_npy(file(name)).unwrap()
}

fn floats(v: &serde_json::Value) -> Vec<f32> {
    match v {
        serde_json::Value::Array(items) => items.iter().flat_map(floats).collect(),
        other => vec![other.as_f64().unwrap() as f32],
    }
}

fn assert_close(got: &Array, want: &[f32], tolerance: Tolerance, what: &str) {
    let want = Array::from_slice(want, got.shape()).unwrap();
    assert_matches_jax(
        &got.to_host().unwrap(),
        &want.to_host().unwrap(),
        tolerance,
        what,
    );
}

#[test]
fn a_jax_mlp_fine_tunes_in_oxla_through_its_exported_vjp_as_in_jax() {
    let loss = load("mlp.jaxexport");
    assert!(loss.has_vjp());
    let (x, y) = (npy("mlp.x.npy"), npy("mlp.y.npy"));
    let mut params: Params = ["b1", "b2", "w1", "w2"]
        .iter()
        .map(|k| (k.to_string(), npy(&format!("mlp.{k}.npy"))))
        .collect();
    let step = jit(|(p, x, y): (Params, Array, Array)| {
        let (value, grads) =
            value_and_grad(|p: Params| loss.call::<_, Array>((p, x.clone(), y.clone())).unwrap())
                .call(p.clone())
                .unwrap();
        let updated: Params = p
            .iter()
            .map(|(k, w)| (k.clone(), w - &(&grads[k] * 0.1)))
            .collect();
        (value, updated)
    });
    let want = floats(&fixture().1["losses"]);
    let mut losses = Vec::new();
    for _ in 0..20 {
        let (value, updated) = step.call((params, x.clone(), y.clone())).unwrap();
        losses.push(value.item::<f32>().unwrap());
        params = updated;
    }
    let got = Array::from_slice(&losses, &[20]).unwrap();
    assert_close(
        &got,
        &want,
        Tolerance::chain(
            400.0,
            0.0,
            "20 SGD steps of one program compiled by two XLA builds: rounding differences \
             of each step's dots carry into the next",
        ),
        "losses",
    );
    // The export (and its vjp) are merged into the step's program as VHLO
    // functions: one executable.
    let text = step.lower(&(params, x.clone(), y.clone())).unwrap();
    assert!(text.contains("\"vhlo.call_v1\""), "the call is missing");
    assert!(
        text.matches("\"vhlo.func_v1\"").count() >= 2,
        "the functions are missing"
    );
    assert!(
        !text.contains("sym_visibility = #vhlo.string_v1<\"public\">"),
        "a merged function is public"
    );
}

/// JAX's CPU linear algebra (LAPACK custom calls: LU, triangular solves,
/// eigh, SVD, Cholesky, QR) inside an oxla jit, differentiated through
/// the export's vjp, as JAX computes the value and gradient.
#[test]
fn a_jax_linear_algebra_export_runs_and_differentiates_inside_jit() {
    if oxla_testing::platform() != oxla_pjrt::Platform::Cpu {
        // JAX's exports for a GPU call cusolver kernels (cusolver_geqrf_ffi,
        // ...) that jaxlib's Python extensions register in JAX's process;
        // oxla does not load them (docs/gpu.md).
        eprintln!("skipped off the CPU: JAX's GPU linear algebra calls jaxlib's cusolver kernels");
        return;
    }
    let loss = load("linalg.jaxexport");
    assert!(loss.has_vjp());
    let (a, b) = (npy("linalg.a.npy"), npy("linalg.b.npy"));
    let step = jit(|(a, b): (Array, Array)| {
        value_and_grad(|(a, b): (Array, Array)| loss.call::<_, Array>((a, b)).unwrap())
            .call((a, b))
            .unwrap()
    });
    let (value, (grad_a, grad_b)) = step.call((a, b)).unwrap();
    let want = &fixture().1["linalg"];
    let tolerance = Tolerance::chain(
        256.0,
        64.0,
        "LAPACK routines from two OpenBLAS builds, and their vjps compiled by two XLA builds",
    );
    assert_close(&value, &floats(&want["value"]), tolerance, "value");
    assert_close(&grad_a, &floats(&want["grad_a"]), tolerance, "grad a");
    assert_close(&grad_b, &floats(&want["grad_b"]), tolerance, "grad b");
}

/// A JAX export with a symbolic batch size runs inside oxla's jit and
/// grad at two batch sizes: each is refined to its shapes (its vjp too) and
/// traced as its own jit cache entry, matching JAX's values and gradients.
#[test]
fn a_shape_polymorphic_export_trains_at_any_batch_size_inside_jit() {
    let loss = load("poly_mlp.jaxexport");
    assert!(loss.exported().is_shape_polymorphic());
    let names = ["b1", "b2", "w1", "w2"];
    let params: Params = names
        .iter()
        .map(|n| (n.to_string(), npy(&format!("mlp.{n}.npy"))))
        .collect();
    let (x, y) = (npy("mlp.x.npy"), npy("mlp.y.npy"));
    let step = jit(|(p, x, y): (Params, Array, Array)| {
        value_and_grad(|p: Params| loss.call::<_, Array>((p, x.clone(), y.clone())).unwrap())
            .call(p)
            .unwrap()
    });
    for rows in [16, 6] {
        let (xs, ys) = if rows == 16 {
            (x.clone(), y.clone())
        } else {
            (x.index(&oxla::s![..6]), y.index(&oxla::s![..6]))
        };
        let (value, grads) = step.call((params.clone(), xs, ys)).unwrap();
        let want = &fixture().1["poly_mlp"][rows.to_string()];
        let what = format!("batch {rows}");
        // The MLP's dots: TensorFloat-32 on GPUs, in kernels each program
        // picks for itself.
        let tolerance = oxla_testing::contraction_tolerance(Tolerance::OTHER_XLA_BUILD);
        assert_close(
            &value,
            &[want["value"].as_f64().unwrap() as f32],
            tolerance,
            &what,
        );
        for n in names {
            assert_close(
                &grads[n],
                &floats(&want["grads"][n]),
                tolerance,
                &format!("{what} grad {n}"),
            );
        }
    }
    // A batch the export's constraints refuse names the export and the line.
    let empty = oxla::numpy::zeros(&[0, 4], oxla::DType::F32);
    let err = loss
        .call::<_, Array>((params, empty, y.index(&oxla::s![..0])))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Expected value >= 1 for dimension variable 'b'"),
        "{err}"
    );
    assert!(err.contains("exports_in_jit.rs"), "{err}");
}

#[test]
fn vmap_calls_an_export_once_per_example() {
    let f = load("per_example.jaxexport");
    let xs = npy("per_example.x.npy");
    let got = vmap(|x: Array| f.call::<_, Array>(x).unwrap())
        .call(xs.clone())
        .unwrap();
    let want = floats(&fixture().1["per_example"]);
    assert_close(&got, &want, Tolerance::OTHER_XLA_BUILD, "vmap");
    // Eagerly, in jit and in jit of vmap alike.
    let row = f.call::<_, Array>(xs.index(&oxla::s![0])).unwrap();
    assert_close(&row, &want[..2], Tolerance::OTHER_XLA_BUILD, "eager");
    let jitted = jit(|xs: Array| {
        vmap(|x: Array| f.call::<_, Array>(x).unwrap())
            .call(xs)
            .unwrap()
    });
    assert_close(
        &jitted.call(xs).unwrap(),
        &want,
        Tolerance::OTHER_XLA_BUILD,
        "jit of vmap",
    );
}

#[test]
fn what_an_export_cannot_do_is_a_clear_error() {
    let f = load("per_example.jaxexport");
    let x = Array::from_slice(&[0.5f32, 1.0, 2.0], &[3]).unwrap();
    // No vjp was serialized.
    let err =
        value_and_grad(|x: Array| oxla::numpy::sum(&f.call::<_, Array>(x).unwrap(), None, false))
            .call(x.clone())
            .unwrap_err()
            .to_string();
    assert!(err.contains("serialized without its vjp"), "{err}");
    assert!(err.contains("vjp_order=1"), "{err}");
    // Forward mode.
    let err = match jvp(
        |x: Array| f.call::<_, Array>(x).unwrap_or_else(Array::error),
        &x,
        &x,
    ) {
        Err(e) => e.to_string(),
        Ok((primal, tangent)) => tangent
            .to_host()
            .err()
            .or(primal.to_host().err())
            .expect("jvp of an export fails")
            .to_string(),
    };
    assert!(err.contains("forward mode"), "{err}");
    // Wrong inputs name the export, the types and the caller's line.
    let wrong = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
    let err = f.call::<_, Array>(wrong).unwrap_err().to_string();
    assert!(
        err.contains("input 0 is f32[2], but it was exported for f32[3]"),
        "{err}"
    );
    assert!(err.contains("exports_in_jit.rs"), "{err}");
}

#[test]
fn a_portable_artifact_and_its_generic_text_compute_the_same() {
    let artifact = load("artifact.jaxexport");
    let text = load("per_example.jaxexport");
    assert_eq!(
        artifact.exported().module_form(),
        oxla_export::ModuleForm::PortableArtifact(
            oxla_export::StablehloVersion::parse("1.15.0").unwrap()
        )
    );
    let xs = npy("per_example.x.npy");
    let both = jit(|xs: Array| {
        let a = vmap(|x: Array| artifact.call::<_, Array>(x).unwrap())
            .call(xs.clone())
            .unwrap();
        let t = vmap(|x: Array| text.call::<_, Array>(x).unwrap())
            .call(xs)
            .unwrap();
        (a, t)
    });
    let (a, t) = both.call(xs).unwrap();
    assert_matches_jax(
        &a.to_host().unwrap(),
        &t.to_host().unwrap(),
        Tolerance::Ulps(0),
        "artifact vs text",
    );
}

#[test]
fn empty_bytes_are_said_to_be_empty() {
    let e = ExportedFn::from_bytes(&[]).err().unwrap().to_string();
    assert!(
        e.contains("not a valid jax.export file: it is empty (0 bytes"),
        "{e}"
    );
}
