//! JAX's reference values, computed once per test binary by ops.py.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use base64::Engine;
use oxla::{Array, DType};

/// One case: JAX's inputs and output.
pub struct Case {
    pub inputs: Vec<Array>,
    pub output: oxla_npy::HostArray,
}

fn dtype(name: &str) -> DType {
    DType::from_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

fn decode(v: &serde_json::Value) -> (DType, Vec<i64>, Vec<u8>) {
    let dims = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(v["data"].as_str().unwrap())
        .unwrap();
    (dtype(v["dtype"].as_str().unwrap()), dims, bytes)
}

/// ops.py's cases, run with `args`.
fn run_ops_py(args: &[&str]) -> BTreeMap<String, serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/ops.py");
    let args: Vec<&Path> = args.iter().map(Path::new).collect();
    let json: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &args)).unwrap();
    json["cases"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Every case, by name (the bf16 and f16 variants too).
pub fn cases() -> &'static BTreeMap<String, serde_json::Value> {
    static CASES: OnceLock<BTreeMap<String, serde_json::Value>> = OnceLock::new();
    CASES.get_or_init(|| run_ops_py(&[]))
}

/// The 64-bit variants of the cases ("case@f64", "case@i64"), computed by
/// JAX with x64 enabled.
pub fn x64_cases() -> &'static BTreeMap<String, serde_json::Value> {
    static CASES: OnceLock<BTreeMap<String, serde_json::Value>> = OnceLock::new();
    CASES.get_or_init(|| run_ops_py(&["--x64"]))
}

/// The case `name` with its inputs on the device.
pub fn case(name: &str) -> Case {
    case_of(cases(), name)
}

/// The case `name` of `cases` with its inputs on the device.
pub fn case_of(cases: &BTreeMap<String, serde_json::Value>, name: &str) -> Case {
    let v = &cases[name];
    Case {
        inputs: v["inputs"].as_array().unwrap().iter().map(array).collect(),
        output: host(&v["output"]),
    }
}

/// An encoded array on the device.
pub fn array(v: &serde_json::Value) -> Array {
    let (d, dims, bytes) = decode(v);
    Array::from_bytes(d, &dims, &bytes).unwrap()
}

/// An encoded array on the host.
pub fn host(v: &serde_json::Value) -> oxla_npy::HostArray {
    let (d, dims, bytes) = decode(v);
    let element = oxla_pjrt::ElementType::from(d);
    oxla_npy::HostArray::new(element, dims, bytes)
}

/// The output of a reference script (run once per test binary and script).
pub fn script(name: &str) -> &'static serde_json::Value {
    // Python puts a script's directory first on its path, so a script here
    // named like a stdlib module (random.py) would shadow it for all of them.
    assert!(
        !matches!(name, "random.py" | "secrets.py" | "json.py" | "math.py"),
        "reference script {name} shadows a Python stdlib module; name it otherwise (prng.py)"
    );
    static OUTPUTS: OnceLock<std::sync::Mutex<BTreeMap<String, &'static serde_json::Value>>> =
        OnceLock::new();
    let outputs = OUTPUTS.get_or_init(Default::default);
    let mut outputs = outputs.lock().unwrap_or_else(|e| e.into_inner());
    outputs.entry(name.to_string()).or_insert_with(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/suite/reference")
            .join(name);
        Box::leak(Box::new(
            serde_json::from_slice(&oxla_testing::run_python(&path, &[])).unwrap(),
        ))
    })
}

/// JAX's jaxpr texts and promotion table (reference/jaxprs.py).
pub fn jaxprs_and_promotion() -> &'static serde_json::Value {
    static DATA: OnceLock<serde_json::Value> = OnceLock::new();
    DATA.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/jaxprs.py");
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap()
    })
}

/// A list of encoded arrays on the device.
pub fn arrays(v: &serde_json::Value) -> Vec<Array> {
    v.as_array().unwrap().iter().map(array).collect()
}

/// How closely the suite's models, loops and gradients (chains of many
/// ops) must match JAX.
pub const CHAIN: oxla_testing::Tolerance = oxla_testing::Tolerance::chain(
    840.0,
    84.0,
    "models, loops and gradients are chains of dots and reductions that XLA builds sum in other orders",
);

/// oxla's array against JAX's encoded one, within [`CHAIN`].
pub fn assert_close(got: &Array, want: &serde_json::Value, what: &str) {
    let got = got.to_host().unwrap_or_else(|e| panic!("{what}: {e}"));
    oxla_testing::assert_matches_jax(&got, &host(want), CHAIN, what);
}

/// [`assert_close`] for results of f32 dots or convolutions: within
/// [`CHAIN`] on the CPU, TensorFloat-32's tolerance on GPUs
/// (`oxla_testing::contraction_tolerance`).
pub fn assert_contraction_close(got: &Array, want: &serde_json::Value, what: &str) {
    let got = got.to_host().unwrap_or_else(|e| panic!("{what}: {e}"));
    let tolerance = oxla_testing::contraction_tolerance(CHAIN);
    oxla_testing::assert_matches_jax(&got, &host(want), tolerance, what);
}

/// [`assert_close`] over a list.
pub fn assert_all_close(got: &[Array], want: &serde_json::Value, what: &str) {
    let want = want.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_close(g, w, &format!("{what}[{i}]"));
    }
}

/// An oxla array encoded as the reference scripts encode theirs (to compare
/// against a closed form with [`assert_close`]).
pub fn encode(a: &Array) -> serde_json::Value {
    let h = a.to_host().unwrap();
    let d = a.dtype();
    serde_json::json!({
        "dtype": d.numpy_name(),
        "shape": h.dims,
        "data": base64::engine::general_purpose::STANDARD.encode(&h.bytes),
    })
}

/// Finite differences, the second reference for gradients: `<g, v>` against
/// `(loss(p + εv) - loss(p - εv)) / 2ε` (ε = 1e-3, the losses with full
/// f32 dots) along one direction with elements `direction(parameter,
/// element)`, within 2% (at least 2e-4).
pub fn assert_central_difference(
    params: &[Array],
    grads: &[Array],
    loss: impl Fn(&[Array]) -> Array,
    direction: impl Fn(usize, usize) -> f32,
) {
    let eps = 1e-3f64;
    let mut analytic = 0.0;
    let (mut plus, mut minus) = (Vec::new(), Vec::new());
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        let v: Vec<f32> = (0..p.size() as usize).map(|k| direction(i, k)).collect();
        let v = Array::from_slice(&v, p.shape()).unwrap();
        analytic += oxla::numpy::sum(&(g * &v), None, false)
            .item::<f32>()
            .unwrap() as f64;
        plus.push(p + &(&v * eps));
        minus.push(p - &(&v * eps));
    }
    // Full f32 dots: a GPU's default TensorFloat-32 rounds each loss to
    // about 1e-3, which the 2e-3 step would blow up to the size of the
    // derivative itself.
    let value = |p: &[Array]| {
        oxla::config::with_default_matmul_precision(Some(oxla::lax::Precision::Highest), || {
            loss(p).item::<f32>().unwrap() as f64
        })
    };
    let numeric = (value(&plus) - value(&minus)) / (2.0 * eps);
    assert!(
        (analytic - numeric).abs() <= 2e-2 * analytic.abs().max(1e-2),
        "analytic {analytic}, numeric {numeric}"
    );
}
