//! A program that ends while its computations still run exits cleanly.
//! Execution is asynchronous: a result whose shape alone is read may still
//! be computing when `main` returns, and `exit()` would then run the
//! plugin's C++ static destructors under its worker threads (a SIGSEGV
//! without a word, seen with a `Conv2d` doc example on a warm compile
//! cache). The end of the thread that started the work, and `exit()`, wait
//! for it first (oxla-pjrt's `in_flight`).
//!
//! Each case runs a child process (this binary, one ignored test) several
//! times on one compile cache, warm after the first run, and wants exit
//! status 0 every time.

use std::process::Command;

use oxla::random::Key;
use oxla::{Array, DType, jit, numpy as jnp};
use oxla_nn::Conv2d;
use oxla_testing::BoundedOutput;

/// Set in the children: without it their tests do nothing (they would end
/// the whole test binary under `--include-ignored`).
const CHILD: &str = "OXLA_EXIT_TEST_CHILD";

/// Runs the ignored test `child` in a child process `runs` times on one
/// fresh compile cache; panics naming the run, its status and its output
/// unless each exits with status 0.
fn run_child_repeatedly(child: &str, runs: usize) {
    let cache = tempfile::tempdir().unwrap();
    for run in 1..=runs {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([child, "--exact", "--ignored", "--test-threads=1"])
            .env(CHILD, "1")
            .env("OXLA_CACHE_DIR", cache.path())
            .output_bounded();
        assert!(
            out.status.success(),
            "run {run} of {runs} of {child} ended with {} (a signal: the plugin torn down \
             under running work)\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Starts work that takes a while (a convolution of a large batch and a
/// jitted chain of large matmuls) and reads nothing but shapes.
fn start_slow_work() {
    let conv = Conv2d::new(Key::new(0), 3, 16, [3, 3]);
    let images = jnp::ones(&[16, 128, 128, 3], DType::F32);
    assert_eq!(conv.apply(&images).shape(), &[16, 128, 128, 16]);
    let chain = jit(|a: Array| {
        let mut b = a.clone();
        for _ in 0..6 {
            b = jnp::matmul(&a, &b) * (1.0 / 1024.0);
        }
        b
    });
    let a = jnp::ones(&[1024, 1024], DType::F32);
    assert_eq!(chain.call(a).unwrap().shape(), &[1024, 1024]);
}

#[test]
fn a_test_thread_that_ends_with_work_in_flight_exits_cleanly() {
    run_child_repeatedly("exit::child_returns_with_work_in_flight", 8);
}

#[test]
fn exit_with_work_in_flight_exits_cleanly() {
    run_child_repeatedly("exit::child_exits_with_work_in_flight", 8);
}

/// Returns with the work running; the harness's `main` then returns.
#[test]
#[ignore = "run by a_test_thread_that_ends_with_work_in_flight_exits_cleanly"]
fn child_returns_with_work_in_flight() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    start_slow_work();
}

/// Calls `exit` with the work running, from the thread that started it, as
/// a `main` that returns does.
#[test]
#[ignore = "run by exit_with_work_in_flight_exits_cleanly"]
fn child_exits_with_work_in_flight() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    start_slow_work();
    std::process::exit(0);
}
