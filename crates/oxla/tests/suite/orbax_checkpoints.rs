//! oxla_train::checkpoint::orbax: checkpoints that Python's Orbax wrote
//! (reference/orbax_checkpoint.py: its defaults, zarr 2 in several chunks,
//! zarr 3 with sharding, and without OCDBT) list the names, dtypes and
//! shapes Orbax saved and load bit for bit into flat and nested maps; a
//! Flax linen MLP's params load into an oxla `Mlp` through a name mapping
//! and compute Flax's output; a template that does not fit, and a
//! corrupted or truncated checkpoint, are errors naming what is wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use oxla::{Array, numpy as jnp};
use oxla_nn::{Activation, Mlp};
use oxla_train::checkpoint::{LoadOptions, TensorSource, orbax};
use serde_json::Value;

use crate::reference;

/// The script's directory of checkpoints and its output.
fn written() -> &'static (tempfile::TempDir, Value) {
    static WRITTEN: OnceLock<(tempfile::TempDir, Value)> = OnceLock::new();
    WRITTEN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
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
