//! What goes wrong writing an Orbax checkpoint: each error names the
//! checkpoint (or the file) and, where one is at fault, the leaf.

use std::path::{Path, PathBuf};

/// An error from [`save`](super::save) or [`save_with`](super::save_with).
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A file or directory could not be created, written, synced or
    /// renamed (an unwritable directory, a full disk, a file where a
    /// directory should be).
    #[error("orbax checkpoint {}: {action}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`creating the directory`).
        action: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The destination exists and is not an empty directory: Orbax never
    /// writes over a checkpoint.
    #[error(
        "orbax checkpoint {}: the destination already exists and is not an empty directory \
         (Orbax does not write over a checkpoint; remove it or choose another path)",
        path.display()
    )]
    Exists {
        /// The destination.
        path: PathBuf,
    },
    /// The pytree has neither array leaves nor empty values (`None`, `{}`)
    /// below its root (Orbax: "Found empty item").
    #[error(
        "orbax checkpoint {}: the pytree has nothing to save (no array leaves, no None or \
         empty container below its root)",
        path.display()
    )]
    Empty {
        /// The destination.
        path: PathBuf,
    },
    /// A leaf Orbax cannot hold (an array with no elements, a name longer
    /// than an OCDBT key may be).
    #[error("orbax checkpoint {}: leaf {leaf} cannot be saved: {reason}", path.display())]
    UnsupportedLeaf {
        /// The destination.
        path: PathBuf,
        /// The leaf's oxla name (`layers[0].kernel`).
        leaf: String,
        /// Why not.
        reason: String,
    },
    /// Two leaves have the same Orbax name (their keys joined by `.`):
    /// `{'a.b': x}` and `{'a': {'b': y}}` would be one array.
    #[error(
        "orbax checkpoint {}: leaves {first} and {second} are both Orbax's {name}",
        path.display()
    )]
    DuplicateName {
        /// The destination.
        path: PathBuf,
        /// The shared Orbax name.
        name: String,
        /// The first leaf's oxla name.
        first: String,
        /// The second leaf's oxla name.
        second: String,
    },
    /// A [`SaveOptions`](super::SaveOptions) value that cannot work.
    #[error("orbax checkpoint {}: {message}", path.display())]
    InvalidOption {
        /// The destination.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A leaf could not be read from its device (a tracer, a donated
    /// buffer, an array that carries an error).
    #[error("orbax checkpoint {}: reading leaf {leaf}: {source}", path.display())]
    Array {
        /// The destination.
        path: PathBuf,
        /// The leaf's oxla name.
        leaf: String,
        /// oxla's error.
        #[source]
        source: Box<oxla::Error>,
    },
}

impl SaveError {
    /// An [`Io`](SaveError::Io) error doing `action` to `path`.
    pub(super) fn io(path: &Path, action: impl Into<String>, source: std::io::Error) -> SaveError {
        SaveError::Io {
            path: path.to_path_buf(),
            action: action.into(),
            source,
        }
    }
}

/// So a training loop returning `oxla::Result` can use `?` on a save.
impl From<SaveError> for oxla::Error {
    fn from(e: SaveError) -> oxla::Error {
        oxla::Error::InvalidArgument(e.to_string())
    }
}
