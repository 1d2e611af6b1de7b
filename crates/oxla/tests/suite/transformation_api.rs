//! vjp with auxiliary outputs, linear_transpose and eval_shape, against
//! JAX's `vjp(..., has_aux=True)`, `linear_transpose` and `eval_shape`
//! (reference/transformation_api.py).

use oxla::{Array, DType, eval_shape, jacobian, jit, linear_transpose, numpy as jnp, vjp_with_aux};
use oxla_testing::Tolerance;
use serde_json::Value;

use crate::reference;

fn data() -> &'static Value {
    reference::script("transformation_api.py")
}

fn close(got: &Array, want: &Value, what: &str) {
    oxla_testing::assert_matches_jax(
        &got.to_host().unwrap(),
        &reference::host(want),
        Tolerance::chain(8.0, 4.0, "a few ops, fused or not"),
        what,
    );
}

#[test]
fn vjp_with_aux_matches_jax_and_leaves_the_aux_undifferentiated() {
    let d = &data()["vjp_aux"];
    let x = reference::array(&d["x"]);
    let f = |x: Array| {
        let out = jnp::sin(&x) * &x;
        let norm = jnp::sum(&(&x * &x), None, false);
        (out, (norm, x.index(&oxla::s![0])))
    };
    let (out, pullback, (norm, first)) = vjp_with_aux(f, &x).unwrap();
    close(&out, &d["out"], "vjp_with_aux output");
    close(&norm, &d["norm"], "aux norm");
    close(&first, &d["first"], "aux first");
    let x_ct = pullback.call(&reference::array(&d["ct"])).unwrap();
    close(&x_ct, &d["x_ct"], "vjp_with_aux cotangent");
    // Under jit too, and a cotangent of the aux's type is refused.
    let jitted = jit(|(x, ct): (Array, Array)| {
        let (_, pullback, _) = vjp_with_aux(f, &x)?;
        pullback.call(&ct)
    });
    let x_ct = jitted
        .call((x.clone(), reference::array(&d["ct"])))
        .unwrap();
    close(&x_ct, &d["x_ct"], "vjp_with_aux under jit");
    let err = pullback.call(&jnp::ones(&[], DType::F32)).unwrap_err();
    assert!(err.to_string().contains("vjp"), "{err}");
}

#[test]
fn linear_transpose_matches_jax_over_pytrees_and_refuses_nonlinear_functions() {
    let d = &data()["transpose"];
    let a = reference::array(&d["a"]);
    let (x, y) = (reference::array(&d["x"]), reference::array(&d["y"]));
    let linear = |(x, y): (Array, Array)| {
        (
            jnp::matmul(&a, &x) + &y * 2.0,
            jnp::sum(&x, None, false) - y.index(&oxla::s![1]),
        )
    };
    let transposed = linear_transpose(linear, &(x.clone(), y.clone())).unwrap();
    let cts = (reference::array(&d["c_vec"]), reference::array(&d["c_sum"]));
    let (x_ct, y_ct) = transposed.call(&cts).unwrap();
    close(&x_ct, &d["x_ct"], "transpose, x");
    close(&y_ct, &d["y_ct"], "transpose, y");
    // A function that is not linear in its input is an error naming the op.
    let err = linear_transpose(|x: Array| jnp::sin(&x), &x)
        .and_then(|t| t.call(&x))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sin"), "{err}");
    let ints = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let err = linear_transpose(|x: Array| x, &ints)
        .err()
        .expect("integer input")
        .to_string();
    assert!(err.contains("linear_transpose: input 0 is i32[2]"), "{err}");
}

#[test]
fn eval_shape_gives_jaxs_types_without_running_anything() {
    let want = data()["eval_shape"].as_array().unwrap();
    let x = jnp::zeros(&[4, 3], DType::F32);
    let n = Array::weak_scalar(3i32);
    // The leaves in the order of JAX's dict (its keys sorted).
    let types = eval_shape(
        |(x, n): (Array, Array)| {
            (
                n + 1,
                jnp::argmax(&x, None),
                &x * 2.0,
                jnp::sum(&x, Some(&[0]), false),
            )
        },
        &(x.clone(), n),
    )
    .unwrap();
    assert_eq!(types.avals.len(), want.len());
    for (aval, w) in types.avals.iter().zip(want) {
        let dtype = match w[0].as_str().unwrap() {
            "float32" => DType::F32,
            "int32" => DType::I32,
            other => panic!("{other}"),
        };
        let shape: Vec<i64> = w[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect();
        assert_eq!(
            (aval.dtype, aval.shape.as_slice(), aval.weak_type),
            (dtype, shape.as_slice(), w[2].as_bool().unwrap()),
            "{types}"
        );
    }
    // A shape error inside is returned, with its line.
    let line = line!() + 1;
    let err = eval_shape(|x: Array| jnp::matmul(&x, &x), &x).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("transformation_api.rs:{line}")),
        "{err}"
    );
}

type Params = (Array, Array);

fn model((w, b): Params, x: &Array) -> (Array, Array) {
    (
        jnp::tanh(&(jnp::matmul(x, &w) + &b)),
        jnp::sum(&(&w * &w), None, false),
    )
}

/// Each block of `rows` (per output, the parameters' (w, b) blocks) against
/// JAX's `[[out0/w, out0/b], [out1/w, out1/b]]`.
fn check_blocks(rows: &[(Params, Array)], want: &Value, what: &str) {
    for (i, ((dw, db), _)) in rows.iter().enumerate() {
        close(dw, &want[i][0], &format!("{what}: output {i} by w"));
        close(db, &want[i][1], &format!("{what}: output {i} by b"));
    }
}

#[test]
fn jacobians_and_hessians_of_pytrees_match_jax_with_argnums_and_aux() {
    let d = &data()["jacobians"];
    let (w, b, xs) = (
        reference::array(&d["w"]),
        reference::array(&d["b"]),
        reference::array(&d["xs"]),
    );
    let args = ((w.clone(), b.clone()), xs.clone());
    let f = |(p, x): (Params, Array)| model(p, &x);
    let rev = jacobian::jacrev(f)
        .argnums(&[0])
        .call(args.clone())
        .unwrap();
    check_blocks(&rev.rows, &d["rev"], "jacrev");
    let fwd = jacobian::jacfwd(f)
        .argnums(&[0])
        .call(args.clone())
        .unwrap();
    check_blocks(&fwd.rows, &d["fwd"], "jacfwd");
    // Without argnums the input x gets its blocks too; with them, zeros.
    let full = jacobian::jacrev(f).call(args.clone()).unwrap();
    for (i, (_, dx)) in full.rows.iter().enumerate() {
        close(dx, &d["x_blocks"][i], &format!("output {i} by x"));
    }
    for (_, dx) in &rev.rows {
        assert_eq!(
            jnp::sum(&jnp::abs(dx), None, false).item::<f32>().unwrap(),
            0.0
        );
    }
    let (with_aux, aux) = jacobian::jacfwd(|(p, x): (Params, Array)| {
        let out = model(p, &x);
        let top = jnp::max(&out.0, None, false);
        (out, top)
    })
    .argnums(&[0])
    .call_with_aux(args.clone())
    .unwrap();
    check_blocks(&with_aux.rows, &d["aux_jac"], "jacfwd with aux");
    close(&aux, &d["aux"], "aux");
    let scalar = |(w, b): Params| {
        let h = jnp::tanh(&(jnp::matmul(&xs, &w) + &b));
        jnp::sum(&(&h * &h), None, false)
    };
    let h = jacobian::hessian(scalar)
        .call((w.clone(), b.clone()))
        .unwrap();
    for (i, (by_w, by_b)) in h.rows.iter().enumerate() {
        close(by_w, &d["hessian"][i][0], &format!("hessian row {i}, w"));
        close(by_b, &d["hessian"][i][1], &format!("hessian row {i}, b"));
    }
    // An argnum past the inputs is an error.
    let err = jacobian::jacrev(f).argnums(&[2]).call(args).unwrap_err();
    assert!(
        err.to_string().contains("argnums 2 is out of range"),
        "{err}"
    );
}

#[test]
fn symbolic_zero_tangents_reach_the_rule_as_in_jax() {
    use std::sync::{Arc, Mutex};
    let d = &data()["symbolic_zeros"];
    let seen: Arc<Mutex<Vec<Vec<bool>>>> = Arc::default();
    let record = seen.clone();
    let sin_times = oxla::custom_jvp_symbolic(
        |(x, y): (Array, Array)| &jnp::sin(&x) * &y,
        move |(x, y): (Array, Array), t: Vec<Option<Array>>| {
            record
                .lock()
                .unwrap()
                .push(t.iter().map(Option::is_none).collect());
            let terms: Vec<Array> = [
                t[0].as_ref().map(|tx| &(&jnp::cos(&x) * &y) * tx),
                t[1].as_ref().map(|ty| &jnp::sin(&x) * ty),
            ]
            .into_iter()
            .flatten()
            .collect();
            (
                &jnp::sin(&x) * &y,
                vec![terms.into_iter().reduce(|a, b| &a + &b)],
            )
        },
    );
    let f = |p: (Array, Array)| sin_times.call(p).unwrap_or_else(Array::error);
    let last = || -> Value { serde_json::json!(seen.lock().unwrap().last().unwrap()) };
    let (x, y) = (
        Array::scalar(0.7f32).unwrap(),
        Array::scalar(-1.5f32).unwrap(),
    );
    let dx = oxla::grad(|x: Array| f((x, y.clone())))
        .call(x.clone())
        .unwrap();
    close(&dx, &d["dx"], "d/dx");
    assert_eq!(last(), d["dx_seen"]);
    let dy = oxla::grad(|y: Array| f((x.clone(), y)))
        .call(y.clone())
        .unwrap();
    close(&dy, &d["dy"], "d/dy");
    assert_eq!(last(), d["dy_seen"]);
    let tangents = (
        Array::scalar(0.5f32).unwrap(),
        Array::scalar(2.0f32).unwrap(),
    );
    let (_, t) = oxla::jvp(f, &(x.clone(), y.clone()), &tangents).unwrap();
    close(&t, &d["jvp"], "jvp");
    assert_eq!(last(), d["jvp_seen"]);
    let xs = Array::from_slice(&[0.1f32, -0.4, 2.0], &[3]).unwrap();
    let per_x = oxla::vmap(|x: Array| oxla::grad(|x: Array| f((x, y.clone()))).call(x))
        .call(xs)
        .unwrap();
    close(&per_x, &d["vmap_dx"], "vmap of d/dx");
    assert_eq!(last(), d["vmap_dx_seen"]);
    let jit_dy = jit(|y: Array| oxla::grad(|y: Array| f((x.clone(), y))).call(y))
        .call(y.clone())
        .unwrap();
    close(&jit_dy, &d["jit_dy"], "jit of d/dy");
    // A rule that gives no tangent for an output leaf says it does not move.
    let constant = oxla::custom_jvp_symbolic(
        |x: Array| &x * 2.0,
        |x: Array, _t: Vec<Option<Array>>| (&x * 2.0, vec![None]),
    );
    let zero = oxla::grad(|x: Array| constant.call(x).unwrap_or_else(Array::error))
        .call(x)
        .unwrap();
    assert_eq!(zero.item::<f32>().unwrap(), 0.0);
}
