//! Test support shared by oxla's crates: the Python with JAX that ci/setup
//! installs (reference values are computed by it when tests run), and
//! comparison of oxla's arrays with JAX's within each dtype's tolerance.

use std::path::{Path, PathBuf};
use std::process::Command;

use oxla_npy::HostArray;
use oxla_pjrt::ElementType;

/// Points this test process (and the processes it starts) at a compile
/// cache of its own, `<target_tmpdir>/compile-cache/<binary>`, so that tests
/// never write into the user's `~/.cache/oxla/compile`; an `OXLA_CACHE_DIR`
/// the user set is kept. Call it from a `#[ctor::ctor(unsafe)]` function of
/// the test binary (before any thread starts), with
/// `env!("CARGO_TARGET_TMPDIR")`.
///
/// # Safety
/// Changes the process environment: only while no other thread runs.
pub unsafe fn isolate_compile_cache(target_tmpdir: &str, binary: &str) {
    if std::env::var_os("OXLA_CACHE_DIR").is_some() {
        return;
    }
    let dir = Path::new(target_tmpdir).join("compile-cache").join(binary);
    // SAFETY: the caller runs this before any other thread exists.
    unsafe { std::env::set_var("OXLA_CACHE_DIR", dir) };
}

/// The Python of oxla's venv (made by ci/setup), or `OXLA_PYTHON`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("OXLA_PYTHON") {
        return PathBuf::from(p);
    }
    let p = oxla_pjrt::oxla_home().join("venv/bin/python");
    assert!(
        p.is_file(),
        "{} is missing: run `bash ci/setup` first",
        p.display()
    );
    p
}

/// Runs `script` with `args` in the reference Python; panics with its stderr
/// if it fails, returns its stdout.
pub fn run_python(script: &Path, args: &[&Path]) -> Vec<u8> {
    let out = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// (relative, absolute) tolerance oxla's results must meet against JAX's.
/// For 16-bit floats the absolute part is scaled by the largest magnitude
/// of the expected array (see [`assert_close`]).
pub fn tolerance(element_type: ElementType) -> (f64, f64) {
    match element_type {
        ElementType::F16 | ElementType::Bf16 => (1e-2, 1.0 / 32.0),
        ElementType::F32 | ElementType::C64 => (1e-5, 1e-6),
        ElementType::F64 | ElementType::C128 => (1e-12, 1e-14),
        ElementType::Pred
        | ElementType::S8
        | ElementType::S16
        | ElementType::S32
        | ElementType::S64
        | ElementType::U8
        | ElementType::U16
        | ElementType::U32
        | ElementType::U64 => (0.0, 0.0),
    }
}

/// Asserts that `got` (oxla's) matches `want` (JAX's): same dtype and shape,
/// and every element within the dtype's tolerance (integers exactly).
///
/// 16-bit floats keep 8 (bf16) or 11 (f16) significant bits, and XLA builds
/// differ in where a chain of them is rounded, so their absolute tolerance
/// is 1/32 of the array's largest expected magnitude.
pub fn assert_close(got: &HostArray, want: &HostArray, what: &str) {
    assert_eq!(got.element_type(), want.element_type(), "{what}: dtype");
    assert_eq!(got.dims, want.dims, "{what}: shape");
    let (rtol, mut atol) = tolerance(got.element_type());
    if matches!(got.element_type(), ElementType::F16 | ElementType::Bf16) {
        atol *= want.to_f64_vec().iter().fold(1.0f64, |m, v| m.max(v.abs()));
    }
    for (i, (g, w)) in got.to_f64_vec().iter().zip(want.to_f64_vec()).enumerate() {
        let close = *g == w || (g - w).abs() <= atol + rtol * w.abs() || (g.is_nan() && w.is_nan());
        assert!(close, "{what}: element {i}: oxla {g}, jax {w}");
    }
}
