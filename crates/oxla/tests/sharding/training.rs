//! Training across the 8 devices: a data-parallel and an FSDP-style MLP
//! step give one device's losses; a tensor-parallel MLP on the 2-D mesh
//! gives JAX's outputs and output sharding for the same mesh and specs.

use oxla::random::{self, Key};
use oxla::sharding::device_put_tree;
use oxla::{Array, DType, Mesh, NamedSharding, P, jit, numpy as jnp, value_and_grad};
use oxla_nn::{Activation, Mlp};
use oxla_optim::{self as optim, GradientTransformation};

use crate::{assert_close, eight_devices, expected, named, sharded_inputs};

type State = optim::StateOf<optim::AdamW, Mlp>;

/// A batch of 64 examples of 8 features and labels in 0..4.
fn batch() -> (Array, Array) {
    eight_devices();
    let (kx, ky) = random::split2(Key::new(3));
    let x = random::normal(kx, &[64, 8], DType::F32);
    let labels = random::randint(
        ky,
        &[64],
        &Array::scalar(0i32).unwrap(),
        &Array::scalar(4i32).unwrap(),
        DType::I32,
    );
    (x, labels)
}

/// Five AdamW steps of a 8-32-32-4 MLP from the same start: the losses.
/// `place` lays out the parameters, `place_batch` the batch.
fn losses(place: &dyn Fn(Mlp) -> Mlp, place_batch: &dyn Fn(&Array) -> Array) -> Vec<f32> {
    let opt = optim::adamw(0.01, 1e-4);
    let step = jit(|(params, state, x, labels): (Mlp, State, Array, Array)| {
        let loss = |p: Mlp| {
            jnp::mean(
                &optim::losses::softmax_cross_entropy_with_integer_labels(&p.apply(&x), &labels),
                None,
                false,
            )
        };
        let (value, grads) = value_and_grad(loss).call(params.clone()).unwrap();
        let (updates, state) = opt.update(grads, state, &params).unwrap();
        (
            value,
            optim::apply_updates(&params, &updates).unwrap(),
            state,
        )
    })
    .donate(&[0, 1]);
    let mut params = place(Mlp::new(Key::new(0), &[8, 32, 32, 4], Activation::Relu));
    let mut state = opt.init(&params);
    let (x, labels) = batch();
    let (x, labels) = (place_batch(&x), place_batch(&labels));
    let mut out = Vec::new();
    for _ in 0..5 {
        let (loss, p, s) = step
            .call((params, state, x.clone(), labels.clone()))
            .unwrap();
        out.push(loss.item::<f32>().unwrap());
        params = p;
        state = s;
    }
    out
}

fn data_mesh() -> Mesh {
    eight_devices();
    Mesh::new(&[("data", 8)]).unwrap()
}

#[test]
fn a_data_parallel_step_gives_one_devices_losses() {
    let single = losses(&|p| p, &|x| x.clone());
    let mesh = data_mesh();
    let replicated = NamedSharding::replicated(&mesh);
    let by_rows = NamedSharding::new(&mesh, P!["data"]);
    let parallel = losses(
        &|p| device_put_tree(&p, |_, _| replicated.clone()).unwrap(),
        &|x| oxla::device_put(x, &by_rows).unwrap(),
    );
    assert_close(&parallel, &single);
    assert!(single[4] < single[0], "the loss goes down: {single:?}");
}

#[test]
fn an_fsdp_step_with_parameters_split_over_the_devices_gives_one_devices_losses() {
    let single = losses(&|p| p, &|x| x.clone());
    let mesh = data_mesh();
    let by_rows = NamedSharding::new(&mesh, P!["data"]);
    let replicated = NamedSharding::replicated(&mesh);
    // Every parameter whose first dimension 8 devices divide is split
    // along it; the rest (the last bias, of 4) is replicated.
    let fsdp = losses(
        &|p| {
            device_put_tree(&p, |_, leaf| {
                if leaf.shape()[0] % 8 == 0 {
                    by_rows.clone()
                } else {
                    replicated.clone()
                }
            })
            .unwrap()
        },
        &|x| oxla::device_put(x, &by_rows).unwrap(),
    );
    assert_close(&fsdp, &single);
}

#[test]
fn a_tensor_parallel_mlp_on_the_2d_mesh_matches_jax() {
    let (x, _) = sharded_inputs();
    let w1: Vec<f32> = (0..32).map(|i| (i as f32 - 13.0) / 9.0).collect();
    let w2: Vec<f32> = (0..32).map(|i| (i as f32 - 7.0) / 10.0).collect();
    let w1 = oxla::device_put(
        &Array::from_slice(&w1, &[4, 8]).unwrap(),
        named(P![None, "model"]),
    )
    .unwrap();
    let w2 = oxla::device_put(
        &Array::from_slice(&w2, &[8, 4]).unwrap(),
        named(P!["model", None]),
    )
    .unwrap();
    let mlp = jit(|(x, w1, w2): (Array, Array, Array)| {
        jnp::matmul(&oxla_nn::relu(&jnp::matmul(&x, &w1)), &w2)
    });
    let out = mlp.call((x, w1, w2)).unwrap();
    let want = expected("tensor_parallel_mlp");
    assert_close(&out.to_vec::<f32>().unwrap(), &want.value);
    assert_eq!(
        out.sharding().unwrap().spec().unwrap().to_string(),
        want.spec
    );
}
