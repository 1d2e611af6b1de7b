//! Test support shared by oxla's crates: the Python with JAX that ci/setup
//! installs (reference values are computed by it when tests run), and
//! comparison of oxla's arrays with JAX's within each dtype's tolerance.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub mod compare;
pub mod etcd;
pub mod fuzz;

pub use compare::{Tolerance, assert_matches_jax, compare, contraction_tolerance};
pub use fuzz::{FuzzBudget, fuzz};

/// Points this test process (and the processes it starts) at a compile
/// cache of its own, `<root>/compile-cache/<binary>`, so that tests never
/// write into the user's `~/.cache/oxla/compile`. The root is
/// [`TEST_CACHE_ROOT`] when set (CI keeps the tests' executables between
/// runs of fresh clones there, as a JAX user keeps a persistent cache),
/// else `target_tmpdir`; an `OXLA_CACHE_DIR` the user set is kept. Call it
/// from a `#[ctor::ctor(unsafe)]` function of the test binary (before any
/// thread starts), with `env!("CARGO_TARGET_TMPDIR")`.
///
/// # Safety
/// Changes the process environment: only while no other thread runs.
pub unsafe fn isolate_compile_cache(target_tmpdir: &str, binary: &str) {
    if std::env::var_os("OXLA_CACHE_DIR").is_some() {
        return;
    }
    let dir = test_cache_root(target_tmpdir)
        .join("compile-cache")
        .join(binary);
    // SAFETY: the caller runs this before any other thread exists.
    unsafe { std::env::set_var("OXLA_CACHE_DIR", dir) };
}

/// The variable naming where test binaries keep their compile caches
/// instead of the target directory (`.ci/run` sets it, outside the clone).
pub const TEST_CACHE_ROOT: &str = "OXLA_TEST_CACHE_ROOT";

/// Where test binaries keep their compile caches: [`TEST_CACHE_ROOT`] when
/// set, else `target_tmpdir`.
pub fn test_cache_root(target_tmpdir: &str) -> PathBuf {
    std::env::var_os(TEST_CACHE_ROOT)
        .filter(|root| !root.is_empty())
        .map_or_else(|| PathBuf::from(target_tmpdir), PathBuf::from)
}

/// Aborts this test process, naming it, if it still runs after
/// `OXLA_TEST_BINARY_TIMEOUT_S` seconds (default 1800): a test waiting on a
/// plugin or a child that never answers then ends as a crash CI names,
/// instead of a hang.
pub fn start_watchdog(binary: &str) {
    let seconds = std::env::var("OXLA_TEST_BINARY_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1800);
    let binary = binary.to_string();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(seconds));
        eprintln!("oxla-testing: test binary {binary} still running after {seconds} s; aborting");
        std::process::abort();
    });
}

/// What every test binary does before `main`: its own compile cache
/// ([`isolate_compile_cache`]) and a [`start_watchdog`].
///
/// # Safety
/// As [`isolate_compile_cache`]: only while no other thread runs.
pub unsafe fn prepare_test_binary(target_tmpdir: &str, binary: &str) {
    // SAFETY: passed on from the caller.
    unsafe { isolate_compile_cache(target_tmpdir, binary) };
    start_watchdog(binary);
}

/// Runs this test binary's oxla runtime on the pinned xla-cpu-pjrt plugin
/// (unless `OXLA_PJRT_PLUGIN` already names one, or `OXLA_PLATFORM` asks
/// for another platform than the CPU), for tests that compare
/// single ops with the reference JAX (jaxlib 0.10.2) within one ulp: its
/// XLA rounds as jaxlib 0.10.2's does, while the default CPU plugin
/// (lammps-jax-pjrt-cpu 0.11.2, jaxlib 0.11.2's XLA) differs by 2 ulps on
/// `atan` and 32 on f64 `atanh`, and drifts 4.5e-5 in a 100-step MLP run.
///
/// # Safety
/// Sets an environment variable: only while no other thread runs (a
/// constructor before `main`).
pub unsafe fn use_reference_plugin() {
    if std::env::var_os("OXLA_PJRT_PLUGIN").is_some() || platform() != oxla_pjrt::Platform::Cpu {
        return;
    }
    let plugin =
        oxla_pjrt::plugin_dir().join("xla-cpu-pjrt-0.0.1/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
    // SAFETY: passed on from the caller.
    unsafe { std::env::set_var("OXLA_PJRT_PLUGIN", plugin) };
}

/// The platform the tests run oxla on: `OXLA_PLATFORM` (as oxla's default
/// client reads it), the CPU when unset or unknown. The reference JAX runs
/// on the same platform ([`run_python`] sets `JAX_PLATFORMS`).
pub fn platform() -> oxla_pjrt::Platform {
    std::env::var("OXLA_PLATFORM")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(oxla_pjrt::Platform::Cpu)
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

/// How long a process a test starts may run: `OXLA_TEST_PROCESS_TIMEOUT_S`
/// seconds, else 600 (a hung child fails the test instead of hanging CI).
pub fn process_timeout() -> Duration {
    let seconds = std::env::var("OXLA_TEST_PROCESS_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(seconds)
}

/// Runs `command` to completion as `Command::output` does, but for at most
/// `limit`: a process still running then is killed and the test panics,
/// naming it and the limit.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} ran longer than {limit:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

/// `Command::output` bounded by [`process_timeout`], for tests.
pub trait BoundedOutput {
    /// Runs the command to completion within [`process_timeout`] (see
    /// [`output_within`]).
    fn output_bounded(&mut self) -> Output;
}

impl BoundedOutput for Command {
    fn output_bounded(&mut self) -> Output {
        output_within(self, process_timeout())
    }
}

/// Runs `f` on a thread of its own and returns its result, or panics naming
/// `what` if it takes longer than `limit` (fuzz inputs must neither panic
/// nor hang).
pub fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    match receive.recv_timeout(limit) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} took longer than {limit:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Runs `script` with `args` in the reference Python (for at most
/// [`process_timeout`]), its JAX on oxla's [`platform`]; panics with its
/// stderr if it fails, returns its stdout.
pub fn run_python(script: &Path, args: &[&Path]) -> Vec<u8> {
    let mut command = Command::new(python());
    command
        .arg(script)
        .args(args)
        .env("JAX_PLATFORMS", platform().jax_platforms());
    keep_jax_compiles(&mut command);
    let out = output_within(&mut command, process_timeout());
    assert!(
        out.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Where [`TEST_CACHE_ROOT`] is set (CI), the reference JAX keeps its
/// compiled programs there too (JAX's persistent compilation cache, every
/// program however small), so a later run's references skip XLA's
/// compiles as oxla's tests do; a `JAX_COMPILATION_CACHE_DIR` already set
/// is kept.
fn keep_jax_compiles(command: &mut Command) {
    let Some(root) = std::env::var_os(TEST_CACHE_ROOT).filter(|r| !r.is_empty()) else {
        return;
    };
    if std::env::var_os("JAX_COMPILATION_CACHE_DIR").is_some() {
        return;
    }
    command
        .env(
            "JAX_COMPILATION_CACHE_DIR",
            Path::new(&root).join("jax-compile-cache"),
        )
        .env("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
        .env("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0");
}

/// The lines of a command's stderr without the plugins' own C++ log lines
/// (absl's `I0000 …`, `W0000 …`, `E0000 …` and its preamble).
pub fn stderr_lines(o: &Output) -> Vec<String> {
    let is_plugin_log = |line: &str| {
        let mut chars = line.chars();
        matches!(chars.next(), Some('I' | 'W' | 'E' | 'F'))
            && chars.take(4).all(|c| c.is_ascii_digit())
            || line.starts_with("WARNING: All log messages")
    };
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| !is_plugin_log(l))
        .map(str::to_string)
        .collect()
}

/// Asserts a clean failure of a command: status 1 (not a signal), and one
/// stderr line (besides plugin log lines) that starts with `error: ` and
/// contains `needle`; returns that line.
pub fn assert_fails_with(o: &Output, needle: &str) -> String {
    assert_eq!(
        o.status.code(),
        Some(1),
        "status {:?}, stderr {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let lines = stderr_lines(o);
    assert_eq!(lines.len(), 1, "expected one line, got {lines:?}");
    assert!(lines[0].starts_with("error: "), "{lines:?}");
    assert!(
        lines[0].contains(needle),
        "{:?} does not contain {needle:?}",
        lines[0]
    );
    lines[0].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_past_its_limit_is_killed_and_named() {
        let started = Instant::now();
        let failure = std::panic::catch_unwind(|| {
            output_within(Command::new("sleep").arg("30"), Duration::from_millis(300))
        })
        .unwrap_err();
        let message = failure
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            message.contains("sleep") && message.contains("killed"),
            "{message}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_process_within_its_limit_gives_its_output() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn work_past_its_limit_is_a_named_panic() {
        let failure = std::panic::catch_unwind(|| {
            within(Duration::from_millis(100), "sleeping", || {
                std::thread::sleep(Duration::from_secs(5))
            })
        })
        .unwrap_err();
        let message = failure
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("sleeping took longer"), "{message}");
        assert_eq!(within(Duration::from_secs(5), "adding", || 2 + 2), 4);
    }
}
