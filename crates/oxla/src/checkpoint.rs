//! Checkpoints: a pytree's arrays saved as a safetensors file or a numpy
//! `.npz` archive, each tensor named by its leaf's pytree path
//! (`layers[0].kernel`, `[1][0].mu.layers[0].bias`), and loaded back into a
//! pytree of the same structure.
//!
//! Files are written to a temporary name beside the target and renamed, so
//! a crash mid-write leaves the previous checkpoint intact. Loading checks
//! that the file holds exactly the template's names with the template's
//! dtypes and shapes, and says which name differs when it does not. Values
//! round-trip bit for bit, so a run resumed from a checkpoint continues as
//! the uninterrupted run would.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use oxla_core::DType;
use safetensors::{Dtype as StDtype, SafeTensors, tensor::TensorView};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};

/// The tensor names of `tree`'s leaves, in leaf order: the pytree paths
/// without their leading `.` (`layers[0].kernel`).
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla::checkpoint::tensor_names;
/// # fn main() -> oxla::Result<()> {
/// let mut params = BTreeMap::new();
/// params.insert("w".to_string(), vec![Array::scalar(1.0f32)?, Array::scalar(2.0f32)?]);
/// params.insert("b".to_string(), vec![Array::scalar(0.0f32)?]);
/// assert_eq!(tensor_names(&params), vec!["['b'][0]", "['w'][0]", "['w'][1]"]);
/// assert_eq!(tensor_names(&(params.clone(), Array::scalar(0i32)?))[3], "[1]");
/// # Ok(())
/// # }
/// ```
pub fn tensor_names<P: Pytree>(tree: &P) -> Vec<String> {
    names_of(&tree.flatten().1)
}

/// The tensor names of a structure's leaves (see [`tensor_names`]).
fn names_of(def: &TreeDef) -> Vec<String> {
    def.leaf_paths()
        .into_iter()
        .map(|p| p.strip_prefix('.').map(str::to_string).unwrap_or(p))
        .collect()
}

/// Saves `tree` to `path` as safetensors (`.safetensors`) or numpy
/// (`.npz`), by the extension. The file is written beside `path` and
/// renamed over it, so a crash leaves the previous checkpoint whole.
///
/// ```
/// use oxla::nn::{Activation, Mlp};
/// use oxla::random::Key;
/// # fn main() -> oxla::Result<()> {
/// let model = Mlp::new(Key::new(0), &[2, 3, 1], Activation::Tanh);
/// let path = std::env::temp_dir().join(format!("oxla-doc-save-{}.safetensors", std::process::id()));
/// oxla::checkpoint::save(&path, &model)?;
/// // Loaded against a template: here a model of the same shapes from another key.
/// let template = Mlp::new(Key::new(1), &[2, 3, 1], Activation::Tanh);
/// let restored = oxla::checkpoint::load(&path, &template)?;
/// assert_eq!(restored.layers[0].kernel.to_vec::<f32>()?, model.layers[0].kernel.to_vec::<f32>()?);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn save<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    match Format::of(path)? {
        Format::Safetensors => save_safetensors(path, tree),
        Format::Npz => save_npz(path, tree),
    }
}

/// Loads a pytree shaped like `like` (its structure, static fields, dtypes
/// and shapes) from `path`, safetensors or `.npz` by the extension. A file
/// whose names, dtypes or shapes differ from the template's is an error
/// naming the first difference.
///
/// ```
/// use oxla::Array;
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-load-{}.npz", std::process::id()));
/// let saved = (Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::scalar(7i32)?);
/// oxla::checkpoint::save(&path, &saved)?;
/// let (w, step) = oxla::checkpoint::load(&path, &saved)?;
/// assert_eq!((w.to_vec::<f32>()?, step.item::<i32>()?), (vec![1.0, 2.0], 7));
/// // A template of another shape does not fit.
/// let wrong = (Array::from_slice(&[1.0f32], &[1])?, Array::scalar(0i32)?);
/// assert!(oxla::checkpoint::load(&path, &wrong).is_err());
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn load<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    match Format::of(path)? {
        Format::Safetensors => load_safetensors(path, like),
        Format::Npz => load_npz(path, like),
    }
}

enum Format {
    Safetensors,
    Npz,
}

impl Format {
    fn of(path: &Path) -> Result<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("safetensors") => Ok(Format::Safetensors),
            Some("npz") => Ok(Format::Npz),
            _ => Err(checkpoint_error(
                path,
                "the extension must be .safetensors or .npz",
            )),
        }
    }
}

fn checkpoint_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("checkpoint {}: {message}", path.display()))
}

/// A leaf's name, the leaf and its host copy.
type NamedHostLeaf = (String, Array, oxla_npy::HostArray);

/// Each leaf's name and host copy, and the tree's structure (one flatten).
fn named_host_leaves<P: Pytree>(tree: &P) -> Result<(Vec<NamedHostLeaf>, TreeDef)> {
    let (leaves, def) = tree.flatten();
    let named = names_of(&def)
        .into_iter()
        .zip(leaves)
        .map(|(name, leaf)| {
            let host = leaf.to_host()?;
            Ok((name, leaf, host))
        })
        .collect::<Result<_>>()?;
    Ok((named, def))
}

/// Runs `write` on a temporary path beside `path`, then renames the result
/// over `path`.
fn write_atomically(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let mut partial: PathBuf = path.to_path_buf();
    partial.as_mut_os_string().push(".partial");
    write(&partial)?;
    std::fs::rename(&partial, path).map_err(|e| checkpoint_error(path, e))
}

fn safetensors_dtype(dtype: DType) -> StDtype {
    match dtype {
        DType::Bool => StDtype::BOOL,
        DType::I8 => StDtype::I8,
        DType::I16 => StDtype::I16,
        DType::I32 => StDtype::I32,
        DType::I64 => StDtype::I64,
        DType::U8 => StDtype::U8,
        DType::U16 => StDtype::U16,
        DType::U32 => StDtype::U32,
        DType::U64 => StDtype::U64,
        DType::F16 => StDtype::F16,
        DType::BF16 => StDtype::BF16,
        DType::F32 => StDtype::F32,
        DType::F64 => StDtype::F64,
    }
}

/// Saves `tree` as a safetensors file: one tensor per leaf, named by
/// [`tensor_names`], with metadata `format = oxla` and the pytree
/// structure as text (`treedef`).
///
/// ```
/// use oxla::Array;
/// use oxla::checkpoint::{load_safetensors, save_safetensors};
/// # fn main() -> oxla::Result<()> {
/// // Any extension: the format is safetensors either way.
/// let path = std::env::temp_dir().join(format!("oxla-doc-st-{}.bin", std::process::id()));
/// let tree = vec![Array::from_slice(&[1.5f32, -2.0], &[2])?];
/// save_safetensors(&path, &tree)?;
/// let back = load_safetensors(&path, &tree)?;
/// assert_eq!(back[0].to_vec::<f32>()?, vec![1.5, -2.0]);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn save_safetensors<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    let (leaves, def) = named_host_leaves(tree)?;
    let views = leaves
        .iter()
        .map(|(name, leaf, host)| {
            let shape = host.dims.iter().map(|&d| d as usize).collect();
            TensorView::new(safetensors_dtype(leaf.dtype_or_bool()), shape, &host.bytes)
                .map(|view| (name.clone(), view))
                .map_err(|e| checkpoint_error(path, format!("{name}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let metadata = HashMap::from([
        ("format".to_string(), "oxla".to_string()),
        ("treedef".to_string(), def.to_string()),
    ]);
    write_atomically(path, |partial| {
        safetensors::serialize_to_file(views, Some(metadata), partial)
            .map_err(|e| checkpoint_error(path, e))
    })
}

/// Loads a safetensors file into a pytree shaped like `like`.
///
/// ```
/// use oxla::{Array, DType};
/// use oxla::checkpoint::{load_safetensors, save_safetensors};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-lst-{}.safetensors", std::process::id()));
/// save_safetensors(&path, &Array::from_slice(&[1u8, 2, 3], &[3])?)?;
/// let like = oxla::numpy::zeros(&[3], DType::U8);
/// assert_eq!(load_safetensors(&path, &like)?.to_vec::<u8>()?, vec![1, 2, 3]);
/// // The template's dtype must match the file's.
/// assert!(load_safetensors(&path, &oxla::numpy::zeros(&[3], DType::F32)).is_err());
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn load_safetensors<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| checkpoint_error(path, e))?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| checkpoint_error(path, e))?;
    let mut tensors = BTreeMap::new();
    for (name, view) in file.tensors() {
        let dtype = dtype_of_safetensors(view.dtype()).ok_or_else(|| {
            checkpoint_error(
                path,
                format!("{name} has unsupported dtype {:?}", view.dtype()),
            )
        })?;
        let dims = view.shape().iter().map(|&d| d as i64).collect();
        tensors.insert(name, (dtype, dims, view.data().to_vec()));
    }
    fill_template(path, like, tensors)
}

fn dtype_of_safetensors(dtype: StDtype) -> Option<DType> {
    Some(match dtype {
        StDtype::BOOL => DType::Bool,
        StDtype::I8 => DType::I8,
        StDtype::I16 => DType::I16,
        StDtype::I32 => DType::I32,
        StDtype::I64 => DType::I64,
        StDtype::U8 => DType::U8,
        StDtype::U16 => DType::U16,
        StDtype::U32 => DType::U32,
        StDtype::U64 => DType::U64,
        StDtype::F16 => DType::F16,
        StDtype::BF16 => DType::BF16,
        StDtype::F32 => DType::F32,
        StDtype::F64 => DType::F64,
        // safetensors' enum is open (non_exhaustive): fp8, fp4, complex.
        _ => return None,
    })
}

/// Saves `tree` as a numpy `.npz` archive (uncompressed, as `np.savez`):
/// one `<name>.npy` per leaf.
///
/// ```
/// use oxla::Array;
/// use oxla::checkpoint::{load_npz, save_npz};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-npz-{}.npz", std::process::id()));
/// let tree = (Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?,);
/// save_npz(&path, &tree)?;                                   // np.load(path)["[0]"] in Python
/// let (back,) = load_npz(&path, &tree)?;
/// assert_eq!(back.shape(), &[2, 2]);
/// assert_eq!(back.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn save_npz<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    let (leaves, _) = named_host_leaves(tree)?;
    write_atomically(path, |partial| {
        let file = std::fs::File::create(partial).map_err(|e| checkpoint_error(path, e))?;
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(true);
        for (name, _, host) in &leaves {
            zip.start_file(format!("{name}.npy"), options)
                .map_err(|e| checkpoint_error(path, e))?;
            zip.write_all(&host.to_npy_bytes())
                .map_err(|e| checkpoint_error(path, e))?;
        }
        zip.finish().map_err(|e| checkpoint_error(path, e))?;
        Ok(())
    })
}

/// Loads a numpy `.npz` archive (stored or deflated, as `np.savez` and
/// `np.savez_compressed` write them) into a pytree shaped like `like`.
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla::checkpoint::{load_npz, save_npz};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-lnpz-{}.npz", std::process::id()));
/// let mut stats = BTreeMap::new();
/// stats.insert("mean".to_string(), Array::scalar(0.5f32)?);
/// save_npz(&path, &stats)?;
/// let back = load_npz(&path, &stats)?;
/// assert_eq!(back["mean"].item::<f32>()?, 0.5);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn load_npz<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|e| checkpoint_error(path, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| checkpoint_error(path, e))?;
    let mut tensors = BTreeMap::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| checkpoint_error(path, e))?;
        let name = entry
            .name()
            .map_err(|e| checkpoint_error(path, e))?
            .trim_end_matches(".npy")
            .to_string();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| checkpoint_error(path, e))?;
        let host = oxla_npy::HostArray::from_npy_bytes(&data)
            .map_err(|e| checkpoint_error(path, format!("{name}: {e}")))?;
        let dtype = crate::element::dtype_of(host.element_type()).ok_or_else(|| {
            checkpoint_error(path, format!("{name}: complex arrays are not supported"))
        })?;
        tensors.insert(name, (dtype, host.dims, host.bytes));
    }
    fill_template(path, like, tensors)
}

/// `like` with each leaf replaced by the file's tensor of its name, after
/// checking the names, dtypes and shapes match exactly.
fn fill_template<P: Pytree>(
    path: &Path,
    like: &P,
    mut tensors: BTreeMap<String, (DType, Vec<i64>, Vec<u8>)>,
) -> Result<P> {
    let (template, def) = like.flatten();
    let names = names_of(&def);
    let mut leaves = Vec::with_capacity(template.len());
    for (name, want) in names.iter().zip(&template) {
        let want = want.aval()?;
        let Some((dtype, dims, bytes)) = tensors.remove(name) else {
            let present: Vec<&String> = tensors.keys().take(8).collect();
            return Err(checkpoint_error(
                path,
                format!("no tensor named {name} (unmatched in the file: {present:?})"),
            ));
        };
        let got = oxla_core::Aval::new(dtype, &dims);
        if dtype != want.dtype || dims != want.shape.as_slice() {
            return Err(checkpoint_error(
                path,
                format!(
                    "{name} is {got} in the file, the pytree has {}",
                    oxla_core::Aval::new(want.dtype, &want.shape)
                ),
            ));
        }
        leaves.push(Array::from_bytes(dtype, &dims, &bytes)?);
    }
    if !tensors.is_empty() {
        let extra: Vec<&String> = tensors.keys().take(8).collect();
        return Err(checkpoint_error(
            path,
            format!(
                "{} tensor(s) that the pytree does not have: {extra:?}",
                tensors.len()
            ),
        ));
    }
    like.with_leaves(&mut leaves.into_iter())
}
