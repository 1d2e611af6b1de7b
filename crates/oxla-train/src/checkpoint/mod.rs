//! Checkpoints: a pytree's arrays saved as a safetensors file or a numpy
//! `.npz` archive, each tensor named by its leaf's pytree path
//! (`layers[0].kernel`, `[1][0].mu.layers[0].bias`), and loaded back into a
//! pytree of the same structure.
//!
//! Files are written to a temporary name beside the target and renamed, so
//! a crash mid-write leaves the previous checkpoint intact. Loading checks
//! that the file holds exactly the template's names with the template's
//! dtypes and shapes, and says which name differs when it does not. Values
//! round-trip bit for bit, so a run resumed from a checkpoint continues as
//! the uninterrupted run would.
//!
//! Each format is a cargo feature of oxla, off by default (as JAX leaves
//! checkpoints to Orbax): `safetensors` and `npz` (`checkpoint` turns on
//! both). Without a format's feature, its functions are absent (rustc's
//! error names the feature) and [`save`]/[`load`] of a file with its
//! extension is an error that says which feature to turn on.

use std::path::Path;

use oxla::pytree::{Pytree, TreeDef};
use oxla::{Error, Result};

#[cfg(any(feature = "safetensors", feature = "npz", feature = "orbax"))]
#[cfg_attr(not(any(feature = "safetensors", feature = "npz")), allow(dead_code))]
mod files;
#[cfg(feature = "safetensors")]
mod manager;
#[cfg(any(feature = "safetensors", feature = "orbax"))]
mod mapped;
#[cfg(feature = "npz")]
mod npz;
#[cfg(feature = "orbax")]
pub mod orbax;
#[cfg(feature = "safetensors")]
mod safetensors_format;

#[cfg(feature = "safetensors")]
pub use manager::{BestBy, BestMode, CheckpointManager, CheckpointManagerOptions, Retention};
#[cfg(feature = "safetensors")]
pub use mapped::load_safetensors_mapped;
#[cfg(any(feature = "safetensors", feature = "orbax"))]
pub use mapped::{LoadOptions, LoadReport, TensorSource};
#[cfg(feature = "npz")]
pub use npz::{load_npz, save_npz};
#[cfg(feature = "safetensors")]
pub use safetensors_format::{load_safetensors, save_safetensors};

/// The tensor names of `tree`'s leaves, in leaf order: the pytree paths
/// without their leading `.` (`layers[0].kernel`).
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla_train::checkpoint::tensor_names;
/// # fn main() -> oxla::Result<()> {
/// let mut params = BTreeMap::new();
/// params.insert("w".to_string(), vec![Array::scalar(1.0f32)?, Array::scalar(2.0f32)?]);
/// params.insert("b".to_string(), vec![Array::scalar(0.0f32)?]);
/// assert_eq!(tensor_names(&params), vec!["['b'][0]", "['w'][0]", "['w'][1]"]);
/// assert_eq!(tensor_names(&(params.clone(), Array::scalar(0i32)?))[3], "[1]");
/// # Ok(())
/// # }
/// ```
pub fn tensor_names<P: Pytree>(tree: &P) -> Vec<String> {
    names_of(&tree.flatten().1)
}

/// The tensor names of a structure's leaves (see [`tensor_names`]).
pub(super) fn names_of(def: &TreeDef) -> Vec<String> {
    def.leaf_paths()
        .into_iter()
        .map(|p| p.strip_prefix('.').map(str::to_string).unwrap_or(p))
        .collect()
}

/// Saves `tree` to `path` as safetensors (`.safetensors`) or numpy
/// (`.npz`), by the extension. The file is written beside `path` and
/// renamed over it, so a crash leaves the previous checkpoint whole.
///
/// With the `safetensors` feature:
///
/// ```
/// use oxla_nn::{Activation, Mlp};
/// use oxla::random::Key;
/// # fn main() -> oxla::Result<()> {
/// # #[cfg(feature = "safetensors")] {
/// let model = Mlp::new(Key::new(0), &[2, 3, 1], Activation::Tanh);
/// let path = std::env::temp_dir().join(format!("oxla-doc-save-{}.safetensors", std::process::id()));
/// oxla_train::checkpoint::save(&path, &model)?;
/// // Loaded against a template: here a model of the same shapes from another key.
/// let template = Mlp::new(Key::new(1), &[2, 3, 1], Activation::Tanh);
/// let restored = oxla_train::checkpoint::load(&path, &template)?;
/// assert_eq!(restored.layers[0].kernel.to_vec::<f32>()?, model.layers[0].kernel.to_vec::<f32>()?);
/// # std::fs::remove_file(&path).ok();
/// # }
/// # Ok(())
/// # }
/// ```
#[cfg_attr(
    not(any(feature = "safetensors", feature = "npz")),
    allow(unused_variables)
)]
pub fn save<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    match Format::of(path)? {
        #[cfg(feature = "safetensors")]
        Format::Safetensors => save_safetensors(path, tree),
        #[cfg(feature = "npz")]
        Format::Npz => save_npz(path, tree),
    }
}

/// Loads a pytree shaped like `like` (its structure, static fields, dtypes
/// and shapes) from `path`, safetensors or `.npz` by the extension. A file
/// whose names, dtypes or shapes differ from the template's is an error
/// naming the first difference.
///
/// With the `npz` feature:
///
/// ```
/// use oxla::Array;
/// # fn main() -> oxla::Result<()> {
/// # #[cfg(feature = "npz")] {
/// let path = std::env::temp_dir().join(format!("oxla-doc-load-{}.npz", std::process::id()));
/// let saved = (Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::scalar(7i32)?);
/// oxla_train::checkpoint::save(&path, &saved)?;
/// let (w, step) = oxla_train::checkpoint::load(&path, &saved)?;
/// assert_eq!((w.to_vec::<f32>()?, step.item::<i32>()?), (vec![1.0, 2.0], 7));
/// // A template of another shape does not fit.
/// let wrong = (Array::from_slice(&[1.0f32], &[1])?, Array::scalar(0i32)?);
/// assert!(oxla_train::checkpoint::load(&path, &wrong).is_err());
/// # std::fs::remove_file(&path).ok();
/// # }
/// # Ok(())
/// # }
/// ```
#[cfg_attr(
    not(any(feature = "safetensors", feature = "npz")),
    allow(unused_variables)
)]
pub fn load<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    match Format::of(path)? {
        #[cfg(feature = "safetensors")]
        Format::Safetensors => load_safetensors(path, like),
        #[cfg(feature = "npz")]
        Format::Npz => load_npz(path, like),
    }
}

/// The file formats this build of oxla has (one per enabled feature).
enum Format {
    #[cfg(feature = "safetensors")]
    Safetensors,
    #[cfg(feature = "npz")]
    Npz,
}

impl Format {
    /// The format of `path`'s extension; an error for another extension,
    /// or for a format whose feature is off (naming the feature).
    fn of(path: &Path) -> Result<Format> {
        let extension = path.extension().and_then(|e| e.to_str());
        match extension {
            #[cfg(feature = "safetensors")]
            Some("safetensors") => Ok(Format::Safetensors),
            #[cfg(feature = "npz")]
            Some("npz") => Ok(Format::Npz),
            // Reached for the formats whose feature is off.
            #[allow(unreachable_patterns)]
            Some(format @ ("safetensors" | "npz")) => Err(checkpoint_error(
                path,
                format!(
                    "writing and reading .{format} files needs oxla's `{format}` cargo feature \
                     (features = [\"{format}\"], or \"checkpoint\" for every format)"
                ),
            )),
            _ => Err(checkpoint_error(
                path,
                "the extension must be .safetensors or .npz",
            )),
        }
    }
}

fn checkpoint_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("checkpoint {}: {message}", path.display()))
}
