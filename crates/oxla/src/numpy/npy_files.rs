//! `jnp.save` and `jnp.load`: one array in NumPy's `.npy` format.

use std::path::Path;

use crate::array::Array;
use crate::error::Result;

/// `jnp.save(file, arr)`: writes `arr` to `file` in NumPy's `.npy`
/// format (little-endian, row-major).
pub fn save(file: impl AsRef<Path>, arr: &Array) -> Result<()> {
    arr.to_npy(file)
}

/// `jnp.load(file)`: the array a `.npy` file holds.
pub fn load(file: impl AsRef<Path>) -> Result<Array> {
    Array::from_npy(file)
}
