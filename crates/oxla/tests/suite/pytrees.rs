//! Pytrees: derived structs with static fields through jit, containers,
//! and the tree functions.

use std::collections::BTreeMap;

use oxla::{
    Array, DType, Pytree, TreeDef, jit, numpy as jnp, tree_leaves, tree_map, tree_structure,
    tree_unflatten,
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
            h = oxla::nn::relu(&h);
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
    let err = tree_unflatten::<(Array, Array)>(&TreeDef::Leaf, vec![]).unwrap_err();
    assert!(err.to_string().contains("does not fit a tuple"), "{err}");
}
