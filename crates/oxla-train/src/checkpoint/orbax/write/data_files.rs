//! An OCDBT database's log-structured data files (`d/<32 hex digits>`):
//! values too large for their B+tree node and encoded nodes, appended one
//! after another, a new file begun once one reaches the target size.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::SaveError;
use super::directory::random_hex;

/// Where appended bytes went: a data file (by its index among the
/// database's files) and the offset in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Placed {
    /// The data file's index in [`DataFiles::names`].
    pub file: usize,
    /// The offset of the first byte.
    pub offset: u64,
}

/// The open data file.
struct Open {
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
}

/// The data files of one database directory.
pub(super) struct DataFiles {
    root: PathBuf,
    target: u64,
    names: Vec<String>,
    open: Option<Open>,
}

impl DataFiles {
    /// No files yet, in the database directory `root`; a file is closed
    /// once it holds `target` bytes (0: never).
    pub(super) fn new(root: &Path, target: u64) -> DataFiles {
        DataFiles {
            root: root.to_path_buf(),
            target,
            names: Vec::new(),
            open: None,
        }
    }

    /// Each file's path relative to the database (`d/0a1b...`), in the
    /// order they were begun.
    pub(super) fn names(&self) -> &[String] {
        &self.names
    }

    /// Appends `bytes` to the open file, or to a new one when the open one
    /// would pass the target size.
    pub(super) fn append(&mut self, bytes: &[u8]) -> Result<Placed, SaveError> {
        let full = |open: &Open| {
            self.target != 0 && open.len > 0 && open.len + bytes.len() as u64 > self.target
        };
        if self.open.as_ref().is_none_or(full) {
            self.close()?;
            self.begin()?;
        }
        let open = self.open.as_mut().expect("a data file was just begun");
        open.out
            .write_all(bytes)
            .map_err(|e| SaveError::io(&open.path, "writing a data file", e))?;
        let placed = Placed {
            file: self.names.len() - 1,
            offset: open.len,
        };
        open.len += bytes.len() as u64;
        Ok(placed)
    }

    /// Flushes and syncs the open file: every file is whole from here.
    pub(super) fn finish(&mut self) -> Result<(), SaveError> {
        self.close()
    }

    /// Begins a new file under `d/`.
    fn begin(&mut self) -> Result<(), SaveError> {
        let dir = self.root.join("d");
        std::fs::create_dir_all(&dir)
            .map_err(|e| SaveError::io(&dir, "creating the directory", e))?;
        let name = format!("d/{}", random_hex(&dir)?);
        let path = self.root.join(&name);
        let file =
            File::create_new(&path).map_err(|e| SaveError::io(&path, "creating a data file", e))?;
        self.names.push(name);
        self.open = Some(Open {
            path,
            out: BufWriter::with_capacity(1 << 20, file),
            len: 0,
        });
        Ok(())
    }

    /// Flushes and syncs the open file, if any.
    fn close(&mut self) -> Result<(), SaveError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let file = open
            .out
            .into_inner()
            .map_err(|e| SaveError::io(&open.path, "writing a data file", e.into_error()))?;
        file.sync_all()
            .map_err(|e| SaveError::io(&open.path, "syncing a data file", e))
    }
}
