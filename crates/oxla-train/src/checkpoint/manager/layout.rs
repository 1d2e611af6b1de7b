//! A checkpoint manager's directory on disk: one directory per committed
//! step, named by the step (`<root>/120/`), written first under a partial
//! name (`<root>/120.partial/`) and renamed when complete. A rename within
//! one directory is atomic, so a step directory is whole or absent
//! whatever kills the writer; deletion renames the other way first
//! (`120.deleting`), so a half-deleted step is never taken for one.

use std::fs::File;
use std::path::{Path, PathBuf};

use oxla::Result;

use super::super::checkpoint_error;

/// The file in each step directory that describes its arrays and metrics.
pub(super) const MANIFEST: &str = "checkpoint.json";
/// The file in each step directory that holds the arrays' bytes.
pub(super) const ARRAYS: &str = "arrays.safetensors";

const PARTIAL: &str = "partial";
const DELETING: &str = "deleting";

/// The directory of committed step `step`.
pub(super) fn step_dir(root: &Path, step: u64) -> PathBuf {
    root.join(step.to_string())
}

/// The directory step `step` is written in before its commit.
pub(super) fn partial_dir(root: &Path, step: u64) -> PathBuf {
    root.join(format!("{step}.{PARTIAL}"))
}

/// The committed steps under `root`, in increasing order: directories
/// named by a number that hold a manifest.
pub(super) fn committed_steps(root: &Path) -> Result<Vec<u64>> {
    let mut steps = Vec::new();
    for entry in std::fs::read_dir(root).map_err(|e| checkpoint_error(root, e))? {
        let entry = entry.map_err(|e| checkpoint_error(root, e))?;
        let Some(step) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if entry.path().join(MANIFEST).is_file() {
            steps.push(step);
        }
    }
    steps.sort_unstable();
    Ok(steps)
}

/// Removes what a writer killed mid-save or mid-delete left under `root`
/// (partial and half-deleted step directories).
pub(super) fn remove_leftovers(root: &Path) -> Result<()> {
    for entry in std::fs::read_dir(root).map_err(|e| checkpoint_error(root, e))? {
        let entry = entry.map_err(|e| checkpoint_error(root, e))?;
        let name = entry.file_name();
        let Some((step, suffix)) = name.to_str().and_then(|n| n.split_once('.')) else {
            continue;
        };
        if step.parse::<u64>().is_ok() && (suffix == PARTIAL || suffix == DELETING) {
            let path = entry.path();
            std::fs::remove_dir_all(&path).map_err(|e| checkpoint_error(&path, e))?;
        }
    }
    Ok(())
}

/// Creates an empty partial directory for `step` (removing an old one).
pub(super) fn start(root: &Path, step: u64) -> Result<PathBuf> {
    let partial = partial_dir(root, step);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| checkpoint_error(&partial, e))?;
    }
    std::fs::create_dir_all(&partial).map_err(|e| checkpoint_error(&partial, e))?;
    Ok(partial)
}

/// Makes step `step`'s partial directory the committed one: its files
/// are already synced; the rename is made durable by syncing `root`.
pub(super) fn commit(root: &Path, step: u64) -> Result<()> {
    let (partial, done) = (partial_dir(root, step), step_dir(root, step));
    sync(&partial)?;
    std::fs::rename(&partial, &done).map_err(|e| checkpoint_error(&done, e))?;
    sync(root)
}

/// Deletes committed step `step`: renamed out of the committed names
/// (durably), then removed.
pub(super) fn delete(root: &Path, step: u64) -> Result<()> {
    let dir = step_dir(root, step);
    let doomed = root.join(format!("{step}.{DELETING}"));
    std::fs::rename(&dir, &doomed).map_err(|e| checkpoint_error(&dir, e))?;
    sync(root)?;
    std::fs::remove_dir_all(&doomed).map_err(|e| checkpoint_error(&doomed, e))
}

/// Flushes a file's or a directory's contents (a directory's: its entries)
/// to the disk.
pub(super) fn sync(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| checkpoint_error(path, e))
}
