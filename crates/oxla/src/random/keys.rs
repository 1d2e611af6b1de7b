//! `jax.random`'s key functions by their JAX names: `PRNGKey`, `key`,
//! `key_data`, `wrap_key_data`, `clone`, `key_impl` and `key_dtype`, over
//! oxla's [`Key`] (raw key data: threefry2x32's `u32[..., 2]`, or rbg's
//! `u32[..., 4]`); JAX's `impl=` argument is the `_with_impl` forms'.

use super::{Key, KeyImpl};
use crate::array::Array;
use crate::error::Result;

/// `jax.random.PRNGKey(seed)`: [`Key::new`].
#[allow(non_snake_case)]
pub fn PRNGKey(seed: u64) -> Key {
    Key::new(seed)
}

/// `jax.random.PRNGKey(seed, impl=kind.name())`: [`Key::new_with_impl`].
#[allow(non_snake_case)]
pub fn PRNGKey_with_impl(seed: u64, kind: KeyImpl) -> Key {
    Key::new_with_impl(seed, kind)
}

/// `jax.random.key(seed)`: [`Key::new`]. JAX's typed keys and its raw
/// `PRNGKey`s hold the same threefry data; oxla's `Key` is both.
pub fn key(seed: u64) -> Key {
    Key::new(seed)
}

/// `jax.random.key(seed, impl=kind.name())`: [`Key::new_with_impl`].
pub fn key_with_impl(seed: u64, kind: KeyImpl) -> Key {
    Key::new_with_impl(seed, kind)
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

/// `jax.random.wrap_key_data(data, impl=kind.name())`: the key of raw
/// data of that implementation's width.
#[track_caller]
pub fn wrap_key_data_with_impl(data: Array, kind: KeyImpl) -> Result<Key> {
    Key::from_data_with_impl(data, kind)
}

/// `jax.random.clone(key)`: a second key with the same data
/// ([`Key::duplicate`]).
pub fn clone(key: &Key) -> Key {
    key.duplicate()
}

/// `jax.random.key_impl(key)`: the name of the PRNG implementation.
pub fn key_impl(key: &Key) -> &'static str {
    key.implementation().name()
}

/// `jax.random.key_dtype()`: the dtype of the default implementation's
/// typed keys, as JAX prints it (`KeyImpl::dtype_name` for the others).
pub fn key_dtype() -> &'static str {
    KeyImpl::default().dtype_name()
}
