//! numpy's `.npz` archives (the `npz` feature).

use std::collections::BTreeMap;
use std::path::Path;

use super::checkpoint_error;
use super::files::{fill_template, named_host_leaves, write_atomically};
use oxla::Result;
use oxla::pytree::Pytree;

/// Saves `tree` as a numpy `.npz` archive (uncompressed, as `np.savez`):
/// one `<name>.npy` per leaf.
///
/// ```
/// use oxla::Array;
/// use oxla_train::checkpoint::{load_npz, save_npz};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-npz-{}.npz", std::process::id()));
/// let tree = (Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?,);
/// save_npz(&path, &tree)?;                                   // np.load(path)["[0]"] in Python
/// let (back,) = load_npz(&path, &tree)?;
/// assert_eq!(back.shape(), &[2, 2]);
/// assert_eq!(back.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn save_npz<P: Pytree>(path: impl AsRef<Path>, tree: &P) -> Result<()> {
    let path = path.as_ref();
    let (leaves, _) = named_host_leaves(tree)?;
    write_atomically(path, |partial| {
        let file = std::fs::File::create(partial).map_err(|e| checkpoint_error(path, e))?;
        let members: Vec<(&str, &oxla_npy::HostArray)> = leaves
            .iter()
            .map(|(name, _, host)| (name.as_str(), host))
            .collect();
        oxla_npy::npz::write_npz(file, &members, oxla_npy::npz::Compression::Stored)
            .map_err(|e| checkpoint_error(path, e))
    })
}

/// Loads a numpy `.npz` archive (stored or deflated, as `np.savez` and
/// `np.savez_compressed` write them) into a pytree shaped like `like`.
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla_train::checkpoint::{load_npz, save_npz};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-lnpz-{}.npz", std::process::id()));
/// let mut stats = BTreeMap::new();
/// stats.insert("mean".to_string(), Array::scalar(0.5f32)?);
/// save_npz(&path, &stats)?;
/// let back = load_npz(&path, &stats)?;
/// assert_eq!(back["mean"].item::<f32>()?, 0.5);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
pub fn load_npz<P: Pytree>(path: impl AsRef<Path>, like: &P) -> Result<P> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|e| checkpoint_error(path, e))?;
    let members = oxla_npy::npz::read_npz(file).map_err(|e| checkpoint_error(path, e))?;
    let tensors: BTreeMap<_, _> = members
        .into_iter()
        .map(|(name, host)| {
            let dtype = oxla::DType::from(host.element_type());
            (name, (dtype, host.dims, host.bytes))
        })
        .collect();
    fill_template(path, like, tensors)
}
