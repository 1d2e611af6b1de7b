//! Pytrees: derived structs with static fields through jit, containers,
//! and the tree functions.

use std::collections::BTreeMap;

use oxla::{
    Array, DType, Pytree, TreeDef, jit, numpy as jnp, tree_leaves, tree_map, tree_map_n, tree_map2,
    tree_map3, tree_reduce, tree_structure, tree_unflatten, tree_zip,
};

#[derive(Pytree, Clone, Debug)]
struct Layer {
    w: Array,
    b: Array,
    #[pytree(static)]
    activation: String,
}

#[derive(Pytree, Clone, Debug)]
struct Model {
    layers: Vec<Layer>,
    scale: Option<Array>,
}

fn f32s(values: &[f32], shape: &[i64]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

fn model(activation: &str) -> Model {
    Model {
        layers: vec![Layer {
            w: f32s(&[1.0, -1.0, 0.5, 2.0], &[2, 2]),
            b: f32s(&[0.5, -4.0], &[2]),
            activation: activation.to_string(),
        }],
        scale: Some(Array::scalar(2.0f32).unwrap()),
    }
}

fn apply((m, x): (Model, Array)) -> (Model, Array) {
    let mut h = x;
    for layer in &m.layers {
        h = jnp::matmul(&h, &layer.w) + &layer.b;
        if layer.activation == "relu" {
            h = oxla_nn::relu(&h);
        }
    }
    let scaled = match &m.scale {
        Some(s) => &h * s,
        None => h,
    };
    (m, scaled)
}

#[test]
fn derived_structs_flatten_rebuild_and_go_through_jit() {
    let m = model("relu");
    let (leaves, def) = m.flatten();
    assert_eq!(leaves.len(), 3);
    assert_eq!(
        def.to_string(),
        "Model(layers=[Layer(w=*, b=*, activation=static(\"relu\"))], scale=*)"
    );
    assert_eq!(
        def.leaf_paths(),
        vec![".layers[0].w", ".layers[0].b", ".scale"]
    );
    let rebuilt: Model = tree_unflatten(&def, leaves).unwrap();
    assert_eq!(rebuilt.layers[0].activation, "relu");

    let f = jit(apply);
    let x = f32s(&[1.0, 2.0], &[1, 2]);
    let (out_model, y) = f.call((model("relu"), x.clone())).unwrap();
    // [1, 2] @ w = [2, 3]; + b = [2.5, -1]; relu = [2.5, 0]; * 2.
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 0.0]);
    assert_eq!(
        out_model.layers[0].activation, "relu",
        "static fields come back out of jit"
    );
    // Another static value is another compilation, and changes the result.
    let why = f
        .explain_miss(&(model("linear"), x.clone()))
        .unwrap()
        .unwrap();
    assert_eq!(
        why,
        "static argument values changed from \"relu\" to \"linear\""
    );
    let (_, y) = f.call((model("linear"), x.clone())).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, -2.0]);
    let mut no_scale = model("relu");
    no_scale.scale = None;
    let why = f
        .explain_miss(&(no_scale.clone(), x.clone()))
        .unwrap()
        .unwrap();
    assert!(why.starts_with("the input structure changed"), "{why}");
    let (_, y) = f.call((no_scale, x)).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.5, 0.0]);
    assert_eq!(f.cache_size(), 3);
}

#[test]
fn tree_functions_work_on_containers() {
    let mut params: BTreeMap<String, Vec<Array>> = BTreeMap::new();
    params.insert("b".into(), vec![f32s(&[1.0], &[1])]);
    params.insert(
        "a".into(),
        vec![f32s(&[2.0, 3.0], &[2]), f32s(&[4.0], &[1])],
    );
    let doubled = tree_map(&params, |x| x * 2.0).unwrap();
    let values: Vec<Vec<f32>> = tree_leaves(&doubled)
        .iter()
        .map(|a| a.to_vec::<f32>().unwrap())
        .collect();
    assert_eq!(values, vec![vec![4.0, 6.0], vec![8.0], vec![2.0]]);
    assert_eq!(
        tree_structure(&params).to_string(),
        "{'a': [*, *], 'b': [*]}"
    );
    let pair = (
        f32s(&[1.0], &[1]),
        [jnp::zeros(&[2], DType::F32), jnp::ones(&[2], DType::F32)],
    );
    assert_eq!(tree_structure(&pair).to_string(), "(*, [*, *])");
    let err =
        tree_unflatten::<(Array, Array)>(&TreeDef::Leaf, vec![f32s(&[1.0], &[1])]).unwrap_err();
    assert!(err.to_string().contains("does not fit a tuple"), "{err}");
    let two = tree_structure(&pair);
    let err = tree_unflatten::<(Array, [Array; 2])>(&two, vec![f32s(&[1.0], &[1])]).unwrap_err();
    assert!(
        err.to_string()
            .contains("(*, [*, *]) has 3 leaves, 1 were given")
            && err.to_string().contains("pytrees.rs:"),
        "{err}"
    );
}

/// tree_map_n / tree_map2 / tree_map3, tree_zip and tree_reduce over
/// several trees, as jax.tree_util's tree_map(f, *trees) and tree_reduce.
#[test]
fn tree_functions_over_several_trees() {
    let tree = |a: f32, b: f32| {
        let mut m = BTreeMap::new();
        m.insert("w".to_string(), vec![f32s(&[a, a], &[2]), f32s(&[b], &[1])]);
        m
    };
    let (x, y, z) = (tree(1.0, 2.0), tree(10.0, 20.0), tree(100.0, 200.0));
    let leaves = |t: &BTreeMap<String, Vec<Array>>| -> Vec<Vec<f32>> {
        tree_leaves(t)
            .iter()
            .map(|a| a.to_vec::<f32>().unwrap())
            .collect()
    };
    let sum = tree_map_n(&[&x, &y, &z], |l| l[0] + l[1] + l[2]).unwrap();
    assert_eq!(leaves(&sum), vec![vec![111.0, 111.0], vec![222.0]]);
    let ema = tree_map2(&x, &y, |e, p| e * 0.9 + p * 0.1).unwrap();
    assert_eq!(leaves(&ema), vec![vec![1.9, 1.9], vec![3.8]]);
    let fma = tree_map3(&x, &y, &z, |a, b, c| a * b + c).unwrap();
    assert_eq!(leaves(&fma), vec![vec![110.0, 110.0], vec![240.0]]);
    let pairs = tree_zip(&x, &z).unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[1].1.to_vec::<f32>().unwrap(), vec![200.0]);
    assert_eq!(tree_reduce(&x, 0, |n, leaf| n + leaf.size()), 3);
}

/// Mismatched trees: the error names both structures, the first path
/// where they differ, both leaf counts and the caller's line, for the
/// tree functions and for the optimizers.
#[test]
fn tree_mismatch_errors_name_structures_path_counts_and_line() {
    let mut a = BTreeMap::new();
    a.insert("b".to_string(), f32s(&[1.0], &[1]));
    a.insert("w".to_string(), f32s(&[1.0], &[1]));
    let nested: BTreeMap<String, Vec<Array>> = a
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                if k == "w" {
                    vec![v.clone(), v.clone()]
                } else {
                    vec![v.clone()]
                },
            )
        })
        .collect();
    let flat: BTreeMap<String, Vec<Array>> = a
        .iter()
        .map(|(k, v)| (k.clone(), vec![v.clone()]))
        .collect();
    let err = tree_map2(&nested, &flat, |x, y| x + y)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tree_map2")
            && err.contains("first difference at ['w']: [*, *] vs [*]")
            && err.contains("{'b': [*], 'w': [*, *]} (3 leaves)")
            && err.contains("{'b': [*], 'w': [*]} (2 leaves)")
            && err.contains("pytrees.rs:"),
        "{err}"
    );
    let one = vec![f32s(&[1.0], &[1])];
    let err = tree_zip(&one, &vec![one[0].clone(), one[0].clone()])
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("at the root"), "{err}");

    use oxla_optim::{GradientTransformation, adam};
    let opt = adam(0.1);
    let state = opt.init(&nested);
    let err = opt
        .update(flat.clone(), state, &nested)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("first difference at ['w']") && err.contains("pytrees.rs:"),
        "{err}"
    );
}
