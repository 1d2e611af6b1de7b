//! Writing checkpoints in Orbax's default layout, which Python's
//! `ocp.StandardCheckpointer().restore(path)` and
//! `ocp.PyTreeCheckpointer().restore(path)` restore (with a target or
//! without), and [`load`](super::load) reads back.
//!
//! The directory is what Orbax 0.12 writes from one process: the arrays as
//! zarr 2 arrays in OCDBT (`ocdbt.process_0/` with the values and its
//! B+tree, and the checkpoint's own `manifest.ocdbt` and `d/` over the same
//! keys), `_METADATA`, `_sharding`, `array_metadatas/process_0`,
//! `_CHECKPOINT_METADATA` and `commit_success.txt`; written in
//! `<name>.orbax-checkpoint-tmp` and renamed into place. Orbax's
//! `use_zarr3=True` (zarr 3 arrays) and `use_ocdbt=False` (a directory of
//! files per array instead of OCDBT) are [`SaveOptions`] too.

mod btree;
mod data_files;
mod directory;
mod error;
mod metadata;
mod options;
mod placement;
mod python;
mod sink;
mod store;
mod zarr;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use oxla::Array;
use oxla::pytree::Pytree;

pub use error::SaveError;
pub use options::SaveOptions;

use crate::checkpoint::names_of;
use directory::{Staging, write_file};
use metadata::{ArrayRecord, EmptyValue, KeyPath, TreeLayout, param_name, tree_layout};
use sink::{Sink, unfit_file_name};
use store::Store;
use zarr::Format;

/// The longest OCDBT key (TensorStore's limit), less room for a chunk key.
const MAX_NAME_BYTES: usize = 65535 - 64;

/// Saves `tree` as an Orbax checkpoint directory at `path`, as
/// `ocp.StandardCheckpointer().save(path, tree)` would with its defaults
/// (see [`SaveOptions::default`]); `path` must not exist, or be an empty
/// directory. Each leaf is an array named by its keys joined by `.`
/// (`params.Dense_0.kernel`; a struct's fields are keys, as JAX's
/// `GetAttrKey`s are), restored in Python as nested dicts and lists.
/// `None` and empty maps, lists, tuples and structs below the root are
/// recorded without an array, as Orbax records them, so Python restores
/// them as `None`, `{}`, `[]` and `()` (a struct as `{}`); static values
/// are not saved.
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla_train::checkpoint::orbax;
/// # fn main() -> oxla::Result<()> {
/// let dir = std::env::temp_dir().join(format!("oxla-doc-orbax-save-{}", std::process::id()));
/// let mut tree = BTreeMap::new();
/// tree.insert("w".to_string(), Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?);
/// tree.insert("step".to_string(), Array::scalar(7i32)?);
/// orbax::save(&dir, &tree)?;
/// // Python: ocp.StandardCheckpointer().restore(dir) == {'step': 7, 'w': [1., 2., 3.]}
/// let back = orbax::load(&dir, &tree)?;
/// assert_eq!(back["w"].to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
pub fn save<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<(), SaveError> {
    save_with(path, tree, &SaveOptions::default())
}

/// Saves `tree` as an Orbax checkpoint at `path` as [`save`] does, written
/// as `options` says (OCDBT or files, zarr 2 or 3, compression, chunk
/// sizes, OCDBT file and node sizes).
///
/// ```
/// use oxla::numpy as jnp;
/// use oxla_train::checkpoint::orbax::{self, SaveOptions};
/// # fn main() -> oxla::Result<()> {
/// let dir = std::env::temp_dir().join(format!("oxla-doc-orbax-save-with-{}", std::process::id()));
/// let table = (jnp::ones(&[300, 250], oxla::DType::F32),);
/// // Python: PyTreeCheckpointHandler(use_compression=False) and
/// // SaveArgs(chunk_byte_size=40_000): chunks of [100, 50].
/// let options = SaveOptions::default().compression(false).chunk_byte_size(40_000);
/// orbax::save_with(&dir, &table, &options)?;
/// assert_eq!(orbax::list(&dir)?[0].0, "0");
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
pub fn save_with<P: Pytree>(
    path: impl AsRef<Path>,
    tree: &P,
    options: &SaveOptions,
) -> Result<(), SaveError> {
    let dest = path.as_ref();
    options.check(dest)?;
    let init_ns = now_ns();
    let (leaves, def) = tree.flatten();
    let leaf_names = names_of(&def);
    let TreeLayout {
        arrays: paths,
        empties,
    } = tree_layout(&def);
    check_leaves(dest, &leaves, &leaf_names, &paths, &empties, options)?;
    let staging = Staging::begin(dest)?;
    let dir = staging.dir();
    let mut arrays = Vec::with_capacity(leaves.len());
    // A tree of empty values only is its metadata alone, as Orbax writes
    // it: no store, no `_sharding`, no array metadata.
    if !leaves.is_empty() {
        let mut sink = if options.use_ocdbt {
            Sink::Ocdbt(Store::new(
                dir,
                dest,
                options.target_data_file_size,
                options.max_node_bytes,
            ))
        } else {
            Sink::Files {
                dir: dir.to_path_buf(),
            }
        };
        for ((leaf, oxla_name), path) in leaves.iter().zip(&leaf_names).zip(paths) {
            arrays.push(write_array(
                &mut sink, dest, leaf, oxla_name, path, options,
            )?);
        }
        sink.finish()?;
        write_file(&dir.join("_sharding"), &metadata::sharding(&arrays))?;
        write_file(
            &dir.join("array_metadatas/process_0"),
            &metadata::array_metadatas(&arrays),
        )?;
    }
    write_file(
        &dir.join("_METADATA"),
        &metadata::tree_metadata(&arrays, &empties, options),
    )?;
    write_file(
        &dir.join("_CHECKPOINT_METADATA"),
        &metadata::checkpoint_metadata(init_ns, now_ns()),
    )?;
    write_file(
        &dir.join("commit_success.txt"),
        &metadata::commit_success(dest),
    )?;
    staging.commit()
}

/// Checks, before anything is written, that the tree has leaves or empty
/// values below its root, that each leaf is an array Orbax can hold under
/// its name as `options` store it, and that no two share a name.
fn check_leaves(
    dest: &Path,
    leaves: &[Array],
    leaf_names: &[String],
    paths: &[KeyPath],
    empties: &[(usize, KeyPath, EmptyValue)],
    options: &SaveOptions,
) -> Result<(), SaveError> {
    if leaves.is_empty() && empties.is_empty() {
        return Err(SaveError::Empty {
            path: dest.to_path_buf(),
        });
    }
    let unsupported = |leaf: &str, reason: String| SaveError::UnsupportedLeaf {
        path: dest.to_path_buf(),
        leaf: leaf.to_string(),
        reason,
    };
    let mut seen = std::collections::HashMap::new();
    for ((leaf, oxla_name), path) in leaves.iter().zip(leaf_names).zip(paths) {
        let aval = leaf.aval().map_err(|source| SaveError::Array {
            path: dest.to_path_buf(),
            leaf: oxla_name.clone(),
            source: Box::new(source),
        })?;
        if aval.shape.contains(&0) {
            return Err(unsupported(
                oxla_name,
                format!("it is {aval}, and Orbax cannot save arrays with zero size"),
            ));
        }
        let name = param_name(path);
        if !options.use_ocdbt
            && let Some(reason) = unfit_file_name(&name)
        {
            return Err(unsupported(oxla_name, reason));
        }
        if name.len() > MAX_NAME_BYTES {
            return Err(unsupported(
                oxla_name,
                format!(
                    "its Orbax name is {} bytes, more than an OCDBT key may hold",
                    name.len()
                ),
            ));
        }
        if let Some(first) = seen.insert(name.clone(), oxla_name) {
            return Err(SaveError::DuplicateName {
                path: dest.to_path_buf(),
                name,
                first: first.clone(),
                second: oxla_name.clone(),
            });
        }
    }
    Ok(())
}

/// Writes one leaf's zarr metadata and chunks to `sink`; what the
/// metadata files say of it.
fn write_array(
    sink: &mut Sink,
    dest: &Path,
    leaf: &Array,
    oxla_name: &str,
    path: KeyPath,
    options: &SaveOptions,
) -> Result<ArrayRecord, SaveError> {
    let array_error = |source| SaveError::Array {
        path: dest.to_path_buf(),
        leaf: oxla_name.to_string(),
        source: Box::new(source),
    };
    let placed = placement::place(leaf).map_err(array_error)?;
    let aval = leaf.aval().map_err(array_error)?;
    let dtype = aval.dtype;
    let shape: Vec<usize> = aval.shape.iter().map(|&d| d as usize).collect();
    let item = dtype.byte_size();
    let write_bytes = placed.write_shape.iter().product::<usize>() * item;
    let limit = options.chunk_bytes_for(write_bytes);
    let chunks = zarr::chunk_shape(&placed.write_shape, item, limit).map_err(|e| {
        SaveError::InvalidOption {
            path: dest.to_path_buf(),
            message: format!("leaf {oxla_name} ({dtype}): {e}"),
        }
    })?;
    let name = param_name(&path);
    let format = if options.zarr3 {
        Format::V3
    } else {
        Format::V2
    };
    sink.put(
        format!("{name}/{}", format.metadata_key()),
        format.metadata(dtype, &shape, &chunks, options.compression),
    )?;
    let keys = format.keys();
    for (origin, block) in &placed.blocks {
        // A block starts on a chunk boundary: its chunks divide the write
        // shape, which divides the block's.
        let first: Vec<usize> = origin.iter().zip(&chunks).map(|(o, c)| o / c).collect();
        let block_shape: Vec<usize> = block.dims.iter().map(|&d| d as usize).collect();
        let put = |key: String, chunk: &[u8]| {
            let stored = format
                .encode_chunk(chunk, options.compression)
                .map_err(|e| {
                    SaveError::io(dest, format!("compressing a chunk of {oxla_name}"), e)
                })?;
            sink.put(format!("{name}/{key}"), stored)
        };
        zarr::for_each_chunk(
            &block.bytes,
            &block_shape,
            &chunks,
            item,
            &keys,
            &first,
            put,
        )?;
    }
    Ok(ArrayRecord {
        path,
        name,
        write_shape: placed.write_shape,
        chunks,
        placement: placed.placement,
    })
}

/// Nanoseconds since the Unix epoch.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
