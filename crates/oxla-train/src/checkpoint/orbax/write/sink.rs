//! Where a checkpoint's arrays go: one OCDBT key-value store (Orbax's
//! default), or, with `use_ocdbt` off, a file per key under the
//! checkpoint directory (`params.w/.zarray`, `params.w/0.0`), as
//! TensorStore's `file` driver lays them out.

use std::path::{Path, PathBuf};

use super::SaveError;
use super::directory::write_file;
use super::store::Store;

/// The arrays' key-value store.
pub(super) enum Sink {
    /// The OCDBT databases of [`Store`].
    Ocdbt(Store),
    /// A file per key under `dir` (the checkpoint being written).
    Files { dir: PathBuf },
}

impl Sink {
    /// Adds `key` with `value`.
    pub(super) fn put(&mut self, key: String, value: Vec<u8>) -> Result<(), SaveError> {
        match self {
            Sink::Ocdbt(store) => store.put(key, value),
            Sink::Files { dir } => write_file(&dir.join(key), &value),
        }
    }

    /// Completes the store (the OCDBT B+trees and manifests; files are
    /// complete when written).
    pub(super) fn finish(self) -> Result<(), SaveError> {
        match self {
            Sink::Ocdbt(store) => store.finish(),
            Sink::Files { .. } => Ok(()),
        }
    }
}

/// Why an array name cannot name files under the checkpoint: a path
/// component that is empty, `.` or `..` (which would leave the
/// array's directory or the checkpoint), or a name that is absolute.
pub(super) fn unfit_file_name(name: &str) -> Option<String> {
    if Path::new(name).is_absolute() {
        return Some(format!("its name {name:?} is an absolute path"));
    }
    name.split('/')
        .find(|part| part.is_empty() || *part == "." || *part == "..")
        .map(|part| {
            format!("its name {name:?} has a path component {part:?}, which a checkpoint without OCDBT cannot store as a file")
        })
}
