//! Checkpoints in Python Orbax's default format (the `orbax` feature):
//! reading those Orbax wrote (`ocp.StandardCheckpointer().save(path,
//! pytree)`, `PyTreeCheckpointer`), so weights trained in JAX load into
//! oxla pytrees, and writing them, so Python restores what oxla trained.
//!
//! Such a checkpoint is a directory: Orbax's JSON files (`_METADATA`,
//! `_CHECKPOINT_METADATA`, `_sharding`) beside a TensorStore OCDBT
//! key-value store (`manifest.ocdbt`, data files under `d/` and, merged in,
//! each process's `ocdbt.process_N/`) holding one zarr array per leaf: the
//! keys `<param>/.zarray` (zarr 2, the default) or `<param>/zarr.json`
//! (zarr 3) and the chunks `<param>/0.0` or `<param>/c/0/0`, zstd-
//! compressed. A checkpoint saved with `use_ocdbt=False` keeps the same
//! keys as plain files, and reads the same way. `<param>` is the leaf's
//! path in the saved pytree, its keys joined by `.` (`params.Dense_0.kernel`).
//!
//! [`load`] fills a template, naming its leaves by [`param_name`]
//! (oxla's `['params']['Dense_0']['kernel']` and `layers[0].kernel` are
//! Orbax's `params.Dense_0.kernel` and `layers.0.kernel`);
//! [`load_mapped`] takes any mapping, permutation and cast through
//! [`LoadOptions`]; [`list`] says what a checkpoint holds. Values load bit
//! for bit. The OCDBT format is read from TensorStore's published
//! description, every record's length, magic and CRC-32C checked, so a
//! damaged checkpoint is an error naming the file and what is wrong.
//!
//! [`save`] writes a pytree in the layout Orbax's defaults give (zarr 2,
//! zstd, OCDBT as one process leaves it, Orbax's metadata), atomically
//! (a temporary directory renamed into place); [`save_with`] takes
//! [`SaveOptions`] (compression, chunk sizes). Python's
//! `ocp.StandardCheckpointer().restore(path)` and `PyTreeCheckpointer`
//! restore it bit for bit, with a target or without.

mod chunks;
mod cursor;
mod encoder;
mod ocdbt;
mod record;
mod write;
mod zarr;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxla::pytree::Pytree;
use oxla::{DType, Result};

use super::checkpoint_error;
use super::files::HostTensor;
use super::mapped::{LoadOptions, LoadReport, TensorSource, fill_mapped};
use chunks::{copy_region, decode_chunk, element_count, unravel};
use ocdbt::Database;
use zarr::ArrayMeta;

pub use write::{SaveError, SaveOptions, save, save_with};

/// The arrays of the Orbax checkpoint `path` (its directory): each
/// parameter's name (`params.Dense_0.kernel`), dtype and shape, by name.
///
/// ```no_run
/// # fn main() -> oxla::Result<()> {
/// for (name, dtype, shape) in oxla_train::checkpoint::orbax::list("/ckpt/100/default")? {
///     println!("{name}: {dtype}{shape:?}");
/// }
/// # Ok(())
/// # }
/// ```
pub fn list(path: impl AsRef<Path>) -> Result<Vec<(String, DType, Vec<i64>)>> {
    let checkpoint = Checkpoint::open(path.as_ref())?;
    Ok(checkpoint
        .arrays
        .iter()
        .map(|(name, meta)| {
            let shape = meta.shape.iter().map(|&d| d as i64).collect();
            (name.clone(), meta.dtype, shape)
        })
        .collect())
}

/// Loads the Orbax checkpoint `path` into a pytree shaped like `like`,
/// each leaf from the array [`param_name`] names for it. The checkpoint
/// must hold exactly the template's leaves with its dtypes and shapes; an
/// error names the first that differs. A leaf the template holds over a
/// mesh comes back over that mesh, as the template lays it out (Orbax's
/// restore with a target).
///
/// ```no_run
/// use std::collections::BTreeMap;
/// use oxla::{Array, DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // Python: ocp.StandardCheckpointer().save(path, {"w": jnp.ones((2, 3)), "step": 7})
/// let mut like = BTreeMap::new();
/// like.insert("w".to_string(), jnp::zeros(&[2, 3], DType::F32));
/// like.insert("step".to_string(), Array::scalar(0i32)?);
/// let restored = oxla_train::checkpoint::orbax::load("/tmp/ckpt", &like)?;
/// # Ok(())
/// # }
/// ```
pub fn load<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let options =
        LoadOptions::default().map_names(|leaf| Some(TensorSource::named(param_name(leaf))));
    Ok(load_mapped(path, like, &options)?.0)
}

/// Loads the Orbax checkpoint `path` into a pytree shaped like `like`,
/// each leaf from the array `options` names for it (by its Orbax name,
/// `params.Dense_0.kernel`), permuted and cast as it says; see
/// [`LoadOptions`]. [`LoadOptions::default`] names a leaf by its oxla name;
/// map it through [`param_name`] for Orbax's spelling of the same path.
///
/// ```no_run
/// use oxla_nn::{Activation, Mlp};
/// use oxla_train::checkpoint::{LoadOptions, TensorSource, orbax};
/// # fn main() -> oxla::Result<()> {
/// // A Flax linen MLP's params: params.Dense_0.kernel, params.Dense_0.bias, ...
/// let like = Mlp::new(oxla::random::Key::new(0), &[4, 8, 3], Activation::Relu);
/// let options = LoadOptions::default().map_names(|leaf| {
///     let name = orbax::param_name(leaf); // layers.0.kernel
///     let name = name.replacen("layers.", "params.Dense_", 1);
///     Some(TensorSource::named(name))
/// });
/// let (mlp, report) = orbax::load_mapped("/tmp/flax_ckpt", &like, &options)?;
/// # Ok(())
/// # }
/// ```
pub fn load_mapped<P: Pytree>(
    path: impl AsRef<Path>,
    like: &P,
    options: &LoadOptions<'_>,
) -> Result<(P, LoadReport)> {
    let path = path.as_ref();
    let tensors = Checkpoint::open(path)?.read_all()?;
    fill_mapped(path, like, tensors, options)
}

/// Orbax's name for the oxla leaf `leaf` (a
/// [`tensor_names`](super::tensor_names) entry): its path's keys, fields
/// and indices joined by `.`.
///
/// ```
/// use oxla_train::checkpoint::orbax::param_name;
/// assert_eq!(param_name("['params']['Dense_0']['kernel']"), "params.Dense_0.kernel");
/// assert_eq!(param_name("layers[1].bias"), "layers.1.bias");
/// assert_eq!(param_name("[0]['w']"), "0.w");
/// ```
pub fn param_name(leaf: &str) -> String {
    let mut parts = Vec::new();
    let mut rest = leaf;
    while !rest.is_empty() {
        let closed = |open: &str, close: &str| {
            let inner = rest.strip_prefix(open)?;
            let end = inner.find(close)?;
            Some((&inner[..end], &inner[end + close.len()..]))
        };
        if let Some((part, after)) = closed("['", "']").or_else(|| closed("[", "]")) {
            parts.push(part);
            rest = after;
            continue;
        }
        let field = rest.strip_prefix('.').unwrap_or(rest);
        if field.is_empty() {
            break;
        }
        let end = field[1..].find(['.', '[']).map_or(field.len(), |e| e + 1);
        parts.push(&field[..end]);
        rest = &field[end..];
    }
    parts.join(".")
}

/// Where an Orbax checkpoint's keys are.
enum Store {
    /// An OCDBT database (Orbax's default).
    Ocdbt(Database),
    /// Plain files, one per key (`use_ocdbt=False`).
    Directory,
}

/// An opened checkpoint: its store and each array's metadata by name.
struct Checkpoint {
    dir: PathBuf,
    store: Store,
    arrays: BTreeMap<String, ArrayMeta>,
}

impl Checkpoint {
    /// Opens the checkpoint directory `dir` and reads every array's
    /// metadata.
    fn open(dir: &Path) -> Result<Checkpoint> {
        if !dir.is_dir() {
            return Err(checkpoint_error(
                dir,
                "an Orbax checkpoint is a directory (with manifest.ocdbt, or <param>/.zarray \
                 files), and this is none",
            ));
        }
        let store = if dir.join("manifest.ocdbt").is_file() {
            Store::Ocdbt(Database::open(dir)?)
        } else {
            Store::Directory
        };
        let metadata_keys: Vec<String> = match &store {
            Store::Ocdbt(db) => db.keys().map(str::to_string).collect(),
            Store::Directory => metadata_files(dir)?,
        };
        let mut checkpoint = Checkpoint {
            dir: dir.to_path_buf(),
            store,
            arrays: BTreeMap::new(),
        };
        for key in metadata_keys {
            let (name, v3) = match key.rsplit_once('/') {
                Some((name, ".zarray")) => (name, false),
                Some((name, "zarr.json")) => (name, true),
                _ => continue,
            };
            let text = checkpoint.get(&key)?.unwrap_or_default();
            let problem = |e: String| checkpoint_error(&dir.join(&key), e);
            let json: serde_json::Value =
                serde_json::from_slice(&text).map_err(|e| problem(e.to_string()))?;
            let meta = if v3 {
                zarr::parse_v3(&json).map_err(problem)?
            } else {
                Some(zarr::parse_v2(&json).map_err(problem)?)
            };
            if let Some(meta) = meta {
                checkpoint.arrays.insert(name.to_string(), meta);
            }
        }
        if checkpoint.arrays.is_empty() && !records_empty_values_only(dir) {
            return Err(checkpoint_error(
                dir,
                "no Orbax arrays here (no <param>/.zarray or <param>/zarr.json key); a \
                 CheckpointManager step keeps each item in a subdirectory (<step>/default)",
            ));
        }
        Ok(checkpoint)
    }

    /// The value of `key`, `None` when the checkpoint lacks it.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match &self.store {
            Store::Ocdbt(db) => db.get(key),
            Store::Directory => {
                let path = self.dir.join(key);
                match std::fs::read(&path) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(checkpoint_error(&path, e)),
                }
            }
        }
    }

    /// Every array, by name.
    fn read_all(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.arrays
            .iter()
            .map(|(name, meta)| {
                let dims = meta.shape.iter().map(|&d| d as i64).collect();
                Ok((
                    name.clone(),
                    (meta.dtype, dims, self.read_array(name, meta)?),
                ))
            })
            .collect()
    }

    /// The elements of the array `name` (C order, little-endian): each
    /// chunk decoded and placed; a chunk the store lacks holds the fill
    /// value.
    fn read_array(&self, name: &str, meta: &ArrayMeta) -> Result<Vec<u8>> {
        let error = |key: &str, e: String| checkpoint_error(&self.dir.join(key), e);
        let metadata_key = format!("{name}/(metadata)");
        let item = meta.dtype.byte_size();
        let count = element_count(&meta.shape).map_err(|e| error(&metadata_key, e))?;
        if count.checked_mul(item).is_none() {
            return Err(error(
                &metadata_key,
                format!("shape {:?} is too large", meta.shape),
            ));
        }
        let mut out = meta.fill.repeat(count);
        if count == 0 {
            return Ok(out);
        }
        if meta.chunk_shape.len() != meta.shape.len() || meta.chunk_shape.contains(&0) {
            return Err(error(
                &metadata_key,
                format!(
                    "chunk shape {:?} does not fit the shape {:?}",
                    meta.chunk_shape, meta.shape
                ),
            ));
        }
        let grid: Vec<usize> = meta
            .shape
            .iter()
            .zip(&meta.chunk_shape)
            .map(|(s, c)| s.div_ceil(*c))
            .collect();
        let chunk_count = element_count(&grid).map_err(|e| error(&metadata_key, e))?;
        for i in 0..chunk_count {
            let position = unravel(i, &grid);
            let key = format!("{name}/{}", meta.keys.key(&position));
            let Some(data) = self.get(&key)? else {
                continue;
            };
            let chunk = decode_chunk(
                &meta.codecs,
                data,
                &meta.chunk_shape,
                meta.dtype,
                &meta.fill,
            )
            .map_err(|e| error(&key, e))?;
            let origin: Vec<usize> = position
                .iter()
                .zip(&meta.chunk_shape)
                .map(|(p, c)| p * c)
                .collect();
            copy_region(
                &mut out,
                &meta.shape,
                &chunk,
                &meta.chunk_shape,
                &origin,
                item,
            );
        }
        Ok(out)
    }
}

/// The zarr metadata keys of a checkpoint without OCDBT: each
/// `<param>/.zarray` or `<param>/zarr.json` directly below `dir` (Orbax
/// joins nested keys with `.`, so parameters are never deeper).
fn metadata_files(dir: &Path) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| checkpoint_error(dir, e))?;
    let mut keys = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| checkpoint_error(dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        for file in [".zarray", "zarr.json"] {
            if entry.path().join(file).is_file() {
                keys.push(format!("{name}/{file}"));
            }
        }
    }
    keys.sort();
    Ok(keys)
}

/// Whether `dir`'s `_METADATA` lists a tree of empty values only (`None`,
/// `{}`, `[]`, `()`, each `skip_deserialize`), which Orbax saves as its
/// metadata alone, without arrays.
fn records_empty_values_only(dir: &Path) -> bool {
    let Ok(text) = std::fs::read(dir.join("_METADATA")) else {
        return false;
    };
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return false;
    };
    json["tree_metadata"].as_object().is_some_and(|entries| {
        !entries.is_empty()
            && entries
                .values()
                .all(|entry| entry["value_metadata"]["skip_deserialize"] == true)
    })
}
