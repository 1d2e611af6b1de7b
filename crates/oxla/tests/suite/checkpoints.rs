//! oxla_train::checkpoint: pytrees saved as safetensors and .npz round-trip bit
//! for bit (every dtype), load in Python (safetensors.numpy, numpy.load)
//! under the same names with the same values, and a training run resumed
//! from a checkpoint continues bit for bit as the uninterrupted run; files
//! that do not fit the pytree are clear errors naming the tensor; the
//! same tree is always the same bytes. Weights another program wrote (a
//! PyTorch-style file) load through a name mapping with transposition and
//! casting, strict or not.

use std::path::Path;

use oxla::random::{self, Key};
use oxla::{Array, DType, jit, numpy as jnp, value_and_grad};
use oxla_nn::{Activation, Mlp};
use oxla_optim::{self as optim, GradientTransformation};
use oxla_train::checkpoint;
use serde_json::Value;

use crate::reference;

/// A pytree with a leaf of every dtype without x64 (and a nested model).
#[derive(oxla::Pytree)]
struct Everything {
    model: Mlp,
    half: Array,
    brain: Array,
    flags: Array,
    ints: Array,
    small: Array,
    unsigned: Array,
    bytes: Array,
    key: Key,
}

fn everything() -> Everything {
    let x = jnp::arange(-3.0, 3.0, 0.75, DType::F32);
    Everything {
        model: Mlp::new(Key::new(7), &[3, 5, 2], Activation::Relu),
        half: oxla::lax::convert_element_type(&x, DType::F16),
        brain: oxla::lax::convert_element_type(&x, DType::BF16),
        flags: jnp::greater(&x, &Array::weak_scalar(0.0)),
        ints: jnp::arange(-4.0, 4.0, 1.0, DType::I32),
        small: jnp::arange(-4.0, 4.0, 1.0, DType::I8),
        unsigned: jnp::arange(0.0, 6.0, 1.0, DType::U32),
        bytes: jnp::arange(250.0, 256.0, 1.0, DType::U8),
        key: Key::new(99),
    }
}

fn same_bits(a: &[Array], b: &[Array]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (x, y) = (x.to_host().unwrap(), y.to_host().unwrap());
        assert_eq!(x.element_type(), y.element_type(), "leaf {i}");
        assert_eq!(x.dims, y.dims, "leaf {i}");
        assert_eq!(x.bytes, y.bytes, "leaf {i}");
    }
}

#[test]
fn every_dtype_round_trips_bit_for_bit_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let tree = everything();
    for file in ["ckpt.safetensors", "ckpt.npz"] {
        let path = dir.path().join(file);
        checkpoint::save(&path, &tree).unwrap();
        let template = Everything {
            key: Key::new(0),
            ..everything()
        };
        let back = checkpoint::load(&path, &template).unwrap();
        same_bits(&oxla::tree_leaves(&back), &oxla::tree_leaves(&tree));
        assert!(!dir.path().join(format!("{file}.partial")).exists());
    }
}

#[test]
fn the_same_tree_is_saved_as_the_same_bytes_in_both_formats() {
    // (safetensors writes its metadata in a hash map's random order unless
    // oxla fixes it: twenty saves all agreeing would be chance 1 in 2^19.)
    let dir = tempfile::tempdir().unwrap();
    let tree = everything();
    for file in ["ckpt.safetensors", "ckpt.npz"] {
        let path = dir.path().join(file);
        let saves: Vec<Vec<u8>> = (0..20)
            .map(|_| {
                checkpoint::save(&path, &tree).unwrap();
                std::fs::read(&path).unwrap()
            })
            .collect();
        assert!(
            saves.iter().all(|s| s == &saves[0]),
            "{file} differs between saves"
        );
    }
}

#[test]
fn python_reads_the_same_names_and_values() {
    let dir = tempfile::tempdir().unwrap();
    // numpy has no bfloat16: the Python check takes the other dtypes.
    let tree = (
        everything().model,
        everything().ints,
        everything().key,
        everything().flags,
    );
    let (st, npz) = (dir.path().join("m.safetensors"), dir.path().join("m.npz"));
    checkpoint::save(&st, &tree).unwrap();
    checkpoint::save(&npz, &tree).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/read_checkpoint.py");
    let out: Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[&st, &npz])).unwrap();
    let names = checkpoint::tensor_names(&tree);
    assert_eq!(names[0], "[0].layers[0].kernel");
    assert_eq!(names.last().unwrap(), "[3]");
    let leaves = oxla::tree_leaves(&tree);
    for format in ["safetensors", "npz"] {
        let read = out[format].as_object().unwrap();
        assert_eq!(read.len(), names.len(), "{format}");
        for (name, leaf) in names.iter().zip(&leaves) {
            let got = reference::array(&read[name]);
            same_bits(std::slice::from_ref(&got), std::slice::from_ref(leaf));
        }
    }
    assert_eq!(out["metadata"]["format"], "oxla");
    let treedef = out["metadata"]["treedef"].as_str().unwrap();
    assert!(
        treedef.starts_with("(Mlp(layers=[Linear(kernel=*, bias=*)"),
        "{treedef}"
    );
}

/// Training state: model, AdamW state, dropout key.
type State = (Mlp, optim::StateOf<optim::AdamW, Mlp>, Key);

fn train(state: State, steps: std::ops::Range<i32>) -> State {
    let opt = optim::adamw(
        optim::Schedule::warmup_cosine_decay(0.0, 0.01, 3, 12, 0.001),
        0.01,
    );
    let step = jit(|((model, opt_state, key), i): (State, Array)| {
        let (key, dropout_key) = random::split2(key);
        let x = jnp::sin(
            &(oxla::lax::iota(DType::F32, &[8, 4], 0) * 0.3
                + &oxla::lax::convert_element_type(&i, DType::F32)),
        );
        let y = jnp::cos(&jnp::sum(&x, Some(&[1]), true));
        let loss = |m: Mlp| {
            let h = random::dropout(dropout_key.duplicate(), 0.2, &x);
            jnp::mean(&jnp::square(&(m.apply(&h) - &y)), None, false)
        };
        let (_, grads) = value_and_grad(loss).call(model.clone())?;
        let (updates, opt_state) = opt.update(grads, opt_state, &model)?;
        oxla::Result::Ok((optim::apply_updates(&model, &updates)?, opt_state, key))
    })
    .donate(&[0]);
    let mut state = state;
    for i in steps {
        state = step.call((state, Array::scalar(i).unwrap())).unwrap();
    }
    state
}

fn fresh_state() -> State {
    let model = Mlp::new(Key::new(3), &[4, 16, 1], Activation::Gelu);
    let opt = optim::adamw(
        optim::Schedule::warmup_cosine_decay(0.0, 0.01, 3, 12, 0.001),
        0.01,
    );
    let opt_state = opt.init(&model);
    (model, opt_state, Key::new(5))
}

#[test]
fn a_resumed_run_continues_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let uninterrupted = train(fresh_state(), 0..10);
    for file in ["train.safetensors", "train.npz"] {
        let path = dir.path().join(file);
        let halfway = train(fresh_state(), 0..4);
        checkpoint::save(&path, &halfway).unwrap();
        drop(halfway);
        // A new process would build the template from its config.
        let restored = checkpoint::load(&path, &fresh_state()).unwrap();
        let resumed = train(restored, 4..10);
        same_bits(
            &oxla::tree_leaves(&resumed),
            &oxla::tree_leaves(&uninterrupted),
        );
    }
    // The run did train: the parameters moved.
    let before = oxla::tree_leaves(&fresh_state().0);
    let after = oxla::tree_leaves(&uninterrupted.0);
    assert_ne!(
        before[0].to_vec::<f32>().unwrap(),
        after[0].to_vec::<f32>().unwrap()
    );
}

fn load_error(path: &Path, like: &impl oxla::Pytree) -> String {
    // `load` needs the concrete type; go through a tuple of leaves.
    let leaves = oxla::tree_leaves(like);
    checkpoint::load(path, &leaves)
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn files_that_do_not_fit_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let model = Mlp::new(Key::new(0), &[3, 5, 2], Activation::Relu);
    let path = dir.path().join("m.safetensors");
    checkpoint::save(&path, &model).unwrap();
    // Another width: names the tensor and both types.
    let wider = Mlp::new(Key::new(0), &[3, 6, 2], Activation::Relu);
    let e = checkpoint::load(&path, &wider)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("layers[0].kernel is f32[3,5] in the file, the pytree has f32[3,6]"),
        "{e}"
    );
    // Another depth: the missing name.
    let deeper = Mlp::new(Key::new(0), &[3, 5, 2, 2], Activation::Relu);
    let e = checkpoint::load(&path, &deeper)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no tensor named layers[2].kernel"), "{e}");
    // Fewer leaves than the file: the extra names.
    let shallower = Mlp::new(Key::new(0), &[3, 5], Activation::Relu);
    let e = checkpoint::load(&path, &shallower)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("2 tensor(s) that the pytree does not have"),
        "{e}"
    );
    // The same tensors under another static field: an Mlp saved with ReLU
    // does not load into a GELU template.
    let gelu = Mlp::new(Key::new(0), &[3, 5, 2], Activation::Gelu);
    let e = checkpoint::load(&path, &gelu)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("saved from another structure") && e.contains("Relu") && e.contains("Gelu"),
        "{e}"
    );
    // Names of another tree shape.
    let e = load_error(&path, &model);
    assert!(e.contains("no tensor named [0]"), "{e}");
    // A truncated file, a missing file, an unknown extension.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = checkpoint::load(&cut, &model)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("checkpoint {}", cut.display())),
        "{e}"
    );
    let e = checkpoint::load(dir.path().join("none.npz"), &model)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("none.npz") && e.contains("No such file"), "{e}");
    let e = checkpoint::save(dir.path().join("m.pt"), &model)
        .unwrap_err()
        .to_string();
    assert!(e.contains(".safetensors or .npz"), "{e}");
    // A failed save leaves the previous checkpoint intact.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

// --- Weights another program wrote -----------------------------------------

/// A PyTorch-style file (reference/torch_style_weights.py: `0.weight`
/// `[out, in]` in f16, `0.bias`, `2.weight`, `2.bias`, and a buffer) and
/// what a Flax Dense would hold.
fn torch_style_file(dir: &Path) -> (std::path::PathBuf, Value) {
    let path = dir.join("pytorch_model.safetensors");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/torch_style_weights.py");
    let json = oxla_testing::run_python(&script, &[path.as_path()]);
    (path, serde_json::from_slice(&json).unwrap())
}

/// `layers[i].kernel` ← `{2i}.weight` transposed, `layers[i].bias` ←
/// `{2i}.bias` (PyTorch's Sequential puts the activation at odd indices).
fn torch_names(leaf: &str) -> Option<checkpoint::TensorSource> {
    let rest = leaf.strip_prefix("layers[")?;
    let (i, field) = rest.split_once("].")?;
    let index = 2 * i.parse::<usize>().ok()?;
    match field {
        "kernel" => Some(checkpoint::TensorSource::named(format!("{index}.weight")).transposed()),
        "bias" => Some(checkpoint::TensorSource::named(format!("{index}.bias"))),
        _ => None,
    }
}

#[test]
fn pytorch_named_weights_load_through_a_name_mapping_with_casting() {
    let dir = tempfile::tempdir().unwrap();
    let (path, want) = torch_style_file(dir.path());
    let template = Mlp::new(Key::new(0), &[4, 8, 3], Activation::Relu);
    let options = checkpoint::LoadOptions::default()
        .map_names(torch_names)
        .cast_dtypes()
        .non_strict();
    let (model, report) = checkpoint::load_safetensors_mapped(&path, &template, &options).unwrap();
    for (i, layer) in model.layers.iter().enumerate() {
        let kernel = reference::array(&want["kernels"][i]);
        let bias = reference::array(&want["biases"][i]);
        assert_eq!(
            layer.kernel.to_vec::<f32>().unwrap(),
            kernel.to_vec::<f32>().unwrap(),
            "layer {i}"
        );
        assert_eq!(
            layer.bias.as_ref().unwrap().to_vec::<f32>().unwrap(),
            bias.to_vec::<f32>().unwrap(),
            "layer {i}"
        );
    }
    assert_eq!(report.loaded.len(), 4);
    assert!(report.missing.is_empty());
    assert_eq!(report.unused, vec!["0.num_batches_tracked"]);
    // The loaded model runs.
    let y = model.apply(&jnp::ones(&[2, 4], DType::F32));
    assert_eq!(y.shape(), &[2, 3]);
}

#[test]
fn mapped_loads_say_what_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = torch_style_file(dir.path());
    let template = Mlp::new(Key::new(0), &[4, 8, 3], Activation::Relu);
    let err = |options: checkpoint::LoadOptions| {
        checkpoint::load_safetensors_mapped(&path, &template, &options)
            .err()
            .unwrap()
            .to_string()
    };
    // Strict: the unused buffer.
    let strict = checkpoint::LoadOptions::default()
        .map_names(torch_names)
        .cast_dtypes();
    let e = err(strict);
    assert!(
        e.contains("0.num_batches_tracked") && e.contains("no leaf takes"),
        "{e}"
    );
    // Without casting: f16 into f32.
    let e = err(checkpoint::LoadOptions::default()
        .map_names(torch_names)
        .non_strict());
    assert!(
        e.contains("layers[0].kernel") && e.contains("f16") && e.contains("cast_dtypes"),
        "{e}"
    );
    // Without the transposition: [8, 4] for a [4, 8] kernel.
    let untransposed =
        |leaf: &str| torch_names(leaf).map(|s| checkpoint::TensorSource::named(s.name));
    let e = err(checkpoint::LoadOptions::default()
        .map_names(untransposed)
        .cast_dtypes()
        .non_strict());
    assert!(
        e.contains("layers[0].kernel") && e.contains("0.weight") && e.contains("f16[8,4]"),
        "{e}"
    );
    // A leaf whose tensor is absent, strict.
    let shifted = |leaf: &str| {
        torch_names(leaf).map(|s| checkpoint::TensorSource {
            name: s.name.replace('2', "4"),
            ..s
        })
    };
    let e = err(checkpoint::LoadOptions::default()
        .map_names(shifted)
        .cast_dtypes());
    assert!(
        e.contains("layers[1].kernel maps to tensor 4.weight"),
        "{e}"
    );
    // Non-strict: the leaf keeps the template's values.
    let options = checkpoint::LoadOptions::default()
        .map_names(shifted)
        .cast_dtypes()
        .non_strict();
    let (model, report) = checkpoint::load_safetensors_mapped(&path, &template, &options).unwrap();
    assert_eq!(report.missing, vec!["layers[1].kernel", "layers[1].bias"]);
    assert_eq!(
        report.unused,
        vec!["0.num_batches_tracked", "2.bias", "2.weight"]
    );
    assert_eq!(
        model.layers[1].kernel.to_vec::<f32>().unwrap(),
        template.layers[1].kernel.to_vec::<f32>().unwrap()
    );
}
