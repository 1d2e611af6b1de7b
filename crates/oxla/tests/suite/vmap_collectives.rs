//! Collectives over named vmap axes (`vmap(...).axis_name("i")`) against
//! JAX's `vmap(..., axis_name="i")` (reference/vmap_collectives.py): every
//! collective's value, nested named vmaps, jit inside and outside, grad of
//! the batch, per-example grads and jvp, and the errors of unbound names.

use oxla::sharding::collectives::{
    all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter,
};
use oxla::{Array, DType, grad, jit, jvp, lax, numpy as jnp, vmap};
use serde_json::Value;

use crate::reference::{self, assert_all_close, assert_close};

fn data() -> &'static Value {
    reference::script("vmap_collectives.py")
}

const CYCLE: [(usize, usize); 4] = [(0, 1), (1, 2), (2, 3), (3, 0)];

fn share(x: &Array) -> Array {
    x / &psum(x, &["i"])
}

/// Every collective with a derivative in one example's loss.
fn loss(x: Array) -> Array {
    let gathered = all_gather(&jnp::sin(&x), &["i"], 0, false);
    let shifted = ppermute(&(&x * &x), &["i"], &CYCLE);
    let position = lax::convert_element_type(&axis_index(&["i"]), DType::F32);
    let scaled = &(&x * &x) + 1.0;
    &(&(&jnp::sum(&(&gathered * &x), None, false)
        + &jnp::sum(&(&shifted * &pmean(&x, &["i"])), None, false))
        + &jnp::sum(&share(&scaled), None, false))
        + &(&position * &jnp::sum(&x, None, false))
}

fn total(xs: Array) -> Array {
    jnp::sum(&vmap(loss).axis_name("i").call(xs).unwrap(), None, false)
}

/// `f` vmapped over axis "i", eagerly, under jit, and with jit inside.
fn three_ways(f: fn(Array) -> Array, x: &Array) -> [Array; 3] {
    [
        vmap(f).axis_name("i").call(x.clone()).unwrap(),
        jit(move |x: Array| vmap(f).axis_name("i").call(x))
            .call(x.clone())
            .unwrap(),
        vmap(move |x: Array| jit(f).call(x))
            .axis_name("i")
            .call(x.clone())
            .unwrap(),
    ]
}

fn check(f: fn(Array) -> Array, input: &str, case: &str) {
    let d = data();
    let x = reference::array(&d[input]);
    for (way, got) in ["eager", "jit outside", "jit inside"]
        .iter()
        .zip(three_ways(f, &x))
    {
        assert_close(&got, &d[case], &format!("{case} ({way})"));
    }
}

#[test]
fn reductions_over_a_vmap_axis_match_jax() {
    check(|x| share(&x), "xs", "share");
    check(
        |x| &x * &lax::convert_element_type(&axis_index(&["i"]), DType::F32),
        "xs",
        "axis_index",
    );
    let d = data();
    let stats = vmap(|x: Array| {
        let twice = psum(&Array::scalar(2.0f32).unwrap(), &["i"]);
        (
            pmean(&x, &["i"]),
            pmax(&x, &["i"]),
            pmin(&x, &["i"]),
            &twice * &x,
        )
    })
    .axis_name("i")
    .call(reference::array(&d["xs"]))
    .unwrap();
    assert_all_close(&[stats.0, stats.1, stats.2, stats.3], &d["stats"], "stats");
}

#[test]
fn gathers_scatters_and_permutations_over_a_vmap_axis_match_jax() {
    check(|x| all_gather(&x, &["i"], 0, false), "xs", "all_gather");
    check(
        |x| oxla::sharding::collectives::pbroadcast(&x, &["i"], 2),
        "xs",
        "pbroadcast",
    );
    check(
        |x| all_gather(&x, &["i"], 1, false),
        "blocks",
        "all_gather_axis1",
    );
    check(
        |x| all_gather(&x, &["i"], 1, true),
        "blocks",
        "all_gather_tiled",
    );
    check(
        |x| psum_scatter(&lax::slice(&x, &[0, 0], &[4, 3], None), &["i"], 0, false),
        "blocks",
        "psum_scatter",
    );
    check(
        |x| psum_scatter(&x, &["i"], 0, true),
        "blocks",
        "psum_scatter_tiled",
    );
    check(
        |x| {
            let t = lax::slice(&lax::transpose(&x, &[1, 0]), &[0, 0], &[3, 4], None);
            psum_scatter(&t, &["i"], 1, false)
        },
        "blocks",
        "psum_scatter_dim1",
    );
    check(
        |x| all_to_all(&x, &["i"], 0, 1, true),
        "blocks",
        "all_to_all",
    );
    check(
        |x| all_to_all(&x, &["i"], 0, 0, true),
        "blocks",
        "all_to_all_back",
    );
    check(|x| ppermute(&x, &["i"], &CYCLE), "xs", "ppermute");
    // JAX's vmap takes full permutations only; oxla's, as on devices,
    // gives zeros to an example nobody sends to.
    check(
        |x| ppermute(&x, &["i"], &CYCLE[..3]),
        "xs",
        "ppermute_partial",
    );
}

#[test]
fn nested_named_vmaps_resolve_each_name_and_several_at_once() {
    let d = data();
    let grid = reference::array(&d["grid"]);
    let inner = |v: Array| {
        (
            psum(&v, &["i"]),
            psum(&v, &["i", "j"]),
            axis_index(&["i", "j"]),
            pmax(&v, &["j"]),
        )
    };
    let (a, b, c, e) = vmap(move |row: Array| vmap(inner).axis_name("j").call(row))
        .axis_name("i")
        .call(grid)
        .unwrap();
    assert_all_close(&[a, b, c, e], &d["nested"], "nested");
}

#[test]
fn derivatives_through_vmap_collectives_match_jax_and_central_differences() {
    let d = data();
    let x = reference::array(&d["xs"]);
    assert_close(
        &vmap(loss).axis_name("i").call(x.clone()).unwrap(),
        &d["loss"],
        "loss",
    );
    let g = grad(total).call(x.clone()).unwrap();
    assert_close(&g, &d["grad_total"], "grad of the batch's total");
    reference::assert_central_difference(
        std::slice::from_ref(&x),
        std::slice::from_ref(&g),
        |p| total(p[0].clone()),
        |_, k| {
            [
                0.3, -0.5, 0.8, 0.1, -0.9, 0.4, 0.6, -0.2, 0.7, -0.4, 0.2, 0.5,
            ][k]
        },
    );
    let jit_g = jit(|x: Array| grad(total).call(x)).call(x.clone()).unwrap();
    assert_close(&jit_g, &d["grad_total"], "jit of grad of the batch's total");
    let per_example = vmap(|x: Array| grad(loss).call(x))
        .axis_name("i")
        .call(x.clone());
    assert_close(
        &per_example.unwrap(),
        &d["per_example_grad"],
        "per-example grad",
    );
    let of_psum =
        vmap(|x: Array| grad(|v: Array| psum(&jnp::sum(&(&v * &v), None, false), &["i"])).call(x))
            .axis_name("i")
            .call(x.clone());
    assert_close(
        &of_psum.unwrap(),
        &d["per_example_grad_psum"],
        "per-example grad of a psum",
    );
    let tangent = reference::array(&d["tangent"]);
    let (primal, out_tangent) = jvp(
        |x: Array| vmap(loss).axis_name("i").call(x).unwrap(),
        &x,
        &tangent,
    )
    .unwrap();
    assert_all_close(&[primal, out_tangent], &d["jvp"], "jvp");
}

#[test]
fn unbound_and_mixed_axis_names_are_errors_at_the_callers_line() {
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let line = line!() + 1;
    let unknown = vmap(|x: Array| psum(&x, &["k"]))
        .axis_name("i")
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("unknown axis name 'k'"), "{unknown}");
    assert!(unknown.contains("'i' (vmap)"), "{unknown}");
    assert!(
        unknown.contains(&format!("vmap_collectives.rs:{line}")),
        "{unknown}"
    );
    let unnamed = vmap(|x: Array| psum(&x, &["i"]))
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(unnamed.contains("outside shard_map and vmap"), "{unnamed}");
    let grid = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let mixed = vmap(|row: Array| {
        vmap(|v: Array| all_gather(&v, &["i", "j"], 0, false))
            .axis_name("j")
            .call(row)
    })
    .axis_name("i")
    .call(grid)
    .unwrap_err()
    .to_string();
    assert!(mixed.contains("mixes vmap axes with other axes"), "{mixed}");
    let uneven = vmap(|v: Array| psum_scatter(&v, &["i"], 0, true)).axis_name("i");
    let uneven = uneven
        .call(Array::from_slice(&[1.0f32; 6], &[2, 3]).unwrap())
        .unwrap_err();
    assert!(
        uneven.to_string().contains("cannot scatter evenly"),
        "{uneven}"
    );
    // A name bound by an outer vmap is hidden by an inner one of the same name.
    let shadowed = vmap(|row: Array| vmap(|v: Array| psum(&v, &["i"])).axis_name("i").call(row))
        .axis_name("i")
        .call(Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap())
        .unwrap();
    assert_eq!(
        shadowed.to_vec::<f32>().unwrap(),
        vec![6.0, 6.0, 6.0, 15.0, 15.0, 15.0]
    );
}
