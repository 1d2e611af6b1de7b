//! Process-wide switches, in their own test process and one test (so no
//! other test sees them flipped): x64, the transfer guard, and an
//! unwritable compile cache.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "global_switches") };
}

use oxla_testing::BoundedOutput;
use std::sync::{Arc, Mutex};

use oxla::config::TransferGuard;
use oxla::{Array, DType, Error, jit, numpy as jnp};

#[test]
fn global_switches() {
    reductions_accumulate_in_jaxs_dtypes();
    x64_keeps_64_bit_types_and_is_part_of_the_cache_key();
    the_transfer_guard_logs_or_refuses_implicit_transfers();
    an_unwritable_compile_cache_gives_one_warning_and_oxla_keeps_working();
    the_eager_cache_keeps_its_most_recent_programs();
}

/// The eager op cache is bounded: past its capacity the least recently
/// used program goes (and is compiled again when needed), the rest stay.
fn the_eager_cache_keeps_its_most_recent_programs() {
    use std::num::NonZeroUsize;
    let x = Array::from_slice(&[0.5f32, 2.0], &[2]).unwrap();
    oxla::set_eager_cache_capacity(NonZeroUsize::new(2).unwrap());
    assert!(oxla::eager_cache_size() <= 2);
    let a = jnp::sin(&x).to_vec::<f32>().unwrap();
    let _ = jnp::cos(&x).to_vec::<f32>().unwrap();
    // sin is the least recently used when tan comes in.
    let _ = jnp::tan(&x).to_vec::<f32>().unwrap();
    assert_eq!(oxla::eager_cache_size(), 2);
    // sin again: recompiled, same values.
    assert_eq!(jnp::sin(&x).to_vec::<f32>().unwrap(), a);
    assert_eq!(oxla::eager_cache_size(), 2);
    oxla::set_eager_cache_capacity(NonZeroUsize::new(4096).unwrap());
}

/// sum, prod, cumsum and cumprod of ones(3) of every dtype, without and
/// with x64: JAX's result dtypes (reduction_dtypes.py, run now) and the
/// right values.
fn reductions_accumulate_in_jaxs_dtypes() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reduction_dtypes.py");
    let table: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap();
    for x64 in [false, true] {
        oxla::enable_x64(x64);
        for (name, want) in table[x64.to_string()].as_object().unwrap() {
            let dtype = DType::from_name(name).unwrap();
            let ones = jnp::ones(&[3], dtype);
            let results = [
                jnp::sum(&ones, None, false),
                jnp::prod(&ones, None, false),
                jnp::cumsum(&ones, None),
                jnp::cumprod(&ones, None),
            ];
            let values: [&[f64]; 4] = [&[3.0], &[1.0], &[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]];
            for (k, ((got, want), values)) in results
                .iter()
                .zip(want.as_array().unwrap())
                .zip(values)
                .enumerate()
            {
                let op = ["sum", "prod", "cumsum", "cumprod"][k];
                let want = DType::from_name(want.as_str().unwrap()).unwrap();
                assert_eq!(got.dtype(), want, "{op} of {name} with x64={x64}");
                let as_f64 = oxla::lax::convert_element_type(got, DType::F32)
                    .to_vec::<f32>()
                    .unwrap()
                    .iter()
                    .map(|v| f64::from(*v))
                    .collect::<Vec<f64>>();
                // bool's "sum" of ones is 3 (count), its cumprod stays 1.
                assert_eq!(as_f64, values, "{op} of {name} with x64={x64}");
            }
        }
    }
    oxla::enable_x64(false);
}

fn x64_keeps_64_bit_types_and_is_part_of_the_cache_key() {
    let third = 1.0f64 / 3.0;
    let f = jit(|x: Array| &x * 2.0 + 1);

    oxla::enable_x64(false);
    let narrow = Array::from_slice(&[third], &[1]).unwrap();
    assert_eq!(
        narrow.dtype(),
        DType::F32,
        "f64 data becomes f32 without x64"
    );
    assert_eq!(f.call(narrow).unwrap().dtype(), DType::F32);
    let ints = Array::from_slice(&[1i64 << 40], &[1]).unwrap();
    assert_eq!(ints.dtype(), DType::I32);

    oxla::enable_x64(true);
    let wide = Array::from_slice(&[third], &[1]).unwrap();
    assert_eq!(wide.dtype(), DType::F64);
    assert_eq!(
        wide.to_vec::<f64>().unwrap(),
        vec![third],
        "full precision kept"
    );
    let why = f
        .explain_miss(&Array::from_slice(&[third as f32], &[1]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(why, "config flag x64 changed from false to true");
    let out = f.call(wide).unwrap();
    assert_eq!(out.dtype(), DType::F64);
    assert_eq!(out.to_vec::<f64>().unwrap(), vec![third * 2.0 + 1.0]);
    assert_eq!(Array::weak_scalar(1.5f64).dtype(), DType::F64);
    let count = jnp::sum(
        &Array::from_slice(&[true, true, false], &[3]).unwrap(),
        None,
        false,
    );
    assert_eq!(
        count.dtype(),
        DType::I64,
        "sums of bools are the default int"
    );
    let big = Array::from_slice(&[1i64 << 40], &[1]).unwrap();
    assert_eq!((&big + 1).to_vec::<i64>().unwrap(), vec![(1i64 << 40) + 1]);
    oxla::enable_x64(false);
}

fn collect_diagnostics() -> Arc<Mutex<Vec<String>>> {
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = lines.clone();
    oxla::config::set_diagnostics_sink(Some(Box::new(move |l: &str| {
        sink.lock().unwrap().push(l.to_string())
    })));
    lines
}

fn the_transfer_guard_logs_or_refuses_implicit_transfers() {
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let lines = collect_diagnostics();
    oxla::config::set_transfer_guard(TransferGuard::Log);
    let line = line!() + 1;
    let y = &x * 3.0;
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 6.0]);
    let printed = format!("{y}");
    assert_eq!(printed, "[3. 6.]");
    {
        let lines = lines.lock().unwrap();
        assert!(
            lines.iter().any(
                |l| l.starts_with("oxla: implicit host-to-device transfer of f32[]")
                    && l.contains(&format!("global_switches.rs:{line}:"))
            ),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("implicit device-to-host transfer of f32[2]")),
            "{lines:?}"
        );
    }
    oxla::config::set_transfer_guard(TransferGuard::Disallow);
    let err = (&x * 3.0).check().unwrap_err();
    assert!(
        matches!(
            err,
            Error::TransferGuard {
                direction: "host-to-device",
                ..
            }
        ),
        "{err}"
    );
    assert!(format!("{x}").contains("implicit device-to-host transfer of f32[2] disallowed"));
    // Explicit transfers and scalars inside jit (literals) are fine.
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    let f = jit(|a: Array| &a * 3.0);
    assert_eq!(
        f.call(x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![3.0, 6.0]
    );
    oxla::config::set_transfer_guard(TransferGuard::Allow);
    oxla::config::set_diagnostics_sink(None);
}

fn an_unwritable_compile_cache_gives_one_warning_and_oxla_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a_file");
    std::fs::write(&file, b"").unwrap();
    oxla::set_compile_cache_dir(Some(file.join("cache")));
    let lines = collect_diagnostics();
    let f = jit(|a: Array| jnp::cos(&a) * 7.0);
    let g = jit(|a: Array| jnp::sin(&a) * 5.0);
    let x = Array::from_slice(&[0.0f32], &[1]).unwrap();
    assert_eq!(
        f.call(x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![7.0]
    );
    assert_eq!(
        g.call(x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0]
    );
    f.call(x).unwrap();
    oxla::config::set_diagnostics_sink(None);
    oxla::set_compile_cache_dir(None);
    let lines = lines.lock().unwrap();
    let warnings: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("cannot write the compile cache"))
        .collect();
    assert_eq!(warnings.len(), 1, "{lines:?}");
    assert_eq!(f.cache_size(), 1, "the memory cache keeps working");
}

/// Set in the child processes of
/// [`a_restarted_process_loads_its_jitted_functions_from_disk`].
const WARM_CHILD: &str = "OXLA_TEST_WARM_START_CHILD";

/// The child's work: a jitted MLP step with compiles logged to stdout,
/// then its result. A no-op in the test run itself.
#[test]
fn warm_start_child() {
    if std::env::var_os(WARM_CHILD).is_none() {
        return;
    }
    oxla::config::set_diagnostics_sink(Some(Box::new(|l: &str| println!("log: {l}"))));
    oxla::config::set_log_compiles(true);
    let step = jit(|(w, x): (Array, Array)| {
        let h = oxla_nn::relu(&jnp::matmul(&x, &w));
        jnp::mean(&jnp::square(&h), None, false)
    })
    .named("warm_mlp");
    let w = Array::from_slice(&[0.5f32, -1.0, 2.0, 0.25, 1.5, -0.75], &[3, 2]).unwrap();
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, -1.0, 0.0, 4.0], &[2, 3]).unwrap();
    let loss = step.call((w, x)).unwrap().item::<f32>().unwrap();
    println!("result: {loss}");
}

#[test]
fn a_restarted_process_loads_its_jitted_functions_from_disk() {
    let cache = tempfile::tempdir().unwrap();
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "warm_start_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WARM_CHILD, "1")
            .env("OXLA_CACHE_DIR", cache.path())
            .output_bounded();
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        // libtest may print "test warm_start_child ... " ahead of a line.
        let line = |prefix: &str| {
            stdout
                .lines()
                .find_map(|l| l.find(prefix).map(|at| l[at..].to_string()))
        };
        (
            line("log: oxla: compiled warm_mlp"),
            line("log: oxla: disk cache hit for warm_mlp"),
            line("result: ").unwrap_or_else(|| panic!("no result in {stdout}")),
        )
    };
    let (compiled, hit, cold) = run();
    assert!(
        compiled.is_some() && hit.is_none(),
        "{compiled:?} {hit:?} {cold}"
    );
    let (compiled, hit, warm) = run();
    assert!(compiled.is_none(), "compiled again: {compiled:?}");
    let hit = hit.expect("the second process loads from disk");
    assert!(
        hit.contains(" ms, saved ") && hit.contains("of compilation"),
        "{hit}"
    );
    assert_eq!(cold, warm);
}

/// Set in the child process of [`a_mistyped_setting_is_a_warning_naming_it`].
const TYPO_CHILD: &str = "OXLA_TEST_TYPO_CHILD";

/// The child's work: reads every setting (the transfer guard, x64, the
/// client, a compilation with its logging and disk cache). A no-op in the
/// test run itself.
#[test]
fn typo_child() {
    if std::env::var_os(TYPO_CHILD).is_none() {
        return;
    }
    println!("guard: {:?}", oxla::config::transfer_guard());
    println!("x64: {}", oxla::config::x64_enabled());
    let y = jit(|x: Array| &x + 1.0)
        .call(Array::from_slice(&[1.0f32], &[1]).unwrap())
        .unwrap();
    println!("result: {:?}", y.to_vec::<f32>().unwrap());
    // An eager op reads the eager cache's size.
    let z = jnp::exp(&Array::from_slice(&[0.0f32], &[1]).unwrap());
    println!("eager: {:?}", z.to_vec::<f32>().unwrap());
}

#[test]
fn a_mistyped_setting_is_a_warning_naming_it() {
    let cache = tempfile::tempdir().unwrap();
    let settings = [
        ("OXLA_TRANSFER_GUARD", "dissallow", "allow, log, disallow"),
        ("OXLA_ENABLE_X64", "ture", "1, 0, true, false"),
        ("OXLA_LOG_COMPILES", "yess", "1, 0, true, false"),
        ("OXLA_EXPLAIN_CACHE_MISSES", "2", "1, 0, true, false"),
        ("OXLA_CACHE_MAX_BYTES", "10GB", "a whole number of bytes"),
        ("OXLA_CPU_DEVICE_COUNT", "zero", "a whole number of devices"),
        ("OXLA_PLATFORM", "cpuu", "cpu, cuda, rocm, tpu"),
        (
            "OXLA_EAGER_CACHE_ENTRIES",
            "0",
            "a whole number of programs, at least 1",
        ),
    ];
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "typo_child", "--nocapture", "--test-threads=1"])
        .env(TYPO_CHILD, "1")
        .env("OXLA_CACHE_DIR", cache.path());
    for (name, value, _) in settings {
        child.env(name, value);
    }
    let out = child.output_bounded();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The defaults apply: the guard allows, x64 is off, the program runs.
    assert!(
        stdout.contains("guard: Allow") && stdout.contains("x64: false"),
        "{stdout}"
    );
    assert!(stdout.contains("result: [2.0]"), "{stdout}");
    assert!(stdout.contains("eager: [1.0]"), "{stdout}");
    for (name, value, accepted) in settings {
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(&format!("{name}=\"{value}\"")))
            .collect();
        assert_eq!(warnings.len(), 1, "{name}: {stderr}");
        assert!(
            warnings[0].contains("warning") && warnings[0].contains(accepted),
            "{}",
            warnings[0]
        );
    }
}
