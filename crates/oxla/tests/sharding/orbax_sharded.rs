//! Orbax checkpoints of arrays over a mesh, as Orbax writes them: oxla's
//! `orbax::save` keeps each array's `NamedSharding` (mesh, axis names and
//! types, partition spec, device ids) and writes each distinct block in
//! Orbax's replica-parallel write shape, without gathering it. Python's
//! Orbax (orbax_sharded.py, on 8 CPU devices) restores it without a
//! target onto the same meshes and specs, bit for bit, and saving what it
//! restored writes the same keys, `.zarray`s, `_METADATA`, `_sharding`
//! and array metadata; oxla reads its own back onto the mesh.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use oxla::{Array, Mesh, NamedSharding, P, PartitionSpec};
use oxla_train::checkpoint::orbax;
use serde_json::{Value, json};

use crate::eight_devices;

fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
}

fn on(mesh: &Mesh, shape: &[i64], seed: f32, spec: PartitionSpec) -> Array {
    let n = shape.iter().product::<i64>() as usize;
    let x = Array::from_slice(&values(n, seed), shape).unwrap();
    oxla::device_put(&x, NamedSharding::new(mesh, spec)).unwrap()
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn sharded_arrays_save_as_orbax_does_and_restore_in_orbax_onto_their_meshes() {
    eight_devices();
    let grid = Mesh::new(&[("data", 2), ("model", 4)]).unwrap();
    let line = Mesh::new(&[("data", 8)]).unwrap();
    // Row blocks replicated 4 times (written as [1, 8] slices), column
    // blocks replicated twice, a block per device, an entry of two axes,
    // a replicated array no dimension of which the 8 replicas divide,
    // another mesh, and an array on one device.
    let tree: BTreeMap<String, Array> = BTreeMap::from([
        (
            "rows".to_string(),
            on(&grid, &[8, 8], 0.0, P!["data", None]),
        ),
        (
            "cols".to_string(),
            on(&grid, &[4, 4], 1.0, P![None, "model"]),
        ),
        (
            "tiles".to_string(),
            on(&grid, &[8, 16], 2.0, P!["data", "model"]),
        ),
        (
            "flat".to_string(),
            on(&grid, &[16], 3.0, P![["data", "model"]]),
        ),
        ("copy".to_string(), on(&grid, &[3], 4.0, P![])),
        ("line".to_string(), on(&line, &[16, 2], 5.0, P!["data"])),
        ("step".to_string(), Array::scalar(9.0f32).unwrap()),
    ]);
    let root = tempfile::tempdir().unwrap();
    let ours = root.path().join("oxla");
    orbax::save(&ours, &tree).unwrap();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sharding/orbax_sharded.py");
    let out: Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[root.path()])).unwrap();

    // Restored without a target: each array on its mesh with its spec.
    let leaves = &out["leaves"];
    let expect = [
        (
            "rows",
            json!({"data": 2, "model": 4}),
            json!(["data", null]),
        ),
        (
            "cols",
            json!({"data": 2, "model": 4}),
            json!([null, "model"]),
        ),
        (
            "tiles",
            json!({"data": 2, "model": 4}),
            json!(["data", "model"]),
        ),
        (
            "flat",
            json!({"data": 2, "model": 4}),
            json!([["data", "model"]]),
        ),
        ("copy", json!({"data": 2, "model": 4}), json!([])),
        ("line", json!({"data": 8}), json!(["data"])),
    ];
    for (name, mesh, spec) in expect {
        let leaf = &leaves[name];
        assert_eq!(leaf["sharding"], "NamedSharding", "{name}: {leaf}");
        assert_eq!(leaf["mesh"], mesh, "{name}");
        assert_eq!(leaf["spec"], spec, "{name}");
        assert_eq!(leaf["devices"], json!([0, 1, 2, 3, 4, 5, 6, 7]), "{name}");
        assert_eq!(leaf["axis_types"][0], "AxisType.Auto", "{name}");
    }
    assert_eq!(leaves["step"]["sharding"], "SingleDeviceSharding");
    for (name, array) in &tree {
        let data = base64::engine::general_purpose::STANDARD
            .decode(leaves[name]["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(data, array.to_host().unwrap().bytes, "{name}");
    }

    // Orbax saving what it restored writes what oxla wrote.
    let theirs = root.path().join("twin");
    let stores = &out["stores"];
    assert_eq!(stores["oxla"]["keys"], stores["twin"]["keys"]);
    assert_eq!(stores["oxla"]["zarray"], stores["twin"]["zarray"]);
    for file in ["_METADATA", "array_metadatas/process_0", "_sharding"] {
        assert_eq!(
            json_file(&ours.join(file)),
            json_file(&theirs.join(file)),
            "{file}"
        );
    }
    assert_eq!(
        std::fs::read(ours.join("_sharding")).unwrap(),
        std::fs::read(theirs.join("_sharding")).unwrap()
    );
    // The replica-parallel write shapes and the chunks they make.
    let metadata = json_file(&ours.join("_METADATA"));
    let write_shape = |name: &str| {
        metadata["tree_metadata"][format!("('{name}',)")]["value_metadata"]["write_shape"].clone()
    };
    assert_eq!(write_shape("rows"), json!([1, 8]));
    assert_eq!(write_shape("cols"), json!([2, 1]));
    assert_eq!(write_shape("tiles"), json!([4, 4]));
    assert_eq!(write_shape("copy"), json!([3]));
    let keys = stores["oxla"]["keys"].as_array().unwrap();
    let chunks_of = |name: &str| {
        keys.iter()
            .filter(|k| {
                let k = k.as_str().unwrap();
                k.starts_with(&format!("{name}/")) && !k.ends_with(".zarray")
            })
            .count()
    };
    assert_eq!(
        (
            chunks_of("rows"),
            chunks_of("cols"),
            chunks_of("tiles"),
            chunks_of("copy")
        ),
        (8, 8, 8, 1)
    );

    // oxla reads it back onto the saving layout, bit for bit.
    let back = orbax::load(&ours, &tree).unwrap();
    for (name, array) in &tree {
        assert_eq!(
            back[name].to_host().unwrap().bytes,
            array.to_host().unwrap().bytes,
            "{name}"
        );
        assert_eq!(
            back[name].named_sharding().map(|n| n.spec().to_string()),
            array.named_sharding().map(|n| n.spec().to_string()),
            "{name}"
        );
    }
}
