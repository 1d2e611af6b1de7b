//! TensorStore's OCDBT key-value store (an "optionally-cooperative
//! distributed B+tree"), as Orbax writes it: `manifest.ocdbt` names the
//! latest version's B+tree root (directly or through a tree of versions),
//! B+tree nodes and out-of-line values live in data files (`d/<hex>`, or
//! another process's `ocdbt.process_N/d/<hex>` in a merged checkpoint).
//!
//! The layout follows TensorStore's format description: each encoded
//! manifest, version-tree node and B+tree node is a header (big-endian
//! magic, little-endian `u64` length, varint version and compression), a
//! body (zstd-compressed or not) and a CRC-32C footer; the tables inside
//! are column-major arrays of LEB128 varints. Every record is checked
//! (magic, length, checksum, bounds, heights), so a damaged checkpoint is
//! an error naming its file.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use oxla::Result;

use super::cursor::Cursor;
use super::record::{
    BTREE_NODE_MAGIC, MANIFEST_LIMIT, MANIFEST_MAGIC, VERSION_NODE_MAGIC, decode_record,
};
use crate::checkpoint::checkpoint_error;

/// Where a key's value is.
#[derive(Clone, Debug)]
enum Value {
    /// Stored in its B+tree leaf.
    Inline(Vec<u8>),
    /// Stored in a data file (a path relative to the database), at a range.
    Stored {
        file: String,
        offset: u64,
        length: usize,
    },
}

/// A data file named by a node's table: its path relative to the
/// database, and the transitive path that applies to the nodes it holds.
#[derive(Clone, Debug)]
struct DataFile {
    path: String,
    transitive: String,
}

/// A reference to an encoded node: the file, byte range and height.
#[derive(Clone, Debug)]
struct NodeRef {
    file: DataFile,
    offset: u64,
    length: usize,
    height: u8,
}

/// An opened OCDBT database: every key of its latest version and where
/// its value is.
pub(super) struct Database {
    root: PathBuf,
    entries: BTreeMap<String, Value>,
}

impl Database {
    /// Reads the database in the directory `root` (its `manifest.ocdbt`,
    /// then the version tree and the whole B+tree of the latest version).
    pub(super) fn open(root: &Path) -> Result<Database> {
        let mut db = Database {
            root: root.to_path_buf(),
            entries: BTreeMap::new(),
        };
        let manifest_path = root.join("manifest.ocdbt");
        let bytes =
            std::fs::read(&manifest_path).map_err(|e| checkpoint_error(&manifest_path, e))?;
        let body = decode_record(&bytes, MANIFEST_MAGIC, &manifest_path, MANIFEST_LIMIT)?;
        let mut c = Cursor::new(&body, &manifest_path);
        let config = read_config(&mut c)?;
        let files = data_file_table(&mut c, "")?;
        let inline = version_leaf_entries(&mut c, &files)?;
        let nodes = version_interior_entries(&mut c, &files, None)?;
        c.finish("manifest")?;
        let root_ref = match (inline.last(), nodes.last()) {
            (Some(latest), _) => latest.clone(),
            (None, Some(node)) => db.latest_in_version_node(node, config.max_node_bytes)?,
            (None, None) => return Err(c.corrupt("the manifest references no version")),
        };
        if let Some(root_ref) = root_ref {
            db.visit(&root_ref, Vec::new(), config.max_node_bytes)?;
        }
        Ok(db)
    }

    /// Every key, in order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The value of `key`; `None` when the database does not hold it.
    pub(super) fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.entries.get(key) {
            None => Ok(None),
            Some(Value::Inline(bytes)) => Ok(Some(bytes.clone())),
            Some(Value::Stored {
                file,
                offset,
                length,
            }) => self.read_range(file, *offset, *length).map(Some),
        }
    }

    /// `length` bytes at `offset` of the data file `file`.
    fn read_range(&self, file: &str, offset: u64, length: usize) -> Result<Vec<u8>> {
        let path = self.data_path(file)?;
        let error = |e: std::io::Error| {
            checkpoint_error(
                &path,
                format!("reading {length} bytes at offset {offset}: {e}"),
            )
        };
        let mut f = std::fs::File::open(&path).map_err(error)?;
        let size = f.metadata().map_err(error)?.len();
        if offset
            .checked_add(length as u64)
            .is_none_or(|end| end > size)
        {
            return Err(checkpoint_error(
                &path,
                format!(
                    "the data file is {size} bytes; a value at offset {offset} of {length} bytes \
                     lies past its end (truncated?)"
                ),
            ));
        }
        f.seek(SeekFrom::Start(offset)).map_err(error)?;
        let mut out = vec![0; length];
        f.read_exact(&mut out).map_err(error)?;
        Ok(out)
    }

    /// The path of the data file `file`, which must lie inside the database.
    fn data_path(&self, file: &str) -> Result<PathBuf> {
        let relative = Path::new(file);
        let inside = relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !inside {
            return Err(checkpoint_error(
                &self.root.join("manifest.ocdbt"),
                format!("data file path {file:?} leaves the checkpoint directory"),
            ));
        }
        Ok(self.root.join(relative))
    }

    /// The decoded body of the record at `node`, checked against `magic`.
    fn read_node(&self, node: &NodeRef, magic: u32, limit: usize) -> Result<(PathBuf, Vec<u8>)> {
        let bytes = self.read_range(&node.file.path, node.offset, node.length)?;
        let path = self.data_path(&node.file.path)?;
        let body = decode_record(&bytes, magic, &path, limit)
            .map_err(|e| checkpoint_error(&path, format!("node at offset {}: {e}", node.offset)))?;
        Ok((path, body))
    }

    /// The latest B+tree root under the version tree node `node`.
    fn latest_in_version_node(&self, node: &NodeRef, limit: usize) -> Result<Option<NodeRef>> {
        let (path, body) = self.read_node(node, VERSION_NODE_MAGIC, limit)?;
        let mut c = Cursor::new(&body, &path);
        let _arity_log2 = c.u8("version tree arity")?;
        let height = c.u8("version node height")?;
        if height != node.height {
            return Err(c.corrupt(format!(
                "version node of height {height}, its parent says {}",
                node.height
            )));
        }
        let files = data_file_table(&mut c, &node.file.transitive)?;
        if height == 0 {
            let versions = version_leaf_entries(&mut c, &files)?;
            c.finish("version leaf node")?;
            match versions.last() {
                Some(latest) => Ok(latest.clone()),
                None => Err(c.corrupt("an empty version leaf node")),
            }
        } else {
            let children = version_interior_entries(&mut c, &files, Some(height - 1))?;
            c.finish("version interior node")?;
            match children.last() {
                Some(child) => self.latest_in_version_node(child, limit),
                None => Err(c.corrupt("an empty version interior node")),
            }
        }
    }

    /// Adds every key under the B+tree node `node` (whose keys all start
    /// with `prefix`) to the entries.
    fn visit(&mut self, node: &NodeRef, prefix: Vec<u8>, limit: usize) -> Result<()> {
        let (path, body) = self.read_node(node, BTREE_NODE_MAGIC, limit)?;
        let mut c = Cursor::new(&body, &path);
        let height = c.u8("B+tree node height")?;
        if height != node.height {
            return Err(c.corrupt(format!(
                "B+tree node of height {height}, its parent says {}",
                node.height
            )));
        }
        let files = data_file_table(&mut c, &node.file.transitive)?;
        let n = c.count("B+tree entry count")?;
        let keys = relative_keys(&mut c, n, height > 0)?;
        if height == 0 {
            self.leaf_entries(&mut c, &files, &prefix, keys)?;
            return c.finish("B+tree leaf node");
        }
        let children = node_refs(&mut c, n, &files, height - 1)?;
        for _ in 0..3 {
            // Statistics: num_keys, num_tree_bytes, num_indirect_value_bytes.
            c.sizes(n, "B+tree statistics")?;
        }
        c.finish("B+tree interior node")?;
        for ((key, common), child) in keys.into_iter().zip(children) {
            let mut child_prefix = prefix.clone();
            child_prefix.extend_from_slice(&key[..common]);
            self.visit(&child, child_prefix, limit)?;
        }
        Ok(())
    }

    /// A leaf node's values (after its keys), added under `prefix`.
    fn leaf_entries(
        &mut self,
        c: &mut Cursor<'_>,
        files: &[DataFile],
        prefix: &[u8],
        keys: Vec<(Vec<u8>, usize)>,
    ) -> Result<()> {
        let n = keys.len();
        let lengths = c.sizes(n, "value length")?;
        let mut indirect = Vec::with_capacity(n);
        for _ in 0..n {
            match c.varint("value kind")? {
                0 => indirect.push(false),
                1 => indirect.push(true),
                kind => return Err(c.corrupt(format!("value kind {kind} (0 or 1)"))),
            }
        }
        let stored = indirect.iter().filter(|&&i| i).count();
        let ids = c.sizes(stored, "value data file id")?;
        let offsets = (0..stored)
            .map(|_| c.varint("value offset"))
            .collect::<Result<Vec<_>>>()?;
        let mut stored_refs = ids.into_iter().zip(offsets);
        for (((key, _), length), indirect) in keys.into_iter().zip(lengths).zip(indirect) {
            let value = if indirect {
                let (id, offset) = stored_refs.next().expect("one reference per stored value");
                let file = files.get(id).ok_or_else(|| {
                    c.corrupt(format!("data file id {id} of a table of {}", files.len()))
                })?;
                Value::Stored {
                    file: file.path.clone(),
                    offset,
                    length,
                }
            } else {
                Value::Inline(c.bytes(length, "inline value")?.to_vec())
            };
            let mut full = prefix.to_vec();
            full.extend_from_slice(&key);
            let full = String::from_utf8(full)
                .map_err(|e| c.corrupt(format!("a key that is not UTF-8: {e}")))?;
            self.entries.insert(full, value);
        }
        Ok(())
    }
}

/// The parts of the manifest's configuration that reading needs.
struct Config {
    max_node_bytes: usize,
}

/// The manifest's configuration.
fn read_config(c: &mut Cursor<'_>) -> Result<Config> {
    c.bytes(16, "database uuid")?;
    match c.varint("manifest kind")? {
        0 => {}
        1 => {
            return Err(c.corrupt(
                "a numbered manifest (manifest.<n> files), which Orbax does not write; \
                 only single-file manifests are read",
            ));
        }
        kind => return Err(c.corrupt(format!("manifest kind {kind}"))),
    }
    let _max_inline_value_bytes = c.varint("max_inline_value_bytes")?;
    let max_node_bytes = c.size("max_decoded_node_bytes")?;
    let _arity_log2 = c.u8("version_tree_arity_log2")?;
    match c.varint("compression method")? {
        0 => {}
        1 => {
            c.u32_le("zstd level")?;
        }
        method => return Err(c.corrupt(format!("compression method {method} (0 or 1)"))),
    }
    Ok(Config { max_node_bytes })
}

/// A data file table (prefix-compressed paths with their base paths),
/// each path resolved below `transitive`.
fn data_file_table(c: &mut Cursor<'_>, transitive: &str) -> Result<Vec<DataFile>> {
    let n = c.count("data file count")?;
    let prefixes = c.sizes(n.saturating_sub(1), "data file path prefix length")?;
    let suffixes = c.sizes(n, "data file path suffix length")?;
    let bases = c.sizes(n, "data file base path length")?;
    let mut previous: Vec<u8> = Vec::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let shared = if i == 0 { 0 } else { prefixes[i - 1] };
        if shared > previous.len() {
            return Err(c.corrupt(format!(
                "data file path prefix {shared} longer than the previous path"
            )));
        }
        let mut path = previous[..shared].to_vec();
        path.extend_from_slice(c.bytes(suffixes[i], "data file path")?);
        if bases[i] > path.len() {
            return Err(c.corrupt(format!(
                "base path length {} of a {}-byte path",
                bases[i],
                path.len()
            )));
        }
        let text = std::str::from_utf8(&path)
            .map_err(|e| c.corrupt(format!("a data file path that is not UTF-8: {e}")))?;
        out.push(DataFile {
            path: format!("{transitive}{text}"),
            transitive: format!("{transitive}{}", &text[..bases[i]]),
        });
        previous = path;
    }
    Ok(out)
}

/// A column of `n` node references: data file ids, offsets, lengths.
fn node_refs(c: &mut Cursor<'_>, n: usize, files: &[DataFile], height: u8) -> Result<Vec<NodeRef>> {
    node_refs_of_heights(c, files, &vec![height; n])
}

/// References whose heights are given, one per entry.
fn node_refs_of_heights(
    c: &mut Cursor<'_>,
    files: &[DataFile],
    heights: &[u8],
) -> Result<Vec<NodeRef>> {
    let n = heights.len();
    let ids = c.sizes(n, "data file id")?;
    let offsets = (0..n)
        .map(|_| c.varint("data file offset"))
        .collect::<Result<Vec<_>>>()?;
    let lengths = c.sizes(n, "data file length")?;
    ids.into_iter()
        .zip(offsets)
        .zip(lengths)
        .zip(heights)
        .map(|(((id, offset), length), &height)| {
            let file = files.get(id).ok_or_else(|| {
                c.corrupt(format!("data file id {id} of a table of {}", files.len()))
            })?;
            Ok(NodeRef {
                file: file.clone(),
                offset,
                length,
                height,
            })
        })
        .collect()
}

/// Version tree leaf entries (the manifest's inline versions): each
/// version's B+tree root, `None` for an empty tree.
fn version_leaf_entries(c: &mut Cursor<'_>, files: &[DataFile]) -> Result<Vec<Option<NodeRef>>> {
    let n = c.count("version count")?;
    let _generations = c.sizes(n, "generation number")?;
    let heights = (0..n)
        .map(|_| c.u8("root height"))
        .collect::<Result<Vec<_>>>()?;
    let ids = c.sizes(n, "root data file id")?;
    let offsets = (0..n)
        .map(|_| c.varint("root offset"))
        .collect::<Result<Vec<_>>>()?;
    let lengths = c.sizes(n, "root length")?;
    for _ in 0..3 {
        // Statistics: num_keys, num_tree_bytes, num_indirect_value_bytes.
        c.sizes(n, "version statistics")?;
    }
    for _ in 0..n {
        c.u64_le("commit time")?;
    }
    (0..n)
        .map(|i| {
            if lengths[i] == 0 {
                return Ok(None);
            }
            let file = files.get(ids[i]).ok_or_else(|| {
                c.corrupt(format!(
                    "root data file id {} of a table of {}",
                    ids[i],
                    files.len()
                ))
            })?;
            Ok(Some(NodeRef {
                file: file.clone(),
                offset: offsets[i],
                length: lengths[i],
                height: heights[i],
            }))
        })
        .collect()
}

/// Version tree interior entries; `height` is the children's height in a
/// version node, `None` in the manifest (where a column gives them).
fn version_interior_entries(
    c: &mut Cursor<'_>,
    files: &[DataFile],
    height: Option<u8>,
) -> Result<Vec<NodeRef>> {
    let n = c.count("version node count")?;
    let _generations = c.sizes(n, "generation number")?;
    // Read the references' columns, then the statistics, then (in the
    // manifest) the heights: decode with placeholder heights first.
    let mut refs = node_refs(c, n, files, height.unwrap_or(0))?;
    c.sizes(n, "generation count")?;
    for _ in 0..n {
        c.u64_le("commit time")?;
    }
    if height.is_none() {
        for r in &mut refs {
            r.height = c.u8("version node height")?;
        }
    }
    Ok(refs)
}

/// `n` prefix-compressed keys (relative to the node), each with the length
/// of its subtree's common prefix (interior nodes) or its own length.
fn relative_keys(c: &mut Cursor<'_>, n: usize, interior: bool) -> Result<Vec<(Vec<u8>, usize)>> {
    let prefixes = c.sizes(n.saturating_sub(1), "key prefix length")?;
    let suffixes = c.sizes(n, "key suffix length")?;
    let commons = if interior {
        c.sizes(n, "subtree common prefix length")?
    } else {
        Vec::new()
    };
    let mut keys: Vec<(Vec<u8>, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        let shared = if i == 0 { 0 } else { prefixes[i - 1] };
        let previous = keys.last().map_or(&[][..], |(k, _)| k.as_slice());
        if shared > previous.len() {
            return Err(c.corrupt(format!(
                "key prefix length {shared} longer than the previous key"
            )));
        }
        let mut key = previous[..shared].to_vec();
        key.extend_from_slice(c.bytes(suffixes[i], "key")?);
        let common = if interior { commons[i] } else { key.len() };
        if common > key.len() {
            return Err(c.corrupt(format!(
                "subtree common prefix {common} longer than its {}-byte key",
                key.len()
            )));
        }
        keys.push((key, common));
    }
    Ok(keys)
}
