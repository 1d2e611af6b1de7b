//! Arrays over 8 CPU devices: meshes, partition specs, device_put, sharded
//! jit (against JAX's values and JAX's output shardings, computed at test
//! time by reference.py on 8 CPU devices), sharding constraints under the
//! transformations, and every way a sharding can be wrong. A test binary
//! of its own: its client has 8 devices.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "sharding") };
}

mod checkpoints;
#[cfg(feature = "distributed")]
mod distributed;
mod explicit;
mod exports;
mod orbax_sharded;
mod placement;
mod programs;
mod shard_maps;
mod training;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use oxla::{Array, Mesh, NamedSharding, P, PartitionSpec};

/// The client has 8 CPU devices; every test calls this first.
pub fn eight_devices() {
    oxla::set_cpu_device_count(8).unwrap();
}

/// The ('data': 4, 'model': 2) mesh of the reference programs.
pub fn mesh() -> Mesh {
    eight_devices();
    Mesh::new(&[("data", 4), ("model", 2)]).unwrap()
}

pub fn named(spec: PartitionSpec) -> NamedSharding {
    NamedSharding::new(&mesh(), spec)
}

/// The reference programs' inputs: x f32[8,4], w f32[4,6].
pub fn inputs() -> (Array, Array) {
    eight_devices();
    let x: Vec<f32> = (0..32).map(|i| (i as f32 - 10.0) / 7.0).collect();
    let w: Vec<f32> = (0..24).map(|i| (i as f32 - 5.0) / 11.0).collect();
    (
        Array::from_slice(&x, &[8, 4]).unwrap(),
        Array::from_slice(&w, &[4, 6]).unwrap(),
    )
}

/// x split by rows over 'data', w by columns over 'model' (as in
/// reference.py).
pub fn sharded_inputs() -> (Array, Array) {
    let (x, w) = inputs();
    (
        oxla::device_put(&x, named(P!["data", None])).unwrap(),
        oxla::device_put(&w, named(P![None, "model"])).unwrap(),
    )
}

/// JAX's output of program `name`: values, shape and output spec.
pub struct Expected {
    pub value: Vec<f32>,
    pub shape: Vec<i64>,
    pub spec: String,
}

/// reference.py's entry `name`, as it printed it.
pub fn reference(name: &str) -> &'static serde_json::Value {
    static CASES: OnceLock<BTreeMap<String, serde_json::Value>> = OnceLock::new();
    let cases = CASES.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sharding/reference.py");
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap()
    });
    &cases[name]
}

pub fn expected(name: &str) -> Expected {
    let case = reference(name);
    Expected {
        value: case["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect(),
        shape: case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect(),
        spec: case["spec"].as_str().unwrap().to_string(),
    }
}

/// How closely a program split over devices must match JAX's: each device
/// sums its block's partial products and a collective adds them, in
/// another order than one device (or JAX's partitioner) does.
const SHARDED: oxla_testing::Tolerance = oxla_testing::Tolerance::chain(
    84.0,
    84.0,
    "a sharded program sums partial products per device and then across devices, in another order",
);

/// `got` (oxla's f32 values) matches `want` within [`SHARDED`].
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32]) {
    let host = |v: &[f32]| {
        oxla_npy::HostArray::new(
            oxla_pjrt::ElementType::F32,
            vec![v.len() as i64],
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
    };
    let caller = std::panic::Location::caller();
    oxla_testing::assert_matches_jax(&host(got), &host(want), SHARDED, &caller.to_string());
}
