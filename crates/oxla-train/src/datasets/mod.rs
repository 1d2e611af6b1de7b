//! The datasets of oxla's examples, as ci/setup installs them (pinned by
//! SHA-256 in `third_party/datasets.toml`, under
//! `$OXLA_HOME/datasets/<name>/`): nothing is downloaded at run time.

pub(crate) mod batches;
pub mod idx;
mod mnist;
mod text;

pub use batches::{Batch, shuffled_batches};
pub use mnist::{Mnist, Split};
pub use text::CharText;

use std::path::PathBuf;

use oxla::Error;

/// Where ci/setup puts dataset `name`: `$OXLA_HOME/datasets/<name>`
/// (default `~/.cache/oxla/datasets/<name>`).
pub fn dir(name: &str) -> PathBuf {
    oxla::oxla_home().join("datasets").join(name)
}

/// A dataset problem: the path and what is wrong, with the fix when the
/// files are missing.
fn dataset_error(path: &std::path::Path, message: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("dataset {}: {message}", path.display()))
}

/// The bytes of `path`, or an error that says how to install it.
fn read(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (run `bash ci/setup` to install the pinned datasets)"
        } else {
            ""
        };
        dataset_error(path, format!("{e}{hint}"))
    })
}
