//! JAX's general `lax.reduce` (a user's reducer over several operands)
//! against JAX (reference/general_reduce.py): a variadic argmax, a
//! logsumexp reducer over several axes, under jit, vmap, jvp and grad
//! (with central differences), a monoid reducer that becomes `reduce_sum`,
//! and the errors of bad reducers.

use oxla::{Array, DType, grad, jit, jvp, lax, numpy as jnp, vmap};
use serde_json::Value;

use crate::reference::{self, assert_all_close, assert_close};

fn data() -> &'static Value {
    reference::script("general_reduce.py")
}

/// (value, index) of the larger value; the smaller index on ties.
fn argmax_pair(acc: &[Array], val: &[Array]) -> Vec<Array> {
    let (av, ai, bv, bi) = (&acc[0], &acc[1], &val[0], &val[1]);
    let take_b = lax::or(
        &lax::gt(bv, av),
        &lax::and(&lax::eq(bv, av), &lax::lt(bi, ai)),
    );
    vec![jnp::where_(&take_b, bv, av), jnp::where_(&take_b, bi, ai)]
}

fn argmax_rows(x: Array) -> Vec<Array> {
    let shape = x.shape().to_vec();
    let idx = lax::iota(DType::I32, &shape, 1);
    let inits = [
        Array::scalar(f32::NEG_INFINITY).unwrap(),
        Array::scalar(0i32).unwrap(),
    ];
    lax::reduce(&[&x, &idx], &[&inits[0], &inits[1]], argmax_pair, &[1]).unwrap()
}

fn lse(x: &Array, dims: &[i64]) -> Array {
    let init = Array::scalar(f32::NEG_INFINITY).unwrap();
    let reducer = |a: &[Array], b: &[Array]| vec![jnp::logaddexp(&a[0], &b[0])];
    lax::reduce(&[x], &[&init], reducer, dims)
        .unwrap()
        .remove(0)
}

#[test]
fn variadic_and_user_reducers_match_jax_eagerly_under_jit_and_vmap() {
    let d = data();
    let (x, cube) = (reference::array(&d["x"]), reference::array(&d["cube"]));
    assert_all_close(&argmax_rows(x.clone()), &d["argmax_rows"], "argmax_rows");
    assert_all_close(
        &jit(argmax_rows).call(x.clone()).unwrap(),
        &d["argmax_rows_jit"],
        "jit",
    );
    assert_close(&lse(&x, &[1]), &d["lse_rows"], "lse over rows");
    assert_close(
        &lse(&cube, &[0, 2]),
        &d["lse_cube"],
        "lse over axes 0 and 2",
    );
    assert_close(
        &lse(&cube, &[0, 1, 2]),
        &d["lse_all"],
        "lse over every axis",
    );
    let per_row = vmap(|r: Array| lse(&r, &[0])).call(x.clone()).unwrap();
    assert_close(&per_row, &d["vmap_lse"], "vmap of lse");
    let batched = vmap(argmax_rows).in_axes(&[Some(1)]).call(cube).unwrap();
    assert_all_close(&batched, &d["vmap_argmax"], "vmap of argmax_rows");
}

#[test]
fn derivatives_of_a_user_reducer_match_jax_and_central_differences() {
    let d = data();
    let (x, cube, t) = (
        reference::array(&d["x"]),
        reference::array(&d["cube"]),
        reference::array(&d["t"]),
    );
    let (primal, tangent) = jvp(|v: Array| lse(&v, &[1]), &x, &t).unwrap();
    assert_all_close(&[primal, tangent], &d["jvp"], "jvp");
    let loss = |v: Array| jnp::sum(&lax::square(&lse(&v, &[0, 2])), None, false);
    let g = grad(loss).call(cube.clone()).unwrap();
    assert_close(&g, &d["grad_lse"], "grad");
    assert_close(
        &jit(|v: Array| grad(loss).call(v))
            .call(cube.clone())
            .unwrap(),
        &d["grad_lse"],
        "jit of grad",
    );
    reference::assert_central_difference(
        std::slice::from_ref(&cube),
        std::slice::from_ref(&g),
        |p| loss(p[0].clone()),
        |_, k| ((k * 7 % 5) as f32 - 2.0) / 3.0,
    );
}

#[test]
fn a_monoid_reducer_with_its_identity_is_the_built_in_reduction() {
    let d = data();
    let x = reference::array(&d["x"]);
    let zero = Array::scalar(0.0f32).unwrap();
    let add = |a: &[Array], b: &[Array]| vec![lax::add(&a[0], &b[0])];
    let sum = lax::reduce(&[&x], &[&zero], add, &[0]).unwrap().remove(0);
    assert_close(&sum, &d["sum_monoid"], "sum");
    let text = oxla::make_jaxpr(
        |v: Array| {
            lax::reduce(&[&v], &[&Array::weak_scalar(0.0f32)], add, &[0])
                .unwrap()
                .remove(0)
        },
        &x,
    )
    .unwrap()
    .to_string();
    let want = d["sum_monoid_jaxpr"].as_str().unwrap();
    assert!(
        text.contains("reduce_sum[axes=(0,)") && want.contains("reduce_sum[axes=(0,)"),
        "{text}\n{want}"
    );
    // Another initial value keeps the general reduce.
    let one = Array::scalar(1.0f32).unwrap();
    let text = oxla::make_jaxpr(
        |v: Array| lax::reduce(&[&v], &[&one], add, &[0]).unwrap().remove(0),
        &x,
    )
    .unwrap()
    .to_string();
    assert!(
        text.contains("reduce[") && text.contains("dimensions=(0,)"),
        "{text}"
    );
}

#[test]
fn bad_reducers_and_arguments_are_errors_at_the_callers_line() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let zero = Array::scalar(0.0f32).unwrap();
    let line = line!() + 1;
    let err = lax::reduce(&[&x], &[], |a, _| a.to_vec(), &[0])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("general_reduce.rs:{line}"))
            && err.contains("one initial value per operand"),
        "{err}"
    );
    let err = lax::reduce(
        &[&x],
        &[&zero],
        |a, b| vec![a[0].clone(), b[0].clone()],
        &[0],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("the reducer gives 2 values for 1 operands"),
        "{err}"
    );
    let captured = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = lax::reduce(
        &[&x],
        &[&zero],
        |a, b| vec![&(&a[0] + &b[0]) + &jnp::sum(&captured, None, false)],
        &[0],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("captures arrays from outside"), "{err}");
    let ints = Array::scalar(0i32).unwrap();
    let err = lax::reduce(&[&x], &[&ints], |a, b| vec![lax::max(&a[0], &b[0])], &[0])
        .unwrap_err()
        .to_string();
    assert!(err.contains("initial value 0 is i32[]"), "{err}");
    let err = lax::reduce(&[&x], &[&zero], |a, b| vec![lax::max(&a[0], &b[0])], &[2])
        .unwrap_err()
        .to_string();
    assert!(err.contains("axis"), "{err}");
}
