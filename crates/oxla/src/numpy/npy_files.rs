//! `jnp.save`, `jnp.savez`, `jnp.savez_compressed` and `jnp.load`: arrays
//! in NumPy's `.npy` files and `.npz` archives.

use std::collections::BTreeMap;
use std::path::Path;

use oxla_npy::npz::{Compression, read_npz, write_npz};

use crate::array::Array;
use crate::error::{Error, Result};

/// `jnp.save(file, arr)`: writes `arr` to `file` in NumPy's `.npy`
/// format (little-endian, row-major).
pub fn save(file: impl AsRef<Path>, arr: &Array) -> Result<()> {
    arr.to_npy(file)
}

/// `jnp.load(file)`: the array a `.npy` file holds (an archive's arrays
/// are [`load_npz`]'s).
pub fn load(file: impl AsRef<Path>) -> Result<Array> {
    Array::from_npy(file)
}

/// `jnp.savez(file, *args, **kwds)`: writes the arrays to `file` as an
/// uncompressed `.npz` archive, `args` named `arr_0`, `arr_1`, ... in
/// order and `kwds` by their own names, as NumPy names them. The names
/// must be distinct (a keyword `arr_0` next to a first positional array is
/// an error, as in NumPy).
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let path = std::env::temp_dir().join(format!("oxla-doc-savez-{}.npz", std::process::id()));
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// let step = Array::scalar(7i32)?;
/// jnp::savez(&path, &[&x], &[("step", &step)])?;   // np.load(path)["arr_0"], ["step"]
/// let back = jnp::load_npz(&path)?;
/// assert_eq!(back["arr_0"].to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
/// assert_eq!(back["step"].item::<i32>()?, 7);
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn savez(file: impl AsRef<Path>, args: &[&Array], kwds: &[(&str, &Array)]) -> Result<()> {
    write_archive("savez", file.as_ref(), args, kwds, Compression::Stored)
}

/// `jnp.savez_compressed(file, *args, **kwds)`: [`savez`] with each
/// member deflated.
#[track_caller]
pub fn savez_compressed(
    file: impl AsRef<Path>,
    args: &[&Array],
    kwds: &[(&str, &Array)],
) -> Result<()> {
    write_archive(
        "savez_compressed",
        file.as_ref(),
        args,
        kwds,
        Compression::Deflated,
    )
}

/// `jnp.load(file)` of a `.npz` archive: its arrays by name (NumPy's
/// `NpzFile`, read whole), stored or deflated, as `np.savez`,
/// `np.savez_compressed` and [`savez`] write them.
pub fn load_npz(file: impl AsRef<Path>) -> Result<BTreeMap<String, Array>> {
    let path = file.as_ref();
    let reader = std::fs::File::open(path).map_err(|source| oxla_npy::NpyError::Io {
        path: path.display().to_string(),
        source,
    })?;
    read_npz(reader)?
        .into_iter()
        .map(|(name, host)| {
            let dtype = oxla_core::DType::from(host.element_type());
            Ok((name, Array::from_bytes(dtype, &host.dims, &host.bytes)?))
        })
        .collect()
}

/// Writes `args` (as `arr_<i>`) and `kwds` to `path` for `jnp.{function}`.
#[track_caller]
fn write_archive(
    function: &str,
    path: &Path,
    args: &[&Array],
    kwds: &[(&str, &Array)],
    compression: Compression,
) -> Result<()> {
    let location = crate::ops::current_location(std::panic::Location::caller());
    let positional_names: Vec<String> = (0..args.len()).map(|i| format!("arr_{i}")).collect();
    if let Some((name, _)) = kwds
        .iter()
        .find(|(name, _)| positional_names.iter().any(|p| p == name))
    {
        return Err(Error::InvalidArgument(format!(
            "{location}: jnp.{function}: cannot use un-named variables and keyword {name}"
        )));
    }
    let named = positional_names
        .iter()
        .map(String::as_str)
        .zip(args.iter().copied())
        .chain(kwds.iter().copied());
    let hosts: Vec<(&str, oxla_npy::HostArray)> = named
        .map(|(name, array)| Ok((name, array.to_host()?)))
        .collect::<Result<_>>()?;
    let members: Vec<(&str, &oxla_npy::HostArray)> =
        hosts.iter().map(|(name, host)| (*name, host)).collect();
    let writer = std::fs::File::create(path).map_err(|source| oxla_npy::NpyError::Io {
        path: path.display().to_string(),
        source,
    })?;
    write_npz(writer, &members, compression).map_err(|e| {
        Error::InvalidArgument(format!(
            "{location}: jnp.{function}: {}: {e}",
            path.display()
        ))
    })
}
