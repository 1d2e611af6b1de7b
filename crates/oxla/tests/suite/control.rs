//! Control flow inside compiled programs against JAX (reference/control.py)
//! and closed forms: cond, switch, while_loop, fori_loop, scan, map with
//! jvp, grad and vmap.

use oxla::lax::{self, ScanOptions};
use oxla::{Array, DType, grad, jit, jvp, numpy as jnp, vmap};

fn f32s(v: &[f32], shape: &[i64]) -> Array {
    Array::from_slice(v, shape).unwrap()
}

fn close(got: &Array, want: &[f32], what: &str) {
    let g = got
        .to_vec::<f32>()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(g.len(), want.len(), "{what}: length");
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 + 1e-5 * b.abs(),
            "{what}[{i}]: {a} vs {b}"
        );
    }
}

#[test]
fn cond_switch_while_fori_scan_and_map_compute_eagerly_and_under_jit() {
    let x = f32s(&[1.0, -2.0, 3.0], &[3]);
    let pos = |x: Array| &x * 2.0;
    let neg = |x: Array| -&x;
    let y = lax::cond(&Array::scalar(true).unwrap(), pos, neg, x.clone()).unwrap();
    close(&y, &[2.0, -4.0, 6.0], "cond true");
    let y = lax::cond(&Array::scalar(false).unwrap(), pos, neg, x.clone()).unwrap();
    close(&y, &[-1.0, 2.0, -3.0], "cond false");
    let sq = |x: Array| &x * &x;
    for (i, want) in [
        (-5, [2.0, -4.0, 6.0]),
        (1, [-1.0, 2.0, -3.0]),
        (9, [1.0, 4.0, 9.0]),
    ] {
        let y = lax::switch(&Array::scalar(i).unwrap(), &[&pos, &neg, &sq], x.clone()).unwrap();
        close(&y, &want, &format!("switch {i}"));
    }
    // while: double until above 100.
    let w = lax::while_loop(
        |v: &Array| lax::lt(&jnp::sum(v, None, false), &Array::weak_scalar(100.0f32)),
        |v: Array| &v * 2.0,
        f32s(&[1.0, 2.0], &[2]),
    )
    .unwrap();
    close(&w, &[64.0, 128.0], "while");
    // fori: sum of i for i in 2..7, static and dynamic bounds.
    let body = |i: Array, acc: Array| &acc + &lax::convert_element_type(&i, DType::F32);
    let s = lax::fori_loop(2, 7, body, Array::scalar(0.0f32).unwrap()).unwrap();
    close(&s, &[20.0], "fori static");
    let s = lax::fori_loop_dynamic(
        &Array::scalar(2i32).unwrap(),
        &Array::scalar(7i32).unwrap(),
        body,
        Array::scalar(0.0f32).unwrap(),
    )
    .unwrap();
    close(&s, &[20.0], "fori dynamic");
    // scan: running sum, forward and reverse.
    let xs = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let step = |c: Array, x: Array| {
        let c2 = &c + &x;
        (c2.clone(), c2)
    };
    let (c, ys) = lax::scan(
        step,
        Array::scalar(0.0f32).unwrap(),
        xs.clone(),
        ScanOptions::default(),
    )
    .unwrap();
    close(&c, &[10.0], "scan carry");
    close(&ys, &[1.0, 3.0, 6.0, 10.0], "scan ys");
    let (_, ys) = lax::scan(
        step,
        Array::scalar(0.0f32).unwrap(),
        xs.clone(),
        ScanOptions {
            reverse: true,
            unroll: 2,
            ..ScanOptions::default()
        },
    )
    .unwrap();
    close(&ys, &[10.0, 9.0, 7.0, 4.0], "scan reverse");
    let m = lax::map(|x: Array| &x * &x, xs.clone()).unwrap();
    close(&m, &[1.0, 4.0, 9.0, 16.0], "map");
    // The same under jit.
    let jitted = jit(|xs: Array| {
        lax::scan(
            step,
            Array::scalar(0.0f32).unwrap(),
            xs,
            ScanOptions::default(),
        )
    });
    let (c, ys) = jitted.call(xs).unwrap().unwrap();
    close(&c, &[10.0], "jit scan carry");
    close(&ys, &[1.0, 3.0, 6.0, 10.0], "jit scan ys");
}

#[test]
fn derivatives_through_control_flow() {
    // d/dx of a cond: x^2 for x > 0 else sin x.
    let f = |x: Array| {
        let p = lax::gt(&x, &Array::weak_scalar(0.0f32));
        lax::cond(&p, |x: Array| &x * &x, |x: Array| jnp::sin(&x), x).unwrap_or_else(Array::error)
    };
    let g = grad(f).call(Array::scalar(3.0f32).unwrap()).unwrap();
    close(&g, &[6.0], "grad cond +");
    let g = grad(f).call(Array::scalar(-1.0f32).unwrap()).unwrap();
    close(&g, &[(-1.0f32).cos()], "grad cond -");
    let g = jit(|x: Array| grad(f).call(x))
        .call(Array::scalar(-1.0f32).unwrap())
        .unwrap()
        .unwrap();
    close(&g, &[(-1.0f32).cos()], "jit grad cond");
    // scan: prod of w * x_t over time, d/dw.
    let xs = f32s(&[1.0, 2.0, 3.0], &[3]);
    let h = |w: Array| {
        let (c, _) = lax::scan(
            |c: Array, x: Array| {
                let c2 = &c * &(&w * &x);
                (c2, ())
            },
            Array::scalar(1.0f32).unwrap(),
            xs.clone(),
            ScanOptions::default(),
        )
        .unwrap_or_else(|e| (Array::error(e), ()));
        c
    };
    // h(w) = 6 w^3 → h'(2) = 72
    let g = grad(h).call(Array::scalar(2.0f32).unwrap()).unwrap();
    close(&g, &[72.0], "grad scan");
    let (_, t) = jvp(
        h,
        &Array::scalar(2.0f32).unwrap(),
        &Array::scalar(1.0f32).unwrap(),
    )
    .unwrap();
    close(&t, &[72.0], "jvp scan");
    let g = jit(|w: Array| grad(h).call(w))
        .call(Array::scalar(2.0f32).unwrap())
        .unwrap()
        .unwrap();
    close(&g, &[72.0], "jit grad scan");
    // while: forward mode works, reverse mode is a clear error.
    let wl = |x: Array| {
        lax::while_loop(
            |(i, _): &(Array, Array)| lax::lt(i, &Array::weak_scalar(3i32)),
            |(i, v): (Array, Array)| (lax::add(&i, &Array::weak_scalar(1i32)), &v * &v),
            (Array::scalar(0i32).unwrap(), x),
        )
        .map(|(_, v)| v)
        .unwrap_or_else(Array::error)
    };
    // x^8 → 8 x^7 at 1.5
    let (_, t) = jvp(
        wl,
        &Array::scalar(1.5f32).unwrap(),
        &Array::scalar(1.0f32).unwrap(),
    )
    .unwrap();
    close(&t, &[8.0 * 1.5f32.powi(7)], "jvp while");
    let err = grad(wl)
        .call(Array::scalar(1.5f32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("while_loop") && err.contains("scan"), "{err}");
}

#[test]
fn batching_control_flow() {
    // vmap of cond with a batched predicate, of switch with a batched index.
    let xs = f32s(&[-1.0, 2.0, -3.0], &[3]);
    let f = |x: Array| {
        let p = lax::gt(&x, &Array::weak_scalar(0.0f32));
        lax::cond(&p, |x: Array| &x * 10.0, |x: Array| -&x, x).unwrap_or_else(Array::error)
    };
    close(
        &vmap(f).call(xs.clone()).unwrap(),
        &[1.0, 20.0, 3.0],
        "vmap cond",
    );
    let idx = Array::from_slice(&[0i32, 2, 1], &[3]).unwrap();
    let sw = |(i, x): (Array, Array)| {
        lax::switch(
            &i,
            &[&|x: Array| &x + 1.0, &|x: Array| &x * 2.0, &|x: Array| -&x],
            x,
        )
        .unwrap_or_else(Array::error)
    };
    close(
        &vmap(sw).call((idx, xs.clone())).unwrap(),
        &[0.0, -2.0, -6.0],
        "vmap switch",
    );
    // vmap of a while loop with a batched trip count.
    let counts = Array::from_slice(&[1i32, 3, 2], &[3]).unwrap();
    let wl = |(n, x): (Array, Array)| {
        lax::while_loop(
            |(i, n, _): &(Array, Array, Array)| lax::lt(i, n),
            |(i, n, v): (Array, Array, Array)| {
                (lax::add(&i, &Array::weak_scalar(1i32)), n, &v * 2.0)
            },
            (Array::scalar(0i32).unwrap(), n, x),
        )
        .map(|(_, _, v)| v)
        .unwrap_or_else(Array::error)
    };
    close(
        &vmap(wl).call((counts, xs.clone())).unwrap(),
        &[-2.0, 16.0, -12.0],
        "vmap while",
    );
    // vmap of scan (batched xs, unbatched init).
    let rows = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let cumsum = |r: Array| {
        lax::scan(
            |c: Array, x: Array| {
                let c2 = &c + &x;
                (c2.clone(), c2)
            },
            Array::scalar(0.0f32).unwrap(),
            r,
            ScanOptions::default(),
        )
        .map(|(_, ys)| ys)
        .unwrap_or_else(Array::error)
    };
    close(
        &vmap(cumsum).call(rows).unwrap(),
        &[1.0, 3.0, 6.0, 4.0, 9.0, 15.0],
        "vmap scan",
    );
}
