//! shard_map and the collectives inside it, against JAX's values for the
//! same mesh and specs (eager and under jit); grad and vmap through
//! shard_map; the errors of collectives outside shard_map or over unknown
//! axes.

use oxla::sharding::collectives::{
    all_gather, all_gather_invariant, all_to_all, axis_index, over, pmax, pmean, pmin, ppermute,
    pshuffle, psum, psum_scatter, pswapaxes,
};
use oxla::sharding::shard_map;
use oxla::{Array, DType, P, PartitionSpec, jit, numpy as jnp};

use crate::{assert_close, expected, inputs, mesh};

/// Runs `f` as a shard_map of x (eagerly and jitted) and compares both with
/// JAX's case `name` (which reference.py runs with `check_vma=False`: some
/// results are replicated in value, not in type).
fn check(name: &str, f: fn(Array) -> Array, in_spec: PartitionSpec, out_spec: PartitionSpec) {
    let (x, _) = inputs();
    let want = expected(name);
    let mapped = shard_map(f, &mesh(), vec![in_spec.clone()], vec![out_spec.clone()]);
    let eager = mapped.check_vma(false).call(x.clone()).unwrap();
    assert_eq!(eager.shape(), want.shape.as_slice(), "{name}");
    assert_close(&eager.to_vec::<f32>().unwrap(), &want.value);
    let jitted = jit(move |x: Array| {
        shard_map(f, &mesh(), vec![in_spec.clone()], vec![out_spec.clone()])
            .check_vma(false)
            .call(x)
            .unwrap()
    })
    .call(x)
    .unwrap();
    assert_close(&jitted.to_vec::<f32>().unwrap(), &want.value);
}

#[test]
fn collectives_mix_a_named_vmap_axis_with_mesh_axes_as_in_jax() {
    check(
        "sm_vmap_named",
        |x| {
            oxla::vmap(|r: Array| {
                let index =
                    oxla::lax::convert_element_type(&axis_index(&["data", "i"]), DType::F32);
                &(&psum(&r, &["data", "i"]) + &(&index * 100.0)) + &pmax(&r, &["i", "model"])
            })
            .axis_name("i")
            .call(x)
            .unwrap()
        },
        P!["data", "model"],
        P!["data", "model"],
    );
}

#[test]
fn reductions_match_jax() {
    check(
        "sm_psum",
        |x| psum(&x, &["data"]),
        P!["data", "model"],
        P![None, "model"],
    );
    check(
        "sm_pmean_all",
        |x| pmean(&x, &["data", "model"]),
        P!["data", "model"],
        P![],
    );
    check(
        "sm_pmax",
        |x| pmax(&x, &["data"]),
        P!["data", "model"],
        P![None, "model"],
    );
    check(
        "sm_pmin",
        |x| pmin(&x, &["model"]),
        P!["data", "model"],
        P!["data"],
    );
}

#[test]
fn gathers_scatters_and_all_to_all_match_jax() {
    check(
        "sm_all_gather",
        |x| all_gather(&x, &["model"], 0, true),
        P!["data", "model"],
        P!["data"],
    );
    check(
        "sm_all_gather_stacked",
        |x| all_gather(&x, &["data"], 1, false),
        P!["data", "model"],
        P![None, None, "model"],
    );
    check(
        "sm_psum_scatter",
        |x| psum_scatter(&x, &["model"], 1, true),
        P!["data", "model"],
        P!["data", "model"],
    );
    check(
        "sm_all_to_all",
        |x| all_to_all(&x, &["data"], 0, 1, true),
        P![None, "model"],
        P!["data", "model"],
    );
}

#[test]
fn untiled_all_to_all_pswapaxes_pshuffle_and_negative_axes_match_jax() {
    let grid = || P!["data", "model"];
    check(
        "sm_all_to_all_untiled",
        |x| all_to_all(&x.reshape(&[4, 1]), &["data"], 0, 1, false),
        grid(),
        grid(),
    );
    check(
        "sm_all_to_all_untiled_back",
        |x| all_to_all(&x.reshape(&[1, 4]), &["data"], 1, 0, false),
        grid(),
        grid(),
    );
    check(
        "sm_pswapaxes",
        |x| pswapaxes(&x.reshape(&[4, 1]), &["data"], 0),
        grid(),
        grid(),
    );
    check(
        "sm_pshuffle",
        |x| pshuffle(&x, &["data"], &[2, 0, 3, 1]),
        grid(),
        grid(),
    );
    check(
        "sm_all_gather_negative",
        |x| all_gather(&x, &["model"], -1, true),
        grid(),
        P!["data"],
    );
    check(
        "sm_all_gather_stacked_negative",
        |x| all_gather(&x, &["data"], -1, false),
        grid(),
        P![None, "model"],
    );
}

const GROUPS: [&[usize]; 2] = [&[0, 2], &[3, 1]];

#[test]
fn axis_index_groups_match_jax() {
    let grid = || P!["data", "model"];
    check(
        "sm_psum_groups",
        |x| over(&["data"]).axis_index_groups(&GROUPS).psum(&x),
        grid(),
        grid(),
    );
    check(
        "sm_pmean_groups",
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[0, 1], &[2, 3]])
                .pmean(&x)
        },
        grid(),
        grid(),
    );
    check(
        "sm_pmax_groups",
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[1, 2], &[3, 0]])
                .pmax(&x)
        },
        grid(),
        grid(),
    );
    check(
        "sm_all_gather_groups",
        |x| {
            over(&["data"])
                .axis_index_groups(&GROUPS)
                .all_gather(&x, 0, true)
        },
        grid(),
        grid(),
    );
    check(
        "sm_psum_scatter_groups",
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[0, 1], &[2, 3]])
                .psum_scatter(&x, 0, true)
        },
        grid(),
        grid(),
    );
    check(
        "sm_all_to_all_groups",
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[0, 1], &[2, 3]])
                .all_to_all(&x, 0, 1, true)
        },
        grid(),
        grid(),
    );
}

fn grouped_loss(x: Array) -> Array {
    let grouped = || over(&["data"]).axis_index_groups(&GROUPS);
    let gathered = shard_map(
        move |x: Array| {
            jnp::sin(&grouped().all_gather(&x, 0, true))
                * jnp::sum(&grouped().psum(&x), None, false)
        },
        &mesh(),
        vec![P!["data", "model"]],
        vec![P!["data", "model"]],
    )
    .check_vma(false)
    .call(x)
    .unwrap();
    let scattered = shard_map(
        move |x: Array| grouped().psum_scatter(&x, 0, true),
        &mesh(),
        vec![P!["data", "model"]],
        vec![P!["data", "model"]],
    )
    .check_vma(false)
    .call(gathered)
    .unwrap();
    jnp::sum(&jnp::square(&scattered), None, false)
}

#[test]
fn grad_through_grouped_collectives_matches_jax() {
    let (x, _) = inputs();
    let grad = jit(|x: Array| oxla::grad(grouped_loss).call(x).unwrap())
        .call(x)
        .unwrap();
    assert_close(
        &grad.to_vec::<f32>().unwrap(),
        &expected("sm_grad_grouped").value,
    );
}

fn gather_invariant(x: Array) -> Array {
    shard_map(
        |b: Array| all_gather_invariant(&b, &["data"], -2, true) * 2.0,
        &mesh(),
        vec![P!["data", "model"]],
        vec![P![None, "model"]],
    )
    .call(x)
    .unwrap()
}

#[test]
fn all_gather_invariant_is_replicated_and_transposes_to_the_own_slice_as_in_jax() {
    let (x, _) = inputs();
    let out = jit(gather_invariant).call(x.clone()).unwrap();
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &expected("sm_all_gather_invariant").value,
    );
    let loss = |v: Array| jnp::sum(&(jnp::sin(&gather_invariant(v.clone())) * v), None, false);
    let grad = jit(move |v: Array| oxla::grad(loss).call(v).unwrap())
        .call(x)
        .unwrap();
    assert_close(
        &grad.to_vec::<f32>().unwrap(),
        &expected("sm_grad_all_gather_invariant").value,
    );
    // The varying all_gather cannot leave under that out spec.
    let varying = shard_map(
        |b: Array| all_gather(&b, &["data"], 0, true),
        &mesh(),
        vec![P!["data", "model"]],
        vec![P![None, "model"]],
    )
    .call(inputs().0)
    .unwrap_err()
    .to_string();
    assert!(varying.contains("data"), "{varying}");
}

#[test]
fn bad_collective_arguments_are_errors_at_the_callers_line() {
    let (x, _) = inputs();
    let run = |f: fn(Array) -> Array, check_vma: bool| {
        shard_map(
            f,
            &mesh(),
            vec![P!["data", "model"]],
            vec![P!["data", "model"]],
        )
        .check_vma(check_vma)
        .call(x.clone())
        .unwrap_err()
        .to_string()
    };
    let checked = run(
        |x| over(&["data"]).axis_index_groups(&GROUPS).psum(&x),
        true,
    );
    assert!(checked.contains("check_vma(false)"), "{checked}");
    assert!(checked.contains("shard_maps.rs"), "{checked}");
    let repeated = run(
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[0, 1], &[1, 2]])
                .psum(&x)
        },
        false,
    );
    assert!(repeated.contains("exactly once"), "{repeated}");
    let uneven = run(
        |x| {
            over(&["data"])
                .axis_index_groups(&[&[0, 1, 2], &[3]])
                .psum(&x)
        },
        false,
    );
    assert!(uneven.contains("one size"), "{uneven}");
    let shuffle = run(|x| pshuffle(&x, &["data"], &[0, 0, 1, 2]), false);
    assert!(shuffle.contains("not represent a permutation"), "{shuffle}");
    let untiled = run(|x| all_to_all(&x, &["data"], 0, 1, false), false);
    assert!(
        untiled.contains("split_axis") && untiled.contains("4 devices"),
        "{untiled}"
    );
    let axis = run(|x| all_gather(&x, &["data"], 3, false), false);
    assert!(axis.contains("axis 3 is out of range"), "{axis}");
    assert!(axis.contains("shard_maps.rs"), "{axis}");
    let in_vmap = oxla::vmap(|r: Array| over(&["i"]).axis_index_groups(&[&[0, 1]]).psum(&r))
        .axis_name("i")
        .call(Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(in_vmap.contains("not vmap axes"), "{in_vmap}");
}

#[test]
fn ppermute_and_axis_index_match_jax() {
    check(
        "sm_ppermute_index",
        |x| {
            ppermute(&x, &["data"], &[(0, 1), (1, 2), (2, 3), (3, 0)]) * 10.0
                + lax_convert(&axis_index(&["data"]))
        },
        P!["data", "model"],
        P!["data", "model"],
    );
    // Axes named out of mesh order.
    check(
        "sm_ppermute_axes_reversed",
        |x| {
            let shift: Vec<(usize, usize)> = (0..8).map(|i| (i, (i + 3) % 8)).collect();
            ppermute(&x, &["model", "data"], &shift)
        },
        P!["data", "model"],
        P!["data", "model"],
    );
    check(
        "sm_axis_index_reversed",
        |x| &x * 0.0 + lax_convert(&axis_index(&["model", "data"])),
        P!["data", "model"],
        P!["data", "model"],
    );
}

fn lax_convert(x: &Array) -> Array {
    oxla::lax::convert_element_type(x, DType::F32)
}

fn sm_matmul(x: &Array, w: &Array) -> Array {
    shard_map(
        |(x, w): (Array, Array)| psum(&jnp::matmul(&x, &w), &["model"]),
        &mesh(),
        vec![P!["data", "model"], P!["model", None]],
        vec![P!["data", None]],
    )
    .call((x.clone(), w.clone()))
    .unwrap()
}

#[test]
fn grad_through_shard_map_and_psum_matches_jax() {
    let (x, w) = inputs();
    let grads = jit(|(x, w): (Array, Array)| {
        oxla::grad(|(x, w): (Array, Array)| jnp::sum(&jnp::tanh(&sm_matmul(&x, &w)), None, false))
            .call((x, w))
            .unwrap()
    })
    .call((x.clone(), w.clone()))
    .unwrap();
    assert_close(
        &grads.0.to_vec::<f32>().unwrap(),
        &expected("sm_grad_x").value,
    );
    assert_close(
        &grads.1.to_vec::<f32>().unwrap(),
        &expected("sm_grad_w").value,
    );
    // The forward value is the plain product.
    let product = sm_matmul(&x, &w);
    assert_close(
        &product.to_vec::<f32>().unwrap(),
        &jnp::matmul(&x, &w).to_vec::<f32>().unwrap(),
    );
}

/// sum(psum_scatter(sin(all_gather(ppermute(x))) * 2)^2) + sum(3x), each
/// collective in a shard_map of its own.
fn collectives_loss(x: Array) -> Array {
    let ring = [(0, 1), (1, 2), (2, 3), (3, 0)];
    let gathered = shard_map(
        move |x: Array| {
            jnp::sin(&all_gather(
                &ppermute(&x, &["data"], &ring),
                &["model"],
                1,
                true,
            )) * 2.0
        },
        &mesh(),
        vec![P!["data", "model"]],
        vec![P!["data", None]],
    )
    .check_vma(false)
    .call(x.clone())
    .unwrap();
    let scattered = shard_map(
        |x: Array| psum_scatter(&x, &["model"], 1, true),
        &mesh(),
        vec![P!["data", None]],
        vec![P!["data", "model"]],
    )
    .check_vma(false)
    .call(gathered)
    .unwrap();
    let copied = shard_map(|x: Array| x * 3.0, &mesh(), vec![P![]], vec![P![]])
        .check_vma(false)
        .call(x)
        .unwrap();
    jnp::sum(&jnp::square(&scattered), None, false) + jnp::sum(&copied, None, false)
}

#[test]
fn grad_through_every_linear_collective_matches_jax_and_finite_differences() {
    let (x, _) = inputs();
    let grad = jit(|x: Array| oxla::grad(collectives_loss).call(x).unwrap())
        .call(x.clone())
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_close(&grad, &expected("sm_grad_collectives").value);
    // Central differences in f64 of the loss along a few coordinates.
    let base: Vec<f32> = x.to_vec().unwrap();
    for i in [0usize, 5, 17, 31] {
        let at = |delta: f32| {
            let mut v = base.clone();
            v[i] += delta;
            let moved = Array::from_slice(&v, &[8, 4]).unwrap();
            f64::from(collectives_loss(moved).item::<f32>().unwrap())
        };
        let h = 1e-2;
        let numeric = (at(h) - at(-h)) / (2.0 * f64::from(h));
        let analytic = f64::from(grad[i]);
        assert!(
            (numeric - analytic).abs() <= 2e-2 * analytic.abs().max(1.0),
            "coordinate {i}: finite differences {numeric} vs grad {analytic}"
        );
    }
}

#[test]
fn vmap_of_shard_map_matches_jax() {
    let (x, _) = inputs();
    let x3 = jnp::stack(&[&x, &(&x * 2.0), &(&x - 1.0)], 0);
    let per_example = oxla::vmap(|x: Array| {
        shard_map(
            |x: Array| psum(&jnp::sin(&x), &["data"]),
            &mesh(),
            vec![P!["data", "model"]],
            vec![P![None, "model"]],
        )
        .call(x)
        .unwrap()
    });
    let out = jit(move |x: Array| per_example.call(x).unwrap())
        .call(x3)
        .unwrap();
    assert_close(&out.to_vec::<f32>().unwrap(), &expected("sm_vmap").value);
}

#[test]
fn collectives_outside_shard_map_or_over_unknown_axes_are_errors() {
    let (x, _) = inputs();
    let outside = psum(&x, &["data"])
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(outside.contains("outside shard_map and vmap"), "{outside}");
    assert!(outside.contains("shard_maps.rs"), "{outside}");
    let unknown = shard_map(
        |x: Array| psum(&x, &["batch"]),
        &mesh(),
        vec![P!["data"]],
        vec![P!["data"]],
    )
    .call(x.clone())
    .unwrap_err()
    .to_string();
    assert!(unknown.contains("unknown axis name 'batch'"), "{unknown}");
    assert!(
        unknown.contains("'data' (mesh), 'model' (mesh)"),
        "{unknown}"
    );
    let wrong_count = shard_map(|x: Array| x, &mesh(), vec![P!["data"], P![]], vec![P![]])
        .call(x)
        .unwrap_err()
        .to_string();
    assert!(
        wrong_count.contains("1 inputs but 2 input_specs"),
        "{wrong_count}"
    );
}

#[test]
fn pmap_maps_the_leading_axis_over_devices() {
    let (x, _) = inputs();
    let normalized = oxla::sharding::pmap(
        |(row, scale): (Array, Array)| {
            let total = psum(&row, &["i"]);
            (&row / &total) * &scale + lax_convert(&axis_index(&["i"]))
        },
        "i",
    );
    let scale = jnp::full(&[8], 2.0, DType::F32);
    let out = normalized.call((x.clone(), scale)).unwrap();
    assert_eq!(out.shape(), &[8, 4]);
    let columns = jnp::sum(&x, Some(&[0]), true);
    let rows = jnp::arange(0.0, 8.0, 1.0, DType::F32);
    let rows = jnp::reshape(&rows, &[8, 1]);
    let want = (&x / &columns) * 2.0 + rows;
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &want.to_vec::<f32>().unwrap(),
    );

    let uneven = oxla::sharding::pmap(|(a, b): (Array, Array)| a + b, "i")
        .call((x.clone(), jnp::ones(&[4, 4], DType::F32)))
        .unwrap_err()
        .to_string();
    assert!(uneven.contains("one size"), "{uneven}");
    assert!(
        uneven.contains("f32[8,4]") && uneven.contains("f32[4,4]"),
        "{uneven}"
    );
}

#[test]
fn pmap_in_axes_out_axes_static_arguments_and_devices_match_jax() {
    use oxla::sharding::pmap;
    let (x, w) = inputs();
    let xt = jnp::transpose(&x, None);
    let column = jnp::reshape(&oxla::lax::slice(&w, &[0, 0], &[4, 1], None), &[4]);
    let mapped = |a: Array, b: Array| {
        pmap(|(a, b): (Array, Array)| &a * &b + psum(&a, &["i"]), "i")
            .in_axes(&[Some(1), None])
            .call((a, b))
            .unwrap()
    };
    let out = mapped(xt.clone(), column.clone());
    assert_eq!(out.shape(), &[8, 4]);
    assert_close(
        &out.to_vec::<f32>().unwrap(),
        &expected("pmap_in_axes").value,
    );
    let grad =
        oxla::grad(move |a: Array| jnp::sum(&jnp::square(&mapped(a, column.clone())), None, false))
            .call(xt)
            .unwrap();
    assert_close(
        &grad.to_vec::<f32>().unwrap(),
        &expected("pmap_grad_in_axes").value,
    );

    let (stacked, summed) = pmap(|a: Array| (&a * 2.0, psum(&a, &["i"])), "i")
        .out_axes(&[Some(1), None])
        .call(x.clone())
        .unwrap();
    assert_eq!(stacked.shape(), &[4, 8]);
    assert_close(
        &stacked.to_vec::<f32>().unwrap(),
        &expected("pmap_out_axes_stacked").value,
    );
    assert_close(
        &summed.to_vec::<f32>().unwrap(),
        &expected("pmap_out_axes_none").value,
    );

    let cubed = pmap(
        |(a, k): (Array, oxla::Static<i32>)| oxla::lax::integer_pow(&a, k.0),
        "i",
    )
    .call((x.clone(), oxla::Static(3)))
    .unwrap();
    assert_close(
        &cubed.to_vec::<f32>().unwrap(),
        &expected("pmap_static").value,
    );

    let four = oxla::client().unwrap().addressable_devices().unwrap()[..4].to_vec();
    let v = jnp::reshape(&jnp::arange(0.0, 16.0, 1.0, DType::F32), &[4, 4]);
    let gathered = pmap(
        |v: Array| {
            over(&["i"])
                .axis_index_groups(&GROUPS)
                .all_gather(&v, 0, false)
        },
        "i",
    )
    .devices(four)
    .call(v)
    .unwrap();
    assert_close(
        &gathered.to_vec::<f32>().unwrap(),
        &expected("pmap_groups_devices").value,
    );

    // Beyond JAX (which needs a mapped input): axis_size alone.
    let indices = pmap(|c: Array| &c + &lax_convert(&axis_index(&["i"])), "i")
        .in_axes(&[None])
        .axis_size(8)
        .call(Array::scalar(1.5f32).unwrap())
        .unwrap();
    assert_eq!(
        indices.to_vec::<f32>().unwrap(),
        (0..8).map(|i| i as f32 + 1.5).collect::<Vec<_>>()
    );
    let none = pmap(|c: Array| c, "i")
        .in_axes(&[None])
        .call(Array::scalar(1.5f32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(none.contains("give axis_size"), "{none}");
    let third_axis = pmap(|c: Array| c, "i").in_axes(&[Some(2)]);
    let line = line!() + 1;
    let axis = third_axis.call(x).unwrap_err().to_string();
    assert!(
        axis.contains("in_axes of input 0 is 2, out of range"),
        "{axis}"
    );
    assert!(axis.contains(&format!("shard_maps.rs:{line}")), "{axis}");
}

#[test]
fn shard_map_prints_in_jaxprs_as_jax_does() {
    let (x, _) = inputs();
    let text = oxla::make_jaxpr(
        |x: Array| {
            shard_map(
                |x: Array| psum(&x, &["data"]),
                &mesh(),
                vec![P!["data", "model"]],
                vec![P![None, "model"]],
            )
            .call(x)
            .unwrap()
        },
        &x,
    )
    .unwrap()
    .to_string();
    assert!(text.contains("shard_map["), "{text}");
    assert!(text.contains("in_specs=(P('data', 'model'),)"), "{text}");
    assert!(text.contains("out_specs=(P(None, 'model'),)"), "{text}");
    assert!(
        text.contains("psum[axes=('data',) axis_index_groups=None]"),
        "{text}"
    );
}

fn values(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

type DpParams = (Array, Array);

fn dp_loss((w1, w2): &DpParams, xb: &Array, yb: &Array) -> Array {
    let out = jnp::matmul(&jnp::tanh(&jnp::matmul(xb, w1)), w2);
    jnp::mean(&oxla::lax::square(&(&out - yb)), None, false)
}

/// Runs `body` (params replicated, data split over 'data') as JAX's
/// data-parallel shard_map and flattens its outputs.
fn run_dp(
    body: fn((DpParams, Array, Array)) -> Vec<Array>,
    check_vma: bool,
) -> oxla::Result<Vec<Vec<f32>>> {
    let (x, _) = inputs();
    let data = values(&crate::reference("dp_inputs")[0]);
    let w1 = Array::from_slice(&data, &[4, 6])?;
    let w2 = Array::from_slice(&values(&crate::reference("dp_inputs")[1]), &[6, 2])?;
    let y = Array::from_slice(&values(&crate::reference("dp_inputs")[2]), &[8, 2])?;
    let mapped = move |args: (DpParams, Array, Array)| {
        shard_map(
            body,
            &mesh(),
            vec![P![], P!["data"], P!["data"]],
            vec![P![]],
        )
        .check_vma(check_vma)
        .call(args)
    };
    let outs = jit(mapped).call(((w1, w2), x, y))?;
    outs.iter().map(|o| o.to_vec::<f32>()).collect()
}

#[test]
fn gradients_of_replicated_values_inside_shard_map_are_summed_as_in_jax() {
    let step = |(params, xb, yb): (DpParams, Array, Array)| -> Vec<Array> {
        let (loss, (g1, g2)) = oxla::value_and_grad(|p: DpParams| dp_loss(&p, &xb, &yb))
            .call(params)
            .unwrap();
        vec![pmean(&loss, &["data"]), g1, g2]
    };
    let got = run_dp(step, true).unwrap();
    let want = crate::reference("dp_grads").as_array().unwrap();
    for (g, w) in got.iter().zip(want) {
        assert_close(g, &values(w));
    }
    let mixed = |(params, xb, yb): (DpParams, Array, Array)| -> Vec<Array> {
        let (g1, g2) = oxla::grad(|p: DpParams| {
            jnp::sum(&oxla::lax::square(&p.0), None, false)
                + pmean(&dp_loss(&p, &xb, &yb), &["data"])
        })
        .call(params)
        .unwrap();
        vec![g1, g2]
    };
    let got = run_dp(mixed, true).unwrap();
    let want = crate::reference("dp_mixed").as_array().unwrap();
    for (g, w) in got.iter().zip(want) {
        assert_close(g, &values(w));
    }
    // Without replication checking, each device keeps its own gradient
    // (JAX's check_vma=False), which an out spec of P() cannot claim.
    let unchecked = run_dp(step, false).unwrap();
    assert_ne!(unchecked[1], got_first_grad(crate::reference("dp_grads")));
}

fn got_first_grad(v: &serde_json::Value) -> Vec<f32> {
    values(&v.as_array().unwrap()[1])
}

#[test]
fn an_out_spec_claiming_replication_the_body_lacks_is_an_error() {
    let (x, _) = inputs();
    let claims = shard_map(
        |b: Array| jnp::sin(&b),
        &mesh(),
        vec![P!["data"]],
        vec![P![]],
    );
    let line = line!() + 1;
    let err = claims.call(x.clone());
    let err = err.unwrap_err().to_string();
    assert!(
        err.contains("varies over mesh axis 'data'")
            && err.contains(&format!("shard_maps.rs:{line}")),
        "{err}"
    );
    // psum makes it replicated; check_vma(false) takes the claim on trust.
    assert!(
        shard_map(
            |b: Array| psum(&b, &["data"]),
            &mesh(),
            vec![P!["data"]],
            vec![P![]]
        )
        .call(x.clone())
        .is_ok()
    );
    assert!(
        shard_map(
            |b: Array| jnp::sin(&b),
            &mesh(),
            vec![P!["data"]],
            vec![P![]]
        )
        .check_vma(false)
        .call(x)
        .is_ok()
    );
}

/// sum of a 3-step carry c ← c·w + x_block, whose start is `start(zeros)`.
fn loop_loss(w: Array, xb: &Array, start: fn(Array) -> Array) -> oxla::Result<Array> {
    let (c, ()) = oxla::lax::scan(
        |c: Array, ()| -> oxla::Result<(Array, ())> { Ok((&(&c * &w) + xb, ())) },
        start(jnp::zeros(&[2, 4], DType::F32)),
        (),
        oxla::lax::ScanOptions {
            length: Some(3),
            ..Default::default()
        },
    )?;
    Ok(jnp::sum(&c, None, false))
}

#[test]
fn a_loop_carry_that_becomes_varying_needs_pvary_as_in_jax() {
    let (x, _) = inputs();
    let w = Array::scalar(0.5f32).unwrap();
    let varying = |(w, xb): (Array, Array)| {
        oxla::grad(|w: Array| {
            loop_loss(w, &xb, |z| {
                oxla::sharding::collectives::pvary(&z, &["data"])
            })
        })
        .call(w)
        .unwrap_or_else(Array::error)
    };
    let g = shard_map(varying, &mesh(), vec![P![], P!["data"]], vec![P![]])
        .call((w.clone(), x.clone()))
        .unwrap();
    assert_close(
        &g.to_vec::<f32>().unwrap(),
        &values(crate::reference("loop_grad")),
    );
    // Started replicated, the carry's type would change: an error, as JAX's.
    let replicated = |(w, xb): (Array, Array)| {
        oxla::grad(|w: Array| loop_loss(w, &xb, |z| z))
            .call(w)
            .unwrap_or_else(Array::error)
    };
    let err = shard_map(replicated, &mesh(), vec![P![], P!["data"]], vec![P![]])
        .call((w, x))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("varies over the mesh axes [] when the loop starts, and over ['data']"),
        "{err}"
    );
}

fn spmd_example(v: Array, w: Array) -> oxla::Result<Array> {
    shard_map(
        |(vb, wb): (Array, Array)| psum(&(jnp::sin(&vb) * wb), &["model"]),
        &mesh(),
        vec![P!["model"], P![]],
        vec![P![]],
    )
    .call((v, w))
}

fn spmd_vmap(x: Array, w: Array) -> Array {
    oxla::vmap(|(v, w): (Array, Array)| spmd_example(v, w).unwrap())
        .in_axes(&[Some(0), None])
        .spmd_axis_name(&["data"])
        .call((x, w))
        .unwrap()
}

#[test]
fn vmap_of_shard_map_with_spmd_axis_name_splits_the_batch_as_in_jax() {
    let (x, _) = inputs();
    let w = Array::from_slice(&[0.5f32, -1.5], &[2]).unwrap();
    let out = jit(|(x, w): (Array, Array)| spmd_vmap(x, w))
        .call((x.clone(), w.clone()))
        .unwrap();
    let want = expected("vmap_spmd_shard_map");
    assert_eq!(out.shape(), want.shape.as_slice());
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec
    );
    let grad = jit(move |w: Array| {
        let x = x.clone();
        oxla::grad(move |w: Array| jnp::sum(&jnp::square(&spmd_vmap(x.clone(), w)), None, false))
            .call(w)
            .unwrap()
    })
    .call(w)
    .unwrap();
    assert_close(
        &grad.to_vec::<f32>().unwrap(),
        &expected("vmap_spmd_shard_map_grad").value,
    );
    // As JAX: the spmd axes cannot be in the shard_map's specs, and the
    // batch must split evenly over them.
    let w = Array::from_slice(&[0.5f32, -1.5], &[2]).unwrap();
    let in_specs = oxla::vmap(|(v, w): (Array, Array)| spmd_example(v, w))
        .in_axes(&[Some(0), None])
        .spmd_axis_name(&["model"])
        .call((inputs().0, w.clone()))
        .unwrap_err()
        .to_string();
    assert!(
        in_specs.contains("cannot appear in shard_map"),
        "{in_specs}"
    );
    let uneven = oxla::vmap(|(v, w): (Array, Array)| spmd_example(v, w))
        .in_axes(&[Some(0), None])
        .spmd_axis_name(&["data"])
        .call((jnp::ones(&[6, 4], DType::F32), w))
        .unwrap_err()
        .to_string();
    assert!(uneven.contains("do not split evenly"), "{uneven}");
}
