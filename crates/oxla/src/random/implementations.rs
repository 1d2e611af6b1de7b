//! JAX's PRNG implementations (`jax.random.key(seed, impl=...)`):
//! `threefry2x32` (the default, in `random.rs`), and `rbg` and
//! `unsafe_rbg` (JAX's `jax/_src/random/rbg.py`), whose random bits come
//! from XLA's `rng_bit_generator` and whose splits and fold-ins hash with
//! threefry (`rbg`) or with the generator itself (`unsafe_rbg`). Every
//! sampler draws its bits through [`bits_impl`], so each works with every
//! implementation.

use oxla_core::DType;

use super::{threefry_bits, threefry_fold_in, threefry_seed, threefry_split, u32c};
use crate::array::Array;
use crate::error::Result;
use crate::lax::{self, RngAlgorithm};

/// A PRNG implementation, as JAX's `impl=` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyImpl {
    /// Threefry2x32, counter-based (JAX's default): keys are `u32[2]`.
    #[default]
    Threefry2x32,
    /// XLA's bit generator for the bits, threefry for splits and
    /// fold-ins: keys are `u32[4]`.
    Rbg,
    /// XLA's bit generator for everything (faster splits, weaker
    /// guarantees): keys are `u32[4]`.
    UnsafeRbg,
}

impl KeyImpl {
    /// JAX's name (`jax.random.key_impl`).
    pub fn name(self) -> &'static str {
        match self {
            KeyImpl::Threefry2x32 => "threefry2x32",
            KeyImpl::Rbg => "rbg",
            KeyImpl::UnsafeRbg => "unsafe_rbg",
        }
    }

    /// The implementation JAX names `name`.
    pub fn from_name(name: &str) -> Option<KeyImpl> {
        [KeyImpl::Threefry2x32, KeyImpl::Rbg, KeyImpl::UnsafeRbg]
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// The last dimension of its key data (2 or 4 `u32` words).
    pub fn key_width(self) -> i64 {
        match self {
            KeyImpl::Threefry2x32 => 2,
            KeyImpl::Rbg | KeyImpl::UnsafeRbg => 4,
        }
    }

    /// The dtype of its typed keys, as JAX prints it (`key<fry>`).
    pub fn dtype_name(self) -> &'static str {
        match self {
            KeyImpl::Threefry2x32 => "key<fry>",
            KeyImpl::Rbg => "key<rbg>",
            KeyImpl::UnsafeRbg => "key<urbg>",
        }
    }

    /// The name of a key's structure in pytrees (so that a key rebuilt
    /// from its leaf inside jit or vmap keeps its implementation).
    pub(crate) fn tree_name(self) -> &'static str {
        match self {
            KeyImpl::Threefry2x32 => "Key",
            KeyImpl::Rbg => "RbgKey",
            KeyImpl::UnsafeRbg => "UnsafeRbgKey",
        }
    }

    /// The implementation whose keys have structure name `name`.
    pub(crate) fn from_tree_name(name: &str) -> Option<KeyImpl> {
        [KeyImpl::Threefry2x32, KeyImpl::Rbg, KeyImpl::UnsafeRbg]
            .into_iter()
            .find(|k| k.tree_name() == name)
    }
}

/// How a call hashes: the key's implementation and, for threefry, JAX's
/// partitionable switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Scheme {
    /// `jax_threefry_partitionable` (also used by rbg's threefry splits).
    pub(crate) partitionable: bool,
    /// The key's implementation.
    pub(crate) kind: KeyImpl,
}

/// JAX's `_rbg_seed`: the threefry key of the seed, twice.
fn rbg_seed(seed: &Array) -> Array {
    let half = threefry_seed(seed);
    lax::concatenate(&[&half, &half], 0)
}

/// The key data of an integer seed.
pub(crate) fn seed_impl(seed: &Array, kind: KeyImpl) -> Array {
    match kind {
        KeyImpl::Threefry2x32 => threefry_seed(seed),
        KeyImpl::Rbg | KeyImpl::UnsafeRbg => rbg_seed(seed),
    }
}

/// The two threefry halves of an rbg key (`key.reshape(2, 2)`).
fn halves(key: &Array) -> [Array; 2] {
    [0, 2].map(|i| lax::slice(key, &[i], &[i + 2], None))
}

/// Key data of `[*shape, width]` split from one key.
pub(crate) fn split_impl(key: &Array, shape: &[i64], scheme: Scheme) -> Result<Array> {
    match scheme.kind {
        KeyImpl::Threefry2x32 => threefry_split(key, shape, scheme.partitionable),
        // JAX's `_rbg_split`: each half split by threefry, the halves side
        // by side in the last dimension.
        KeyImpl::Rbg => {
            let [a, b] = halves(key);
            let a = threefry_split(&a, shape, scheme.partitionable)?;
            let b = threefry_split(&b, shape, scheme.partitionable)?;
            Ok(lax::concatenate(&[&a, &b], shape.len()))
        }
        // JAX's `_unsafe_rbg_split`: every tenth row of the generator's
        // output.
        KeyImpl::UnsafeRbg => {
            let num: i64 = shape.iter().product();
            let (_, keys) =
                lax::rng_bit_generator(key, &[10 * num, 4], DType::U32, RngAlgorithm::Default);
            let rows = lax::slice(&keys, &[0, 0], &[10 * num, 4], Some(&[10, 1]));
            let mut out_shape = shape.to_vec();
            out_shape.push(4);
            Ok(lax::reshape(&rows, &out_shape))
        }
    }
}

/// A key folded with a `u32` scalar.
pub(crate) fn fold_in_impl(key: &Array, data: &Array, scheme: Scheme) -> Result<Array> {
    match scheme.kind {
        KeyImpl::Threefry2x32 => threefry_fold_in(key, data),
        // JAX's `_rbg_fold_in`: each half folded by threefry.
        KeyImpl::Rbg => {
            let [a, b] = halves(key);
            let a = threefry_fold_in(&a, data)?;
            let b = threefry_fold_in(&b, data)?;
            Ok(lax::concatenate(&[&a, &b], 0))
        }
        // JAX's `_unsafe_rbg_fold_in`: the key xor the last row of the
        // generator's output under the data's key.
        KeyImpl::UnsafeRbg => {
            let data = lax::convert_element_type(data, DType::U32);
            let (_, rows) = lax::rng_bit_generator(
                &rbg_seed(&data),
                &[10, 4],
                DType::U32,
                RngAlgorithm::Default,
            );
            let last = lax::reshape(&lax::slice(&rows, &[9, 0], &[10, 4], None), &[4]);
            Ok(lax::xor(key, &last))
        }
    }
}

/// Unsigned integers of `bit_width` bits and `shape`.
pub(crate) fn bits_impl(
    key: &Array,
    shape: &[i64],
    bit_width: u32,
    scheme: Scheme,
) -> Result<Array> {
    match scheme.kind {
        KeyImpl::Threefry2x32 => threefry_bits(key, shape, bit_width, scheme.partitionable),
        // JAX's `_rbg_random_bits`.
        KeyImpl::Rbg | KeyImpl::UnsafeRbg => {
            let dtype = super::uint_of_width(bit_width);
            let (_, bits) = lax::rng_bit_generator(key, shape, dtype, RngAlgorithm::Default);
            Ok(bits)
        }
    }
}

/// Row `i` of a `[n, width]` batch of key data.
pub(crate) fn key_row(keys: &Array, i: i64, kind: KeyImpl) -> Array {
    let width = kind.key_width();
    lax::reshape(&lax::slice(keys, &[i, 0], &[i + 1, width], None), &[width])
}

/// The key data of a seed given as words (`[hi, lo]` for threefry, twice
/// for rbg keys), built on the host or, inside jit, as traced constants.
pub(crate) fn seed_words(hi: u32, lo: u32, kind: KeyImpl) -> Array {
    let words: Vec<u32> = match kind {
        KeyImpl::Threefry2x32 => vec![hi, lo],
        KeyImpl::Rbg | KeyImpl::UnsafeRbg => vec![hi, lo, hi, lo],
    };
    if crate::trace::dynamic_level().is_some() {
        let parts: Vec<Array> = words
            .iter()
            .map(|w| lax::broadcast_in_dim(&u32c(*w), &[1], &[]))
            .collect();
        let refs: Vec<&Array> = parts.iter().collect();
        lax::concatenate(&refs, 0)
    } else {
        Array::from_slice(&words, &[words.len() as i64]).unwrap_or_else(Array::error)
    }
}
