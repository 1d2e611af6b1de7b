//! JAX's explicit sharding mode on the mesh ('x': 2, 'y': 4) with both axes
//! Explicit: the types of results (`f32[8@x,4]`), their values and
//! layouts, against JAX's (explicit_reference.py, at test time); reshard,
//! auto_axes, explicit_axes and out_sharding; gradients and loops keep the
//! types; and the programs JAX rejects are rejected with the op, the types
//! and the caller's line.

use std::sync::OnceLock;

use oxla::sharding::{AxisType, auto_axes, explicit_axes, reshard, use_mesh};
use oxla::{Array, Mesh, NamedSharding, P, PartitionSpec, grad, jit, lax, numpy as jnp, vmap};

use crate::{assert_close, eight_devices};

/// explicit_reference.py's output.
fn reference() -> &'static serde_json::Value {
    static CASES: OnceLock<serde_json::Value> = OnceLock::new();
    CASES.get_or_init(|| {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/sharding/explicit_reference.py");
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap()
    })
}

/// A JSON list of numbers as f32s.
fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// The ('x': 2, 'y': 4) mesh, both axes explicit.
fn explicit_mesh() -> Mesh {
    eight_devices();
    Mesh::new(&[("x", 2), ("y", 4)])
        .unwrap()
        .with_axis_types(&[AxisType::Explicit, AxisType::Explicit])
        .unwrap()
}

/// Input `name` of the reference (of `shape`), put on the mesh as `spec`.
fn put(name: &str, shape: &[i64], spec: PartitionSpec) -> Array {
    eight_devices();
    let x = Array::from_slice(&floats(&reference()["inputs"][name]), shape).unwrap();
    oxla::device_put(&x, NamedSharding::new(&explicit_mesh(), spec)).unwrap()
}

fn x() -> Array {
    put("x", &[8, 4], P!["x", None])
}
fn w() -> Array {
    put("w", &[4, 16], P![None, "y"])
}
fn y() -> Array {
    put("y", &[8, 4], P![None, "y"])
}
fn b() -> Array {
    put("b", &[4, 8], P!["y", None])
}

/// Checks `outs` against the reference's case `name`: types, values and
/// output specs.
#[track_caller]
fn check(name: &str, outs: &[Array]) {
    let case = &reference()[name];
    let texts = |key: &str| -> Vec<String> {
        case[key]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {case}"))
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let types: Vec<String> = outs.iter().map(|o| o.aval().unwrap().to_string()).collect();
    assert_eq!(types, texts("types"), "{name}: types");
    let specs: Vec<String> = outs
        .iter()
        .map(|o| o.sharding().unwrap().spec().unwrap().to_string())
        .collect();
    assert_eq!(specs, texts("specs"), "{name}: layouts");
    for (out, want) in outs.iter().zip(case["values"].as_array().unwrap()) {
        let want = floats(want);
        let got = out.astype(oxla::DType::F32).to_vec::<f32>().unwrap();
        assert_close(&got, &want);
    }
}

fn matmul_tanh_sum((x, w): (Array, Array)) -> (Array, Array) {
    let h = jnp::matmul(&x, &w);
    let s = jnp::sum(&jnp::tanh(&h), Some(&[0]), false);
    (h, s)
}

#[test]
fn arrays_on_an_explicit_mesh_carry_their_split_in_their_types() {
    assert_eq!(x().aval().unwrap().to_string(), "f32[8@x,4]");
    assert_eq!(w().aval().unwrap().to_string(), "f32[4,16@y]");
    let mesh = explicit_mesh();
    assert_eq!(
        mesh.to_string(),
        "Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))"
    );
    let typed = oxla::eval_shape(matmul_tanh_sum, &(x(), w())).unwrap();
    let types: Vec<String> = typed.avals.iter().map(ToString::to_string).collect();
    let want: Vec<String> = reference()["eval_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, want);
    // Printed jaxprs show the types, as JAX's do.
    let jaxpr = oxla::make_jaxpr(matmul_tanh_sum, &(x(), w())).unwrap();
    assert!(
        jaxpr.to_string().contains("f32[8@x,16@y] = dot_general"),
        "{jaxpr}"
    );
}

#[test]
fn each_op_splits_its_result_as_jax_does() {
    let (h, s) = jit(matmul_tanh_sum).call((x(), w())).unwrap();
    check("mlp", &[h, s]);
    let one = |f: fn(Array) -> Array| jit(f).call(x()).unwrap();
    let two = |f: fn((Array, Array)) -> Array, a: Array, b: Array| jit(f).call((a, b)).unwrap();
    check("broadcast_add", &[two(|(a, b)| &a + &b, x(), y())]);
    check(
        "row_add",
        &[two(|(a, b)| &a + &b.index(&[0.into()]), x(), y())],
    );
    check("reshape_split", &[one(|a| a.reshape(&[2, 4, 4]))]);
    check("reshape_merge", &[one(|a| a.reshape(&[32]))]);
    check(
        "transpose",
        &[two(
            |(a, b)| jnp::transpose(&jnp::matmul(&a, &b), None),
            x(),
            w(),
        )],
    );
    check("argmax", &[one(|a| jnp::argmax(&a, Some(1)))]);
    check("max", &[one(|a| jnp::max(&a, Some(&[0]), false))]);
    check("slice", &[one(|a| lax::slice(&a, &[1, 1], &[5, 3], None))]);
    check(
        "softmax",
        &[one(|a| {
            let e = jnp::exp(&(&a - &jnp::max(&a, Some(&[-1]), true)));
            &e / &jnp::sum(&e, Some(&[-1]), true)
        })],
    );
}

#[test]
fn loops_branches_vmap_and_gradients_keep_the_types() {
    let fori = |a: Array| {
        lax::fori_loop(0, 3, |_, v: Array| &(&v * 1.5) + 1.0, a).unwrap_or_else(Array::error)
    };
    check("fori", &[jit(fori).call(x()).unwrap()]);
    let branch = |a: Array| {
        oxla::lax::cond(
            &Array::scalar(true).unwrap(),
            |v: Array| &v * 2.0,
            |v: Array| &v + 1.0,
            a,
        )
        .unwrap_or_else(Array::error)
    };
    check("cond", &[jit(branch).call(x()).unwrap()]);
    let sums = vmap(|r: Array| jnp::sum(&r, None, false));
    check(
        "vmap_sum",
        &[jit(move |a: Array| sums.call(a).unwrap())
            .call(x())
            .unwrap()],
    );
    let loss = |(a, b): (Array, Array)| jnp::sum(&jnp::tanh(&jnp::matmul(&a, &b)), None, false);
    let (gx, gw) = jit(move |args: (Array, Array)| grad(loss).call(args).unwrap())
        .call((x(), w()))
        .unwrap();
    check("grad", &[gx, gw]);
}

#[test]
fn more_ops_loops_and_nesting_split_their_results_as_jax_does() {
    let one = |f: fn(Array) -> Array| jit(f).call(x()).unwrap();
    check(
        "take",
        &[one(|a| {
            jnp::take(
                &a,
                &Array::from_slice(&[0i32, 2], &[2]).unwrap(),
                Some(1),
                false,
            )
        })],
    );
    check(
        "concat",
        &[one(|a| jnp::concatenate(&[&a, &(&a * 2.0)], 1))],
    );
    check(
        "pad",
        &[one(|a| {
            lax::pad(&a, &Array::scalar(0.0f32).unwrap(), &[(0, 0, 0), (1, 1, 0)])
        })],
    );
    check("rev", &[one(|a| lax::rev(&a, &[0]))]);
    check(
        "where",
        &[one(|a| {
            jnp::where_(
                &jnp::greater(&a, &Array::scalar(0.5f32).unwrap()),
                &a,
                &Array::scalar(0.0f32).unwrap(),
            )
        })],
    );
    check("sort", &[one(|a| jnp::sort(&a, 1))]);
    check(
        "dynamic_slice",
        &[one(|a| {
            let zero = Array::scalar(0i32).unwrap();
            let start = Array::scalar(1i32).unwrap();
            lax::dynamic_slice(&a, &[&zero, &start], &[8, 2])
        })],
    );
    let scan_xs = |a: Array| {
        let t = jnp::transpose(&a, None);
        let init = &t.index(&[0.into()]) * 0.0;
        let (c, ys) = lax::scan(
            |c: Array, r: Array| Ok::<_, oxla::Error>((&c + &r, &c * 2.0)),
            init,
            t,
            Default::default(),
        )
        .unwrap();
        (c, ys)
    };
    let (c, ys) = jit(scan_xs).call(x()).unwrap();
    check("scan_xs", &[c, ys]);
    let scan_carry = |a: Array| {
        lax::scan(
            |c: Array, r: Array| Ok::<_, oxla::Error>((&(&c * 0.5) + &r, ())),
            a,
            Array::from_slice(&[1.0f32; 3], &[3]).unwrap(),
            Default::default(),
        )
        .map(|(c, ())| c)
        .unwrap_or_else(Array::error)
    };
    check("scan_carry", &[jit(scan_carry).call(x()).unwrap()]);
    let doubling = |a: Array| {
        lax::while_loop(
            |(i, _): &(Array, Array)| jnp::less(i, &Array::scalar(3i32).unwrap()),
            |(i, v): (Array, Array)| (&i + 1, &v * 2.0),
            (Array::scalar(0i32).unwrap(), a),
        )
        .map(|(_, v)| v)
        .unwrap_or_else(Array::error)
    };
    check("while", &[jit(doubling).call(x()).unwrap()]);
    let nested = |a: Array| &jit(|b: Array| &b * 2.0).call(a).unwrap() + 1.0;
    check("nested_jit", &[jit(nested).call(x()).unwrap()]);
    // Eager ops follow the same rules.
    assert_eq!(
        (&x() + &y()).aval().unwrap().to_string(),
        reference()["eager_add"].as_str().unwrap()
    );
    // JAX rejects a scan whose carry starts unsplit and comes back split.
    assert_eq!(
        reference()["errors_scan_carry"]["error"].as_str(),
        Some("TypeError")
    );
    let unsplit_start = |a: Array| {
        let t = jnp::transpose(&a, None);
        lax::scan(
            |c: Array, r: Array| Ok::<_, oxla::Error>((&c + &r, c)),
            jnp::zeros(&[8], oxla::DType::F32),
            t,
            Default::default(),
        )
        .map(|(c, _)| c)
        .unwrap_or_else(Array::error)
    };
    let message = jit(unsplit_start).call(x()).unwrap_err().to_string();
    assert!(message.contains("changes the carry's type"), "{message}");
    assert_eq!(
        reference()["errors_scan_xs"]["error"].as_str(),
        Some("ValueError")
    );
    let split_xs = |a: Array| {
        lax::scan(
            |c: Array, r: Array| Ok::<_, oxla::Error>((&c + &r, ())),
            jnp::zeros(&[4], oxla::DType::F32),
            a,
            Default::default(),
        )
        .map(|(c, ())| c)
        .unwrap_or_else(Array::error)
    };
    let message = jit(split_xs).call(x()).unwrap_err().to_string();
    assert!(message.contains("scan slices its xs along it"), "{message}");
}

#[test]
fn vmap_and_shard_map_on_an_explicit_mesh() {
    let mesh = explicit_mesh();
    let _current = use_mesh(&mesh);
    let per_row = |r: Array| reshard(&r, &P!["y"]);
    let plain = vmap(per_row);
    check(
        "vmap_reshard",
        &[jit(move |a: Array| plain.call(a).unwrap())
            .call(x())
            .unwrap()],
    );
    let spmd = vmap(per_row).spmd_axis_name(&["x"]);
    check(
        "vmap_reshard_spmd",
        &[jit(move |a: Array| spmd.call(a).unwrap())
            .call(x())
            .unwrap()],
    );
    let doubled =
        oxla::sharding::shard_map(|b: Array| &b * 2.0, &mesh, vec![P!["x"]], vec![P!["x"]]);
    check(
        "shard_map",
        &[jit(move |a: Array| doubled.call(a).unwrap())
            .call(x())
            .unwrap()],
    );
    let summed = oxla::sharding::shard_map(
        |b: Array| oxla::sharding::collectives::psum(&b, &["x"]),
        &mesh,
        vec![P!["x"]],
        vec![P![]],
    );
    check(
        "shard_map_psum",
        &[jit(move |a: Array| summed.call(a).unwrap())
            .call(x())
            .unwrap()],
    );
}

#[test]
fn on_a_mesh_with_an_auto_axis_types_name_only_the_explicit_one() {
    eight_devices();
    let mixed = Mesh::new(&[("x", 2), ("y", 4)])
        .unwrap()
        .with_axis_types(&[AxisType::Explicit, AxisType::Auto])
        .unwrap();
    let on = |name: &str, shape: &[i64], spec| {
        let x = put(name, shape, P![]);
        oxla::device_put(&x, NamedSharding::new(&mixed, spec)).unwrap()
    };
    let (xm, wm) = (
        on("x", &[8, 4], P!["x", None]),
        on("w", &[4, 16], P![None, "y"]),
    );
    let out = jit(|(a, b): (Array, Array)| jnp::matmul(&a, &b))
        .call((xm.clone(), wm.clone()))
        .unwrap();
    let case = &reference()["mixed"];
    let types: Vec<String> = [&xm, &wm, &out]
        .iter()
        .map(|a| a.aval().unwrap().to_string())
        .collect();
    let want: Vec<String> = case["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, want);
    let values = floats(&case["values"][0]);
    assert_close(&out.to_vec::<f32>().unwrap(), &values);
}

#[test]
fn a_data_parallel_training_step_matches_jax() {
    let case = &reference()["dp_step"];
    let input = |i: usize, shape: &[i64], spec: PartitionSpec| {
        let host = Array::from_slice(&floats(&case["inputs"][i]), shape).unwrap();
        oxla::device_put(&host, NamedSharding::new(&explicit_mesh(), spec)).unwrap()
    };
    let w1 = input(0, &[4, 6], P![]);
    let w2 = input(1, &[6, 2], P![]);
    let targets = input(2, &[8, 2], P!["x"]);
    let loss = |((w1, w2), xb, tb): ((Array, Array), Array, Array)| {
        let hidden = jnp::tanh(&jnp::matmul(&xb, &w1));
        let err = &jnp::matmul(&hidden, &w2) - &tb;
        jnp::mean(&(&err * &err), None, false)
    };
    let step = move |(params, xb, tb): ((Array, Array), Array, Array)| {
        let (value, ((g1, g2), _, _)) = oxla::value_and_grad(loss)
            .argnums(&[0])
            .call((params.clone(), xb, tb))
            .unwrap();
        let (w1, w2) = params;
        (value, &w1 - &(&g1 * 0.1), &w2 - &(&g2 * 0.1))
    };
    let (value, w1, w2) = jit(step).call(((w1, w2), x(), targets)).unwrap();
    check("dp_step", &[value, w1, w2]);
}

#[test]
fn reshard_moves_a_value_and_its_gradient_goes_back() {
    let mesh = explicit_mesh();
    let _current = use_mesh(&mesh);
    check(
        "reshard",
        &[jit(|a: Array| reshard(&a, &P![None, "y"]))
            .call(x())
            .unwrap()],
    );
    let loss = |a: Array| {
        let r = reshard(&a, &P![None, "y"]);
        jnp::sum(&(&r * &r), None, false)
    };
    check(
        "reshard_grad",
        &[jit(move |a: Array| grad(loss).call(a).unwrap())
            .call(x())
            .unwrap()],
    );
    // device_put inside jit is a reshard on such a mesh, as in JAX.
    let target = NamedSharding::new(&mesh, P![None, "y"]);
    let put = target.clone();
    check(
        "device_put",
        &[
            jit(move |a: Array| oxla::device_put(&a, put.clone()).unwrap())
                .call(x())
                .unwrap(),
        ],
    );
    // Over explicit axes a sharding constraint asserts the type; JAX says
    // to reshard.
    assert_eq!(
        reference()["errors_constraint"]["error"].as_str(),
        Some("AssertionError")
    );
    let same = NamedSharding::new(&mesh, P!["x", None]);
    let asserted = jit(move |a: Array| oxla::with_sharding_constraint(&a, &same)).call(x());
    assert_eq!(asserted.unwrap().aval().unwrap().to_string(), "f32[8@x,4]");
    let constrained = jit(move |a: Array| oxla::with_sharding_constraint(&a, &target)).call(x());
    let message = constrained.unwrap_err().to_string();
    assert!(message.contains("use oxla::sharding::reshard"), "{message}");
    // Eagerly too, and with a NamedSharding instead of the current mesh.
    let eager = reshard(&x(), &NamedSharding::new(&mesh, P![None, "y"]));
    assert_eq!(eager.aval().unwrap().to_string(), "f32[8,4@y]");
}

#[test]
fn an_ambiguous_product_is_named_by_out_sharding_or_auto_axes() {
    let product = |(a, b): (Array, Array)| {
        lax::dot_general_out_sharding(&a, &b, ((&[1], &[0]), (&[], &[])), None, &P!["x", None])
    };
    check(
        "dot_out_sharding",
        &[jit(product).call((y(), b())).unwrap()],
    );
    let automatic = |(a, b): (Array, Array)| {
        auto_axes(&[a, b], &[P!["x", None]], |v| {
            vec![jnp::matmul(&v[0], &v[1])]
        })
        .unwrap()
        .remove(0)
    };
    check("auto_axes", &[jit(automatic).call((y(), b())).unwrap()]);
    // explicit_axes is the way back: inside auto_axes, types again.
    let nested = |a: Array| {
        auto_axes(&[a], &[P!["x", None]], |v| {
            explicit_axes(&[v[0].clone()], &[P![None, "y"]], |inner| {
                assert_eq!(inner[0].aval().unwrap().to_string(), "f32[8,4@y]");
                vec![&inner[0] * 2.0]
            })
            .unwrap()
        })
        .unwrap()
        .remove(0)
    };
    let _current = use_mesh(&explicit_mesh());
    let out = jit(nested).call(x()).unwrap();
    assert_eq!(out.aval().unwrap().to_string(), "f32[8@x,4]");
    let want: Vec<f32> = x()
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v * 2.0)
        .collect();
    assert_close(&out.to_vec::<f32>().unwrap(), &want);
}

/// A program to run, boxed so the cases fit in one list.
type Program = Box<dyn Fn() -> oxla::Result<Array>>;

#[test]
fn programs_jax_rejects_are_rejected_with_the_op_the_types_and_the_line() {
    let cases: Vec<(&str, Program, &str)> = vec![
        (
            "errors_add",
            Box::new(|| {
                let other = put("y", &[8, 4], P!["y", None]);
                jit(move |a: Array| &a + &other).call(x())
            }),
            "incompatible shardings for broadcasting: ('x', None), ('y', None)",
        ),
        (
            "errors_reshape",
            Box::new(|| jit(|a: Array| a.reshape(&[4, 8])).call(x())),
            "does not carry over to shape (4, 8)",
        ),
        (
            "errors_dot",
            Box::new(|| jit(|(a, b): (Array, Array)| jnp::matmul(&a, &b)).call((y(), b()))),
            "lhs_contracting_spec=('y',) and rhs_contracting_spec=('y',)",
        ),
        (
            "errors_dot_same_axis",
            Box::new(|| {
                let other = put("b", &[4, 8], P![None, "x"]);
                jit(move |a: Array| jnp::matmul(&a, &other)).call(x())
            }),
            "illegally split result f32[8@x,8@x]",
        ),
        (
            "errors_cumsum",
            Box::new(|| jit(|a: Array| jnp::cumsum(&a, Some(0))).call(x())),
            "dimension 0 of f32[8@x,4] is split over mesh axes",
        ),
    ];
    for (name, run, piece) in cases {
        assert_eq!(
            reference()[name]["error"].as_str(),
            Some("ShardingTypeError"),
            "{name}: JAX rejects it too"
        );
        let message = run().expect_err(name).to_string();
        assert!(message.contains(piece), "{name}: {message}");
        assert!(
            message.contains("explicit.rs"),
            "{name} names the caller's line: {message}"
        );
    }
    // A spec naming an axis the mesh does not make explicit.
    let auto = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    let on_auto = oxla::device_put(&x(), NamedSharding::new(&auto, P!["x", None])).unwrap();
    assert_eq!(on_auto.aval().unwrap().to_string(), "f32[8,4]");
    let message = reshard(&on_auto, &NamedSharding::new(&auto, P!["x", None]))
        .check()
        .unwrap_err()
        .to_string();
    assert!(message.contains("not an explicit axis"), "{message}");
}
