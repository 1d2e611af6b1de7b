//! Encoding an OCDBT database's B+tree and its manifest, as TensorStore's
//! format describes them and [`ocdbt`](super::super::ocdbt) reads them:
//! leaf nodes of prefix-compressed keys with their values (inline, or a
//! data file, offset and length), interior nodes over them when the keys
//! do not fit one node, and a manifest naming the root as the one version.
//! Every table is column-major, its integers LEB128 varints.

use std::collections::BTreeSet;
use std::path::Path;

use super::super::encoder::Encoder;
use super::super::record::{BTREE_NODE_MAGIC, MANIFEST_MAGIC, encode_record};
use super::SaveError;
use super::data_files::DataFiles;
use super::options::MAX_INLINE_VALUE_BYTES;

/// TensorStore's limit on the entries of one node.
const MAX_NODE_ARITY: usize = 1 << 20;
/// The version tree's arity, log 2 (TensorStore's default).
const VERSION_TREE_ARITY_LOG2: u8 = 4;
/// The zstd level of nodes and manifests (TensorStore's default
/// configuration: zstd at level 0, zstd's own default).
const RECORD_ZSTD_LEVEL: i32 = 0;
/// The most bytes a varint of a `u64` takes.
const VARINT: usize = 10;

/// A data file as a node's table names it: the base path (the part that
/// carries over to the nodes the file holds) and the rest of the path,
/// both relative to the node's own transitive path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DataFileId {
    /// The base path (`ocdbt.process_0/`, or empty).
    pub base: String,
    /// The rest (`d/0a1b...`).
    pub relative: String,
}

impl DataFileId {
    /// A file of the database itself (no base path).
    pub(super) fn own(relative: &str) -> DataFileId {
        DataFileId {
            base: String::new(),
            relative: relative.to_string(),
        }
    }

    /// The whole path.
    fn path(&self) -> String {
        format!("{}{}", self.base, self.relative)
    }
}

/// Where a key's value is.
#[derive(Clone, Debug)]
pub(super) enum LeafValue {
    /// In the leaf node (at most `max_inline_value_bytes`).
    Inline(Vec<u8>),
    /// In a data file.
    Stored {
        /// The file.
        file: DataFileId,
        /// Where the value starts.
        offset: u64,
        /// Its length.
        length: u64,
    },
}

impl LeafValue {
    /// The value's length.
    fn len(&self) -> u64 {
        match self {
            LeafValue::Inline(bytes) => bytes.len() as u64,
            LeafValue::Stored { length, .. } => *length,
        }
    }
}

/// A key and its value.
#[derive(Clone, Debug)]
pub(super) struct LeafEntry {
    /// The whole key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: LeafValue,
}

/// What a subtree holds (the statistics each reference to a node carries).
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    keys: u64,
    tree_bytes: u64,
    indirect_bytes: u64,
}

/// A written node: where it is, its height, its first key and what is
/// below it.
#[derive(Clone, Debug)]
pub(super) struct NodeRef {
    file: DataFileId,
    offset: u64,
    length: u64,
    height: u8,
    first_key: Vec<u8>,
    stats: Stats,
}

/// Writes the B+tree of `entries` (sorted by key, each key once) to
/// `nodes`, each node decoding to at most `max_node_bytes`; the root. `dest`
/// names the checkpoint in an error.
pub(super) fn write_btree(
    entries: &[LeafEntry],
    nodes: &mut DataFiles,
    max_node_bytes: usize,
    dest: &Path,
) -> Result<NodeRef, SaveError> {
    debug_assert!(entries.windows(2).all(|w| w[0].key < w[1].key));
    let sizes = entries.iter().map(|e| match &e.value {
        LeafValue::Inline(bytes) => (e.key.len() + 3 * VARINT + 1 + bytes.len(), None),
        LeafValue::Stored { file, .. } => (e.key.len() + 5 * VARINT + 1, Some(file)),
    });
    let groups = split(sizes, max_node_bytes, dest)?;
    let mut level = Vec::with_capacity(groups.len());
    for range in groups {
        let group = &entries[range];
        let body = encode_leaf(group);
        let stats = Stats {
            keys: group.len() as u64,
            tree_bytes: 0,
            indirect_bytes: group
                .iter()
                .filter(|e| matches!(e.value, LeafValue::Stored { .. }))
                .map(|e| e.value.len())
                .sum(),
        };
        level.push(write_node(&body, 0, &group[0].key, stats, nodes, dest)?);
    }
    let mut height = 0u8;
    while level.len() > 1 {
        height += 1;
        let sizes = level
            .iter()
            .map(|n| (n.first_key.len() + 9 * VARINT, Some(&n.file)));
        let groups = split(sizes, max_node_bytes, dest)?;
        let mut parents = Vec::with_capacity(groups.len());
        for range in groups {
            let children = &level[range];
            let body = encode_interior(children, height);
            let mut stats = Stats::default();
            for child in children {
                stats.keys += child.stats.keys;
                stats.tree_bytes += child.stats.tree_bytes;
                stats.indirect_bytes += child.stats.indirect_bytes;
            }
            let first = children[0].first_key.clone();
            parents.push(write_node(&body, height, &first, stats, nodes, dest)?);
        }
        level = parents;
    }
    Ok(level
        .pop()
        .expect("a tree of at least one entry has a root"))
}

/// The encoded manifest of a database whose one version (generation 1,
/// committed at `commit_time_ns`) has the B+tree `root`.
pub(super) fn encode_manifest(
    uuid: [u8; 16],
    max_node_bytes: usize,
    root: &NodeRef,
    commit_time_ns: u64,
) -> std::io::Result<Vec<u8>> {
    let mut e = Encoder::new();
    e.bytes(&uuid);
    e.varint(0); // manifest_kind: single (the versions are in this file)
    e.varint(MAX_INLINE_VALUE_BYTES as u64);
    e.varint(max_node_bytes as u64);
    e.u8(VERSION_TREE_ARITY_LOG2);
    e.varint(1); // compression_method: zstd
    e.u32_le(RECORD_ZSTD_LEVEL as u32);
    encode_table(&mut e, std::slice::from_ref(&root.file));
    // The inline versions: one.
    e.varint(1);
    e.varint(1); // generation_number
    e.u8(root.height);
    e.varint(0); // data_file_id
    e.varint(root.offset);
    e.varint(root.length);
    e.varints([
        root.stats.keys,
        root.stats.tree_bytes,
        root.stats.indirect_bytes,
    ]);
    e.u64_le(commit_time_ns);
    // No version tree nodes.
    e.varint(0);
    encode_record(MANIFEST_MAGIC, &e.into_bytes(), Some(RECORD_ZSTD_LEVEL))
}

/// Frames `body` as a node, appends it to `nodes` and says where it went.
fn write_node(
    body: &[u8],
    height: u8,
    first_key: &[u8],
    mut stats: Stats,
    nodes: &mut DataFiles,
    dest: &Path,
) -> Result<NodeRef, SaveError> {
    let record = encode_record(BTREE_NODE_MAGIC, body, Some(RECORD_ZSTD_LEVEL))
        .map_err(|e| SaveError::io(dest, "compressing a B+tree node", e))?;
    let placed = nodes.append(&record)?;
    stats.tree_bytes += record.len() as u64;
    Ok(NodeRef {
        file: DataFileId::own(&nodes.names()[placed.file]),
        offset: placed.offset,
        length: record.len() as u64,
        height,
        first_key: first_key.to_vec(),
        stats,
    })
}

/// Consecutive runs of entries, each of at most the given encoded size and
/// in the given data file (if any), whose node decodes to at most `limit`
/// bytes with its height, entry count and data file table.
fn split<'a>(
    entries: impl Iterator<Item = (usize, Option<&'a DataFileId>)>,
    limit: usize,
    dest: &Path,
) -> Result<Vec<std::ops::Range<usize>>, SaveError> {
    const HEADER: usize = 1 + 2 * VARINT;
    let file_bytes = |file: Option<&DataFileId>| file.map_or(0, |f| 3 * VARINT + f.path().len());
    let mut groups = Vec::new();
    let (mut start, mut bytes, mut count) = (0, HEADER, 0);
    let mut files: BTreeSet<&DataFileId> = BTreeSet::new();
    for (i, (size, file)) in entries.enumerate() {
        count = i + 1;
        let alone = HEADER + size + file_bytes(file);
        if alone > limit {
            return Err(SaveError::InvalidOption {
                path: dest.to_path_buf(),
                message: format!(
                    "max_node_bytes({limit}) cannot hold a B+tree node of one entry of up to \
                     {alone} bytes"
                ),
            });
        }
        let new_file = file.filter(|f| !files.contains(f));
        if i > start && (bytes + size + file_bytes(new_file) > limit || i - start == MAX_NODE_ARITY)
        {
            groups.push(start..i);
            (start, bytes) = (i, HEADER);
            files.clear();
        }
        bytes += size + file_bytes(file.filter(|f| !files.contains(f)));
        files.extend(file);
    }
    groups.push(start..count);
    Ok(groups)
}

/// The data files holding `entries`' stored values, sorted, each once.
fn stored_files(entries: &[LeafEntry]) -> Vec<DataFileId> {
    let files: BTreeSet<&DataFileId> = entries
        .iter()
        .filter_map(|e| match &e.value {
            LeafValue::Inline(_) => None,
            LeafValue::Stored { file, .. } => Some(file),
        })
        .collect();
    files.into_iter().cloned().collect()
}

/// The data files holding `children`, sorted, each once.
fn child_files(children: &[NodeRef]) -> Vec<DataFileId> {
    let files: BTreeSet<&DataFileId> = children.iter().map(|c| &c.file).collect();
    files.into_iter().cloned().collect()
}

/// A leaf node's body.
fn encode_leaf(entries: &[LeafEntry]) -> Vec<u8> {
    let files = stored_files(entries);
    let index = |file: &DataFileId| files.binary_search(file).expect("in the table") as u64;
    let mut e = Encoder::new();
    e.u8(0);
    encode_table(&mut e, &files);
    e.varint(entries.len() as u64);
    encode_keys(&mut e, entries.iter().map(|x| x.key.as_slice()), false);
    e.varints(entries.iter().map(|x| x.value.len()));
    e.varints(entries.iter().map(|x| match x.value {
        LeafValue::Inline(_) => 0,
        LeafValue::Stored { .. } => 1,
    }));
    let stored: Vec<(&DataFileId, u64)> = entries
        .iter()
        .filter_map(|x| match &x.value {
            LeafValue::Inline(_) => None,
            LeafValue::Stored { file, offset, .. } => Some((file, *offset)),
        })
        .collect();
    e.varints(stored.iter().map(|(file, _)| index(file)));
    e.varints(stored.iter().map(|(_, offset)| *offset));
    for x in entries {
        if let LeafValue::Inline(bytes) = &x.value {
            e.bytes(bytes);
        }
    }
    e.into_bytes()
}

/// An interior node's body over `children`, at `height`.
fn encode_interior(children: &[NodeRef], height: u8) -> Vec<u8> {
    let files = child_files(children);
    let index = |file: &DataFileId| files.binary_search(file).expect("in the table") as u64;
    let mut e = Encoder::new();
    e.u8(height);
    encode_table(&mut e, &files);
    e.varint(children.len() as u64);
    encode_keys(
        &mut e,
        children.iter().map(|c| c.first_key.as_slice()),
        true,
    );
    e.varints(children.iter().map(|c| index(&c.file)));
    e.varints(children.iter().map(|c| c.offset));
    e.varints(children.iter().map(|c| c.length));
    e.varints(children.iter().map(|c| c.stats.keys));
    e.varints(children.iter().map(|c| c.stats.tree_bytes));
    e.varints(children.iter().map(|c| c.stats.indirect_bytes));
    e.into_bytes()
}

/// Prefix-compressed keys: each key's common prefix with the one before
/// (from the second), each suffix's length, for an interior node each
/// child's subtree common prefix (0: its keys are stored whole), then the
/// suffixes.
fn encode_keys<'a>(e: &mut Encoder, keys: impl Iterator<Item = &'a [u8]> + Clone, interior: bool) {
    let prefixes: Vec<usize> = std::iter::once(0)
        .chain(
            keys.clone()
                .zip(keys.clone().skip(1))
                .map(|(a, b)| common_prefix(a, b)),
        )
        .collect();
    e.varints(prefixes[1..].iter().map(|&p| p as u64));
    e.varints(
        keys.clone()
            .zip(&prefixes)
            .map(|(k, &p)| (k.len() - p) as u64),
    );
    if interior {
        e.varints(keys.clone().map(|_| 0));
    }
    for (key, &p) in keys.zip(&prefixes) {
        e.bytes(&key[p..]);
    }
}

/// A data file table of `files` (sorted by base path, then the rest; each
/// once), prefix-compressed as TensorStore writes it: a prefix runs into the
/// rest of the path only where the base paths are equal.
fn encode_table(e: &mut Encoder, files: &[DataFileId]) {
    let prefixes: Vec<usize> = std::iter::once(0)
        .chain(files.windows(2).map(|w| {
            let base = common_prefix(w[0].base.as_bytes(), w[1].base.as_bytes());
            if w[0].base == w[1].base {
                base + common_prefix(w[0].relative.as_bytes(), w[1].relative.as_bytes())
            } else {
                base
            }
        }))
        .collect();
    e.varint(files.len() as u64);
    e.varints(prefixes.iter().skip(1).map(|&p| p as u64));
    e.varints(
        files
            .iter()
            .zip(&prefixes)
            .map(|(f, &p)| (f.path().len() - p) as u64),
    );
    e.varints(files.iter().map(|f| f.base.len() as u64));
    for (file, &p) in files.iter().zip(&prefixes) {
        e.bytes(&file.path().as_bytes()[p..]);
    }
}

/// The length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
