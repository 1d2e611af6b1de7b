//! The `oxla` binary end to end: devices, doctor, run (against JAX's values),
//! and every kind of bad input giving exit status 1 and one `error:` line.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "cli") };
}

use oxla_testing::{BoundedOutput, assert_fails_with};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use oxla_npy::HostArray;

fn oxla(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(args)
        .output_bounded()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory with JAX's module, inputs and expected outputs.
fn jax_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jax_module.py");
    oxla_testing::run_python(&script, &[dir.path()]);
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn devices_lists_platform_and_devices() {
    let o = oxla(&["devices"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(text.contains("platform:         cpu"), "{text}");
    assert!(text.contains("PJRT C API:"), "{text}");
    assert!(text.contains("[0] "), "{text}");
}

#[test]
fn devices_takes_an_explicit_plugin() {
    let lammps = oxla_pjrt::plugin_dir()
        .join("lammps-jax-pjrt-cpu-0.11.2/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so");
    let o = oxla(&["devices", "--plugin", s(&lammps)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout(&o).contains("PJRT C API:       0.115"),
        "{}",
        stdout(&o)
    );
    assert_fails_with(
        &oxla(&["devices", "--plugin", "/nonexistent/plugin.so"]),
        "/nonexistent/plugin.so",
    );
    assert_fails_with(
        &oxla(&["devices", "--plugin", "/etc/hostname"]),
        "cannot load PJRT plugin",
    );
}

#[test]
fn doctor_reports_found_and_missing_plugins() {
    let o = oxla(&["doctor"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(text.contains("xla_cpu_pjrt.so"), "{text}");
    assert!(text.contains("pjrt_c_api_cpu_plugin.so"), "{text}");
    assert!(
        text.contains("PJRT C API 0.81") && text.contains("PJRT C API 0.115"),
        "{text}"
    );
    assert!(text.contains("ok: platform cpu"), "{text}");
    // ci/setup installs libtpu on x86_64: it loads, and the machine has no
    // TPU; elsewhere the section says how to install it.
    let tpu = text.split("\ntpu:\n").nth(1).unwrap_or_default();
    assert!(
        tpu.starts_with("  missing: install one with `oxla plugin install tpu`")
            || (tpu.contains("libtpu.so (oxla plugin directory)")
                && tpu.contains("loaded (PJRT C API 0.")
                && tpu.contains("and no TPU was found on this machine")),
        "{text}"
    );
}

/// A plugin named by OXLA_PJRT_PLUGIN is listed once, under its own
/// heading with the platform its client reports, and under no platform's.
#[test]
fn doctor_lists_the_environment_plugin_under_its_own_heading() {
    let home = std::env::var_os("OXLA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/oxla"));
    let plugin = home
        .join("plugins/lammps-jax-pjrt-cpu-0.11.2/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so");
    let o = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .arg("doctor")
        .env("OXLA_PJRT_PLUGIN", &plugin)
        .output_bounded();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let section = text
        .split("\nOXLA_PJRT_PLUGIN:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no OXLA_PJRT_PLUGIN section:\n{text}"));
    assert!(
        section.contains(&format!("{} (OXLA_PJRT_PLUGIN)", plugin.display()))
            && section.contains("ok: platform cpu"),
        "{text}"
    );
    assert_eq!(text.matches("(OXLA_PJRT_PLUGIN)").count(), 1, "{text}");
}

#[test]
fn doctor_fails_when_no_cpu_plugin_exists() {
    let empty = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .arg("doctor")
        .env("OXLA_HOME", empty.path())
        .env("HOME", empty.path())
        .env_remove("OXLA_PJRT_PLUGIN")
        .env_remove("VIRTUAL_ENV")
        .env_remove("PYTHONPATH")
        .output_bounded();
    // Debian's system site-packages has no PJRT plugin here.
    assert_fails_with(&o, "no working CPU plugin");
    assert!(
        stdout(&o).contains("cpu:\n  missing: install one with `oxla plugin install cpu`"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_example_training_run_converges() {
    let example = repo().join("examples/linear_regression.mlir");
    let out_dir = tempfile::tempdir().unwrap();
    let o = oxla(&["run", s(&example), "--out", s(out_dir.path())]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o).lines().filter(|l| l.starts_with("out[")).count(),
        4,
        "{}",
        stdout(&o)
    );
    let read_f32 = |i: usize| -> Vec<f32> {
        let a = HostArray::read_file(&out_dir.path().join(format!("out_{i}.npy"))).unwrap();
        a.bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let w = read_f32(0);
    for (got, want) in w.iter().zip([1.5f32, -2.0, 0.5, 3.0]) {
        assert!((got - want).abs() < 1e-3, "w = {w:?}");
    }
    assert!((read_f32(1)[0] - 0.7).abs() < 1e-3);
    let (before, after) = (read_f32(2)[0], read_f32(3)[0]);
    assert!(before > 1.0 && after < 1e-6, "loss {before} -> {after}");
}

fn assert_outputs_match_jax(dir: &Path, out: &Path) {
    for i in 0..2 {
        let got = HostArray::read_file(&out.join(format!("out_{i}.npy"))).unwrap();
        let want = HostArray::read_file(&dir.join(format!("expected_{i}.npy"))).unwrap();
        assert_eq!(
            (got.npy_type, &got.dims),
            (want.npy_type, &want.dims),
            "output {i}"
        );
        if i == 0 {
            let f = |a: &HostArray| -> Vec<f32> {
                a.bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            };
            for (g, w) in f(&got).iter().zip(f(&want)) {
                assert!((g - w).abs() <= 1e-6 + 1e-5 * w.abs(), "{g} vs {w}");
            }
        } else {
            assert_eq!(got.bytes, want.bytes);
        }
    }
}

#[test]
fn run_matches_jax_for_text_and_bytecode_modules() {
    let dir = jax_fixture();
    let d = dir.path();
    for module in ["module.mlir", "module.mlirbc"] {
        let out = tempfile::tempdir().unwrap();
        let o = oxla(&[
            "run",
            s(&d.join(module)),
            "--input",
            s(&d.join("x.npy")),
            "-i",
            s(&d.join("y.npy")),
            "--out",
            s(out.path()),
        ]);
        assert!(
            o.status.success(),
            "{module}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = stdout(&o);
        assert!(
            text.contains("out[0]: f32[2,3]") && text.contains("out[1]: i32[]"),
            "{text}"
        );
        assert_outputs_match_jax(d, out.path());
    }
}

/// An export that calls LAPACK runs through the system's; a LAPACK that
/// cannot load is one clear line naming what was tried and OXLA_LAPACK.
#[test]
fn run_calls_lapack_for_jax_linear_algebra_and_says_when_it_is_missing() {
    let dir = jax_fixture();
    let d = dir.path();
    let out = tempfile::tempdir().unwrap();
    let (file, a, b) = (d.join("solve.jaxexport"), d.join("a.npy"), d.join("b.npy"));
    let args = [
        "run",
        s(&file),
        "-i",
        s(&a),
        "-i",
        s(&b),
        "--out",
        s(out.path()),
    ];
    let o = oxla(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = HostArray::read_file(&out.path().join("out_0.npy")).unwrap();
    let want = HostArray::read_file(&d.join("solve_expected.npy")).unwrap();
    oxla_testing::assert_matches_jax(
        &got,
        &want,
        oxla_testing::Tolerance::chain(
            64.0,
            16.0,
            "LU and two triangular solves from two OpenBLAS builds",
        ),
        "solve",
    );
    let missing = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(args)
        .env("OXLA_LAPACK", "/nonexistent/liblapack.so.3")
        .output_bounded();
    assert_fails_with(&missing, "/nonexistent/liblapack.so.3");
    assert_fails_with(&missing, "OXLA_LAPACK");
}

#[test]
fn run_without_inputs_prints_the_signature() {
    let dir = jax_fixture();
    let o = oxla(&["run", s(&dir.path().join("module.mlir"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout(&o).starts_with("main(f32[2,3], i32[3]) -> (f32[2,3], i32[])"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_input_fails_with_one_clear_line() {
    let dir = jax_fixture();
    let d = dir.path();
    let module = d.join("module.mlir");
    let (x, y) = (d.join("x.npy"), d.join("y.npy"));
    assert_fails_with(
        &oxla(&["run", "/nonexistent/model.mlir"]),
        "cannot read /nonexistent/model.mlir",
    );
    let garbage = d.join("garbage.mlir");
    std::fs::write(&garbage, "module { this is not mlir }").unwrap();
    assert_fails_with(&oxla(&["run", s(&garbage)]), "cannot compile");
    let binary = d.join("binary.bin");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00, 0x80]).unwrap();
    assert_fails_with(
        &oxla(&["run", s(&binary)]),
        "neither MLIR text, MLIR bytecode nor a jax.export file",
    );
    let fake_bytecode = d.join("fake.mlirbc");
    std::fs::write(&fake_bytecode, b"ML\xefR\x00\x01garbage").unwrap();
    assert_fails_with(&oxla(&["run", s(&fake_bytecode)]), "cannot compile");
    assert_fails_with(
        &oxla(&["run", s(&module), "-i", s(&x)]),
        "takes 2 inputs (main(f32[2,3], i32[3])",
    );
    assert_fails_with(
        &oxla(&[
            "run",
            s(&module),
            "-i",
            s(&d.join("x_wrong_shape.npy")),
            "-i",
            s(&y),
        ]),
        "is f32[3,2], but",
    );
    assert_fails_with(
        &oxla(&[
            "run",
            s(&module),
            "-i",
            s(&d.join("x_f64.npy")),
            "-i",
            s(&y),
        ]),
        "input 0",
    );
    assert_fails_with(
        &oxla(&["run", s(&module), "-i", s(&y), "-i", s(&x)]),
        "expects f32[2,3]",
    );
    assert_fails_with(
        &oxla(&["run", s(&module), "-i", "/nonexistent/x.npy", "-i", s(&y)]),
        "/nonexistent/x.npy",
    );
    assert_fails_with(
        &oxla(&["run", s(&module), "-i", s(&module), "-i", s(&y)]),
        "not a valid .npy file",
    );
    let blocked = d.join("a_file");
    std::fs::write(&blocked, "").unwrap();
    assert_fails_with(
        &oxla(&[
            "run",
            s(&module),
            "-i",
            s(&x),
            "-i",
            s(&y),
            "--out",
            s(&blocked.join("sub")),
        ]),
        "cannot create",
    );
}

/// A directory with oxla-export's zoo of jax.export files and JAX's values.
fn export_zoo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = repo().join("crates/oxla-export/tests/fixtures/export_zoo.py");
    oxla_testing::run_python(&script, &[dir.path()]);
    dir
}

/// `oxla run` on an export for cpu and cuda whose cuda branch calls a
/// kernel no CPU plugin has: the platform index is bound as a constant, so
/// the plugin compiles the cpu branch alone, and the result is JAX's.
#[test]
fn run_compiles_only_the_branch_of_its_platform() {
    let zoo = export_zoo();
    let z = zoo.path();
    let out = tempfile::tempdir().unwrap();
    let o = oxla(&[
        "run",
        s(&z.join("cuda_kernel_branch.jaxexport")),
        "-i",
        s(&z.join("cuda_kernel_branch.in_0.npy")),
        "--out",
        s(out.path()),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = HostArray::read_file(&out.path().join("out_0.npy")).unwrap();
    let want = HostArray::read_file(&z.join("cuda_kernel_branch.out_0.npy")).unwrap();
    oxla_testing::assert_matches_jax(
        &got,
        &want,
        oxla_testing::Tolerance::OTHER_XLA_BUILD,
        "oxla run of the cpu branch",
    );
}

/// `oxla run` of a shape-polymorphic export refines it to the inputs'
/// shapes (JAX's values come back); a shape its constraints refuse fails on
/// one line with JAX's message.
#[test]
fn run_refines_a_shape_polymorphic_export_to_its_inputs() {
    let zoo = export_zoo();
    let z = zoo.path();
    for (case, input, want) in [
        ("shape_poly", "shape_poly.in_0.npy", "shape_poly.out_0.npy"),
        ("poly_mlp", "poly_mlp.s1.in_", "poly_mlp.s1.out_0.npy"),
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut args = vec![
            "run".to_string(),
            s(&z.join(format!("{case}.jaxexport"))).to_string(),
        ];
        let inputs: Vec<String> = if input.ends_with(".npy") {
            vec![input.to_string()]
        } else {
            (0..4).map(|i| format!("{input}{i}.npy")).collect()
        };
        for i in inputs {
            args.push("-i".into());
            args.push(s(&z.join(i)).to_string());
        }
        args.push("--out".into());
        args.push(s(out.path()).to_string());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = oxla(&refs);
        assert!(
            o.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = HostArray::read_file(&out.path().join("out_0.npy")).unwrap();
        let want = HostArray::read_file(&z.join(want)).unwrap();
        oxla_testing::assert_matches_jax(
            &got,
            &want,
            oxla_testing::Tolerance::OTHER_XLA_BUILD,
            &format!("oxla run of {case}"),
        );
    }
    assert_fails_with(
        &oxla(&[
            "run",
            s(&z.join("poly_even.jaxexport")),
            "-i",
            s(&z.join("shape_poly.in_0.npy")),
        ]),
        "Division had remainder 1 when computing the value of 'b'",
    );
}

#[test]
fn exports_run_inspect_and_fail_cleanly() {
    let zoo = export_zoo();
    let z = zoo.path();
    let file = |name: &str| z.join(name).to_str().unwrap().to_string();

    // Signature with pytree paths when no input is given.
    let o = oxla(&["run", &file("mlp.jaxexport")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(
        text.starts_with("function: f\ninputs: PyTreeDef((({'b1': *"),
        "{text}"
    );
    assert!(text.contains("[3] [0][0]['w1'] float32[16,32]"), "{text}");

    // Run with every leaf and compare with JAX.
    let out = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec![
        "run".into(),
        file("mlp.jaxexport"),
        "--out".into(),
        s(out.path()).into(),
    ];
    for i in 0..7 {
        args.extend(["-i".to_string(), file(&format!("mlp.in_{i}.npy"))]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = oxla(&refs);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = HostArray::read_file(&out.path().join("out_0.npy")).unwrap();
    let want = HostArray::read_file(&z.join("mlp.out_0.npy")).unwrap();
    oxla_testing::assert_matches_jax(
        &got,
        &want,
        oxla_testing::Tolerance::OTHER_XLA_BUILD,
        "oxla run mlp.jaxexport",
    );

    // Exports compile through the persistent cache too.
    let cache = tempfile::tempdir().unwrap();
    let mut cached_args: Vec<String> = vec!["run".into(), file("mlp.jaxexport")];
    for i in 0..7 {
        cached_args.extend(["-i".to_string(), file(&format!("mlp.in_{i}.npy"))]);
    }
    let run_logged = || {
        Command::new(env!("CARGO_BIN_EXE_oxla"))
            .args(&cached_args)
            .env("OXLA_CACHE_DIR", cache.path())
            .env("OXLA_LOG_COMPILES", "1")
            .output_bounded()
    };
    let (cold, warm) = (run_logged(), run_logged());
    assert!(
        cold.status.success() && warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    assert!(
        String::from_utf8_lossy(&cold.stderr).contains("oxla: compiled "),
        "{}",
        String::from_utf8_lossy(&cold.stderr)
    );
    assert!(
        String::from_utf8_lossy(&warm.stderr).contains("oxla: disk cache hit for "),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    assert_eq!(cold.stdout, warm.stdout);

    // A 4-device export runs on 4 CPU devices made for it.
    let o = oxla(&[
        "run",
        &file("sharded_4_devices.jaxexport"),
        "-i",
        &file("sharded_4_devices.in_0.npy"),
        "-i",
        &file("sharded_4_devices.in_1.npy"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("out[0]: f32[8,6]"), "{}", stdout(&o));

    // inspect.
    let o = oxla(&["inspect", &file("sharded_4_devices.jaxexport")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    for needle in [
        "devices: 4",
        "[0] P('x', 'y') over mesh {'x': 2, 'y': 2}",
        "platforms: cpu",
        "calling convention: 10",
        "ordered effects: none",
        "vjp: not included",
        // The venv's JAX 0.10.2 writes StableHLO v1.15.0 portable artifacts.
        "bytes, StableHLO portable artifact for StableHLO v1.15.0",
        "written by: JAX (version not recorded before format 12)",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    let o = oxla(&["inspect", &file("with_vjp.jaxexport")]);
    assert!(
        stdout(&o).contains("vjp: included\n  function: "),
        "{}",
        stdout(&o)
    );
    let o = oxla(&["inspect", &file("cpu_and_cuda.jaxexport")]);
    assert!(
        stdout(&o).contains("platforms: cpu, cuda"),
        "{}",
        stdout(&o)
    );
    let o = oxla(&["inspect", &file("format_v12.jaxexport")]);
    assert!(
        stdout(&o).contains(
            "written by: JAX 0.10.2-oxla-test\nserialization: version field 3, format 12"
        ),
        "{}",
        stdout(&o)
    );

    // Errors: one line each.
    assert_fails_with(
        &oxla(&["inspect", &file("version_13.jaxexport")]),
        "serialization version 13",
    );
    assert_fails_with(
        &oxla(&["run", &file("mlp.jaxexport"), "-i", &file("mlp.in_0.npy")]),
        "takes 7 inputs",
    );
    let bytes = std::fs::read(z.join("mlp.jaxexport")).unwrap();
    let truncated = z.join("truncated.jaxexport");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_fails_with(&oxla(&["inspect", s(&truncated)]), "nor a jax.export file");
}

#[test]
fn exports_written_by_oxla_inspect_and_run_like_jax_ones() {
    use oxla::{Array, ExportOptions, jit, numpy as jnp};
    let dir = tempfile::tempdir().unwrap();
    // Captured arrays (a float table and a boolean mask) become constants
    // embedded in the exported module.
    let table = Array::from_slice(&[0.5f32, -1.25, 2.0], &[3]).unwrap();
    let mask = Array::from_slice(&[true, false, true], &[3]).unwrap();
    let f = jit(move |(x, n): (Array, Array)| {
        let scaled = jnp::where_(&mask, &(&x * &table), &x)
            + oxla::lax::convert_element_type(&n, oxla::DType::F32);
        (jnp::sum(&scaled, None, false), scaled)
    })
    .named("scaled");
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let n = Array::from_slice(&[3i32], &[]).unwrap();
    let exported = f
        .export(&(x.clone(), n.clone()), &ExportOptions::new().vjp_order(1))
        .unwrap();
    let export_file = dir.path().join("scaled.jaxexport");
    std::fs::write(&export_file, exported.to_bytes()).unwrap();
    x.to_npy(dir.path().join("x.npy")).unwrap();
    n.to_npy(dir.path().join("n.npy")).unwrap();

    let o = oxla(&["inspect", s(&export_file)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    for needle in [
        "function: scaled",
        &format!("written by: oxla {}", env!("CARGO_PKG_VERSION")),
        // Its ops are all StableHLO 0.9's; 0.15 is the first to read
        // bytecode version 6.
        "bytes, StableHLO portable artifact for StableHLO v0.15.0",
        "platforms: cpu",
        "vjp: included\n  function: scaled_vjp",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }

    let out = dir.path().join("out");
    let o = oxla(&[
        "run",
        s(&export_file),
        "-i",
        s(&dir.path().join("x.npy")),
        "-i",
        s(&dir.path().join("n.npy")),
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (total, scaled) = f.call((x, n)).unwrap();
    for (i, want) in [total, scaled].iter().enumerate() {
        let got = HostArray::read_file(&out.join(format!("out_{i}.npy"))).unwrap();
        assert_eq!(got, want.to_host().unwrap(), "output {i}");
    }
}

/// `oxla profile` on a trace as `oxla::profiler::trace` writes it (built
/// here with the fields it writes): the groups by time, and errors for a
/// file that is not a trace.
#[test]
fn profile_summarises_a_memory_profile_by_location() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.prof");
    let at = |line: u32, bytes: u64, shape: &str| oxla_pprof::Allocation {
        file: "src/train.rs".into(),
        line,
        column: 5,
        bytes,
        shape: shape.into(),
    };
    let live = [
        at(10, 1000, "f32[250]"),
        at(20, 4096, "f32[32,32]"),
        at(10, 3000, "f32[750]"),
    ];
    std::fs::write(
        &path,
        oxla_pprof::gzipped(&oxla_pprof::memory_profile(&live, 0)),
    )
    .unwrap();
    let o = oxla(&["profile", s(&path)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "device memory: 8096 bytes in 3 samples", "{text}");
    assert!(
        lines[2].contains("4096") && lines[2].ends_with("src/train.rs:20:5"),
        "{text}"
    );
    assert!(
        lines[3].contains("4000")
            && lines[3].contains("       2  ")
            && lines[3].ends_with("src/train.rs:10:5"),
        "{text}"
    );
    // gzip that is not a profile: an error naming the file.
    std::fs::write(&path, [0x1f, 0x8b, 0, 1, 2]).unwrap();
    let o = oxla(&["profile", s(&path)]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("memory.prof"));
}

#[test]
fn profile_summarises_a_trace_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("oxla.trace.json");
    let event = |name: &str, function: &str, ts: f64, dur: f64| {
        format!(
            r#"{{"name": "{name}", "cat": "oxla", "ph": "X", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1, "args": {{"function": "{function}"}}}}"#
        )
    };
    let events = [
        event("trace", "step", 0.0, 800.0),
        event("compile", "step", 900.0, 40000.0),
        event("execute", "step", 41000.0, 300.0),
        event("execute", "step", 42000.0, 600.0),
    ];
    std::fs::write(
        &trace,
        format!(
            r#"{{"traceEvents": [{}], "otherData": {{"plugin_profiler": "the plugin has no PJRT profiler extension: oxla's spans only"}}}}"#,
            events.join(", ")
        ),
    )
    .unwrap();
    let o = oxla(&["profile", s(&trace)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("no PJRT profiler extension"), "{text}");
    assert!(
        lines[2].ends_with("compile step") && lines[2].contains("40.000"),
        "{text}"
    );
    assert!(
        lines[3].ends_with("execute step")
            && lines[3].contains("     2 ")
            && lines[3].contains("0.450"),
        "{text}"
    );
    assert!(lines[4].ends_with("trace step"), "{text}");
    std::fs::write(&trace, "{\"x\": 1}").unwrap();
    let o = oxla(&["profile", s(&trace)]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a Chrome trace"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An empty file is named as empty, not as a module without `main` or a
/// flatbuffer out of range.
#[test]
fn an_empty_file_is_said_to_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    for command in ["run", "inspect"] {
        let o = oxla(&[command, s(&empty)]);
        let line = assert_fails_with(&o, "empty.bin is empty");
        assert!(line.contains("jax.export file"), "{line}");
    }
}
