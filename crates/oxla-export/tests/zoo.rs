//! oxla-export against real `jax.export` files: a zoo exported by the venv's
//! JAX when the tests run (tests/fixtures/export_zoo.py), read back field by
//! field, run on both pinned CPU plugins and compared with JAX's outputs.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "oxla-export-zoo") };
}

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use oxla_export::{ExportError, Exported, LoadedExport, Sharding};
use oxla_npy::HostArray;
use oxla_pjrt::{Api, Client, ClientOptions, plugin_dir};
use oxla_testing::{Tolerance, assert_matches_jax};

/// The zoo directory and JAX's manifest, made once per test binary.
fn zoo() -> &'static (tempfile::TempDir, serde_json::Value) {
    static ZOO: OnceLock<(tempfile::TempDir, serde_json::Value)> = OnceLock::new();
    ZOO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export_zoo.py");
        let manifest = oxla_testing::run_python(&script, &[dir.path()]);
        let json: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        (dir, json)
    })
}

fn path(name: &str) -> PathBuf {
    zoo().0.path().join(name)
}

fn manifest(case: &str) -> &'static serde_json::Value {
    &zoo().1["cases"][case]
}

fn read(case: &str) -> Exported {
    Exported::from_bytes(&std::fs::read(path(&format!("{case}.jaxexport"))).unwrap()).unwrap()
}

fn arrays(case: &str, kind: &str, count: usize) -> Vec<HostArray> {
    (0..count)
        .map(|i| HostArray::read_file(&path(&format!("{case}.{kind}_{i}.npy"))).unwrap())
        .collect()
}

/// One client per pinned plugin, with 4 CPU devices.
fn clients() -> Vec<(String, Client)> {
    [
        "xla-cpu-pjrt-0.0.1/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
        "lammps-jax-pjrt-cpu-0.11.2/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
    ]
    .iter()
    .map(|relative| {
        let p = plugin_dir().join(relative);
        assert!(
            p.is_file(),
            "{} is missing: run `bash ci/setup` first",
            p.display()
        );
        let client = Client::new(
            Api::load(&p).unwrap(),
            &ClientOptions::new().cpu_device_count(4),
        )
        .unwrap();
        (relative.split('/').next().unwrap().to_string(), client)
    })
    .collect()
}

const RUNNABLE: &[&str] = &[
    "elementwise",
    "mlp",
    "cnn",
    "scan_rnn",
    "transformer_bf16",
    "nested_pytree",
    "cpu_and_cuda",
    "unused_argument",
    "with_vjp",
    "sharded_4_devices",
    "format_v9",
    "format_v12",
];

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_field_reads_as_jax_wrote_it() {
    for case in RUNNABLE {
        let m = manifest(case);
        let e = read(case);
        assert_eq!(
            e.function_name,
            m["function_name"].as_str().unwrap(),
            "{case}"
        );
        assert_eq!(
            e.in_tree.to_jax_string(),
            m["in_tree"].as_str().unwrap(),
            "{case}"
        );
        assert_eq!(
            e.out_tree.to_jax_string(),
            m["out_tree"].as_str().unwrap(),
            "{case}"
        );
        let in_avals: Vec<String> = e.in_avals.iter().map(ToString::to_string).collect();
        let out_avals: Vec<String> = e.out_avals.iter().map(ToString::to_string).collect();
        assert_eq!(in_avals, strings(&m["in_avals"]), "{case}");
        assert_eq!(out_avals, strings(&m["out_avals"]), "{case}");
        assert_eq!(e.platforms, strings(&m["platforms"]), "{case}");
        assert_eq!(
            u64::from(e.nr_devices),
            m["nr_devices"].as_u64().unwrap(),
            "{case}"
        );
        assert_eq!(
            u64::from(e.calling_convention_version),
            m["calling_convention_version"].as_u64().unwrap(),
            "{case}"
        );
        let kept: Vec<usize> = m["module_kept_var_idx"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(e.module_kept_var_idx, kept, "{case}");
        assert_eq!(e.vjp.is_some(), m["has_vjp"].as_bool().unwrap(), "{case}");
        assert!(
            e.ordered_effects.is_empty() && e.unordered_effects.is_empty(),
            "{case}"
        );
        assert!(
            e.mlir_module.starts_with(b"ML\xefR"),
            "{case}: not a portable artifact"
        );
        assert_eq!(
            e.serialization_version, 3,
            "{case}: JAX stores 3 for old readers"
        );
    }
}

#[test]
fn formats_9_to_12_are_told_apart() {
    assert_eq!(read("format_v9").format_version, 9);
    let v12 = read("format_v12");
    assert_eq!(v12.format_version, 12);
    assert_eq!(v12.jax_version.as_deref(), Some("0.10.2-oxla-test"));
    let current = read("elementwise");
    assert!(current.format_version == 10 || current.format_version == 11);
    assert_eq!(current.jax_version, None);
    // The same function in the old and new layouts reads the same.
    let (mut a, mut b) = (read("format_v9"), read("format_v12"));
    (a.format_version, b.format_version, b.jax_version) = (0, 0, None);
    assert_eq!(a, b);
}

/// `e` with the fields that say which layout it was read from cleared.
fn layout_free(mut e: Exported) -> Exported {
    e.format_version = 0;
    if let Some(vjp) = e.vjp.take() {
        e.vjp = Some(Box::new(layout_free(*vjp)));
    }
    e
}

#[test]
fn every_export_written_back_reads_the_same() {
    for case in RUNNABLE.iter().chain(&["shape_poly", "top_k"]) {
        let original = read(case);
        let back = Exported::from_bytes(&original.to_bytes()).unwrap();
        assert_eq!(layout_free(back), layout_free(original), "{case}");
    }
}

#[test]
fn jax_reads_what_oxla_writes_as_it_reads_its_own_files() {
    let cases: Vec<&str> = RUNNABLE
        .iter()
        .chain(&["shape_poly", "top_k"])
        .copied()
        .collect();
    for case in &cases {
        std::fs::write(
            path(&format!("{case}.oxla.jaxexport")),
            read(case).to_bytes(),
        )
        .unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reload_in_jax.py");
    let mut args: Vec<PathBuf> = vec![zoo().0.path().to_path_buf()];
    args.extend(cases.iter().map(PathBuf::from));
    let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    let verdicts: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &args)).unwrap();
    for case in &cases {
        assert_eq!(verdicts[case], "ok", "{case}: {}", verdicts[case]);
    }
}

#[test]
fn an_unknown_serialization_version_is_named() {
    let err =
        Exported::from_bytes(&std::fs::read(path("version_13.jaxexport")).unwrap()).unwrap_err();
    assert!(matches!(err, ExportError::UnsupportedVersion(13)), "{err}");
    assert_eq!(
        err.to_string(),
        "unsupported jax.export serialization version 13 (oxla reads versions 2 to 12)"
    );
}

#[test]
fn shardings_and_mesh_are_read() {
    let e = read("sharded_4_devices");
    let Sharding::Named(x) = &e.in_shardings[0] else {
        panic!("{:?}", e.in_shardings[0])
    };
    assert_eq!(x.mesh.axis_names, vec!["x", "y"]);
    assert_eq!(x.mesh.axis_sizes, vec![2, 2]);
    assert_eq!(x.spec, vec![vec!["x".to_string()], vec!["y".to_string()]]);
    assert_eq!(x.to_string(), "P('x', 'y') over mesh {'x': 2, 'y': 2}");
    let Sharding::Named(w) = &e.in_shardings[1] else {
        panic!()
    };
    assert_eq!(w.to_string(), "P('y', None) over mesh {'x': 2, 'y': 2}");
    assert_eq!(x.mesh.device_kind.as_deref(), Some("cpu"));
    assert_eq!(e.out_shardings.len(), 2);
}

#[test]
fn the_zoo_runs_and_matches_jax_on_both_plugins() {
    for (plugin, client) in clients() {
        for case in RUNNABLE {
            let m = manifest(case);
            let e = read(case);
            let loaded = LoadedExport::new(&client, &e)
                .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
            let inputs = arrays(case, "in", m["n_in"].as_u64().unwrap() as usize);
            let expected = arrays(case, "out", m["n_out"].as_u64().unwrap() as usize);
            let got = loaded
                .call(&inputs)
                .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
            assert_eq!(got.len(), expected.len(), "{plugin} {case}");
            for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
                assert_matches_jax(
                    g,
                    w,
                    Tolerance::OTHER_XLA_BUILD,
                    &format!("{plugin} {case} output {i}"),
                );
            }
        }
    }
}

/// An export for cpu and cuda whose cuda branch calls a kernel that no CPU
/// plugin has: `LoadedExport` binds the platform index as a constant of
/// `main`, so the CPU plugins drop that branch before compiling it (given
/// the index as an argument, they compile it and refuse the kernel).
#[test]
fn a_multi_platform_export_compiles_only_its_own_platforms_branch() {
    let case = "cuda_kernel_branch";
    let e = read(case);
    assert_eq!(e.platforms, ["cpu", "cuda"]);
    let inputs = arrays(case, "in", 1);
    let expected = arrays(case, "out", 1);
    for (plugin, client) in clients() {
        let loaded =
            LoadedExport::new(&client, &e).unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
        let got = loaded
            .call(&inputs)
            .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
        assert_matches_jax(
            &got[0],
            &expected[0],
            Tolerance::OTHER_XLA_BUILD,
            &format!("{plugin} {case}"),
        );
    }
    // A module whose main does not take the index first is refused clearly.
    let single = read("elementwise");
    let err = oxla_export::bind_platform_index(&single.mlir_module, 0, "1.10.0").unwrap_err();
    assert!(
        err.to_string().contains("not the i32 platform index"),
        "{err}"
    );
}

/// Every zoo module read by oxla's VHLO reader into generic text, which the
/// plugin compiles in place of the artifact: the outputs are bit for bit
/// those of the artifact itself.
#[test]
fn the_vhlo_reader_turns_every_artifact_into_text_that_computes_the_same() {
    let (plugin, client) = clients().pop().expect("a plugin");
    for case in RUNNABLE.iter().filter(|c| **c != "sharded_4_devices") {
        let m = manifest(case);
        let original = read(case);
        let text = oxla_export::artifact_to_text(&original.mlir_module)
            .unwrap_or_else(|err| panic!("{case}: {err}"));
        assert!(text.starts_with("\"builtin.module\"()"), "{case}");
        let inputs = arrays(case, "in", m["n_in"].as_u64().unwrap() as usize);
        let what = format!("{plugin} {case}, its VHLO text");
        assert_module_computes_the_same(&client, &original, text.into_bytes(), &inputs, &what);
    }
    // The top_k composite (written by JAX 0.10.2 for StableHLO 1.15) too.
    let top_k = read("top_k");
    let text = oxla_export::artifact_to_text(&top_k.mlir_module).unwrap();
    assert!(text.contains("\"vhlo.composite_v1\"") || text.contains("\"vhlo.composite_v2\""));
    // Not an artifact: a clear error.
    let err = oxla_export::artifact_to_text(b"module {}").unwrap_err();
    assert_eq!(err.to_string(), "not MLIR bytecode");
}

/// oxla's bytecode writer is the reader's inverse: every zoo module read
/// into VHLO text and written back as a portable artifact reads back to the
/// same text, and the plugin computes bit for bit what the original does.
#[test]
fn the_vhlo_writer_writes_back_every_artifact() {
    let (plugin, client) = clients().pop().expect("a plugin");
    // (The sharded case runs on four devices in its own test.)
    for case in RUNNABLE.iter().filter(|c| **c != "sharded_4_devices") {
        let m = manifest(case);
        let original = read(case);
        let text = oxla_export::artifact_to_text(&original.mlir_module).unwrap();
        let version = original.module_form().to_string();
        let version = version.rsplit_once(" v").map(|(_, v)| v).unwrap();
        let bytes = oxla_export::vhlo_text_to_artifact(&text, version)
            .unwrap_or_else(|err| panic!("{case}: {err}"));
        assert_eq!(
            oxla_export::artifact_to_text(&bytes).unwrap(),
            text,
            "{case}: the written artifact reads back differently"
        );
        let inputs = arrays(case, "in", m["n_in"].as_u64().unwrap() as usize);
        assert_eq!(
            oxla_export::StablehloVersion::of_artifact(&bytes),
            oxla_export::StablehloVersion::of_artifact(&original.mlir_module),
            "{case}"
        );
        let what = format!("{plugin} {case}, written back");
        assert_module_computes_the_same(&client, &original, bytes, &inputs, &what);
    }
}

/// `original` with its module replaced by `module` gives, bit for bit, the
/// outputs `original` gives.
fn assert_module_computes_the_same(
    client: &Client,
    original: &Exported,
    module: Vec<u8>,
    inputs: &[HostArray],
    what: &str,
) {
    let mut other = original.clone();
    other.mlir_module = module;
    let want = LoadedExport::new(client, original)
        .unwrap()
        .call(inputs)
        .unwrap();
    let got = LoadedExport::new(client, &other)
        .unwrap_or_else(|err| panic!("{what}: {err}"))
        .call(inputs)
        .unwrap_or_else(|err| panic!("{what}: {err}"));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_matches_jax(g, w, Tolerance::Ulps(0), &format!("{what}: output {i}"));
    }
}

#[test]
fn the_sharded_export_runs_partitioned_over_four_devices() {
    let (_, client) = clients().remove(0);
    let loaded = LoadedExport::new(&client, &read("sharded_4_devices")).unwrap();
    assert_eq!(loaded.executable().unwrap().addressable_devices().len(), 4);
    let program = loaded.executable().unwrap().program_shape().unwrap();
    // x: f32[8,4] split 2x2 -> f32[4,2] per device; w: f32[4,6] split on rows by 'y'.
    assert_eq!(program.parameters[0].to_string(), "f32[4,2]");
    assert_eq!(program.parameters[1].to_string(), "f32[2,6]");
    // Its Shardy mesh and shardings read as text (and written back) keep
    // the partitioning: the same per-device parameters and outputs.
    let original = read("sharded_4_devices");
    let text = oxla_export::artifact_to_text(&original.mlir_module).unwrap();
    assert!(
        text.contains("#sdy.mesh<[\"x\"=2, \"y\"=2]>")
            && text.contains("#sdy.sharding<@\"mesh\", [{\"x\"}, {\"y\"}]>"),
        "{text}"
    );
    let m = manifest("sharded_4_devices");
    let inputs = arrays(
        "sharded_4_devices",
        "in",
        m["n_in"].as_u64().unwrap() as usize,
    );
    let want = loaded.call(&inputs).unwrap();
    let version = original.module_form().to_string();
    let version = version.rsplit_once(" v").map(|(_, v)| v).unwrap();
    let written = oxla_export::vhlo_text_to_artifact(&text, version).unwrap();
    assert_eq!(oxla_export::artifact_to_text(&written).unwrap(), text);
    for module in [text.clone().into_bytes(), written] {
        let mut e = original.clone();
        e.mlir_module = module;
        let again = LoadedExport::new(&client, &e).unwrap();
        let program = again.executable().unwrap().program_shape().unwrap();
        assert_eq!(program.parameters[0].to_string(), "f32[4,2]");
        let got = again.call(&inputs).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert_matches_jax(g, w, Tolerance::Ulps(0), "the sharded export's text");
        }
    }
    let two = Client::new(
        client.api().clone(),
        &ClientOptions::new().cpu_device_count(2),
    )
    .unwrap();
    let err = LoadedExport::new(&two, &read("sharded_4_devices"))
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("exported for 4 devices, but this client has 2"),
        "{err}"
    );
}

#[test]
fn the_vjp_export_matches_jax_and_finite_differences() {
    let (_, client) = clients().remove(0);
    let e = read("with_vjp");
    let vjp = e.vjp.as_deref().expect("serialized with vjp_order=1");
    let m = manifest("with_vjp");
    let vjp_in: Vec<String> = vjp.in_avals.iter().map(ToString::to_string).collect();
    assert_eq!(vjp_in, strings(&m["vjp_in_avals"]));
    let loaded_vjp = LoadedExport::new(&client, vjp).unwrap();
    let inputs = arrays("with_vjp", "vjp_in", 3);
    let expected = arrays("with_vjp", "vjp_out", 2);
    let grads = loaded_vjp.call(&inputs).unwrap();
    for (i, (g, w)) in grads.iter().zip(&expected).enumerate() {
        assert_matches_jax(g, w, Tolerance::OTHER_XLA_BUILD, &format!("vjp output {i}"));
    }
    // <grad_w, v> against central differences of the primal export along v.
    let primal = LoadedExport::new(&client, &e).unwrap();
    let f32s = |a: &HostArray| -> Vec<f64> { a.to_f64_vec() };
    let w = f32s(&inputs[0]);
    let direction: Vec<f64> = (0..w.len())
        .map(|i| ((i * 7 % 5) as f64 - 2.0) / 2.0)
        .collect();
    let cotangent = f32s(&inputs[2]);
    let value_along = |eps: f64| -> f64 {
        let moved: Vec<u8> = w
            .iter()
            .zip(&direction)
            .flat_map(|(a, d)| ((a + eps * d) as f32).to_le_bytes())
            .collect();
        let w_moved = HostArray::new(oxla_pjrt::ElementType::F32, inputs[0].dims.clone(), moved);
        let out = primal.call(&[w_moved, inputs[1].clone()]).unwrap();
        f32s(&out[0])
            .iter()
            .zip(&cotangent)
            .map(|(y, c)| y * c)
            .sum()
    };
    let eps = 1e-2;
    let numeric = (value_along(eps) - value_along(-eps)) / (2.0 * eps);
    let analytic: f64 = f32s(&grads[0])
        .iter()
        .zip(&direction)
        .map(|(g, d)| g * d)
        .sum();
    assert!(
        (numeric - analytic).abs() < 1e-2 * (1.0 + analytic.abs()),
        "fd {numeric} vs vjp {analytic}"
    );
}

const POLYMORPHIC: [&str; 6] = [
    "poly_mlp",
    "poly_slicing",
    "poly_loop",
    "poly_conv",
    "poly_even",
    "poly_vjp",
];

/// Shape-polymorphic exports (matmuls, softmax, iota, floordiv slices,
/// flips, pads, cumsum, a loop over a symbolic count, sort, a batched
/// convolution with pooling, a `2*b` constraint) run on both plugins at two
/// shapes each through one `LoadedExport`, which refines and compiles once
/// per shape, and match JAX's `exported.call` at those shapes.
#[test]
fn shape_polymorphic_exports_run_at_each_shape_on_both_plugins_and_match_jax() {
    for (plugin, client) in clients() {
        for case in POLYMORPHIC {
            let m = manifest(case);
            let e = read(case);
            assert!(e.is_shape_polymorphic(), "{case}");
            let loaded = LoadedExport::new(&client, &e)
                .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
            assert!(loaded.executable().is_none(), "{case} has one per shape");
            let n_in = m["n_in"].as_u64().unwrap() as usize;
            let n_out = m["n_out"].as_u64().unwrap() as usize;
            for (k, out_shapes) in m["out_shapes"].as_array().unwrap().iter().enumerate() {
                let inputs = arrays(&format!("{case}.s{k}"), "in", n_in);
                let expected = arrays(&format!("{case}.s{k}"), "out", n_out);
                let got = loaded
                    .call(&inputs)
                    .unwrap_or_else(|err| panic!("{plugin} {case} shape {k}: {err}"));
                for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
                    assert_matches_jax(
                        g,
                        w,
                        Tolerance::OTHER_XLA_BUILD,
                        &format!("{plugin} {case} shape {k} output {i}"),
                    );
                }
                let dims: Vec<Vec<i64>> = inputs.iter().map(|x| x.dims.clone()).collect();
                let refined = e.refine(&dims).unwrap();
                assert!(!refined.is_shape_polymorphic());
                let refined_dims: Vec<Vec<i64>> = refined
                    .out_avals
                    .iter()
                    .map(|a| a.static_dims().unwrap())
                    .collect();
                let want: Vec<Vec<i64>> = serde_json::from_value(out_shapes.clone()).unwrap();
                assert_eq!(refined_dims, want, "{case} shape {k}");
            }
        }
    }
}

/// The export's shape constraints are checked as JAX checks them: `2*b`
/// with an odd size fails with JAX's own message naming `b`; a wrong rank
/// or a static dim that differs names the input and the expected type.
#[test]
fn polymorphic_exports_refuse_shapes_that_break_their_constraints() {
    let (_, client) = clients().remove(0);
    let even = read("poly_even");
    let err = even.refine(&[vec![5, 3]]).unwrap_err().to_string();
    assert!(
        err.contains("Division had remainder 1 when computing the value of 'b'"),
        "{err}"
    );
    let loaded = LoadedExport::new(&client, &even).unwrap();
    let odd = HostArray::new(oxla_pjrt::ElementType::F32, vec![5, 3], vec![0; 60]);
    let err = loaded.call(&[odd]).unwrap_err().to_string();
    assert!(err.contains("Division had remainder 1"), "{err}");
    let err = even.refine(&[vec![6, 4]]).unwrap_err().to_string();
    assert!(
        err.contains("input 0 [0][0] has dims [6,4], but the export expects float32[2*b,3]"),
        "{err}"
    );
    let wrong_rank = HostArray::new(oxla_pjrt::ElementType::F32, vec![6], vec![0; 24]);
    let err = loaded.call(&[wrong_rank]).unwrap_err().to_string();
    assert!(err.contains("expects float32[2*b,3]"), "{err}");
    // With_cache compiles one module: a polymorphic export is refined first.
    let err = LoadedExport::with_cache(&client, &even, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("shape-polymorphic in dimension(s) 2*b") && err.contains("Exported::refine"),
        "{err}"
    );
}

/// A polymorphic export's vjp, itself polymorphic, refines to the shapes
/// it is called with, and matches finite differences of the export.
#[test]
fn a_polymorphic_exports_vjp_refines_to_its_cotangents_shapes() {
    let (_, client) = clients().remove(0);
    let e = read("poly_vjp");
    let vjp = e.vjp.as_deref().expect("serialized with its vjp");
    assert!(vjp.is_shape_polymorphic());
    let loaded = LoadedExport::new(&client, &e).unwrap();
    let loaded_vjp = LoadedExport::new(&client, vjp).unwrap();
    for k in 0..2 {
        let inputs = arrays(&format!("poly_vjp.s{k}"), "in", 2);
        let rows = inputs[0].dims[0] as usize;
        let ones: Vec<u8> = (0..rows * 2).flat_map(|_| 1f32.to_le_bytes()).collect();
        let cotangent = HostArray::new(oxla_pjrt::ElementType::F32, vec![rows as i64, 2], ones);
        let mut args = inputs.clone();
        args.push(cotangent);
        let grads = loaded_vjp.call(&args).unwrap();
        assert_eq!(grads[0].dims, inputs[0].dims);
        // d/dx0 of sum(tanh(x @ w)) by central differences.
        let sum_at = |delta: f64| -> f64 {
            let mut x = inputs[0].to_f64_vec();
            x[0] += delta;
            let bytes: Vec<u8> = x.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect();
            let moved = HostArray::new(oxla_pjrt::ElementType::F32, inputs[0].dims.clone(), bytes);
            let out = loaded.call(&[moved, inputs[1].clone()]).unwrap();
            out[0].to_f64_vec().iter().sum()
        };
        let eps = 1e-2;
        let numeric = (sum_at(eps) - sum_at(-eps)) / (2.0 * eps);
        let analytic = grads[0].to_f64_vec()[0];
        assert!(
            (numeric - analytic).abs() < 1e-2 * (1.0 + analytic.abs()),
            "shape {k}: fd {numeric} vs vjp {analytic}"
        );
    }
}

#[test]
fn inputs_are_checked_against_the_exported_types() {
    let (_, client) = clients().remove(0);
    let loaded = LoadedExport::new(&client, &read("mlp")).unwrap();
    let mut inputs = arrays("mlp", "in", 7);
    let err = loaded.call(&inputs[..6]).unwrap_err();
    assert!(err.to_string().contains("takes 7 inputs"), "{err}");
    inputs[3] = inputs[4].clone();
    let err = loaded.call(&inputs).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input 3 [0][0]['w1'] is f32[32,32], but the export expects float32[16,32]"
    );
}

#[test]
fn an_export_for_another_platform_is_refused() {
    let (_, client) = clients().remove(0);
    let mut e = read("elementwise");
    e.platforms = vec!["cuda".into()];
    let err = LoadedExport::new(&client, &e).err().unwrap();
    assert_eq!(
        err.to_string(),
        "exported for platform(s) cuda, but this client's platform is cpu"
    );
}

#[test]
fn truncated_and_corrupted_files_are_errors() {
    let bytes = std::fs::read(path("mlp.jaxexport")).unwrap();
    let whole = Exported::from_bytes(&bytes).unwrap();
    for len in 0..bytes.len() {
        // A flatbuffer may end in alignment padding that nothing refers to
        // (after the NUL of the last string): cutting only that padding
        // loses nothing, so the reader may accept it, but then it must read
        // exactly what the whole file holds. Any other cut is an error.
        if let Ok(read) = Exported::from_bytes(&bytes[..len]) {
            assert!(
                bytes[len..].iter().all(|&b| b == 0),
                "prefix of {len} bytes read as valid, but it cut non-padding bytes"
            );
            assert_eq!(read, whole, "prefix of {len} bytes read differently");
        }
    }
    let err = Exported::from_bytes(b"").unwrap_err();
    assert!(matches!(err, ExportError::Malformed(_)), "{err}");
    let err = Exported::from_bytes(b"module { func.func @main() { return } }").unwrap_err();
    assert!(
        err.to_string().starts_with("not a valid jax.export file"),
        "{err}"
    );
}

/// lax.top_k exported by the venv's JAX (StableHLO v1.15.0 for JAX 0.10.2)
/// is refused by the plugin that reads only v1.13.3 with one sentence that
/// names both versions and the fix, and runs on the plugin that reads
/// v1.20.0, matching JAX.
#[test]
fn an_export_newer_than_the_plugin_says_so_with_both_versions_and_the_fix() {
    let e = read("top_k");
    let artifact = oxla_export::StablehloVersion::of_artifact(&e.mlir_module)
        .expect("a portable artifact names its StableHLO version");
    let inputs = arrays("top_k", "in", 1);
    let expected = arrays("top_k", "out", 2);
    let mut refused = 0;
    for (plugin, client) in clients() {
        let reads = oxla_export::StablehloVersion::of_plugin(client.api())
            .expect("the pinned plugins say which StableHLO they read");
        match LoadedExport::new(&client, &e) {
            Ok(loaded) => {
                let got = loaded.call(&inputs).unwrap();
                for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
                    assert_matches_jax(g, w, Tolerance::SINGLE_OP, &format!("{plugin} top_k {i}"));
                }
            }
            Err(err) => {
                assert!(
                    artifact > reads,
                    "{plugin} reads {reads} >= {artifact} but failed: {err}"
                );
                assert!(matches!(err, ExportError::TooNew { .. }), "{err}");
                let message = err.to_string();
                for needle in [
                    artifact.to_string(),
                    reads.to_string(),
                    "lammps-jax-pjrt-cpu".to_string(),
                    "older JAX".to_string(),
                ] {
                    assert!(
                        message.contains(&needle),
                        "{needle:?} missing from {message}"
                    );
                }
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 1, "exactly the older plugin refuses top_k");
}

/// JAX's CPU linear algebra exported (tests/fixtures/linalg_zoo.py): every
/// `lapack_*_ffi` target in four precisions, with JAX's values.
fn linalg_zoo() -> &'static (tempfile::TempDir, serde_json::Value) {
    static ZOO: OnceLock<(tempfile::TempDir, serde_json::Value)> = OnceLock::new();
    ZOO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/linalg_zoo.py");
        let manifest = oxla_testing::run_python(&script, &[dir.path()]);
        (dir, serde_json::from_slice(&manifest).unwrap())
    })
}

/// LAPACK's results from the system's OpenBLAS against those of the
/// OpenBLAS SciPy bundles for jaxlib: the same routines, blocked and
/// vectorised by two builds.
const OTHER_LAPACK_BUILD: Tolerance = Tolerance::chain(
    2000.0,
    200.0,
    "one LAPACK routine from two OpenBLAS builds, whose blocking and kernels round differently",
);

#[test]
fn jax_linear_algebra_exports_run_through_lapack_and_match_jax_on_both_plugins() {
    let (dir, json) = linalg_zoo();
    let cases = json["cases"].as_object().unwrap();
    // Every target oxla handles is exercised, in each precision.
    let exercised: std::collections::BTreeSet<String> = cases
        .values()
        .flat_map(|m| m["targets"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let handled: std::collections::BTreeSet<String> =
        oxla_pjrt::lapack_targets().into_iter().collect();
    assert_eq!(exercised, handled, "the zoo's targets and oxla's handlers");
    let leaves = |case: &str, kind: &str, n: u64| -> Vec<HostArray> {
        (0..n)
            .map(|i| {
                HostArray::read_file(&dir.path().join(format!("{case}.{kind}_{i}.npy"))).unwrap()
            })
            .collect()
    };
    for (plugin, client) in clients() {
        for (case, m) in cases {
            let exported = Exported::from_bytes(
                &std::fs::read(dir.path().join(format!("{case}.jaxexport"))).unwrap(),
            )
            .unwrap_or_else(|err| panic!("{case}: {err}"));
            let loaded = LoadedExport::new(&client, &exported)
                .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
            let inputs = leaves(case, "in", m["n_in"].as_u64().unwrap());
            let expected = leaves(case, "out", m["n_out"].as_u64().unwrap());
            let got = loaded
                .call(&inputs)
                .unwrap_or_else(|err| panic!("{plugin} {case}: {err}"));
            assert_eq!(got.len(), expected.len(), "{plugin} {case}");
            for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
                assert_matches_jax(
                    g,
                    w,
                    OTHER_LAPACK_BUILD,
                    &format!("{plugin} {case} output {i}"),
                );
            }
        }
    }
}
