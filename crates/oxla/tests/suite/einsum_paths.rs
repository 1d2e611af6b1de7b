//! `numpy::einsum_path` against `jnp.einsum_path` (reference/einsum_paths.py):
//! the same contraction order where `opt_einsum` searches every order (up
//! to four operands, JAX's default), the same cost for five, and the same
//! naive cost and largest intermediate; and its errors.

use std::path::Path;

use oxla::{Array, DType, numpy as jnp};

/// The reference's cases: subscripts and operand shapes.
const CASES: &[(&str, &[&[i64]])] = &[
    ("ij,jk->ik", &[&[2, 3], &[3, 4]]),
    ("ij,jk,kl->il", &[&[2, 3], &[3, 100], &[100, 5]]),
    ("ij,jk,kl->il", &[&[50, 3], &[3, 40], &[40, 2]]),
    (
        "bij,bjk,bkl,l->bi",
        &[&[2, 3, 4], &[2, 4, 5], &[2, 5, 3], &[3]],
    ),
    (
        "ea,fb,abcd,gc,hd->efgh",
        &[
            &[10, 10],
            &[10, 10],
            &[10, 10, 10, 10],
            &[10, 10],
            &[10, 10],
        ],
    ),
    ("abc,cd,de,ea->b", &[&[4, 5, 6], &[6, 7], &[7, 8], &[8, 4]]),
    ("ii->", &[&[3, 3]]),
    ("ij->ji", &[&[3, 4]]),
    ("...ij,...jk,k->...i", &[&[2, 3, 4], &[4, 5], &[5]]),
];

#[test]
fn einsum_path_chooses_the_order_and_cost_jax_chooses() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/einsum_paths.py");
    let want: Vec<serde_json::Value> =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap();
    assert_eq!(want.len(), CASES.len());
    for ((subscripts, shapes), want) in CASES.iter().zip(&want) {
        assert_eq!(want["subscripts"], *subscripts);
        let operands: Vec<Array> = shapes.iter().map(|s| jnp::zeros(s, DType::F32)).collect();
        let refs: Vec<&Array> = operands.iter().collect();
        let got = jnp::einsum_path(subscripts, &refs).unwrap();
        let number = |key: &str| want[key].as_f64().unwrap();
        assert_eq!(
            got.naive_flops,
            number("naive_flops"),
            "{subscripts}: {got}"
        );
        assert_eq!(
            got.optimized_flops,
            number("optimized_flops"),
            "{subscripts}: {got}"
        );
        assert_eq!(
            got.largest_intermediate,
            number("largest_intermediate"),
            "{subscripts}: {got}"
        );
        if shapes.len() <= 4 {
            let path: Vec<Vec<usize>> = serde_json::from_value(want["path"].clone()).unwrap();
            assert_eq!(got.path, path, "{subscripts}: {got}");
        }
        assert_eq!(got.steps.len(), got.path.len());
        assert!(got.to_string().contains("Complete contraction"), "{got}");
    }
}

#[test]
fn einsum_misuse_is_an_error_naming_the_function_and_line() {
    let x = jnp::zeros(&[2, 3], DType::F32);
    let y = jnp::zeros(&[4, 5], DType::F32);
    let line = line!() + 1;
    let err = jnp::einsum_path("ij,jk->ik", &[&x, &y])
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("einsum_paths.rs:{line}")), "{err}");
    assert!(err.contains("letter j stands for sizes 3 and 4"), "{err}");
    for (subscripts, operands, message) in [
        ("ij,jk,kl->il", vec![&x, &x], "3 subscripts for 2 operands"),
        ("ij->ii", vec![&x], "output letter i appears twice"),
        ("ij->k", vec![&x], "output letter k is not in the inputs"),
        ("i1", vec![&x], "'1' is not a subscript letter"),
        ("iii", vec![&x], "rank 2"),
    ] {
        let err = jnp::einsum(subscripts, &operands)
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("einsum {subscripts:?}")), "{err}");
        assert!(err.contains(message), "{subscripts}: {err}");
        assert!(err.contains("einsum_paths.rs"), "{err}");
    }
}
