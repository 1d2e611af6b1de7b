//! Control flow inside compiled programs against JAX (reference/control.py),
//! finite differences and closed forms: cond, switch, while_loop,
//! fori_loop, scan and map with jvp, grad and vmap; the memory and jaxpr
//! size of grad of a long scan; and the errors.

use oxla::lax::{self, ScanOptions};
use oxla::{Array, DType, Error, grad, jit, jvp, make_jaxpr, numpy as jnp, value_and_grad, vmap};

use crate::reference::{self, assert_all_close, assert_close};

fn data(name: &str) -> &'static serde_json::Value {
    &reference::script("control.py")[name]
}

fn inputs(name: &str) -> Vec<Array> {
    reference::arrays(&data(name)["inputs"])
}

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
    let (c, ys) = jitted.call(xs).unwrap();
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

/// A failed scan's carry and ys, both carrying its error.
fn both_failed(e: Error) -> (Array, Array) {
    (Array::error(e.clone()), Array::error(e))
}

/// An Elman RNN over `xs[time, batch, in]`: `h' = tanh(x Wx + h Wh + b)`;
/// the mean square of every state plus the sum of the last.
fn rnn_loss(p: &[Array], xs: &Array) -> Array {
    let (wx, wh, b) = (&p[0], &p[1], &p[2]);
    let h0 = jnp::zeros(&[xs.shape()[1], wh.shape()[0]], DType::F32);
    let step = |h: Array, x: Array| {
        let h = jnp::tanh(&(jnp::matmul(&x, wx) + jnp::matmul(&h, wh) + b));
        (h.clone(), h)
    };
    let (h, hs) =
        lax::scan(step, h0, xs.clone(), ScanOptions::default()).unwrap_or_else(both_failed);
    jnp::mean(&jnp::square(&hs), None, false) + jnp::sum(&h, None, false)
}

#[test]
fn scan_rnn_values_and_gradients_match_jax_eagerly_under_jit_and_finite_differences() {
    let a = inputs("rnn");
    let (params, xs) = (a[..3].to_vec(), a[3].clone());
    let want = data("rnn");
    let (v, g) = value_and_grad(|p: Vec<Array>| rnn_loss(&p, &xs))
        .call(params.clone())
        .unwrap();
    assert_close(&v, &want["value"], "rnn value");
    assert_all_close(&g, &want["grads"], "rnn grads");
    let gx = grad(|xs: Array| rnn_loss(&params, &xs))
        .call(xs.clone())
        .unwrap();
    assert_close(&gx, &want["grad_xs"], "rnn grad xs");
    let jitted = jit(|(p, xs): (Vec<Array>, Array)| {
        value_and_grad(|p: Vec<Array>| rnn_loss(&p, &xs)).call(p)
    });
    let (v, g) = jitted.call((params.clone(), xs.clone())).unwrap();
    assert_close(&v, &want["value"], "jit rnn value");
    assert_all_close(&g, &want["grads"], "jit rnn grads");
    reference::assert_central_difference(
        &params,
        &g,
        |p| rnn_loss(p, &xs),
        |i, k| (((k * 5 + i * 3) % 7) as f32 - 3.0) / 3.0,
    );
}

fn fori_static(x: &Array, w: &Array) -> Array {
    let body =
        |i: Array, c: Array| jnp::sin(&(&c * w)) + lax::convert_element_type(&i, DType::F32) * 0.1;
    let c = lax::fori_loop(0, 6, body, x.clone()).unwrap_or_else(Array::error);
    jnp::sum(&c, None, false)
}

fn fori_traced(lo: &Array, hi: &Array, x: Array) -> Array {
    let body =
        |i: Array, c: Array| &c * 0.9 + jnp::sin(&c) * lax::convert_element_type(&i, DType::F32);
    lax::fori_loop_dynamic(lo, hi, body, x).unwrap_or_else(Array::error)
}

#[test]
fn fori_loop_with_static_bounds_differentiates_in_reverse_and_traced_bounds_forward() {
    let a = inputs("fori_static");
    let want = data("fori_static");
    let (v, g) = value_and_grad(|(x, w): (Array, Array)| fori_static(&x, &w))
        .call((a[0].clone(), a[1].clone()))
        .unwrap();
    assert_close(&v, &want["value"], "fori static value");
    assert_all_close(&[g.0, g.1], &want["grads"], "fori static grads");
    // Traced bounds: a while loop inside jit, forward-mode differentiable.
    let a = inputs("fori_traced");
    let want = data("fori_traced");
    let f = jit(|(lo, hi, x, t): (Array, Array, Array, Array)| {
        jvp(|x: Array| fori_traced(&lo, &hi, x), &x, &t)
    });
    let (p, t) = f
        .call((a[0].clone(), a[1].clone(), a[2].clone(), a[3].clone()))
        .unwrap();
    assert_close(&p, &want["value"], "fori traced value");
    assert_close(&t, &want["jvp"], "fori traced jvp");
    let text = f
        .lower(&(a[0].clone(), a[1].clone(), a[2].clone(), a[3].clone()))
        .unwrap();
    assert!(text.contains("stablehlo.while"), "{text}");
}

/// x^3 = a by Newton's method, until the largest relative residual is small.
fn newton_cbrt(a: Array) -> Array {
    let unconverged = |(i, x): &(Array, Array)| {
        let residual = jnp::max(&(jnp::abs(&(x * x * x - &a)) / &a), None, false);
        lax::and(
            &lax::lt(i, &Array::weak_scalar(50i32)),
            &lax::gt(&residual, &Array::weak_scalar(1e-6f32)),
        )
    };
    let step = |(i, x): (Array, Array)| {
        let next = &x - &((&x * &x * &x - &a) / (&x * &x * 3.0));
        (i + 1, next)
    };
    lax::while_loop(unconverged, step, (Array::weak_scalar(0i32), a.clone()))
        .map(|(_, x)| x)
        .unwrap_or_else(Array::error)
}

#[test]
fn while_loop_newton_solver_and_its_jvp_match_jax() {
    let a = inputs("newton");
    let want = data("newton");
    let (x, t) = jvp(newton_cbrt, &a[0], &a[1]).unwrap();
    assert_close(&x, &want["value"], "newton value");
    assert_close(&t, &want["jvp"], "newton jvp");
    // The implicit derivative: d cbrt(a) = da / (3 x^2).
    let closed = &a[1] / &(&x * &x * 3.0);
    assert_close(&t, &reference::encode(&closed), "newton jvp, closed form");
    let (x, t) = jit(|(a, da): (Array, Array)| jvp(newton_cbrt, &a, &da))
        .call((a[0].clone(), a[1].clone()))
        .unwrap();
    assert_close(&x, &want["value"], "jit newton value");
    assert_close(&t, &want["jvp"], "jit newton jvp");
}

fn switched(w: &Array, i: &Array, x: Array) -> Array {
    lax::switch(
        i,
        &[
            &|x: Array| jnp::sin(&x) * w,
            &|x: Array| jnp::square(&x) + w,
            &|x: Array| jnp::tanh(&(&x * w)),
        ],
        x,
    )
    .unwrap_or_else(Array::error)
}

#[test]
fn switch_with_three_branches_under_vmap_with_a_batched_index_and_its_gradient() {
    let a = inputs("switch");
    let (w, idx, xs) = (a[0].clone(), a[1].clone(), a[2].clone());
    let want = data("switch");
    let batched = |w: &Array, idx: Array, xs: Array| {
        vmap(|(i, x): (Array, Array)| switched(w, &i, x))
            .call((idx, xs))
            .unwrap_or_else(Array::error)
    };
    assert_close(
        &batched(&w, idx.clone(), xs.clone()),
        &want["value"],
        "vmap switch",
    );
    // A batched index becomes a select over every branch's result.
    let jaxpr = make_jaxpr(
        |(i, x): (Array, Array)| batched(&w, i, x),
        &(idx.clone(), xs.clone()),
    )
    .unwrap()
    .to_string();
    assert!(
        jaxpr.contains("select_n") && !jaxpr.contains("cond["),
        "{jaxpr}"
    );
    let loss = |(w, xs): (Array, Array)| {
        jnp::sum(&jnp::square(&batched(&w, idx.clone(), xs)), None, false)
    };
    let (gw, gx) = grad(loss).call((w.clone(), xs.clone())).unwrap();
    assert_all_close(&[gw, gx], &want["grads"], "grad of vmap switch");
    let (gw, gx) = jit(|args: (Array, Array)| grad(loss).call(args))
        .call((w, xs))
        .unwrap();
    assert_all_close(&[gw, gx], &want["grads"], "jit grad of vmap switch");
}

fn cond_scan_loss(w: &Array, xs: &Array) -> Array {
    let step = |h: Array, x: Array| {
        let positive = lax::gt(&jnp::sum(&x, None, false), &Array::weak_scalar(0.0f32));
        let h = lax::cond(
            &positive,
            |(h, x): (Array, Array)| jnp::tanh(&(&h * w + &x)),
            |(h, x): (Array, Array)| &h * 0.5 - &x * w,
            (h, x),
        )
        .unwrap_or_else(Array::error);
        (h.clone(), h)
    };
    let h0 = jnp::ones(&[3], DType::F32);
    let (_, hs) =
        lax::scan(step, h0, xs.clone(), ScanOptions::default()).unwrap_or_else(both_failed);
    jnp::sum(&jnp::square(&hs), None, false)
}

#[test]
fn cond_inside_scan_inside_grad_matches_jax() {
    let a = inputs("cond_scan");
    let want = data("cond_scan");
    let loss = |(w, xs): (Array, Array)| cond_scan_loss(&w, &xs);
    let (v, (gw, gx)) = value_and_grad(loss)
        .call((a[0].clone(), a[1].clone()))
        .unwrap();
    assert_close(&v, &want["value"], "cond scan value");
    assert_all_close(&[gw, gx], &want["grads"], "cond scan grads");
    let (gw, gx) = jit(|args: (Array, Array)| grad(loss).call(args))
        .call((a[0].clone(), a[1].clone()))
        .unwrap();
    assert_all_close(&[gw, gx], &want["grads"], "jit cond scan grads");
}

#[test]
fn grad_of_a_long_scan_grows_memory_linearly_and_keeps_the_jaxpr_size() {
    let params = vec![
        jnp::full(&[16, 64], 0.01, DType::F32),
        jnp::full(&[64, 64], 0.02, DType::F32),
        jnp::full(&[64], 0.1, DType::F32),
    ];
    let want = data("long_scan");
    let grad_loss =
        jit(|(p, xs): (Vec<Array>, Array)| grad(|p: Vec<Array>| rnn_loss(&p, &xs)).call(p));
    let mut ours = Vec::new();
    let mut lines = Vec::new();
    for length in [250i64, 500, 1000] {
        let xs = jnp::ones(&[length, 8, 16], DType::F32);
        let args = (params.clone(), xs.clone());
        let temp = grad_loss.memory_stats(&args).unwrap().temp_size_in_bytes;
        let theirs = want["temp_bytes"][length.to_string()].as_i64().unwrap();
        assert!(
            temp <= theirs,
            "length {length}: oxla {temp} B of temporaries, JAX {theirs} B"
        );
        ours.push(temp);
        let jaxpr = make_jaxpr(
            |(p, xs): (Vec<Array>, Array)| grad(|p: Vec<Array>| rnn_loss(&p, &xs)).call(p),
            &args,
        )
        .unwrap();
        let theirs = want["eqns"][length.to_string()].as_u64().unwrap() as usize;
        assert!(
            jaxpr.eqns.len() <= theirs,
            "length {length}: {} equations, JAX {theirs}",
            jaxpr.eqns.len()
        );
        lines.push(jaxpr.to_string().lines().count());
    }
    // Linear: each doubling of the length adds twice the previous step's bytes
    // (the per-iteration residuals), within a small constant.
    let (first, second) = (ours[1] - ours[0], ours[2] - ours[1]);
    assert!(first > 0, "temporaries do not grow with length: {ours:?}");
    assert!(
        (second - 2 * first).abs() <= second / 20,
        "temporaries grow non-linearly: {ours:?}"
    );
    // Per iteration no more than the residuals of one step: a handful of
    // [8, 64] f32 states, not a copy of the whole carry history.
    assert!(
        first / 250 <= 8 * 64 * 4 * 6,
        "{} B per iteration: {ours:?}",
        first / 250
    );
    assert!(
        lines.iter().all(|l| *l == lines[0]),
        "the jaxpr grows with the length: {lines:?} lines"
    );
}

#[test]
fn control_flow_errors_name_the_types_the_branch_the_leaf_and_the_caller() {
    let x = f32s(&[1.0, 2.0, 3.0], &[3]);
    // Branches with different output types.
    let err = lax::cond(
        &Array::scalar(true).unwrap(),
        |x: Array| x,
        |x: Array| lax::convert_element_type(&x, DType::I32),
        x.clone(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cond")
            && err.contains("branch 1")
            && err.contains("i32[3]")
            && err.contains("f32[3]")
            && err.contains("control.rs:"),
        "{err}"
    );
    let err = lax::switch(
        &Array::scalar(0i32).unwrap(),
        &[&|x: Array| x.clone(), &|x: Array| x.clone(), &|x: Array| {
            jnp::sum(&x, None, false)
        }],
        x.clone(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("switch") && err.contains("branch 2") && err.contains("f32[]"),
        "{err}"
    );
    // A carry leaf that changes type names its path and both types.
    let err = lax::scan(
        |(a, b): (Array, Array), x: Array| {
            ((a, lax::convert_element_type(&(&b + &x), DType::F16)), ())
        },
        (x.clone(), Array::scalar(0.0f32).unwrap()),
        x.clone(),
        ScanOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("scan")
            && err.contains("[1]")
            && err.contains("f32[]")
            && err.contains("f16[]")
            && err.contains("control.rs:"),
        "{err}"
    );
    let err = lax::while_loop(
        |_: &Array| Array::scalar(false).unwrap(),
        |c: Array| jnp::reshape(&c, &[3, 1]),
        x.clone(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("while_loop") && err.contains("f32[3]") && err.contains("f32[3,1]"),
        "{err}"
    );
    let err = lax::fori_loop(
        0,
        3,
        |_, c: Array| &c * 2.5f64,
        Array::scalar(1i32).unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("i32[]") && err.contains("f32[]"), "{err}");
    // A traced predicate read as a Rust bool points to cond and where_.
    let f = jit(|x: Array| -> oxla::Result<Array> {
        let positive = lax::gt(&jnp::sum(&x, None, false), &Array::weak_scalar(0.0f32));
        Ok(if positive.item::<bool>()? { x } else { -x })
    });
    let err = f.call(x.clone()).unwrap_err();
    assert!(matches!(err, Error::Concretization { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("lax::cond") && text.contains("jnp::where_") && text.contains("control.rs:"),
        "{text}"
    );
    // A predicate or index of the wrong type.
    let err = lax::cond(&x, |x: Array| x, |x: Array| x, x.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bool scalar") && err.contains("f32[3]"),
        "{err}"
    );
    let err = lax::switch(&Array::scalar(1.5f32).unwrap(), &[&|x: Array| x], x.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("integer scalar") && err.contains("f32[]"),
        "{err}"
    );
}

#[test]
fn loops_of_no_iteration_give_the_initial_carry_and_empty_ys_under_grad_and_vmap() {
    // A scan over zero rows once failed to compile (a one-row slice of a
    // zero-row array); JAX returns the initial carry and empty ys.
    let want = data("zero_length");
    let [c0, empty] = <[Array; 2]>::try_from(inputs("zero_length")).unwrap();
    let add = |c: Array, x: Array| {
        let y = &c * &x;
        (&c + &x, y)
    };
    let (carry, ys) = lax::scan(add, c0.clone(), empty.clone(), ScanOptions::default()).unwrap();
    assert_close(&carry, &want["scan_carry"], "scan carry");
    assert_close(&ys, &want["scan_ys"], "scan ys");
    assert_eq!(ys.shape(), &[0, 3]);
    let empty_scan = |c: Array, xs: Array| {
        let step = |c: Array, x: Array| {
            let y = &c * &x;
            (jnp::sin(&c) * &x + &c, y)
        };
        lax::scan(step, c, xs, ScanOptions::default()).map(|(c, ys)| c.sum() + ys.sum())
    };
    let g = grad(|c: Array| empty_scan(c, empty.clone()))
        .call(c0.clone())
        .unwrap();
    assert_close(&g, &want["scan_grad"], "grad of an empty scan");
    let pair = jnp::stack(&[&c0, &(&c0 * 2.0)], 0);
    let v = vmap(|c: Array| empty_scan(c, empty.clone()))
        .call(pair.clone())
        .unwrap();
    assert_close(&v, &want["scan_vmap"], "vmap of an empty scan");
    let jitted = jit(|(c, xs): (Array, Array)| empty_scan(c, xs));
    let under_jit = jitted
        .call((c0.clone(), empty.clone()))
        .unwrap()
        .item::<f32>()
        .unwrap();
    let eager = empty_scan(c0.clone(), empty.clone())
        .unwrap()
        .item::<f32>()
        .unwrap();
    assert_eq!(under_jit, eager, "jit of an empty scan");
    let mapped = lax::map(|x: Array| &x * 2.0, empty.clone()).unwrap();
    assert_close(&mapped, &want["map"], "map over zero rows");
    let empty_fori = |lo: i64, hi: i64| {
        move |c: Array| lax::fori_loop(lo, hi, |_, c: Array| jnp::sin(&c) * 2.0, c).map(|c| c.sum())
    };
    let g = grad(empty_fori(5, 5)).call(c0.clone()).unwrap();
    assert_close(&g, &want["fori_5_5_grad"], "grad of fori_loop(5, 5)");
    let g = grad(empty_fori(7, 3)).call(c0.clone()).unwrap();
    assert_close(&g, &want["fori_7_3_grad"], "grad of fori_loop(7, 3)");
    let v = vmap(empty_fori(7, 3)).call(pair).unwrap();
    assert_close(&v, &want["fori_7_3_vmap"], "vmap of fori_loop(7, 3)");
}
