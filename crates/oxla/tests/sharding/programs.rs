//! Programs over the mesh: jit of sharded arrays against JAX's values and
//! output shardings, in/out shardings, sharding constraints under grad and
//! vmap, eager ops, the cache key, donation.

use oxla::{Array, P, jit, numpy as jnp, with_sharding_constraint};

use crate::{assert_close, expected, inputs, named, sharded_inputs};

fn matmul_tanh_sum((x, w): (Array, Array)) -> Array {
    jnp::sum(&jnp::tanh(&jnp::matmul(&x, &w)), Some(&[0]), false)
}

#[test]
fn jit_of_sharded_arrays_matches_jax_and_keeps_the_sharding_xla_chose() {
    let (x, w) = sharded_inputs();
    for (name, f) in [
        (
            "matmul_tanh_sum",
            matmul_tanh_sum as fn((Array, Array)) -> Array,
        ),
        ("matmul", |(x, w): (Array, Array)| jnp::matmul(&x, &w)),
    ] {
        let want = expected(name);
        let out = jit(f).call((x.clone(), w.clone())).unwrap();
        assert_eq!(out.shape(), want.shape.as_slice(), "{name}");
        assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
        let sharding = out.sharding().expect("a sharded output");
        assert_eq!(sharding.spec().unwrap().to_string(), want.spec, "{name}");
    }
}

#[test]
fn the_same_function_on_one_device_gives_the_same_values() {
    let (x, w) = inputs();
    let (xs, ws) = sharded_inputs();
    let f = jit(matmul_tanh_sum);
    let one = f.call((x, w)).unwrap();
    let many = f.call((xs, ws)).unwrap();
    assert!(matches!(
        one.sharding(),
        Some(oxla::sharding::Sharding::SingleDevice(_))
    ));
    assert_close(
        &many.to_vec::<f32>().unwrap(),
        &one.to_vec::<f32>().unwrap(),
    );
    assert_eq!(f.cache_size(), 2);
}

#[test]
fn a_sharding_constraint_is_kept_and_transformations_see_through_it() {
    let (x, w) = sharded_inputs();
    let grid = named(P!["data", "model"]);
    let g = grid.clone();
    let constrained = move |(x, w): (Array, Array)| {
        let y = with_sharding_constraint(&jnp::matmul(&x, &w), &g);
        jnp::sin(&y) * 2.0
    };
    let want = expected("constrained");
    let out = jit(constrained.clone())
        .call((x.clone(), w.clone()))
        .unwrap();
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec
    );
    let text = jit(constrained.clone())
        .lower(&(x.clone(), w.clone()))
        .unwrap();
    assert!(text.contains("sdy.sharding_constraint"), "{text}");

    // grad through the constraint: d/dw sum(sin(x w) * 2) = x^T (2 cos(x w)).
    let g2 = grid.clone();
    let loss = move |w: Array, x: &Array| {
        let y = with_sharding_constraint(&jnp::matmul(x, &w), &g2);
        jnp::sum(&(jnp::sin(&y) * 2.0), None, false)
    };
    let xc = x.clone();
    let dw = jit(move |w: Array| oxla::grad(|w: Array| loss(w, &xc)).call(w).unwrap())
        .call(w.clone())
        .unwrap();
    let (x1, w1) = inputs();
    let reference = jnp::matmul(
        &jnp::transpose(&x1, None),
        &(jnp::cos(&jnp::matmul(&x1, &w1)) * 2.0),
    );
    assert_close(
        &dw.to_vec::<f32>().unwrap(),
        &reference.to_vec::<f32>().unwrap(),
    );

    // vmap over rows: the constraint gains an unsplit batch dimension.
    let row_constraint = named(P!["model"]);
    let per_row = oxla::vmap(move |row: Array| {
        with_sharding_constraint(&(jnp::exp(&row) + 1.0), &row_constraint)
    });
    let (x1, _) = inputs();
    let xs6 = jnp::concatenate(&[&x1, &x1], 1);
    let out = jit(move |x: Array| per_row.call(x).unwrap())
        .call(xs6.clone())
        .unwrap();
    let reference = jnp::exp(&xs6) + 1.0;
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &reference.to_vec::<f32>().unwrap(),
    );

    // With spmd_axis_name, the batch dimension is split over 'data' (JAX's
    // P('data', 'model') for the same program).
    let row_constraint = named(P!["model"]);
    let per_row = oxla::vmap(move |row: Array| {
        with_sharding_constraint(&(jnp::exp(&row) + 1.0), &row_constraint)
    })
    .spmd_axis_name(&["data"]);
    let split = jit(move |x: Array| per_row.call(x).unwrap());
    let text = split.lower(&xs6).unwrap();
    assert!(
        text.contains(r#"sdy.sharding_constraint"#) && text.contains(r#"[{"data"}, {"model"}]"#),
        "{text}"
    );
    let out = split.call(xs6.clone()).unwrap();
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        "P('data', 'model')"
    );
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &reference.to_vec::<f32>().unwrap(),
    );
    let unknown = oxla::vmap(|row: Array| with_sharding_constraint(&row, &named(P![])))
        .spmd_axis_name(&["rows"]);
    let error = jit(move |x: Array| unknown.call(x))
        .call(xs6)
        .unwrap_err()
        .to_string();
    assert!(error.contains("spmd_axis_name names 'rows'"), "{error}");
}

#[test]
fn eager_ops_on_sharded_arrays_run_on_the_mesh() {
    let (x, _) = sharded_inputs();
    let want = expected("elementwise");
    let out = jnp::exp(&x) + 1.0;
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec
    );
    let eager = with_sharding_constraint(&inputs().0, &named(P![None, "model"]));
    assert_eq!(
        eager.sharding().unwrap().spec().unwrap().to_string(),
        "P(None, 'model')"
    );
    assert_eq!(
        eager.to_vec::<f32>().unwrap(),
        inputs().0.to_vec::<f32>().unwrap()
    );
}

#[test]
fn in_and_out_shardings_lay_out_arguments_and_results() {
    let (x, w) = inputs();
    let f = jit(|(x, w): (Array, Array)| jnp::matmul(&x, &w))
        .in_shardings(vec![
            Some(named(P!["data"])),
            Some(named(P![None, "model"])),
        ])
        .out_shardings(vec![Some(named(P![]))]);
    let out = f.call((x.clone(), w.clone())).unwrap();
    assert_eq!(out.sharding().unwrap().spec().unwrap().to_string(), "P()");
    let reference = jnp::matmul(&x, &w);
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &reference.to_vec::<f32>().unwrap(),
    );
    let text = f.lower(&(x, w)).unwrap();
    assert!(text.contains("sdy.mesh"), "{text}");
    assert!(text.contains("mhlo.num_partitions = 8"), "{text}");
}

#[test]
fn an_input_sharded_otherwise_than_in_shardings_is_an_error_naming_both() {
    let (x, w) = sharded_inputs();
    let f = jit(|(x, w): (Array, Array)| jnp::matmul(&x, &w))
        .in_shardings(vec![Some(named(P![None, "model"])), None]);
    let err = f.call((x, w)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("argument 0"), "{text}");
    assert!(text.contains("P('data')"), "{text}");
    assert!(text.contains("P(None, 'model')"), "{text}");
    assert!(text.contains("programs.rs"), "{text}");
}

#[test]
fn the_sharding_is_part_of_the_cache_key() {
    let (x, _) = inputs();
    let f = jit(|x: Array| jnp::sin(&x));
    let rows = oxla::device_put(&x, named(P!["data"])).unwrap();
    let rows_again = oxla::device_put(&x, named(P!["data"])).unwrap();
    let cols = oxla::device_put(&x, named(P![None, "model"])).unwrap();
    f.call(rows).unwrap();
    f.call(rows_again).unwrap();
    assert_eq!(f.cache_size(), 1, "the same sharding hits");
    let why = f.explain_miss(&cols).unwrap().expect("a miss");
    assert!(why.contains("changed sharding"), "{why}");
    assert!(why.contains("P(None, 'model')"), "{why}");
    f.call(cols).unwrap();
    assert_eq!(f.cache_size(), 2, "another sharding recompiles");
}

#[test]
fn donated_sharded_arguments_are_updated_in_place() {
    let (x, _) = sharded_inputs();
    let step = jit(|x: Array| x * 0.5 + 1.0).donate(&[0]);
    let mut value = x.clone();
    let mut reference = inputs().0;
    for _ in 0..3 {
        value = step.call(value).unwrap();
        reference = reference * 0.5 + 1.0;
    }
    assert_close(
        &value.to_vec::<f32>().unwrap(),
        &reference.to_vec::<f32>().unwrap(),
    );
    assert!(x.to_vec::<f32>().is_err(), "the donated input is gone");
}

#[test]
fn a_jits_shardings_survive_inside_jit_grad_and_vmap_as_in_jax() {
    let (x, _) = inputs();
    let inner = || {
        jit(|v: Array| jnp::sin(&v) * 2.0)
            .in_shardings(vec![Some(named(P!["data", None]))])
            .out_shardings(vec![Some(named(P![None, "model"]))])
    };
    let check = |name: &str, out: Array| {
        let want = expected(name);
        assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
        assert_eq!(
            out.sharding().unwrap().spec().unwrap().to_string(),
            want.spec,
            "{name}"
        );
    };
    let nested = jit(move |v: Array| inner().call(v).unwrap() + 1.0);
    check("nested_jit", nested.call(x.clone()).unwrap());
    let g = jit(move |v: Array| {
        oxla::grad(|v: Array| jnp::sum(&lax_square(&inner().call(v).unwrap()), None, false)).call(v)
    });
    check("grad_of_jit", g.call(x.clone()).unwrap());
    let rows = jit(|x: Array| {
        oxla::vmap(|r: Array| {
            jit(|r: Array| jnp::sin(&r) * 2.0)
                .out_shardings(vec![Some(named(P!["model"]))])
                .call(r)
                .unwrap()
                * 3.0
        })
        .call(x)
    });
    check("vmap_of_jit", rows.call(x).unwrap());
}

fn lax_square(x: &Array) -> Array {
    oxla::lax::square(x)
}

/// The specs JAX's compiled program takes case `name`'s inputs in.
fn input_specs(name: &str) -> Vec<String> {
    crate::reference(name)["input_specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// `f`'s compiled input layouts and output, against JAX's case `name`.
fn check_unconstrained<In: oxla::Pytree + Clone, F: Fn(In) -> Array>(
    name: &str,
    f: oxla::Jit<In, Array, F>,
    args: In,
) {
    let want = expected(name);
    let specs: Vec<String> = f
        .input_shardings(&args)
        .unwrap()
        .iter()
        .map(|s| s.as_ref().map(|s| s.spec().to_string()).unwrap_or_default())
        .collect();
    assert_eq!(specs, input_specs(name), "{name}");
    let out = f.call(args).unwrap();
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec,
        "{name}"
    );
}

#[test]
fn inputs_without_a_sharding_are_laid_out_by_the_partitioner_as_in_jax() {
    let (x, _) = inputs();
    let (xs, _) = sharded_inputs();
    let columns = named(P![None, "model"]);
    check_unconstrained(
        "unconstrained_from_out_sharding",
        jit(|y: Array| jnp::tanh(&y) + 1.0).out_shardings(vec![Some(columns)]),
        x.clone(),
    );
    let rows = named(P!["data"]);
    check_unconstrained(
        "unconstrained_from_constraint",
        jit(move |y: Array| {
            jnp::sum(
                &with_sharding_constraint(&(&y * 2.0), &rows),
                Some(&[1]),
                false,
            )
        }),
        x.clone(),
    );
    check_unconstrained(
        "unconstrained_beside_sharded",
        jit(|(a, b): (Array, Array)| &a * &b + 1.0),
        (xs, x),
    );
}

#[test]
fn arrays_on_two_meshes_of_the_same_devices_meet_in_one_program_as_in_jax() {
    let (x, _) = inputs();
    let (xs, _) = sharded_inputs();
    let wide = oxla::Mesh::new(&[("a", 2), ("b", 4)]).unwrap();
    let x_wide = oxla::device_put(&x, oxla::NamedSharding::new(&wide, P!["a", "b"])).unwrap();
    let f = jit(|(a, b): (Array, Array)| &a * &b + 1.0);
    let out = f.call((x_wide.clone(), xs.clone())).unwrap();
    let want = expected("two_meshes");
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec
    );
    let text = f.lower(&(x_wide.clone(), xs.clone())).unwrap();
    assert!(
        text.contains(r#"sym_name = "mesh""#) && text.contains(r#"sym_name = "mesh_0""#),
        "{text}"
    );
    // The same devices in another order: an error naming both meshes.
    let mut devices = oxla::client().unwrap().addressable_devices().unwrap();
    devices.reverse();
    let reversed = oxla::Mesh::with_devices(devices, &[("data", 4), ("model", 2)]).unwrap();
    let x_reversed = oxla::device_put(&x, oxla::NamedSharding::new(&reversed, P!["data"])).unwrap();
    let err = f.call((x_wide, x_reversed)).unwrap_err().to_string();
    assert!(err.contains("meshes over different devices"), "{err}");
    assert!(err.contains("[7, 6, 5, 4, 3, 2, 1, 0]"), "{err}");
}

#[test]
fn unconstrained_dimensions_of_a_constraint_are_left_to_the_partitioner_as_in_jax() {
    use oxla::PartitionSpec;
    let (x, _) = inputs();
    let (xs, _) = sharded_inputs();
    let x_grid = oxla::device_put(&x, named(P!["data", "model"])).unwrap();
    let keeps = named(P![PartitionSpec::UNCONSTRAINED, "model"]);
    assert_eq!(keeps.spec().to_string(), "P(UNCONSTRAINED, 'model')");
    let closed = named(P![PartitionSpec::UNCONSTRAINED, None]);
    for (name, sharding, input) in [
        ("constraint_unconstrained_keeps", keeps.clone(), xs),
        ("constraint_unconstrained_closed", closed, x_grid),
    ] {
        let want = expected(name);
        let f = jit(move |y: Array| with_sharding_constraint(&(&y * 2.0), &sharding));
        let text = f.lower(&input).unwrap();
        assert!(text.contains("{?}"), "{text}");
        let out = f.call(input).unwrap();
        assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
        assert_eq!(
            out.sharding().unwrap().spec().unwrap().to_string(),
            want.spec,
            "{name}"
        );
    }
    // Elsewhere, as in JAX, an error.
    let placed = oxla::device_put(&x, &keeps).unwrap_err().to_string();
    assert!(
        placed.contains("only allowed in with_sharding_constraint"),
        "{placed}"
    );
    let out = jit(|y: Array| &y * 2.0)
        .out_shardings(vec![Some(keeps)])
        .call(x)
        .unwrap_err()
        .to_string();
    assert!(
        out.contains("only allowed in with_sharding_constraint"),
        "{out}"
    );
}

#[test]
fn in_and_out_shardings_per_leaf_match_jax_pytree_shardings() {
    let (x, w) = inputs();
    let bias: Vec<f32> = (0..6).map(|i| (i as f32 - 2.0) / 5.0).collect();
    let bias = Array::from_slice(&bias, &[6]).unwrap();
    let f = jit(|((kernel, b), v): ((Array, Array), Array)| {
        let z = jnp::matmul(&v, &kernel);
        (jnp::tanh(&(&z + &b)), jnp::sum(&z, Some(&[0]), false))
    })
    .in_shardings_by(|path, _| match path {
        "[0][0]" => Some(named(P![None, "model"])),
        "[0][1]" => Some(named(P!["model"])),
        "[1]" => Some(named(P!["data"])),
        _ => None,
    })
    .out_shardings_by(|path, _| match path {
        "[0]" => Some(named(P!["data", "model"])),
        _ => Some(named(P![])),
    });
    let args = ((w, bias), x);
    let specs: Vec<String> = f
        .input_shardings(&args)
        .unwrap()
        .iter()
        .map(|s| s.as_ref().unwrap().spec().to_string())
        .collect();
    assert_eq!(specs, ["P(None, 'model')", "P('model')", "P('data')"]);
    let (activations, sums) = f.call(args).unwrap();
    for (name, out) in [
        ("pytree_shardings_0", activations),
        ("pytree_shardings_1", sums),
    ] {
        let want = expected(name);
        assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
        assert_eq!(
            out.sharding().unwrap().spec().unwrap().to_string(),
            want.spec,
            "{name}"
        );
    }
}
