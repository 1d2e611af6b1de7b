//! Sharded checkpoints, as Orbax writes them: arrays over ('data': 8) are
//! saved block by block (a replicated array once), never gathered on one
//! device, and restore onto ('data': 2, 'model': 4), onto one device, or
//! onto the saving mesh, each leaf with the template's sharding and the
//! saved values bit for bit. A template whose sharding does not fit is an
//! error naming the leaf.

use std::collections::BTreeMap;

use oxla::{Array, Mesh, NamedSharding, P, PartitionSpec};
use oxla_train::checkpoint::{CheckpointManager, CheckpointManagerOptions};

use crate::eight_devices;

#[derive(oxla::Pytree, Clone)]
struct State {
    w: Array,
    v: Array,
    bias: Array,
    step: Array,
}

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37 - 3.0).sin()).collect()
}

fn state() -> State {
    State {
        w: Array::from_slice(&values(16 * 12), &[16, 12]).unwrap(),
        v: Array::from_slice(&values(8 * 4 * 3), &[8, 4, 3]).unwrap(),
        bias: Array::from_slice(&values(12), &[12]).unwrap(),
        step: Array::scalar(41i32).unwrap(),
    }
}

fn on(mesh: &Mesh, x: &Array, spec: PartitionSpec) -> Array {
    oxla::device_put(x, NamedSharding::new(mesh, spec)).unwrap()
}

fn spec_of(x: &Array) -> String {
    x.named_sharding()
        .map(|n| n.spec().to_string())
        .unwrap_or_else(|| "single device".into())
}

fn assert_same_values(got: &State, want: &State) {
    for (g, w, name) in [
        (&got.w, &want.w, "w"),
        (&got.v, &want.v, "v"),
        (&got.bias, &want.bias, "bias"),
    ] {
        assert_eq!(
            g.to_vec::<f32>().unwrap(),
            w.to_vec::<f32>().unwrap(),
            "{name}"
        );
    }
    assert_eq!(got.step.item::<i32>().unwrap(), 41);
}

#[test]
fn sharded_state_saves_block_by_block_and_restores_onto_another_mesh() {
    eight_devices();
    let data8 = Mesh::new(&[("data", 8)]).unwrap();
    let plain = state();
    let saved = State {
        w: on(&data8, &plain.w, P!["data", None]),
        v: on(&data8, &plain.v, P![None, None, None]),
        bias: on(&data8, &plain.bias, P![None]),
        step: plain.step.clone(),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut manager =
        CheckpointManager::open(dir.path(), CheckpointManagerOptions::default()).unwrap();
    manager.save(7, &saved, BTreeMap::new()).unwrap();
    manager.wait_until_finished().unwrap();

    // Eight row blocks of w; the replicated v and bias once each.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("7/checkpoint.json")).unwrap())
            .unwrap();
    let blocks = |leaf: usize| manifest["leaves"][leaf]["blocks"].as_array().unwrap().len();
    assert_eq!(manifest["leaves"][0]["name"], "w");
    assert_eq!((blocks(0), blocks(1), blocks(2), blocks(3)), (8, 1, 1, 1));
    assert_eq!(
        manifest["leaves"][0]["blocks"][3]["index"],
        serde_json::json!([[6, 8], [0, 12]])
    );

    // Onto a 2×4 mesh, with other specs (w split both ways, v over the
    // model axis, bias over data).
    let grid = Mesh::new(&[("data", 2), ("model", 4)]).unwrap();
    let zeros = |x: &Array| oxla::numpy::zeros_like(x);
    let like = State {
        w: on(&grid, &zeros(&plain.w), P!["model", "data"]),
        v: on(&grid, &zeros(&plain.v), P!["model", None, None]),
        bias: on(&grid, &zeros(&plain.bias), P!["data"]),
        step: zeros(&plain.step),
    };
    let restored = manager.restore(7, &like).unwrap();
    assert_same_values(&restored, &plain);
    assert_eq!(spec_of(&restored.w), spec_of(&like.w));
    assert_eq!(spec_of(&restored.w), "P('model', 'data')");
    assert_eq!(spec_of(&restored.v), "P('model', None, None)");
    assert_eq!(spec_of(&restored.bias), "P('data')");
    for shard in restored.w.addressable_shards().unwrap() {
        assert_eq!(shard.data.shape(), &[4, 6]);
    }

    // Onto one device, and back onto the saving mesh's layout.
    let whole = manager.restore(7, &state()).unwrap();
    assert_same_values(&whole, &plain);
    assert_eq!(spec_of(&whole.w), "single device");
    let again = manager.restore(7, &saved).unwrap();
    assert_same_values(&again, &plain);
    assert_eq!(spec_of(&again.w), "P('data', None)");
}

#[test]
fn a_template_of_another_shape_is_an_error_naming_the_leaf() {
    eight_devices();
    let dir = tempfile::tempdir().unwrap();
    let mut manager =
        CheckpointManager::open(dir.path(), CheckpointManagerOptions::default()).unwrap();
    manager.save(1, &state(), BTreeMap::new()).unwrap();
    let mut wrong = state();
    wrong.bias = Array::from_slice(&values(6), &[6]).unwrap();
    let err = manager.restore(1, &wrong).err().unwrap().to_string();
    assert!(err.contains("bias") && err.contains("[12]"), "{err}");
    let err = manager.restore(2, &state()).err().unwrap().to_string();
    assert!(
        err.contains("no committed step 2") && err.contains("[1]"),
        "{err}"
    );
}
