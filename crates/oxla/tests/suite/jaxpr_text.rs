//! oxla's jaxprs print as JAX's make_jaxpr prints the same functions.

use oxla::{Array, DType, make_jaxpr, numpy as jnp};

use crate::reference::jaxprs_and_promotion;

/// Whitespace-insensitive form (JAX breaks long equations over lines).
fn normalize(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("[ ", "[").replace(" ]", "]")
}

fn ones(shape: &[i64], dtype: DType) -> Array {
    jnp::ones(shape, dtype).unwrap()
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
