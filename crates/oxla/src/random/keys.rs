//! `jax.random`'s key functions by their JAX names: `PRNGKey`, `key`,
//! `key_data`, `wrap_key_data`, `clone`, `key_impl` and `key_dtype`, over
//! oxla's [`Key`] (JAX's threefry2x32 key data, `u32[..., 2]`).

use super::Key;
use crate::array::Array;
use crate::error::Result;

/// `jax.random.PRNGKey(seed)`: [`Key::new`].
#[allow(non_snake_case)]
pub fn PRNGKey(seed: u64) -> Key {
    Key::new(seed)
}

/// `jax.random.key(seed)`: [`Key::new`]. JAX's typed keys and its raw
/// `PRNGKey`s hold the same threefry data; oxla's `Key` is both.
pub fn key(seed: u64) -> Key {
    Key::new(seed)
}

/// `jax.random.key_data(key)`: the raw `u32[..., 2]` data.
pub fn key_data(key: &Key) -> Array {
    key.data().clone()
}

/// `jax.random.wrap_key_data(data)`: the key of raw `u32[..., 2]` data.
#[track_caller]
pub fn wrap_key_data(data: Array) -> Result<Key> {
    Key::from_data(data)
}

/// `jax.random.clone(key)`: a second key with the same data
/// ([`Key::duplicate`]).
pub fn clone(key: &Key) -> Key {
    key.duplicate()
}

/// `jax.random.key_impl(key)`: the name of the PRNG implementation.
pub fn key_impl(_key: &Key) -> &'static str {
    "threefry2x32"
}

/// `jax.random.key_dtype()`: the dtype of typed keys, as JAX prints it.
pub fn key_dtype() -> &'static str {
    "key<fry>"
}
