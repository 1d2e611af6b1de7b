//! oxla's jaxprs print as JAX's make_jaxpr prints the same functions.

use oxla::lax::{self, ScanOptions};
use oxla::{Array, DType, make_jaxpr, numpy as jnp};

use crate::reference::jaxprs_and_promotion;

/// Whitespace-insensitive form (JAX breaks long equations over lines).
fn normalize(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("[ ", "[").replace(" ]", "]")
}

fn ones(shape: &[i64], dtype: DType) -> Array {
    jnp::ones(shape, dtype)
}

fn assert_same_as_jax(name: &str, ours: &oxla::Jaxpr) {
    let jax = jaxprs_and_promotion()["jaxprs"][name].as_str().unwrap();
    assert_eq!(
        normalize(&ours.to_string()),
        normalize(jax),
        "{name}:\noxla:\n{ours}\njax:\n{jax}"
    );
}

#[test]
fn jaxprs_match_jax_make_jaxpr() {
    let f32_23 = ones(&[2, 3], DType::F32);
    assert_same_as_jax(
        "sin",
        &make_jaxpr(|a: Array| jnp::sin(&a), &f32_23).unwrap(),
    );
    assert_same_as_jax(
        "mul_literal",
        &make_jaxpr(|a: Array| a * 2.0, &ones(&[3], DType::F32)).unwrap(),
    );
    assert_same_as_jax(
        "matmul_add",
        &make_jaxpr(
            |(a, b): (Array, Array)| jnp::matmul(&jnp::sin(&a), &b) + 1,
            &(f32_23.clone(), ones(&[3, 4], DType::F32)),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "matmul_highest",
        &oxla::config::with_default_matmul_precision(Some(lax::Precision::Highest), || {
            make_jaxpr(
                |(a, b): (Array, Array)| jnp::matmul(&a, &b),
                &(f32_23.clone(), ones(&[3, 4], DType::F32)),
            )
        })
        .unwrap(),
    );
    assert_same_as_jax(
        "broadcast_add",
        &make_jaxpr(
            |(a, b): (Array, Array)| a + b,
            &(f32_23.clone(), ones(&[3], DType::F32)),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "sum_f16_div",
        &make_jaxpr(
            |a: Array| jnp::sum(&a, Some(&[0]), false) / 3,
            &ones(&[2, 3], DType::F16),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "convert_add",
        &make_jaxpr(
            |a: Array| oxla::lax::convert_element_type(&a, DType::I32) + 1,
            &ones(&[2], DType::F32),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "relu",
        &make_jaxpr(
            |a: Array| jnp::maximum(&a, &Array::weak_scalar(0.0f32)),
            &ones(&[2], DType::F32),
        )
        .unwrap(),
    );
}

#[test]
fn control_flow_jaxprs_match_jax_make_jaxpr() {
    let x = ones(&[3], DType::F32);
    let xs = ones(&[4, 3], DType::F32);
    let b = |v: bool| Array::scalar(v).unwrap();
    assert_same_as_jax(
        "cond",
        &make_jaxpr(
            |(p, a): (Array, Array)| {
                lax::cond(&p, |a: Array| a * 2.0, |a: Array| jnp::sin(&a), a).unwrap()
            },
            &(b(true), x.clone()),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "switch",
        &make_jaxpr(
            |(i, a): (Array, Array)| {
                lax::switch(
                    &i,
                    &[&|a: Array| a + 1.0, &|a: Array| a * 2.0, &|a: Array| -a],
                    a,
                )
                .unwrap()
            },
            &(Array::scalar(1i32).unwrap(), x.clone()),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "while",
        &make_jaxpr(
            |a: Array| {
                lax::while_loop(
                    |(i, _): &(Array, Array)| lax::lt(i, &Array::weak_scalar(10i32)),
                    |(i, v): (Array, Array)| (i + 1, v * 2.0),
                    (Array::weak_scalar(0i32), a),
                )
                .unwrap()
            },
            &x,
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "scan",
        &make_jaxpr(
            |(c, xs): (Array, Array)| {
                lax::scan(
                    |c: Array, x: Array| (&c + &x, jnp::sin(&c)),
                    c,
                    xs,
                    ScanOptions::default(),
                )
                .unwrap()
            },
            &(x.clone(), xs.clone()),
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "fori",
        &make_jaxpr(
            |a: Array| {
                lax::fori_loop(
                    0,
                    5,
                    |i, c: Array| c * lax::convert_element_type(&i, DType::F32),
                    a,
                )
                .unwrap()
            },
            &x,
        )
        .unwrap(),
    );
    assert_same_as_jax(
        "scan_closure",
        &make_jaxpr(
            |(w, xs): (Array, Array)| {
                let (c, ()) = lax::scan(
                    |c: Array, x: Array| (&c * &w + &x, ()),
                    jnp::zeros(&[3], DType::F32),
                    xs,
                    ScanOptions {
                        reverse: true,
                        ..ScanOptions::default()
                    },
                )
                .unwrap();
                c
            },
            &(x.clone(), xs.clone()),
        )
        .unwrap(),
    );
}
