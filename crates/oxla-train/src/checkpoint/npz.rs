//! numpy's `.npz` archives (the `npz` feature).

use std::collections::BTreeMap;
use std::io::{Read, Write};
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
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(true);
        for (name, _, host) in &leaves {
            zip.start_file(format!("{name}.npy"), options)
                .map_err(|e| checkpoint_error(path, e))?;
            zip.write_all(&host.to_npy_bytes())
                .map_err(|e| checkpoint_error(path, e))?;
        }
        zip.finish().map_err(|e| checkpoint_error(path, e))?;
        Ok(())
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
    let mut zip = zip::ZipArchive::new(file).map_err(|e| checkpoint_error(path, e))?;
    let mut tensors = BTreeMap::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| checkpoint_error(path, e))?;
        let name = entry
            .name()
            .map_err(|e| checkpoint_error(path, e))?
            .trim_end_matches(".npy")
            .to_string();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| checkpoint_error(path, e))?;
        let host = oxla_npy::HostArray::from_npy_bytes(&data)
            .map_err(|e| checkpoint_error(path, format!("{name}: {e}")))?;
        let dtype = oxla::DType::from(host.element_type());
        tensors.insert(name, (dtype, host.dims, host.bytes));
    }
    fill_template(path, like, tensors)
}
