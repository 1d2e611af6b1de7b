//! Writing a checkpoint directory atomically, as Orbax does on a local
//! file system: everything goes into `<name>.orbax-checkpoint-tmp` beside
//! the destination, each file and directory is synced, and the directory is
//! renamed to `<name>` (a rename is atomic, so a checkpoint is whole or
//! absent whatever stops the writer). A temporary directory left by a
//! writer that died is removed first, as Orbax removes it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::SaveError;

/// What Orbax appends to a checkpoint's name while it is being written.
pub(super) const TMP_SUFFIX: &str = ".orbax-checkpoint-tmp";

/// Sixteen random bytes (a database's uuid); `path` names the file they
/// are for in an error.
pub(super) fn random_bytes(path: &Path) -> Result<[u8; 16], SaveError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| SaveError::io(path, "drawing random bytes", std::io::Error::other(e)))?;
    Ok(bytes)
}

/// 32 random lowercase hex digits (a data file's name).
pub(super) fn random_hex(path: &Path) -> Result<String, SaveError> {
    Ok(random_bytes(path)?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Writes `bytes` as the file `path` (creating its directory) and syncs it.
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SaveError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| SaveError::io(dir, "creating the directory", e))?;
    }
    let mut file = File::create(path).map_err(|e| SaveError::io(path, "creating the file", e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| SaveError::io(path, "writing the file", e))
}

/// A checkpoint being written in its temporary directory; removed unless
/// committed.
pub(super) struct Staging {
    dest: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl Staging {
    /// A fresh temporary directory for the checkpoint `dest`, which must
    /// not exist or be an empty directory (its parent is created).
    pub(super) fn begin(dest: &Path) -> Result<Staging, SaveError> {
        let Some(name) = dest.file_name() else {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the destination has no final name",
            );
            return Err(SaveError::io(dest, "naming the checkpoint directory", e));
        };
        match std::fs::symlink_metadata(dest) {
            // Absent, or under a file (creating the parent says which).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => return Err(SaveError::io(dest, "looking at the destination", e)),
            Ok(meta) if meta.is_dir() => {
                let mut entries = std::fs::read_dir(dest)
                    .map_err(|e| SaveError::io(dest, "listing the destination", e))?;
                if entries.next().is_some() {
                    return Err(SaveError::Exists {
                        path: dest.to_path_buf(),
                    });
                }
            }
            Ok(_) => {
                return Err(SaveError::Exists {
                    path: dest.to_path_buf(),
                });
            }
        }
        let parent = parent_of(dest);
        std::fs::create_dir_all(&parent)
            .map_err(|e| SaveError::io(&parent, "creating the directory", e))?;
        let mut tmp_name = name.to_os_string();
        tmp_name.push(TMP_SUFFIX);
        let tmp = parent.join(tmp_name);
        if std::fs::symlink_metadata(&tmp).is_ok() {
            std::fs::remove_dir_all(&tmp)
                .map_err(|e| SaveError::io(&tmp, "removing a crashed save's directory", e))?;
        }
        std::fs::create_dir(&tmp).map_err(|e| SaveError::io(&tmp, "creating the directory", e))?;
        Ok(Staging {
            dest: dest.to_path_buf(),
            tmp,
            committed: false,
        })
    }

    /// The temporary directory the checkpoint is written in.
    pub(super) fn dir(&self) -> &Path {
        &self.tmp
    }

    /// Syncs the temporary directory's directories, renames it to the
    /// destination and syncs the parent: the checkpoint exists from here.
    pub(super) fn commit(mut self) -> Result<(), SaveError> {
        sync_dirs(&self.tmp)?;
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| {
            SaveError::io(
                &self.dest,
                format!("renaming {} to the destination", self.tmp.display()),
                e,
            )
        })?;
        self.committed = true;
        sync_dir(&parent_of(&self.dest))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: an error has been returned already.
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// The directory `path` is in (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        Some(_) | None => PathBuf::from("."),
    }
}

/// Syncs `dir` and every directory below it (their entries).
fn sync_dirs(dir: &Path) -> Result<(), SaveError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SaveError::io(dir, "listing", e))?;
    for entry in entries {
        let entry = entry.map_err(|e| SaveError::io(dir, "listing", e))?;
        let is_dir = entry
            .file_type()
            .map_err(|e| SaveError::io(&entry.path(), "looking at", e))?
            .is_dir();
        if is_dir {
            sync_dirs(&entry.path())?;
        }
    }
    sync_dir(dir)
}

/// Syncs one directory's entries to the disk.
fn sync_dir(dir: &Path) -> Result<(), SaveError> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| SaveError::io(dir, "syncing the directory", e))
}
