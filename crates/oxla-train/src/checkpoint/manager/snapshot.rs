//! One step's checkpoint: the host copy of a pytree taken when the train
//! step may go on (each array's distinct blocks, never gathered on one
//! device), written into a step directory as a safetensors file of blocks
//! and a JSON manifest, and restored block by block onto the template's
//! shardings, whatever mesh the arrays were saved from.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::Path;

use oxla::pytree::Pytree;
use oxla::sharding::{HostShard, Sharding, make_array_from_callback};
use oxla::{Array, DType, Result};
use safetensors::SafeTensors;
use serde::{Deserialize, Serialize};

use super::super::safetensors_format::{
    check_structure, dtype_of_safetensors, sorted_metadata, write_tensors,
};
use super::super::{checkpoint_error, names_of};
use super::layout::{ARRAYS, MANIFEST, sync};
use super::regions::{self, Block};

/// The manifest's `format`.
const FORMAT: &str = "oxla-checkpoint";
/// The manifest's `version`.
const VERSION: u32 = 1;

/// A pytree's leaves on the host, with its structure and the step's
/// metrics: everything a background thread needs to write the step.
pub(super) struct Snapshot {
    pub step: u64,
    treedef: String,
    leaves: Vec<LeafSnapshot>,
    pub metrics: BTreeMap<String, f64>,
}

struct LeafSnapshot {
    name: String,
    dtype: DType,
    shape: Vec<i64>,
    blocks: Vec<HostShard>,
}

/// Host buffers of an earlier snapshot, by size, that the next one copies
/// into: their pages are the process's already, so a repeated save costs a
/// copy rather than faulting in fresh memory.
#[derive(Default)]
pub(super) struct HostBuffers {
    by_size: HashMap<usize, Vec<Vec<u8>>>,
}

impl HostBuffers {
    /// A buffer of `size` bytes, if one is kept.
    pub fn take(&mut self, size: usize) -> Option<Vec<u8>> {
        self.by_size.get_mut(&size).and_then(Vec::pop)
    }

    /// Keeps `buffers` for later snapshots.
    pub fn keep(&mut self, buffers: impl Iterator<Item = Vec<u8>>) {
        for buffer in buffers {
            self.by_size.entry(buffer.len()).or_default().push(buffer);
        }
    }

    /// Frees every buffer still kept.
    pub fn clear(&mut self) {
        self.by_size.clear();
    }
}

/// What `checkpoint.json` says of a step.
#[derive(Serialize, Deserialize)]
pub(super) struct Manifest {
    format: String,
    version: u32,
    step: u64,
    treedef: String,
    /// The step's metrics; a non-finite value is `null`.
    pub metrics: BTreeMap<String, Option<f64>>,
    leaves: Vec<LeafEntry>,
}

#[derive(Serialize, Deserialize)]
struct LeafEntry {
    name: String,
    dtype: String,
    shape: Vec<i64>,
    blocks: Vec<BlockEntry>,
}

#[derive(Serialize, Deserialize)]
struct BlockEntry {
    /// Its tensor in `arrays.safetensors`.
    tensor: String,
    /// Its `[start, end)` per dimension in the whole array.
    index: Vec<[i64; 2]>,
}

impl Snapshot {
    /// Copies `tree`'s arrays to the host, each array's distinct blocks
    /// from the devices that hold them, into buffers from `buffers` where
    /// it has one of the size.
    pub fn take<P: Pytree>(
        step: u64,
        tree: &P,
        metrics: BTreeMap<String, f64>,
        buffers: &mut HostBuffers,
    ) -> Result<Self> {
        let (leaves, def) = tree.flatten();
        let leaves = names_of(&def)
            .into_iter()
            .zip(&leaves)
            .map(|(name, leaf)| {
                let aval = leaf.aval()?;
                Ok(LeafSnapshot {
                    name,
                    dtype: leaf.dtype_or_bool(),
                    shape: aval.shape.to_vec(),
                    blocks: leaf.host_shards_reusing(&mut |size| buffers.take(size))?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Snapshot {
            step,
            treedef: def.to_string(),
            leaves,
            metrics,
        })
    }

    /// The snapshot's host buffers, for the next one.
    pub fn into_buffers(self) -> impl Iterator<Item = Vec<u8>> {
        self.leaves
            .into_iter()
            .flat_map(|leaf| leaf.blocks.into_iter().map(|b| b.data.bytes))
    }

    /// Writes the arrays and the manifest into `dir`, each file synced to
    /// the disk. A leaf held whole is the tensor of its name, so a step
    /// saved from one device is an oxla safetensors checkpoint that
    /// [`load`](crate::checkpoint::load) reads; a sharded leaf's blocks
    /// are tensors named by the leaf and the block's index
    /// (`w@0:4,0:8`).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let arrays = dir.join(ARRAYS);
        let mut entries = Vec::with_capacity(self.leaves.len());
        let mut tensors = Vec::new();
        for leaf in &self.leaves {
            let whole = leaf.blocks.len() == 1 && covers(&leaf.blocks[0].index, &leaf.shape);
            let mut blocks = Vec::with_capacity(leaf.blocks.len());
            for block in &leaf.blocks {
                let tensor = if whole {
                    leaf.name.clone()
                } else {
                    format!("{}@{}", leaf.name, index_text(&block.index))
                };
                tensors.push((tensor.clone(), leaf.dtype, &block.data));
                blocks.push(BlockEntry {
                    tensor,
                    index: block.index.iter().map(|r| [r.start, r.end]).collect(),
                });
            }
            entries.push(LeafEntry {
                name: leaf.name.clone(),
                dtype: leaf.dtype.name().to_string(),
                shape: leaf.shape.clone(),
                blocks,
            });
        }
        let all_whole = entries
            .iter()
            .zip(&self.leaves)
            .all(|(e, l)| e.blocks.len() == 1 && e.blocks[0].tensor == l.name);
        let format = if all_whole { "oxla" } else { "oxla-blocks" };
        let metadata = sorted_metadata([
            ("format", format.to_string()),
            ("treedef", self.treedef.clone()),
        ]);
        let named = tensors.iter().map(|(n, d, h)| (n.as_str(), *d, *h));
        write_tensors(&arrays, &arrays, named, metadata)?;
        sync(&arrays)?;
        let manifest = Manifest {
            format: FORMAT.to_string(),
            version: VERSION,
            step: self.step,
            treedef: self.treedef.clone(),
            metrics: self
                .metrics
                .iter()
                .map(|(k, &v)| (k.clone(), v.is_finite().then_some(v)))
                .collect(),
            leaves: entries,
        };
        let path = dir.join(MANIFEST);
        let text = serde_json::to_vec_pretty(&manifest).map_err(|e| checkpoint_error(&path, e))?;
        std::fs::write(&path, text).map_err(|e| checkpoint_error(&path, e))?;
        sync(&path)
    }
}

/// Whether `index` is the whole of an array of `shape`.
fn covers(index: &[Range<i64>], shape: &[i64]) -> bool {
    index
        .iter()
        .zip(shape)
        .all(|(r, &d)| r.start == 0 && r.end == d)
}

/// `0:4,0:8`.
fn index_text(index: &[Range<i64>]) -> String {
    index
        .iter()
        .map(|r| format!("{}:{}", r.start, r.end))
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads a step directory's manifest.
pub(super) fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read(&path).map_err(|e| checkpoint_error(&path, e))?;
    let manifest: Manifest =
        serde_json::from_slice(&text).map_err(|e| checkpoint_error(&path, e))?;
    if manifest.format != FORMAT || manifest.version != VERSION {
        return Err(checkpoint_error(
            &path,
            format!(
                "format {} version {}, not {FORMAT} version {VERSION}",
                manifest.format, manifest.version
            ),
        ));
    }
    Ok(manifest)
}

/// The pytree saved in step directory `dir`, shaped and placed like
/// `like`: each leaf must have the saved name, dtype and shape, and the
/// structure (static fields included) must be the saved one. A leaf of
/// `like` sharded over a mesh comes back with that sharding, each device's
/// block assembled from the saved blocks that overlap it; any other comes
/// back on `like`'s device.
pub(super) fn restore<P: Pytree>(dir: &Path, like: &P) -> Result<P> {
    let manifest = read_manifest(dir)?;
    let (template, def) = like.flatten();
    let arrays = dir.join(ARRAYS);
    check_structure(&arrays, &manifest.treedef, &def.to_string())?;
    let opened = std::fs::File::open(&arrays).map_err(|e| checkpoint_error(&arrays, e))?;
    // SAFETY: a committed step's files are never written again (a save
    // writes a new partial directory; deletion renames the step away
    // first), so the mapping's bytes do not change under it. Mapped rather
    // than read, the bytes are copied once, from the page cache into the
    // arrays.
    let bytes = unsafe { memmap2::Mmap::map(&opened) }.map_err(|e| checkpoint_error(&arrays, e))?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| checkpoint_error(&arrays, e))?;
    let names = names_of(&def);
    if names.len() != manifest.leaves.len() {
        return Err(checkpoint_error(
            dir,
            format!(
                "{} leaves saved, the template has {}",
                manifest.leaves.len(),
                names.len()
            ),
        ));
    }
    let mut leaves = Vec::with_capacity(template.len());
    for ((name, want), entry) in names.iter().zip(&template).zip(&manifest.leaves) {
        let want_aval = want.aval()?;
        let dtype = DType::from_name(&entry.dtype);
        if *name != entry.name
            || dtype != Some(want_aval.dtype)
            || entry.shape != want_aval.shape.as_slice()
        {
            return Err(checkpoint_error(
                dir,
                format!(
                    "{name} of the template is {}, the checkpoint has {} {}{:?}",
                    oxla::Aval::new(want_aval.dtype, &want_aval.shape),
                    entry.name,
                    entry.dtype,
                    entry.shape
                ),
            ));
        }
        let dtype = want_aval.dtype;
        let indices: Vec<Vec<Range<i64>>> = entry
            .blocks
            .iter()
            .map(|b| b.index.iter().map(|&[s, e]| s..e).collect())
            .collect();
        let mut blocks = Vec::with_capacity(entry.blocks.len());
        for (block, index) in entry.blocks.iter().zip(&indices) {
            let view = file
                .tensor(&block.tensor)
                .map_err(|e| checkpoint_error(&arrays, format!("{}: {e}", block.tensor)))?;
            if dtype_of_safetensors(view.dtype()) != Some(dtype) {
                return Err(checkpoint_error(
                    &arrays,
                    format!(
                        "{} is {:?}, its manifest says {}",
                        block.tensor,
                        view.dtype(),
                        entry.dtype
                    ),
                ));
            }
            blocks.push(Block {
                index,
                bytes: view.data(),
            });
        }
        leaves.push(place(dir, name, want, dtype, &entry.shape, &blocks)?);
    }
    like.with_leaves(&mut leaves.into_iter())
}

/// The saved array `name` of `shape` from its `blocks`, placed as `like`.
fn place(
    dir: &Path,
    name: &str,
    like: &Array,
    dtype: DType,
    shape: &[i64],
    blocks: &[Block<'_>],
) -> Result<Array> {
    let element_size = dtype.byte_size();
    let region = |index: &[Range<i64>]| -> Result<Array> {
        let bytes = regions::assemble(index, blocks, element_size).ok_or_else(|| {
            checkpoint_error(
                dir,
                format!(
                    "{name}: the saved blocks do not cover {}",
                    index_text(index)
                ),
            )
        })?;
        let dims: Vec<i64> = index.iter().map(|r| r.end - r.start).collect();
        Array::from_bytes(dtype, &dims, &bytes)
    };
    let whole: Vec<Range<i64>> = shape.iter().map(|&d| 0..d).collect();
    match like.sharding() {
        Some(Sharding::Named(named)) => make_array_from_callback(shape, &named, region),
        Some(gspmd @ Sharding::Gspmd { .. }) => oxla::device_put(&region(&whole)?, gspmd),
        Some(Sharding::SingleDevice(device)) => {
            let x = region(&whole)?;
            if x.device_ids()? == like.device_ids()? {
                Ok(x)
            } else {
                oxla::device_put(&x, Sharding::SingleDevice(device))
            }
        }
        None => region(&whole),
    }
}
