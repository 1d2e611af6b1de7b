//! `jnp.unique` and the set operations without a static size: eagerly
//! they return as many values as the data holds, as JAX does outside jit
//! (reference/set_functions.py); under jit they are an error asking for a
//! size. Their sized forms are cases of ops_vs_jax.

use oxla::{Array, jit, numpy as jnp};

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

fn values(x: &Array) -> Vec<f64> {
    let x = oxla::lax::convert_element_type(x, oxla::DType::F64);
    x.to_vec::<f64>().unwrap()
}

fn same(got: &Array, want: &serde_json::Value, what: &str) {
    let (got, want) = (values(got), floats(want));
    let equal = got.len() == want.len()
        && got
            .iter()
            .zip(&want)
            .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
    assert!(equal, "{what}: oxla {got:?}, JAX {want:?}");
}

#[test]
fn unsized_unique_and_set_functions_match_jax_eagerly() {
    let want = crate::reference::script("set_functions.py");
    let uq = Array::from_slice(&[3i32, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8], &[12]).unwrap();
    let uq2 = Array::from_slice(&[7i32, 5, 0, 3, 11, 5], &[2, 3]).unwrap();
    let nan = f32::NAN;
    let uq_f = Array::from_slice(&[2.5f32, nan, 1.0, 2.5, nan, -3.0, 0.5, 7.0], &[8]).unwrap();
    let all = jnp::unique_with(&uq, &jnp::UniqueOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.to_host().unwrap_err()));
    same(&all.values, &want["unique"], "unique");
    same(&all.indices, &want["index"], "unique's indices");
    same(&all.inverse_indices, &want["inverse"], "unique's inverse");
    same(&all.counts, &want["counts"], "unique's counts");
    same(
        &jnp::unique(&uq_f, &jnp::UniqueOptions::default()),
        &want["unique_nan"],
        "unique with NaNs as one",
    );
    same(
        &jnp::unique_values(&uq_f, None, None),
        &want["unique_values_nan"],
        "unique_values with NaNs distinct",
    );
    same(
        &jnp::union1d(&uq, &uq2, None, None),
        &want["union1d"],
        "union1d",
    );
    same(
        &jnp::intersect1d(&uq, &uq2, false, None, None),
        &want["intersect1d"],
        "intersect1d",
    );
    same(
        &jnp::setdiff1d(&uq, &uq2, false, None, None),
        &want["setdiff1d"],
        "setdiff1d",
    );
    same(
        &jnp::setxor1d(&uq, &uq2, false, None, None),
        &want["setxor1d"],
        "setxor1d",
    );
}

/// A set function of one array, boxed to list several.
type SetFunction = Box<dyn Fn(Array) -> Array>;

/// Other functions whose result size depends on the data: `trim_zeros`
/// and `roots` dropping leading zero coefficients, eagerly as in JAX.
#[test]
fn data_sized_results_match_jax_eagerly() {
    let want = crate::reference::script("set_functions.py");
    let filt = Array::from_slice(&[0i32, 0, 3, 0, 2, 0], &[6]).unwrap();
    same(
        &jnp::trim_zeros(&filt, "fb", None),
        &want["trim_zeros"],
        "trim_zeros",
    );
    same(
        &jnp::trim_zeros(&filt, "f", None),
        &want["trim_zeros_f"],
        "trim_zeros front",
    );
    let grid = Array::from_slice(&[0i32, 0, 0, 0, 4, 0, 0, 5, 0, 0, 0, 0], &[4, 3]).unwrap();
    same(
        &jnp::trim_zeros(&grid, "fb", None),
        &want["trim_zeros_2d"],
        "trim_zeros 2-d",
    );
    let p = Array::from_slice(&[0.0f32, 0.0, 1.0, -3.0, 2.0], &[5]).unwrap();
    if oxla_testing::platform() != oxla_pjrt::Platform::Cpu {
        // roots are a companion matrix's eigenvalues: eig, CPU-only in oxla.
        eprintln!("roots skipped off the CPU: eig runs on the CPU only");
        return;
    }
    let found = oxla::lax::real(&jnp::roots(&p, true));
    let (got, expected) = (values(&found), floats(&want["roots_real"]));
    assert_eq!(got.len(), expected.len(), "roots: {got:?} vs {expected:?}");
    for (g, w) in got.iter().zip(&expected) {
        assert!((g - w).abs() < 1e-5, "roots: {got:?} vs {expected:?}");
    }
    let err = jit(|p: Array| jnp::roots(&p, true))
        .call(p)
        .unwrap_err()
        .to_string();
    assert!(err.contains("strip_zeros needs a concrete p"), "{err}");
}

#[test]
fn unsized_set_functions_under_jit_ask_for_a_size() {
    let uq = Array::from_slice(&[3i32, 1, 4, 1], &[4]).unwrap();
    let cases: Vec<(&str, SetFunction)> = vec![
        (
            "unique",
            Box::new(|x: Array| jnp::unique(&x, &jnp::UniqueOptions::default())),
        ),
        (
            "union1d",
            Box::new(|x: Array| jnp::union1d(&x, &x, None, None)),
        ),
        (
            "setdiff1d",
            Box::new(|x: Array| jnp::setdiff1d(&x, &x, false, None, None)),
        ),
    ];
    for (name, f) in cases {
        let err = jit(f).call(uq.clone()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("jnp.{name}"))
                && err.contains("under jit pass a size")
                && err.contains("sets.rs"),
            "{name}: {err}"
        );
    }
}
