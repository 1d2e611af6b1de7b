//! The key-value store of a checkpoint as Orbax leaves it after a save by
//! one process: the process's OCDBT database `ocdbt.process_0/` (its
//! `manifest.ocdbt`, and data files `d/<hex>` holding the values too large
//! to inline and the B+tree), and the checkpoint's own database beside it
//! (`manifest.ocdbt`, `d/<hex>`), which Orbax merges the processes' into:
//! the same keys, its B+tree referring to the values in
//! `ocdbt.process_0/d/`. Readers (TensorStore, and oxla) open the latter.

use std::path::{Path, PathBuf};

use super::btree::{DataFileId, LeafEntry, LeafValue, NodeRef, encode_manifest, write_btree};
use super::data_files::DataFiles;
use super::directory::{random_bytes, write_file};
use super::options::MAX_INLINE_VALUE_BYTES;
use super::{SaveError, now_ns};

/// The process's database, relative to the checkpoint (with the `/` that
/// makes it the base path of the merged database's references).
const PROCESS_DB: &str = "ocdbt.process_0/";

/// Where a value went.
enum Value {
    /// Small enough for its B+tree node.
    Inline(Vec<u8>),
    /// In one of the process's data files (by index), at an offset.
    Stored {
        file: usize,
        offset: u64,
        length: u64,
    },
}

/// The keys written so far.
pub(super) struct Store {
    dir: PathBuf,
    dest: PathBuf,
    max_node_bytes: usize,
    values: DataFiles,
    entries: Vec<(String, Value)>,
}

impl Store {
    /// An empty store in the checkpoint directory `dir` (being written for
    /// `dest`, which errors name).
    pub(super) fn new(
        dir: &Path,
        dest: &Path,
        target_data_file_size: u64,
        max_node_bytes: usize,
    ) -> Store {
        Store {
            dir: dir.to_path_buf(),
            dest: dest.to_path_buf(),
            max_node_bytes,
            values: DataFiles::new(&dir.join(PROCESS_DB), target_data_file_size),
            entries: Vec::new(),
        }
    }

    /// Adds `key` with `value` (inline up to 1 KiB, as Orbax configures
    /// OCDBT, else appended to a data file).
    pub(super) fn put(&mut self, key: String, value: Vec<u8>) -> Result<(), SaveError> {
        let value = if value.len() <= MAX_INLINE_VALUE_BYTES {
            Value::Inline(value)
        } else {
            let placed = self.values.append(&value)?;
            Value::Stored {
                file: placed.file,
                offset: placed.offset,
                length: value.len() as u64,
            }
        };
        self.entries.push((key, value));
        Ok(())
    }

    /// Writes both databases' B+trees and manifests.
    pub(super) fn finish(mut self) -> Result<(), SaveError> {
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        let names = self.values.names().to_vec();
        let leaves = |base: &str| -> Vec<LeafEntry> {
            self.entries
                .iter()
                .map(|(key, value)| LeafEntry {
                    key: key.as_bytes().to_vec(),
                    value: match value {
                        Value::Inline(bytes) => LeafValue::Inline(bytes.clone()),
                        Value::Stored {
                            file,
                            offset,
                            length,
                        } => LeafValue::Stored {
                            file: DataFileId {
                                base: base.to_string(),
                                relative: names[*file].clone(),
                            },
                            offset: *offset,
                            length: *length,
                        },
                    },
                })
                .collect()
        };
        let process_leaves = leaves("");
        let merged_leaves = leaves(PROCESS_DB);
        let process_dir = self.dir.join(PROCESS_DB);
        // The process's B+tree goes after its values, as TensorStore puts it.
        let process_root = write_btree(
            &process_leaves,
            &mut self.values,
            self.max_node_bytes,
            &self.dest,
        )?;
        self.values.finish()?;
        self.write_manifest(&process_dir, &process_root)?;
        let mut nodes = DataFiles::new(&self.dir, 0);
        let root = write_btree(&merged_leaves, &mut nodes, self.max_node_bytes, &self.dest)?;
        nodes.finish()?;
        self.write_manifest(&self.dir, &root)
    }

    /// Writes `db/manifest.ocdbt` naming `root`.
    fn write_manifest(&self, db: &Path, root: &NodeRef) -> Result<(), SaveError> {
        let path = db.join("manifest.ocdbt");
        let bytes = encode_manifest(random_bytes(&path)?, self.max_node_bytes, root, now_ns())
            .map_err(|e| SaveError::io(&path, "compressing the manifest", e))?;
        write_file(&path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::ocdbt::Database;
    use super::*;

    /// Keys and values of every size: inline, stored, some long keys.
    fn entries() -> Vec<(String, Vec<u8>)> {
        (0..400)
            .map(|i| {
                let key = format!("params.layer_{i:03}.{}/0.0", "w".repeat(i % 40));
                let value = (0..(i * 37) % 3000).map(|j| (i + j) as u8).collect();
                (key, value)
            })
            .collect()
    }

    #[test]
    fn both_databases_read_back_whole_over_many_nodes_and_files() {
        let dir = tempfile::tempdir().unwrap();
        // Small nodes and data files: a B+tree of several levels, values
        // and nodes spread over many files.
        let mut store = Store::new(dir.path(), dir.path(), 20_000, 2048);
        for (key, value) in entries() {
            store.put(key, value).unwrap();
        }
        store.finish().unwrap();
        let data_files = std::fs::read_dir(dir.path().join("ocdbt.process_0/d"))
            .unwrap()
            .count();
        assert!(data_files > 10, "{data_files} data files");
        // The merged database's own data file holds only its B+tree: many
        // nodes (leaves and interior ones).
        let own = std::fs::read_dir(dir.path().join("d")).unwrap();
        let own: Vec<_> = own
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        let magic = super::super::super::record::BTREE_NODE_MAGIC.to_be_bytes();
        let nodes = own[0].windows(4).filter(|w| *w == magic).count();
        assert!(own.len() == 1 && nodes > 20, "{nodes} nodes");
        for db in [dir.path().to_path_buf(), dir.path().join("ocdbt.process_0")] {
            let read = Database::open(&db).unwrap();
            let mut want = entries();
            want.sort();
            let keys: Vec<&str> = read.keys().collect();
            assert_eq!(
                keys,
                want.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
            );
            for (key, value) in &want {
                assert_eq!(read.get(key).unwrap().as_ref(), Some(value), "{key}");
            }
        }
    }

    #[test]
    fn a_node_too_small_for_one_entry_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::new(dir.path(), dir.path(), 0, 300);
        store.put("k".repeat(400), vec![1]).unwrap();
        let err = store.finish().unwrap_err().to_string();
        assert!(err.contains("max_node_bytes(300)"), "{err}");
    }
}
