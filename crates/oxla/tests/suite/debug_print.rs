//! `debug::print` under jit, vmap, grad, cond, while and scan, and eagerly:
//! the lines printed (by a child process, whose standard output is the
//! real one) are the lines `jax.debug.print` prints for the same programs
//! (reference/debug_prints.py), in the same order.

use std::path::Path;

use oxla::lax::{self, ScanOptions};
use oxla::{Array, debug, grad, jit, numpy as jnp, vmap};
use oxla_testing::BoundedOutput;

/// The lines between `BEGIN` and `END`.
fn printed(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        // libtest writes the test's name before the child's first line.
        .skip_while(|l| !l.ends_with("BEGIN"))
        .skip(1)
        .take_while(|l| *l != "END")
        .map(str::to_string)
        .collect()
}

#[test]
fn debug_print_prints_what_jax_prints() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "debug_print::child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output_bounded();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/debug_prints.py");
    let want = printed(&oxla_testing::run_python(&script, &[]));
    assert!(want.len() > 10, "{want:?}");
    assert_eq!(printed(&out.stdout), want);
}

/// The child's programs (run by the test above, with real stdout).
#[test]
#[ignore = "run by debug_print_prints_what_jax_prints"]
fn child() {
    use std::io::Write;
    let say = |s: &str| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{s}").unwrap();
        out.flush().unwrap();
    };
    say("BEGIN");
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();

    jit(|x: Array| {
        let twice = &x * 2.0;
        debug::print("jit: x = {} and 2x = {}", &[&x, &twice]).unwrap();
        twice
    })
    .call(x.clone())
    .unwrap()
    .block_until_ready()
    .unwrap();

    let rows = vmap(|r: Array| {
        debug::print("vmap: row {}", &[&r]).unwrap();
        jnp::sum(&r, None, false)
    });
    jit(move |m: Array| rows.call(m).unwrap())
        .call(m.clone())
        .unwrap()
        .block_until_ready()
        .unwrap();

    let g = grad(|x: Array| {
        debug::print("grad: forward {}", &[&x]).unwrap();
        jnp::sum(&(&x * &x), None, false)
    });
    jit(move |x: Array| g.call(x).unwrap())
        .call(x.clone())
        .unwrap()
        .block_until_ready()
        .unwrap();

    let branches = jit(|(p, x): (Array, Array)| {
        lax::cond(
            &p,
            |x: Array| {
                debug::print("cond: true {}", &[&x]).unwrap();
                x + 1.0
            },
            |x: Array| {
                debug::print("cond: false {}", &[&x]).unwrap();
                x - 1.0
            },
            x,
        )
        .unwrap()
    });
    for p in [true, false] {
        let p = Array::from_slice(&[p], &[]).unwrap();
        branches
            .call((p, x.clone()))
            .unwrap()
            .block_until_ready()
            .unwrap();
    }

    jit(|c: Array| {
        lax::fori_loop(
            0,
            3,
            |i: Array, c: Array| {
                debug::print("while: i = {} c = {}", &[&i, &c]).unwrap();
                c + 1.0
            },
            c,
        )
        .unwrap()
    })
    .call(Array::scalar(7.0f32).unwrap())
    .unwrap()
    .block_until_ready()
    .unwrap();

    let (total, _) = jit(|xs: Array| {
        lax::scan(
            |c: Array, v: Array| {
                debug::print("scan: c = {} v = {}", &[&c, &v]).unwrap();
                (&c + &v, c)
            },
            Array::scalar(0.0f32).unwrap(),
            xs,
            ScanOptions::default(),
        )
        .unwrap()
    })
    .call(x.clone())
    .unwrap();
    total.block_until_ready().unwrap();

    // Effects before, inside (a loop, a branch in it) and after keep
    // their program order.
    jit(|c: Array| {
        debug::print("order: before {}", &[&c]).unwrap();
        let c = lax::fori_loop(
            0,
            3,
            |i: Array, c: Array| {
                debug::print("order: step {}", &[&i]).unwrap();
                let early = jnp::less(&i, &Array::scalar(1i32).unwrap());
                lax::cond(
                    &early,
                    |c: Array| {
                        debug::print("order: first step {}", &[&c]).unwrap();
                        c + 1.0
                    },
                    |c: Array| c - 1.0,
                    c,
                )
                .unwrap()
            },
            c,
        )
        .unwrap();
        debug::print("order: after {}", &[&c]).unwrap();
        c
    })
    .call(Array::scalar(7.0f32).unwrap())
    .unwrap()
    .block_until_ready()
    .unwrap();

    let three = Array::from_slice(&[3i32], &[]).unwrap();
    debug::print("eager: {} {{braces}} {}", &[&three, &m]).unwrap();
    say("END");
}
