//! oxla_train::checkpoint::orbax: checkpoints that Python's Orbax wrote
//! (reference/orbax_checkpoint.py: its defaults, zarr 2 in several chunks,
//! zarr 3 with sharding, and without OCDBT) list the names, dtypes and
//! shapes Orbax saved and load bit for bit into flat and nested maps; a
//! Flax linen MLP's params load into an oxla `Mlp` through a name mapping
//! and compute Flax's output; a template that does not fit, and a
//! corrupted or truncated checkpoint, are errors naming what is wrong.
//!
//! The other way: checkpoints oxla writes (`orbax::save`, with Orbax's
//! defaults, in chunks, uncompressed, over many B+tree nodes and data
//! files, and with 64-bit dtypes in an x64 child process) restore in
//! Python through `StandardCheckpointer` and `PyTreeCheckpointer`, with a
//! target and without, bit for bit with their dict and list structure;
//! Orbax saving what it restored writes the same metadata and zarr
//! arrays; oxla reads them back bit for bit; and a save that cannot be
//! made is a typed error naming the path, leaving nothing behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use oxla::{Array, DType, numpy as jnp};
use oxla_nn::{Activation, Mlp};
use oxla_testing::BoundedOutput;
use oxla_train::checkpoint::orbax::{SaveError, SaveOptions};
use oxla_train::checkpoint::{LoadOptions, TensorSource, orbax, tensor_names};
use serde_json::{Value, json};

use crate::reference;

/// The script's directory of checkpoints and its output. oxla writes its
/// checkpoints first (the x64 one in a child process), so the one Python
/// run both writes Orbax's and restores oxla's.
fn written() -> &'static (tempfile::TempDir, Value) {
    static WRITTEN: OnceLock<(tempfile::TempDir, Value)> = OnceLock::new();
    WRITTEN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_oxla_checkpoints(dir.path());
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/orbax_checkpoint.py");
        let out = oxla_testing::run_python(&script, &[dir.path()]);
        (dir, serde_json::from_slice(&out).unwrap())
    })
}

fn checkpoint(kind: &str) -> PathBuf {
    PathBuf::from(written().1["checkpoints"][kind].as_str().unwrap())
}

fn expected() -> BTreeMap<String, oxla_npy::HostArray> {
    written().1["expected"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, v)| (name.clone(), reference::host(v)))
        .collect()
}

/// Zeros of each expected array's dtype and shape, by Orbax name.
fn flat_template() -> BTreeMap<String, Array> {
    expected()
        .into_iter()
        .map(|(name, host)| {
            let zeros = jnp::zeros(&host.dims, oxla::DType::from(host.element_type()));
            (name, zeros)
        })
        .collect()
}

fn same_bits(got: &Array, want: &oxla_npy::HostArray, what: &str) {
    let got = got.to_host().unwrap();
    assert_eq!(got.element_type(), want.element_type(), "{what}");
    assert_eq!(got.dims, want.dims, "{what}");
    assert_eq!(got.bytes, want.bytes, "{what}");
}

#[test]
fn every_kind_of_orbax_checkpoint_lists_and_loads_bit_for_bit() {
    let want = expected();
    for kind in ["default", "chunked", "zarr3", "plain"] {
        let path = checkpoint(kind);
        let listed = orbax::list(&path).unwrap();
        let names: Vec<&str> = listed.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            want.keys().map(String::as_str).collect::<Vec<_>>(),
            "{kind}"
        );
        for (name, dtype, shape) in &listed {
            let host = &want[name];
            assert_eq!(
                *dtype,
                oxla::DType::from(host.element_type()),
                "{kind} {name}"
            );
            assert_eq!(shape, &host.dims, "{kind} {name}");
        }
        let loaded = orbax::load(&path, &flat_template()).unwrap();
        for (name, host) in &want {
            same_bits(&loaded[name], host, &format!("{kind} {name}"));
        }
    }
}

#[test]
fn flax_params_load_into_nested_maps_and_an_oxla_mlp() {
    let want = expected();
    let path = checkpoint("default");
    // Nested maps, named by the default mapping (['params']['Dense_0']['kernel']
    // is params.Dense_0.kernel); the other arrays are left out.
    let mut params: BTreeMap<String, BTreeMap<String, BTreeMap<String, Array>>> = BTreeMap::new();
    for (name, host) in &want {
        let parts: Vec<&str> = name.split('.').collect();
        if let ["params", layer, leaf] = parts.as_slice() {
            let zeros = jnp::zeros(&host.dims, oxla::DType::from(host.element_type()));
            params
                .entry("params".to_string())
                .or_default()
                .entry(layer.to_string())
                .or_default()
                .insert(leaf.to_string(), zeros);
        }
    }
    let options = LoadOptions::default()
        .non_strict()
        .map_names(|leaf| Some(TensorSource::named(orbax::param_name(leaf))));
    let (loaded, report) = orbax::load_mapped(&path, &params, &options).unwrap();
    assert_eq!(report.loaded.len(), 4);
    assert!(report.missing.is_empty());
    assert!(report.unused.contains(&"table".to_string()));
    let kernel = &loaded["params"]["Dense_1"]["kernel"];
    same_bits(kernel, &want["params.Dense_1.kernel"], "nested kernel");

    // Into an oxla Mlp: layers[i].kernel is Flax's params.Dense_i.kernel.
    let template = Mlp::new(oxla::random::Key::new(0), &[4, 8, 3], Activation::Relu);
    let options = LoadOptions::default().non_strict().map_names(|leaf| {
        let name = orbax::param_name(leaf);
        Some(TensorSource::named(name.replacen(
            "layers.",
            "params.Dense_",
            1,
        )))
    });
    let (mlp, report) = orbax::load_mapped(&path, &template, &options).unwrap();
    assert_eq!(report.loaded.len(), 4, "{report:?}");
    assert!(report.missing.is_empty());
    for (i, layer) in mlp.layers.iter().enumerate() {
        same_bits(
            &layer.kernel,
            &want[&format!("params.Dense_{i}.kernel")],
            "kernel",
        );
        let bias = layer.bias.as_ref().unwrap();
        same_bits(bias, &want[&format!("params.Dense_{i}.bias")], "bias");
    }
    let mlp_case = &written().1["mlp"];
    let y = mlp.apply(&reference::array(&mlp_case["x"]));
    reference::assert_close(&y, &mlp_case["y"], "the loaded MLP's output against Flax's");
}

#[test]
fn a_template_that_does_not_fit_is_an_error_naming_the_array() {
    let path = checkpoint("default");
    let mut template = flat_template();
    template.insert("counts".to_string(), jnp::zeros(&[6], oxla::DType::I32));
    let err = orbax::load(&path, &template).unwrap_err().to_string();
    assert!(err.contains("counts") && err.contains("[7]"), "{err}");
    let mut template = flat_template();
    template.insert("absent".to_string(), jnp::zeros(&[1], oxla::DType::F32));
    let err = orbax::load(&path, &template).unwrap_err().to_string();
    assert!(err.contains("absent"), "{err}");
}

/// A copy of the checkpoint directory `from` at `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The largest file under `dir`.
fn largest_file(dir: &Path) -> PathBuf {
    let mut best = (0, PathBuf::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else if entry.metadata().unwrap().len() > best.0 {
                best = (entry.metadata().unwrap().len(), entry.path());
            }
        }
    }
    best.1
}

#[test]
fn corrupted_and_truncated_checkpoints_are_errors_naming_the_file() {
    let scratch = tempfile::tempdir().unwrap();
    let template = flat_template();

    // A flipped byte in the manifest: its checksum no longer matches.
    let flipped = scratch.path().join("flipped");
    copy_dir(&checkpoint("default"), &flipped);
    let manifest = flipped.join("manifest.ocdbt");
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&manifest, &bytes).unwrap();
    let err = orbax::load(&flipped, &template).unwrap_err().to_string();
    assert!(
        err.contains("manifest.ocdbt") && err.contains("CRC-32C"),
        "{err}"
    );

    // A truncated manifest.
    std::fs::write(&manifest, &bytes[..bytes.len() / 2]).unwrap();
    let err = orbax::list(&flipped).unwrap_err().to_string();
    assert!(
        err.contains("manifest.ocdbt") && err.contains("truncated"),
        "{err}"
    );

    // A truncated data file (the one holding the large array's chunk).
    let truncated = scratch.path().join("truncated");
    copy_dir(&checkpoint("default"), &truncated);
    let data = largest_file(&truncated);
    let bytes = std::fs::read(&data).unwrap();
    std::fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
    let err = orbax::load(&truncated, &template).unwrap_err().to_string();
    let file_name = data.file_name().unwrap().to_str().unwrap();
    assert!(
        err.contains(file_name) && err.contains("truncated"),
        "{err}"
    );

    // A damaged chunk of a checkpoint without OCDBT.
    let plain = scratch.path().join("plain");
    copy_dir(&checkpoint("plain"), &plain);
    std::fs::write(plain.join("table/0.0"), b"not zstd").unwrap();
    let err = orbax::load(&plain, &template).unwrap_err().to_string();
    assert!(err.contains("table/0.0") && err.contains("zstd"), "{err}");

    // A directory that is no checkpoint, and a file.
    let err = orbax::list(scratch.path()).unwrap_err().to_string();
    assert!(err.contains("no Orbax arrays"), "{err}");
    let err = orbax::list(flipped.join("_METADATA"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a directory"), "{err}");
}

// oxla writes, Orbax restores.

/// A leaf of every dtype without x64, scalars and ranks 0 to 3, nested
/// maps, a list of maps and a tuple (Orbax's dict and sequence keys; the
/// struct's fields are dict keys too), an array large enough to be
/// stored out of line and split into chunks, and the empty values Orbax
/// records without an array (`None`, `{}`, `[]`, `()`, and a `None` in a
/// list between arrays).
#[derive(oxla::Pytree)]
struct Saved {
    params: BTreeMap<String, BTreeMap<String, Array>>,
    layers: Vec<BTreeMap<String, Array>>,
    pair: (Array, Array),
    emb: Array,
    half: Array,
    counts: Array,
    bytes: Array,
    flags: Array,
    small: Array,
    shorts: Array,
    unsigned: Array,
    words: Array,
    waves: Array,
    step: Array,
    scale: Array,
    cube: Array,
    table: Array,
    nothing: Option<Array>,
    no_params: BTreeMap<String, Array>,
    no_layers: Vec<Array>,
    unit: (),
    maybe: Vec<Option<Array>>,
}

/// Bytes from a SplitMix64 stream: every bit pattern, NaN payloads,
/// subnormals and negative zeros included, for the floats.
fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// The host bytes of a leaf of `dtype` and `shape` drawn from `seed`
/// (booleans 0 or 1).
fn leaf_bytes(dtype: DType, shape: &[i64], seed: u64) -> Vec<u8> {
    let count: i64 = shape.iter().product();
    let mut bytes = pattern(seed, count as usize * dtype.byte_size());
    if dtype == DType::Bool {
        bytes.iter_mut().for_each(|b| *b &= 1);
    }
    bytes
}

fn leaf(dtype: DType, shape: &[i64], seed: u64) -> Array {
    Array::from_bytes(dtype, shape, &leaf_bytes(dtype, shape, seed)).unwrap()
}

fn saved() -> Saved {
    let dense = |seed, fan_in, fan_out| {
        BTreeMap::from([
            (
                "kernel".to_string(),
                leaf(DType::F32, &[fan_in, fan_out], seed),
            ),
            ("bias".to_string(), leaf(DType::F32, &[fan_out], seed + 1)),
        ])
    };
    let w = |seed, n| BTreeMap::from([("w".to_string(), leaf(DType::F32, &[n], seed))]);
    Saved {
        params: BTreeMap::from([
            ("Dense_0".to_string(), dense(1, 4, 8)),
            ("Dense_1".to_string(), dense(3, 8, 3)),
        ]),
        layers: vec![w(5, 2), w(6, 3)],
        pair: (leaf(DType::I32, &[], 7), leaf(DType::U8, &[2, 2], 8)),
        emb: leaf(DType::BF16, &[3, 5], 9),
        half: leaf(DType::F16, &[2, 3], 10),
        counts: leaf(DType::I32, &[7], 11),
        bytes: leaf(DType::U8, &[3], 12),
        flags: leaf(DType::Bool, &[5], 13),
        small: leaf(DType::I8, &[4], 14),
        shorts: leaf(DType::I16, &[3], 15),
        unsigned: leaf(DType::U16, &[3], 16),
        words: leaf(DType::U32, &[3], 17),
        waves: leaf(DType::C64, &[2], 18),
        step: leaf(DType::I32, &[], 19),
        scale: leaf(DType::F32, &[], 20),
        cube: leaf(DType::F32, &[2, 3, 4], 21),
        table: leaf(DType::F32, &[300, 250], 22),
        nothing: None,
        no_params: BTreeMap::new(),
        no_layers: Vec::new(),
        unit: (),
        maybe: vec![Some(leaf(DType::F32, &[2], 23)), None],
    }
}

/// The 64-bit leaves (Orbax name, dtype, shape), written with x64 on.
const X64_LEAVES: &[(&str, DType, &[i64])] = &[
    ("c128", DType::C128, &[2]),
    ("f64", DType::F64, &[3, 2]),
    ("i64", DType::I64, &[4]),
    ("scalar", DType::F64, &[]),
    ("u64", DType::U64, &[2]),
];

/// What each oxla checkpoint should hold, by Orbax name.
fn oxla_expected(kind: &str) -> BTreeMap<String, oxla_npy::HostArray> {
    if kind == "x64" {
        return X64_LEAVES
            .iter()
            .enumerate()
            .map(|(i, &(name, dtype, shape))| {
                let bytes = leaf_bytes(dtype, shape, 100 + i as u64);
                let element = oxla_pjrt::ElementType::from(dtype);
                let host = oxla_npy::HostArray::new(element, shape.to_vec(), bytes);
                (name.to_string(), host)
            })
            .collect();
    }
    let tree = saved();
    tensor_names(&tree)
        .iter()
        .zip(oxla::tree_leaves(&tree))
        .map(|(name, leaf)| (orbax::param_name(name), leaf.to_host().unwrap()))
        .collect()
}

/// The checkpoints oxla writes, with the Orbax settings each mirrors (a
/// twin Python saves with Orbax), or `None` where only a restore is
/// checked.
fn oxla_kinds() -> Vec<(&'static str, Option<Value>)> {
    vec![
        ("default", Some(json!({}))),
        ("chunked", Some(json!({"chunk_byte_size": 40_000}))),
        ("uncompressed", Some(json!({"use_compression": false}))),
        (
            "zarr3",
            Some(json!({"use_zarr3": true, "chunk_byte_size": 40_000})),
        ),
        ("files", Some(json!({"use_ocdbt": false}))),
        (
            "files_zarr3",
            Some(json!({"use_ocdbt": false, "use_zarr3": true, "use_compression": false})),
        ),
        ("small_nodes", None),
        ("x64", None),
    ]
}

fn oxla_path(root: &Path, kind: &str) -> PathBuf {
    root.join("oxla").join(kind)
}

/// Writes oxla's checkpoints under `root/oxla/` and lists them for the
/// script in `root/oxla.json`.
fn write_oxla_checkpoints(root: &Path) {
    let tree = saved();
    let options = [
        ("default", SaveOptions::default()),
        ("chunked", SaveOptions::default().chunk_byte_size(40_000)),
        ("uncompressed", SaveOptions::default().compression(false)),
        (
            "zarr3",
            SaveOptions::default().zarr3(true).chunk_byte_size(40_000),
        ),
        ("files", SaveOptions::default().use_ocdbt(false)),
        (
            "files_zarr3",
            SaveOptions::default()
                .use_ocdbt(false)
                .zarr3(true)
                .compression(false),
        ),
        // B+tree nodes of 2 KiB (several levels) and data files of 100 kB
        // (the table in chunks of at most that, values in many files).
        (
            "small_nodes",
            SaveOptions::default()
                .max_node_bytes(2048)
                .target_data_file_size(100_000),
        ),
    ];
    for (kind, options) in options {
        orbax::save_with(oxla_path(root, kind), &tree, &options).unwrap();
    }
    orbax::save(oxla_path(root, "empties_only"), &empties_only()).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "orbax_checkpoints::x64_writer_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("OXLA_ENABLE_X64", "1")
        .env("OXLA_ORBAX_X64_DIR", oxla_path(root, "x64"))
        .output_bounded();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("x64 Orbax checkpoint written"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: serde_json::Map<String, Value> = oxla_kinds()
        .into_iter()
        .map(|(kind, twin)| {
            let path = oxla_path(root, kind);
            (kind.to_string(), json!({"path": path, "twin": twin}))
        })
        .collect();
    std::fs::write(root.join("oxla.json"), Value::Object(listed).to_string()).unwrap();
}

/// The child's work: the 64-bit checkpoint, written and read back with
/// x64 on (a process-wide switch no other test of this binary may see).
#[test]
#[ignore = "run with OXLA_ENABLE_X64=1 by the orbax tests' written()"]
fn x64_writer_child() {
    assert!(
        oxla::x64_enabled(),
        "x64_writer_child needs OXLA_ENABLE_X64=1"
    );
    let dir = PathBuf::from(std::env::var_os("OXLA_ORBAX_X64_DIR").unwrap());
    let want = oxla_expected("x64");
    let tree: BTreeMap<String, Array> = want
        .iter()
        .map(|(name, host)| {
            let dtype = DType::from(host.element_type());
            let array = Array::from_bytes(dtype, &host.dims, &host.bytes).unwrap();
            (name.clone(), array)
        })
        .collect();
    orbax::save(&dir, &tree).unwrap();
    let back = orbax::load(&dir, &tree).unwrap();
    for (name, host) in &want {
        same_bits(&back[name], host, &format!("x64 {name}"));
    }
    println!("x64 Orbax checkpoint written");
}

/// The decoded `{"dtype", "shape", "data"}` arrays of a report.
fn hosts(v: &Value) -> BTreeMap<String, oxla_npy::HostArray> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(name, a)| (name.clone(), reference::host(a)))
        .collect()
}

#[test]
fn oxla_checkpoints_restore_in_orbax_bit_for_bit_with_and_without_a_target() {
    let restored = &written().1["restored"];
    for (kind, _) in oxla_kinds() {
        let want = oxla_expected(kind);
        let ways = restored[kind].as_object().unwrap();
        assert_eq!(ways.len(), 4, "{kind}");
        for (way, report) in ways {
            let got = hosts(&report["leaves"]);
            let names: Vec<&String> = got.keys().collect();
            assert_eq!(names, want.keys().collect::<Vec<_>>(), "{kind} {way}");
            for (name, host) in &want {
                let what = format!("{kind} restored by {way}: {name}");
                assert_eq!(got[name].element_type(), host.element_type(), "{what}");
                assert_eq!(got[name].dims, host.dims, "{what}");
                assert_eq!(got[name].bytes, host.bytes, "{what}");
            }
            if kind != "x64" {
                // Lists and tuples come back as lists, maps and struct
                // fields as dicts.
                let keys = &report["keys"];
                let layer = json!([["dict", "layers"], ["seq", "1"], ["dict", "w"]]);
                assert_eq!(keys["layers.1.w"], layer, "{kind} {way}");
                assert_eq!(keys["pair.0"], json!([["dict", "pair"], ["seq", "0"]]));
                let kernel = json!([["dict", "params"], ["dict", "Dense_0"], ["dict", "kernel"]]);
                assert_eq!(keys["params.Dense_0.kernel"], kernel, "{kind} {way}");
                // The empty values come back as themselves.
                let empties = json!({
                    "maybe.1": "None",
                    "no_layers": "list",
                    "no_params": "dict",
                    "nothing": "None",
                    "unit": "tuple",
                });
                assert_eq!(report["empties"], empties, "{kind} {way}");
            }
        }
    }
}

#[test]
fn oxla_reads_back_the_checkpoints_it_wrote_bit_for_bit() {
    let root = written().0.path();
    for (kind, _) in oxla_kinds() {
        let path = oxla_path(root, kind);
        let want = oxla_expected(kind);
        let listed = orbax::list(&path).unwrap();
        for ((name, dtype, shape), (want_name, host)) in listed.iter().zip(&want) {
            assert_eq!(name, want_name, "{kind}");
            assert_eq!(*dtype, DType::from(host.element_type()), "{kind} {name}");
            assert_eq!(shape, &host.dims, "{kind} {name}");
        }
        assert_eq!(listed.len(), want.len(), "{kind}");
        if kind == "x64" {
            continue; // read back by the x64 child
        }
        let template = saved();
        let back = orbax::load(&path, &template).unwrap();
        let names = tensor_names(&back);
        for (name, leaf) in names.iter().zip(oxla::tree_leaves(&back)) {
            let name = orbax::param_name(name);
            same_bits(&leaf, &want[&name], &format!("{kind} {name}"));
        }
    }
}

/// The files of a checkpoint directory, relative, each data file's random
/// name as `<hex>`.
fn layout(dir: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(dir)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let (parent, name) = relative.rsplit_once('/').unwrap_or(("", &relative));
            let hex = name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit());
            out.insert(if hex {
                format!("{parent}/<hex>")
            } else {
                relative
            });
        }
    }
    out
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn orbax_saving_what_it_restored_writes_what_oxla_wrote() {
    let (dir, out) = written();
    for (kind, twin) in oxla_kinds() {
        if twin.is_none() {
            continue;
        }
        let ours = oxla_path(dir.path(), kind);
        let theirs = PathBuf::from(out["twins"][kind].as_str().unwrap());
        assert_eq!(layout(&ours), layout(&theirs), "{kind}");
        // The tree's keys and kinds, and each array's sharding, to the byte
        // where Orbax's order is oxla's (its dicts are sorted, oxla's struct
        // fields are in declaration order).
        assert_eq!(
            json_file(&ours.join("_METADATA")),
            json_file(&theirs.join("_METADATA")),
            "{kind}"
        );
        assert_eq!(
            std::fs::read(ours.join("_sharding")).unwrap(),
            std::fs::read(theirs.join("_sharding")).unwrap(),
            "{kind}"
        );
        let sorted = |path: &Path| {
            let mut list = json_file(path)["array_metadatas"]
                .as_array()
                .unwrap()
                .clone();
            list.sort_by_key(|a| a["array_metadata"]["param_name"].to_string());
            list
        };
        let metadatas = "array_metadatas/process_0";
        assert_eq!(
            sorted(&ours.join(metadatas)),
            sorted(&theirs.join(metadatas)),
            "{kind}"
        );
        // The same keys in OCDBT (or files), and each array's .zarray or
        // zarr.json as TensorStore writes it.
        let stores = &out["stores"];
        let (a, b) = (
            &stores[ours.to_str().unwrap()],
            &stores[theirs.to_str().unwrap()],
        );
        assert_eq!(a["keys"], b["keys"], "{kind}");
        assert_eq!(a["zarray"], b["zarray"], "{kind}");
        let ours_meta = json_file(&ours.join("_CHECKPOINT_METADATA"));
        let theirs_meta = json_file(&theirs.join("_CHECKPOINT_METADATA"));
        let fields = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(fields(&ours_meta), fields(&theirs_meta), "{kind}");
        if kind == "default" {
            assert_eq!(ours_meta["item_handlers"], theirs_meta["item_handlers"]);
        }
        let commit = std::fs::read_to_string(ours.join("commit_success.txt")).unwrap();
        assert_eq!(
            commit,
            format!("Checkpoint commit was successful to {}", ours.display())
        );
    }
    // The chunked table is in Orbax's chunks of [100, 50].
    let chunked = &out["stores"][oxla_path(dir.path(), "chunked").to_str().unwrap()];
    let zarray: Value =
        serde_json::from_str(chunked["zarray"]["table/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(zarray["chunks"], json!([100, 50]));
    // So is the zarr 3 one, as shards of one inner chunk.
    let zarr3 = &out["stores"][oxla_path(dir.path(), "zarr3").to_str().unwrap()];
    let meta: Value =
        serde_json::from_str(zarr3["zarray"]["table/zarr.json"].as_str().unwrap()).unwrap();
    assert_eq!(
        meta["chunk_grid"]["configuration"]["chunk_shape"],
        json!([100, 50])
    );
    assert!(list_has(&zarr3["keys"], "table/c/2/4"), "{}", zarr3["keys"]);
    // Without OCDBT the arrays are plain files.
    let files = oxla_path(dir.path(), "files");
    assert!(files.join("table/.zarray").is_file() && files.join("table/0.0").is_file());
    assert!(!files.join("manifest.ocdbt").exists());
    let files_zarr3 = oxla_path(dir.path(), "files_zarr3");
    assert!(files_zarr3.join("params.Dense_0.kernel/c/0/0").is_file());
}

/// A tree of empty values and no array: Orbax's `{"d": {}, "n": None}`.
#[derive(oxla::Pytree, Debug)]
struct EmptiesOnly {
    d: BTreeMap<String, Array>,
    n: Option<Array>,
}

fn empties_only() -> EmptiesOnly {
    EmptiesOnly {
        d: BTreeMap::new(),
        n: None,
    }
}

#[test]
fn a_tree_of_empty_values_alone_is_its_metadata_as_orbax_writes_it() {
    let (dir, out) = written();
    let ours = oxla_path(dir.path(), "empties_only");
    let theirs = checkpoint("empties_only");
    let files = ["_CHECKPOINT_METADATA", "_METADATA", "commit_success.txt"];
    let files: std::collections::BTreeSet<String> = files.map(String::from).into();
    assert_eq!(layout(&theirs), files);
    assert_eq!(layout(&ours), files);
    assert_eq!(
        std::fs::read(ours.join("_METADATA")).unwrap(),
        std::fs::read(theirs.join("_METADATA")).unwrap()
    );
    assert_eq!(
        out["restored"]["empties_only"]["empties"],
        json!({"d": "dict", "n": "None"})
    );
    // oxla reads both back: no arrays, and the template as it was.
    for path in [&ours, &theirs] {
        assert!(orbax::list(path).unwrap().is_empty());
        let back = orbax::load(path, &empties_only()).unwrap();
        assert!(back.d.is_empty() && back.n.is_none(), "{back:?}");
    }
}

fn list_has(list: &Value, key: &str) -> bool {
    list.as_array()
        .unwrap()
        .iter()
        .any(|k| k.as_str() == Some(key))
}

#[test]
fn a_save_that_cannot_be_made_is_a_typed_error_naming_the_path() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let tree = BTreeMap::from([("w".to_string(), leaf(DType::F32, &[2, 3], 1))]);
    let nothing_left = |dest: &Path| {
        let name = dest.file_name().unwrap().to_str().unwrap();
        let tmp = dest.with_file_name(format!("{name}.orbax-checkpoint-tmp"));
        assert!(!tmp.exists(), "{} left behind", tmp.display());
    };

    // An existing checkpoint is never written over; an empty directory is
    // taken.
    let dest = root.join("ckpt");
    orbax::save(&dest, &tree).unwrap();
    let err = orbax::save(&dest, &tree).unwrap_err();
    assert!(
        matches!(&err, SaveError::Exists { path } if path == &dest),
        "{err}"
    );
    assert!(err.to_string().contains(dest.to_str().unwrap()), "{err}");
    let empty = root.join("empty");
    std::fs::create_dir(&empty).unwrap();
    orbax::save(&empty, &tree).unwrap();
    assert_eq!(orbax::list(&empty).unwrap().len(), 1);

    // A crashed save's temporary directory is replaced.
    let crashed = root.join("crashed");
    std::fs::create_dir_all(root.join("crashed.orbax-checkpoint-tmp/d")).unwrap();
    std::fs::write(root.join("crashed.orbax-checkpoint-tmp/d/junk"), b"junk").unwrap();
    orbax::save(&crashed, &tree).unwrap();
    nothing_left(&crashed);
    assert!(!layout(&crashed).contains("d/junk"));

    // A directory that cannot be made (a file stands where it would be).
    let file = root.join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let dest = file.join("ckpt");
    let err = orbax::save(&dest, &tree).unwrap_err();
    assert!(
        matches!(&err, SaveError::Io { path, .. } if path == &file),
        "{err:?}"
    );
    assert!(err.to_string().contains(file.to_str().unwrap()), "{err}");

    // Leaves Orbax cannot save, no leaves at all, and two leaves of one name.
    let dest = root.join("bad");
    let zero = BTreeMap::from([("none".to_string(), jnp::zeros(&[3, 0], DType::F32))]);
    let err = orbax::save(&dest, &zero).unwrap_err();
    assert!(
        matches!(&err, SaveError::UnsupportedLeaf { leaf, .. } if leaf == "['none']"),
        "{err}"
    );
    assert!(err.to_string().contains("zero size"), "{err}");
    let err = orbax::save(&dest, &BTreeMap::<String, Array>::new()).unwrap_err();
    assert!(matches!(err, SaveError::Empty { .. }), "{err}");
    let clash = BTreeMap::from([
        (
            "a".to_string(),
            BTreeMap::from([("b.c".to_string(), leaf(DType::F32, &[1], 2))]),
        ),
        (
            "a.b".to_string(),
            BTreeMap::from([("c".to_string(), leaf(DType::F32, &[1], 3))]),
        ),
    ]);
    let err = orbax::save(&dest, &clash).unwrap_err();
    assert!(
        matches!(&err, SaveError::DuplicateName { name, .. } if name == "a.b.c"),
        "{err}"
    );

    // Without OCDBT a name is a path under the checkpoint: one that would
    // leave it is refused (in OCDBT it is only a key).
    let files = SaveOptions::default().use_ocdbt(false);
    for name in ["..", "x/../../y"] {
        let escaping = BTreeMap::from([(name.to_string(), leaf(DType::F32, &[1], 4))]);
        let err = orbax::save_with(&dest, &escaping, &files).unwrap_err();
        assert!(
            matches!(&err, SaveError::UnsupportedLeaf { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains("path component \"..\""), "{err}");
        nothing_left(&dest);
        assert!(!dest.exists() && !root.join("y").exists());
    }
    let inside = root.join("dots");
    let dots = BTreeMap::from([("..".to_string(), leaf(DType::F32, &[1], 4))]);
    orbax::save(&inside, &dots).unwrap();
    assert_eq!(orbax::list(&inside).unwrap()[0].0, "..");

    // An option no leaf can meet names the leaf.
    let options = SaveOptions::default().chunk_byte_size(2);
    let err = orbax::save_with(&dest, &tree, &options).unwrap_err();
    assert!(matches!(err, SaveError::InvalidOption { .. }), "{err}");
    assert!(err.to_string().contains("['w']"), "{err}");
    nothing_left(&dest);
    assert!(!dest.exists());

    // Through `?` in an oxla::Result function.
    let through = || -> oxla::Result<()> { Ok(orbax::save(root.join("ckpt"), &tree)?) };
    assert!(
        through()
            .unwrap_err()
            .to_string()
            .contains("already exists")
    );
}
