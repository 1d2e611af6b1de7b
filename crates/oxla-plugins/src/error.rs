//! The installer's errors: each one line that names the wheel (or the pin
//! file) and what happened.

use std::io;
use std::path::PathBuf;

/// What went wrong while reading the pins or installing a plugin. Every
/// message is one line; an install that fails leaves nothing behind (no
/// staging directory, no downloads, the previous install untouched).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A plugin choice that is not one of [`crate::Choice::ALL`].
    #[error("unknown plugin choice {given:?}; the choices are {choices}")]
    UnknownChoice {
        /// What was asked for.
        given: String,
        /// The valid choices, comma-separated.
        choices: String,
    },
    /// A pin file that does not parse or breaks a rule (a malformed hash, a
    /// wheel pinned twice).
    #[error("pins {file}: {message}")]
    Pins {
        /// The pin file's name.
        file: String,
        /// What is wrong, with its line where known.
        message: String,
    },
    /// A plugin `requires` a wheel that its pin file does not pin.
    #[error("pins {file}: plugin {plugin} requires {wheel}, which has no [[wheel]] entry")]
    MissingWheelPin {
        /// The pin file's name.
        file: String,
        /// The plugin that requires it.
        plugin: String,
        /// The wheel without a pin.
        wheel: String,
    },
    /// The Python that runs pip could not be started.
    #[error(
        "cannot download {wheel}: cannot run {python} ({message}); the installer needs Python 3 with pip"
    )]
    PythonMissing {
        /// The wheel, `name==version`.
        wheel: String,
        /// The Python command.
        python: String,
        /// Why it did not start.
        message: String,
    },
    /// The Python has no pip module.
    #[error("cannot download {wheel}: {python} has no pip ({message}); install pip for it")]
    PipMissing {
        /// The wheel, `name==version`.
        wheel: String,
        /// The Python command.
        python: String,
        /// Python's message.
        message: String,
    },
    /// `pip download` failed (no network, no such wheel, a download that
    /// stopped halfway).
    #[error("cannot download {wheel}: pip failed ({status}): {message}")]
    Pip {
        /// The wheel, `name==version`.
        wheel: String,
        /// pip's exit status.
        status: String,
        /// pip's last line on stderr.
        message: String,
    },
    /// pip succeeded but did not leave exactly one wheel.
    #[error("cannot download {wheel}: pip left {found} in its download directory, not one wheel")]
    UnexpectedDownload {
        /// The wheel, `name==version`.
        wheel: String,
        /// What it left.
        found: String,
    },
    /// The downloaded wheel is not the pinned one.
    #[error(
        "checksum mismatch for {file} ({wheel}): pinned sha256 {pinned}, downloaded {got}; refusing to install it"
    )]
    HashMismatch {
        /// The wheel, `name==version`.
        wheel: String,
        /// The downloaded file's name.
        file: String,
        /// The SHA-256 of the pin.
        pinned: String,
        /// The SHA-256 of the download.
        got: String,
    },
    /// The wheel is not a readable zip archive, a member is damaged or
    /// would land outside the plugin's directory, or the plugin library is
    /// not in it.
    #[error("corrupt wheel {file} ({wheel}): {message}")]
    CorruptWheel {
        /// The wheel, `name==version`.
        wheel: String,
        /// The wheel's file name.
        file: String,
        /// What is wrong with it.
        message: String,
    },
    /// The disk filled up (or a quota ran out) while unpacking.
    #[error("disk full while unpacking {file} ({wheel}) into {}: {source}; nothing was installed", .dir.display())]
    DiskFull {
        /// The wheel, `name==version`.
        wheel: String,
        /// The wheel's file name.
        file: String,
        /// The directory it was being unpacked into.
        dir: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// Any other file-system failure.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done ("create directory", "rename", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

/// The installer's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::Io`] for `action` on `path`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}

/// Whether `error` says the disk (or the user's quota) is full.
pub(crate) fn is_disk_full(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// `text` on one line: its lines trimmed and joined with " | ".
pub(crate) fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}
