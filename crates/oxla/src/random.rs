//! `oxla::random`: JAX's counter-based random numbers (threefry2x32),
//! bit-exact with `jax.random` and its default key implementation.
//!
//! A [`Key`] holds the raw key data, a `u32[2]` array (what
//! `jax.random.PRNGKey(seed)` returns). Every function here is built from
//! oxla's traced ops on `u32` arrays, so it works under [`crate::jit`],
//! [`crate::vmap`] and differentiation (the random bits have no tangent;
//! the floats made from them are differentiable in their parameters).
//! Outside `jit` each call runs as one compiled program (cached per shape
//! and dtype), as JAX's samplers are jitted functions.
//!
//! Keys are not `Clone` or `Copy`: [`split`] and every sampler take the key
//! by value, so drawing twice from one key does not compile; split it
//! instead, or say that you mean to reuse randomness with
//! [`Key::duplicate`].
//!
//! Like JAX 0.10.2, `split` and `bits` use the partitionable threefry
//! scheme by default (`jax_threefry_partitionable = True`);
//! [`set_threefry_partitionable`] (process-wide) or
//! [`with_threefry_partitionable`] (this thread, for a closure) switch to
//! the original one.
//! 64-bit dtypes need x64 ([`crate::enable_x64`]); without it they become
//! their 32-bit counterparts, as in JAX.

use std::cell::Cell;
use std::fmt;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

use oxla_core::{Aval, DType, Scalar};

use crate::array::{Array, Inner};
use crate::config::x64_enabled;
use crate::error::{Error, Result};
use crate::jit::{Jit, jit};
use crate::pytree::{Pytree, Static, TreeDef, mismatch};
use crate::{lax, numpy as jnp};

static PARTITIONABLE: AtomicBool = AtomicBool::new(true);

thread_local! {
    /// This thread's override of the switch (see [`with_threefry_partitionable`]).
    static PARTITIONABLE_HERE: Cell<Option<bool>> = const { Cell::new(None) };
}

mod discrete;
mod gamma;
mod implementations;
mod keys;
mod multivariate;
mod samplers;

pub use discrete::{binomial, multinomial, poisson};
pub use gamma::{ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t};
pub use implementations::KeyImpl;
use implementations::{
    Scheme, bits_impl, fold_in_impl, key_row, seed_impl, seed_words, split_impl,
};
pub use keys::{
    PRNGKey, PRNGKey_with_impl, clone, key, key_data, key_dtype, key_impl, key_with_impl,
    wrap_key_data, wrap_key_data_with_impl,
};
pub use multivariate::{MvnMethod, multivariate_normal, orthogonal};
pub use samplers::{
    cauchy, double_sided_maxwell, exponential, geometric, laplace, logistic, lognormal, maxwell,
    pareto, rademacher, rayleigh, triangular, wald, weibull_min,
};

/// Chooses how [`split`], [`bits`] and everything drawing bits lay out
/// their counters, process-wide, as `jax_threefry_partitionable`: `true`
/// (the default, as in JAX 0.10.2) hashes a 64-bit iota split in two
/// words; `false` is JAX's original scheme (one hash over a flat iota cut
/// in halves). Part of every jit cache key, as in JAX: a jitted function
/// is traced again when it changes.
pub fn set_threefry_partitionable(on: bool) {
    PARTITIONABLE.store(on, Ordering::SeqCst);
}

/// Runs `f` with the partitionable switch set to `on` on this thread only
/// (as JAX's `jax.threefry_partitionable(on)` context manager), then
/// restores it.
pub fn with_threefry_partitionable<R>(on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            PARTITIONABLE_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(PARTITIONABLE_HERE.with(|c| c.replace(Some(on))));
    f()
}

/// Whether the partitionable threefry scheme is on for this thread (see
/// [`set_threefry_partitionable`], [`with_threefry_partitionable`]).
pub fn threefry_partitionable() -> bool {
    PARTITIONABLE_HERE
        .with(Cell::get)
        .unwrap_or_else(|| PARTITIONABLE.load(Ordering::SeqCst))
}

/// What a sampler, [`split`] or a layer's constructor takes as its key: a
/// [`Key`], by value. Sealed; it exists so that passing anything else
/// (`&key`, most often, from inside a closure that runs more than once)
/// gets an error that says what to do.
#[diagnostic::on_unimplemented(
    message = "oxla's random functions consume a `Key`, and `{Self}` is not one",
    label = "pass a `Key` by value here",
    note = "to draw the same numbers on every call of a closure (what a key captured by a JAX \
            function does), pass `key.duplicate()`; to draw new ones, split the key outside \
            and pass a subkey in"
)]
pub trait IntoKey: sealed::Sealed {
    /// The key.
    fn into_key(self) -> Key;
}

impl IntoKey for Key {
    fn into_key(self) -> Key {
        self
    }
}

mod sealed {
    /// Keeps [`super::IntoKey`] to [`super::Key`].
    pub trait Sealed {}
    impl Sealed for super::Key {}
}

/// A PRNG key: the raw threefry2x32 key data, `u32[2]` (or `u32[..., 2]`
/// for a batch of keys, as [`split_batched`] makes).
///
/// Not `Clone`: samplers and [`split`] consume the key, so one key cannot
/// be used twice by accident:
///
/// ```compile_fail,E0382
/// use oxla::random::{Key, normal};
/// let key = Key::new(0);
/// let a = normal(key, &[3], oxla::DType::F32);
/// let b = normal(key, &[3], oxla::DType::F32); // error: use of moved value `key`
/// ```
///
/// Split it (`let (key, sub) = split2(key)`) or, to reuse randomness on
/// purpose, [`Key::duplicate`] it. A closure that captures a key and
/// passes it to a sampler moves it, so Rust makes the closure `FnOnce`
/// (error E0525 where `grad`, `jit` or `scan` need `Fn`): inside such a
/// closure write `normal(key.duplicate(), ..)`, which draws the same
/// numbers on every call, as a key captured by a JAX function does. A key is a [`Pytree`] with one leaf
/// (the data), so keys pass through `jit`, `vmap` and `grad`.
pub struct Key {
    data: Array,
    kind: KeyImpl,
}

impl Key {
    /// The key of a seed, as `jax.random.PRNGKey(seed)`: with x64 the seed's
    /// high and low 32-bit words; without x64 JAX first makes the seed a
    /// 32-bit integer, so the key is `[0, seed mod 2^32]`. A negative JAX
    /// seed `s` is `Key::new(s as u64)`.
    #[track_caller]
    pub fn new(seed: u64) -> Key {
        Key::new_with_impl(seed, KeyImpl::Threefry2x32)
    }

    /// The key of a seed under a PRNG implementation, as
    /// `jax.random.key(seed, impl=kind.name())`: threefry's data (see
    /// [`Key::new`]), twice for `rbg` and `unsafe_rbg`.
    #[track_caller]
    pub fn new_with_impl(seed: u64, kind: KeyImpl) -> Key {
        let (hi, lo) = if x64_enabled() {
            ((seed >> 32) as u32, seed as u32)
        } else {
            (0, seed as u32)
        };
        Key {
            data: seed_words(hi, lo, kind),
            kind,
        }
    }

    /// The key of an integer scalar seed array (traced or not), as JAX's
    /// `threefry_seed`: the high word is the seed shifted right by 32 for
    /// 64-bit seeds (zero otherwise), the low word its low 32 bits.
    #[track_caller]
    pub fn from_seed(seed: &Array) -> Key {
        Key::from_seed_with_impl(seed, KeyImpl::Threefry2x32)
    }

    /// [`Key::from_seed`] under a PRNG implementation (twice threefry's
    /// data for `rbg` and `unsafe_rbg`).
    #[track_caller]
    pub fn from_seed_with_impl(seed: &Array, kind: KeyImpl) -> Key {
        let checked = seed.aval().and_then(|a| {
            if !a.dtype.is_int() {
                Err(invalid(format!(
                    "Key::from_seed: the seed must be an integer, got {a}"
                )))
            } else if !a.shape.is_empty() {
                Err(invalid(format!(
                    "Key::from_seed: the seed must be a scalar, got {a} (use vmap for batches)"
                )))
            } else {
                Ok(())
            }
        });
        match checked {
            Ok(()) => Key {
                data: apply_one(Op::Seed, kind, &[seed]),
                kind,
            },
            Err(e) => Key::error(e),
        }
    }

    /// A key from raw key data: `u32[2]`, or `u32[..., 2]` for a batch of
    /// keys (`jax.random.wrap_key_data` of a legacy key).
    pub fn from_data(data: Array) -> Result<Key> {
        Key::from_data_with_impl(data, KeyImpl::Threefry2x32)
    }

    /// A key of a PRNG implementation from raw key data: `u32[..., 2]` for
    /// threefry, `u32[..., 4]` for `rbg` and `unsafe_rbg`
    /// (`jax.random.wrap_key_data(data, impl=kind.name())`).
    pub fn from_data_with_impl(data: Array, kind: KeyImpl) -> Result<Key> {
        let aval = data.aval()?;
        let width = kind.key_width();
        if aval.dtype != DType::U32 || aval.shape.last() != Some(&width) {
            return Err(invalid(format!(
                "Key::from_data: {} key data must be u32[..., {width}], got {aval}",
                kind.name()
            )));
        }
        Ok(Key { data, kind })
    }

    /// The key's PRNG implementation.
    pub fn implementation(&self) -> KeyImpl {
        self.kind
    }

    /// The raw key data (`jax.random.key_data`).
    pub fn data(&self) -> &Array {
        &self.data
    }

    /// The raw key data, consuming the key.
    pub fn into_data(self) -> Array {
        self.data
    }

    /// A second key with the same data: you mean to reuse randomness (the
    /// same draws come out of both).
    pub fn duplicate(&self) -> Key {
        Key {
            data: self.data.clone(),
            kind: self.kind,
        }
    }

    /// The shape of a batch of keys (empty for a single key).
    pub fn batch_shape(&self) -> &[i64] {
        let shape = self.data.shape_or_empty();
        &shape[..shape.len().saturating_sub(1)]
    }

    /// The keys of a batch along its first axis (a single key is an error).
    #[track_caller]
    pub fn unstack(self) -> Vec<Key> {
        let shape = self.data.shape_or_empty().to_vec();
        if let Err(e) = self.data.check() {
            return vec![Key::error(e.clone())];
        }
        if shape.len() < 2 {
            return vec![Key::error(invalid(
                "Key::unstack: a single key is not a batch of keys".into(),
            ))];
        }
        let rest = &shape[1..];
        (0..shape[0])
            .map(|i| {
                let mut start = vec![0; shape.len()];
                start[0] = i;
                let mut limit = shape.clone();
                limit[0] = i + 1;
                Key {
                    data: lax::reshape(&lax::slice(&self.data, &start, &limit, None), rest),
                    kind: self.kind,
                }
            })
            .collect()
    }

    fn error(e: Error) -> Key {
        Key {
            data: Array::error(e),
            kind: KeyImpl::default(),
        }
    }

    /// A key of the same implementation with other data.
    fn with_data(&self, data: Array) -> Key {
        Key {
            data,
            kind: self.kind,
        }
    }

    /// The data of a single key, or the error of a batch (samplers take
    /// one key; vmap over a batch).
    fn single(&self, what: &str) -> Result<&Array> {
        let aval = self.data.aval()?;
        let width = self.kind.key_width();
        if aval.shape.as_slice() != [width] {
            return Err(invalid(format!(
                "random::{what} takes a single key (u32[{width}]), got key data {aval}: use vmap \
                 over a batch of keys"
            )));
        }
        Ok(&self.data)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            KeyImpl::Threefry2x32 => write!(f, "Key({:?})", self.data),
            kind => write!(f, "Key<{}>({:?})", kind.name(), self.data),
        }
    }
}

impl Pytree for Key {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        leaves.push(self.data.clone());
        TreeDef::Struct(self.kind.tree_name(), vec![("data", TreeDef::Leaf)])
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::Struct(name, fields)
                if matches!(fields.as_slice(), [("data", TreeDef::Leaf)]) =>
            {
                let Some(kind) = KeyImpl::from_tree_name(name) else {
                    return Err(mismatch(def, "Key"));
                };
                let data = Array::unflatten_from(&TreeDef::Leaf, leaves)?;
                Key::from_data_with_impl(data, kind)
            }
            other => Err(mismatch(other, "Key")),
        }
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidArgument(message)
}

// --- public functions ---------------------------------------------------

/// Splits a key into `num` new keys (`jax.random.split(key, num)`). On an
/// error every key carries it (one key when `num` is beyond 2^32). For
/// many keys, [`split_batched`] makes one batch instead of `num` arrays.
#[track_caller]
pub fn split(key: impl IntoKey, num: usize) -> Vec<Key> {
    let key: Key = key.into_key();
    let count = i64::try_from(num).unwrap_or(i64::MAX);
    if let Err(e) = check_shape("split", &[count]) {
        // Too many keys to make: one key carries the error.
        return vec![Key::error(e)];
    }
    let data = match key.single("split") {
        Ok(d) => d,
        Err(e) => return (0..num).map(|_| Key::error(e.clone())).collect(),
    };
    if num == 0 {
        return Vec::new();
    }
    let op = Op::Split {
        shape: vec![count],
        rows: true,
    };
    apply(op, key.kind, &[data], num)
        .into_iter()
        .map(|data| key.with_data(data))
        .collect()
}

/// Splits a key in two (`jax.random.split(key)`).
#[track_caller]
pub fn split2(key: impl IntoKey) -> (Key, Key) {
    let key: Key = key.into_key();
    let mut keys = split(key, 2).into_iter();
    match (keys.next(), keys.next()) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            let e = invalid("random::split2: no keys".into());
            (Key::error(e.clone()), Key::error(e))
        }
    }
}

/// Splits a key into a batch of keys of `shape` (key data `u32[*shape,
/// 2]`), for [`crate::vmap`] or [`Key::unstack`]: `jax.random.split(key,
/// shape)`.
#[track_caller]
pub fn split_batched(key: impl IntoKey, shape: &[i64]) -> Key {
    let key: Key = key.into_key();
    let checked = key.single("split_batched").cloned().and_then(|d| {
        check_shape("split_batched", shape)?;
        Ok(d)
    });
    match checked {
        Ok(data) => key.with_data(apply_one(
            Op::Split {
                shape: shape.to_vec(),
                rows: false,
            },
            key.kind,
            &[&data],
        )),
        Err(e) => Key::error(e),
    }
}

/// A new key from a key and an integer (`jax.random.fold_in(key, data)`).
#[track_caller]
pub fn fold_in(key: impl IntoKey, data: u32) -> Key {
    let key: Key = key.into_key();
    let data = if crate::trace::dynamic_level().is_some() {
        u32c(data)
    } else {
        Array::from_slice(&[data], &[]).unwrap_or_else(Array::error)
    };
    fold_in_array(key, &data)
}

/// [`fold_in`] with the integer as a scalar array (traced or not; converted
/// to `u32` as `jnp.asarray(data, dtype='uint32')`).
#[track_caller]
pub fn fold_in_array(key: impl IntoKey, data: &Array) -> Key {
    let key: Key = key.into_key();
    let checked = key.single("fold_in").cloned().and_then(|k| {
        let a = data.aval()?;
        if !a.shape.is_empty() || !(a.dtype.is_int() || a.dtype == DType::Bool) {
            return Err(invalid(format!(
                "random::fold_in takes an integer scalar, got {a} (use vmap for batches)"
            )));
        }
        Ok(k)
    });
    match checked {
        Ok(k) => key.with_data(apply_one(Op::FoldIn, key.kind, &[&k, data])),
        Err(e) => Key::error(e),
    }
}

/// Uniform random bits of `shape` as an unsigned integer `dtype` (u8, u16,
/// u32, or u64 with x64), as `jax.random.bits`.
#[track_caller]
pub fn bits(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("bits").cloned().and_then(|k| {
        check_shape("bits", shape)?;
        if !dtype.is_unsigned_int() {
            return Err(invalid(format!(
                "random::bits: dtype must be an unsigned integer type, got {dtype}"
            )));
        }
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(
            Op::Bits {
                shape: shape.to_vec(),
                dtype,
            },
            key.kind,
            &[&k],
        ),
        Err(e) => Array::error(e),
    }
}

/// Uniform floats in `[minval, maxval)` (bounds broadcast to `shape`), as
/// `jax.random.uniform`: the mantissa of each float is random bits, its
/// exponent that of 1, then shifted and scaled.
#[track_caller]
pub fn uniform(
    key: impl IntoKey,
    shape: &[i64],
    dtype: DType,
    minval: &Array,
    maxval: &Array,
) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("uniform").cloned().and_then(|k| {
        check_shape("uniform", shape)?;
        check_float("uniform", dtype)?;
        check_broadcast("uniform", "minval", minval, shape)?;
        check_broadcast("uniform", "maxval", maxval, shape)?;
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(
            Op::Uniform {
                shape: shape.to_vec(),
                dtype,
            },
            key.kind,
            &[&k, minval, maxval],
        ),
        Err(e) => Array::error(e),
    }
}

/// Standard normal floats, as `jax.random.normal`: `√2 · erf⁻¹(u)` with
/// `u` uniform in `(-1, 1)`.
#[track_caller]
pub fn normal(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("normal").cloned().and_then(|k| {
        check_shape("normal", shape)?;
        check_float("normal", dtype)?;
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(
            Op::Normal {
                shape: shape.to_vec(),
                dtype,
            },
            key.kind,
            &[&k],
        ),
        Err(e) => Array::error(e),
    }
}

/// Standard normal floats truncated to `(lower, upper)`, as
/// `jax.random.truncated_normal` (inverse CDF of a uniform between the
/// bounds' CDFs). `shape` defaults to the bounds' broadcast shape.
#[track_caller]
pub fn truncated_normal(
    key: impl IntoKey,
    lower: &Array,
    upper: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("truncated_normal").cloned().and_then(|k| {
        check_float("truncated_normal", dtype)?;
        let shape = match shape {
            Some(s) => s.to_vec(),
            None => jnp::broadcast_shapes(lower.aval()?.shape.as_slice(), upper.shape_or_empty())
                .ok_or_else(|| {
                invalid(format!(
                    "random::truncated_normal: lower {} and upper {} do not broadcast",
                    lower.aval().map(ToString::to_string).unwrap_or_default(),
                    upper.aval().map(ToString::to_string).unwrap_or_default()
                ))
            })?,
        };
        check_shape("truncated_normal", &shape)?;
        check_broadcast("truncated_normal", "lower", lower, &shape)?;
        check_broadcast("truncated_normal", "upper", upper, &shape)?;
        Ok((k, shape))
    });
    match checked {
        Ok((k, shape)) => apply_one(
            Op::TruncatedNormal { shape, dtype },
            key.kind,
            &[&k, lower, upper],
        ),
        Err(e) => Array::error(e),
    }
}

/// Booleans that are true with probability `p` (a float array broadcast
/// to `shape`; `shape` defaults to `p`'s), as `jax.random.bernoulli`:
/// `uniform < p`. A dropout mask is `bernoulli(key, keep_prob, shape)`;
/// see also [`dropout`].
#[track_caller]
pub fn bernoulli(key: impl IntoKey, p: &Array, shape: Option<&[i64]>) -> Array {
    let key: Key = key.into_key();
    let checked = key.single("bernoulli").cloned().and_then(|k| {
        let a = p.aval()?;
        if !a.dtype.is_float() {
            return Err(invalid(format!(
                "random::bernoulli: the probability p must have a float dtype, got {a}"
            )));
        }
        let shape = shape.map_or_else(|| a.shape.to_vec(), <[i64]>::to_vec);
        check_shape("bernoulli", &shape)?;
        check_broadcast("bernoulli", "p", p, &shape)?;
        Ok((k, shape))
    });
    match checked {
        Ok((k, shape)) => apply_one(Op::Bernoulli { shape }, key.kind, &[&k, p]),
        Err(e) => Array::error(e),
    }
}

/// Inverted dropout as Flax's `nn.Dropout` does it: each element of `x` is
/// kept with probability `1 - rate` (a [`bernoulli`] mask of `x`'s shape)
/// and scaled by `1 / (1 - rate)`, the others are zero. `rate` 0 returns
/// `x`, 1 returns zeros.
#[track_caller]
pub fn dropout(key: impl IntoKey, rate: f64, x: &Array) -> Array {
    let key: Key = key.into_key();
    let checked = key.single("dropout").cloned().and_then(|k| {
        x.check()?;
        if !(0.0..=1.0).contains(&rate) {
            return Err(invalid(format!(
                "random::dropout: rate must be in [0, 1], got {rate}"
            )));
        }
        Ok(k)
    });
    match checked {
        Ok(_) if rate == 0.0 => x.clone(),
        Ok(_) if rate == 1.0 => jnp::zeros_like(x),
        Ok(k) => apply_one(Op::Dropout { rate }, key.kind, &[&k, x]),
        Err(e) => Array::error(e),
    }
}

/// Standard Gumbel floats, as `jax.random.gumbel` (mode "low"):
/// `-log(-log(u))` with `u` uniform in `[tiny, 1)`.
#[track_caller]
pub fn gumbel(key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("gumbel").cloned().and_then(|k| {
        check_shape("gumbel", shape)?;
        check_float("gumbel", dtype)?;
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(
            Op::Gumbel {
                shape: shape.to_vec(),
                dtype,
            },
            key.kind,
            &[&k],
        ),
        Err(e) => Array::error(e),
    }
}

/// Samples from categorical distributions with unnormalized log
/// probabilities `logits` along `axis`, as `jax.random.categorical`: the
/// Gumbel-max trick (`replace`), or Gumbel top-k (without replacement).
/// `shape` (default: `logits`' shape without `axis`) may add leading
/// sample dimensions. Indices are the default int type.
#[track_caller]
pub fn categorical(
    key: impl IntoKey,
    logits: &Array,
    axis: i64,
    shape: Option<&[i64]>,
    replace: bool,
) -> Array {
    let key: Key = key.into_key();
    let checked = key.single("categorical").cloned().and_then(|k| {
        let a = logits.aval()?;
        if !a.dtype.is_float() {
            return Err(invalid(format!(
                "random::categorical: logits must be floats, got {a}"
            )));
        }
        let rank = a.shape.len() as i64;
        let axis_n = if axis < 0 { axis + rank } else { axis };
        if !(0..rank).contains(&axis_n) {
            return Err(invalid(format!(
                "random::categorical: axis {axis} is out of range for logits {a}"
            )));
        }
        let axis_n = axis_n as usize;
        let batch: Vec<i64> = a
            .shape
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != axis_n)
            .map(|(_, &d)| d)
            .collect();
        let shape = shape.map_or_else(|| batch.clone(), <[i64]>::to_vec);
        check_shape("categorical", &shape)?;
        if jnp::broadcast_shapes(&shape, &batch).as_deref() != Some(shape.as_slice()) {
            return Err(invalid(format!(
                "random::categorical: shape {shape:?} must be broadcast-compatible with the \
                 batch shape {batch:?} and equal to their broadcast"
            )));
        }
        if !replace {
            let prefix = &shape[..shape.len() - batch.len()];
            if shape[shape.len() - batch.len()..] != batch[..] {
                return Err(invalid(format!(
                    "random::categorical: without replacement, shape {shape:?} must end with \
                     the batch shape {batch:?}"
                )));
            }
            let k: i64 = prefix.iter().product();
            if k > a.shape[axis_n] {
                return Err(invalid(format!(
                    "random::categorical: number of samples without replacement ({k}) cannot \
                     exceed the number of categories ({})",
                    a.shape[axis_n]
                )));
            }
        }
        Ok((k, axis_n, shape))
    });
    match checked {
        Ok((k, axis, shape)) => apply_one(
            Op::Categorical {
                axis,
                shape,
                replace,
            },
            key.kind,
            &[&k, logits],
        ),
        Err(e) => Array::error(e),
    }
}

/// Uniform integers in `[minval, maxval)` (integer bounds broadcast to
/// `shape`), as `jax.random.randint`: two words of random bits per value
/// reduced modulo the span; types under 32 bits are sampled as i32 with
/// clipped bounds, bounds outside `dtype` are clipped to it.
#[track_caller]
pub fn randint(
    key: impl IntoKey,
    shape: &[i64],
    minval: &Array,
    maxval: &Array,
    dtype: DType,
) -> Array {
    let key: Key = key.into_key();
    let dtype = canonical(dtype);
    let checked = key.single("randint").cloned().and_then(|k| {
        check_shape("randint", shape)?;
        if !dtype.is_int() {
            return Err(invalid(format!(
                "random::randint: dtype must be an integer type, got {dtype}"
            )));
        }
        check_broadcast("randint", "minval", minval, shape)?;
        check_broadcast("randint", "maxval", maxval, shape)?;
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(
            Op::Randint {
                shape: shape.to_vec(),
                dtype,
            },
            key.kind,
            &[&k, minval, maxval],
        ),
        Err(e) => Array::error(e),
    }
}

/// A random permutation of `0..n` (default int type), as
/// `jax.random.permutation(key, n)`: rounds of stable sorts by random
/// 32-bit keys.
#[track_caller]
pub fn permutation(key: impl IntoKey, n: i64) -> Array {
    let key: Key = key.into_key();
    let checked = key.single("permutation").cloned().and_then(|k| {
        check_shape("permutation", &[n])?;
        Ok(k)
    });
    match checked {
        Ok(k) => apply_one(Op::PermutationN { n }, key.kind, &[&k]),
        Err(e) => Array::error(e),
    }
}

/// `x` shuffled along `axis`, as `jax.random.permutation(key, x, axis,
/// independent)`: the same permutation for every slice, or (with
/// `independent`) one per slice.
#[track_caller]
pub fn permutation_of(key: impl IntoKey, x: &Array, axis: i64, independent: bool) -> Array {
    let key: Key = key.into_key();
    let checked = key.single("permutation").cloned().and_then(|k| {
        let a = x.aval()?;
        let axis = normalize_axis("permutation", axis, a)?;
        Ok((k, axis))
    });
    match checked {
        Ok((k, axis)) => apply_one(Op::Permutation { axis, independent }, key.kind, &[&k, x]),
        Err(e) => Array::error(e),
    }
}

/// Samples of `shape` from `0..n`, as `jax.random.choice(key, n, shape,
/// replace, p)`: with replacement by [`randint`] (or, with probabilities
/// `p`, inverse CDF of their cumulative sum); without, a permutation's
/// prefix (or, with `p`, Gumbel top-k).
#[track_caller]
pub fn choice(key: impl IntoKey, n: i64, shape: &[i64], replace: bool, p: Option<&Array>) -> Array {
    let key: Key = key.into_key();
    choice_impl_checked(key, None, n, shape, replace, p, 0)
}

/// Samples of `shape` from the slices of `a` along `axis`, as
/// `jax.random.choice(key, a, shape, replace, p, axis)`; the result has
/// `a`'s shape with `axis` replaced by `shape`.
#[track_caller]
pub fn choice_from(
    key: impl IntoKey,
    a: &Array,
    shape: &[i64],
    replace: bool,
    p: Option<&Array>,
    axis: i64,
) -> Array {
    let key: Key = key.into_key();
    let axis = match a
        .aval()
        .and_then(|aval| normalize_axis("choice", axis, aval))
    {
        Ok(axis) => axis,
        Err(e) => return Array::error(e),
    };
    let n = a.shape_or_empty()[axis];
    choice_impl_checked(key, Some(a), n, shape, replace, p, axis)
}

#[track_caller]
fn choice_impl_checked(
    key: Key,
    a: Option<&Array>,
    n: i64,
    shape: &[i64],
    replace: bool,
    p: Option<&Array>,
    axis: usize,
) -> Array {
    let checked = key.single("choice").cloned().and_then(|k| {
        check_shape("choice", shape)?;
        let draws: i64 = shape.iter().product();
        if draws > 0 && n <= 0 {
            return Err(invalid(
                "random::choice: a must be greater than 0 unless no samples are taken".into(),
            ));
        }
        if draws > 0 && !replace && draws > n {
            return Err(invalid(format!(
                "random::choice: cannot take a larger sample (size {draws}) than population \
                 (size {n}) when replace is false"
            )));
        }
        if let Some(p) = p {
            let pa = p.aval()?;
            if pa.shape.as_slice() != [n] {
                return Err(invalid(format!(
                    "random::choice: p must be None or a 1D vector with the same size as \
                     a.shape[axis]; p is {pa} and a.shape[axis] is {n}"
                )));
            }
        }
        Ok(k)
    });
    let k = match checked {
        Ok(k) => k,
        Err(e) => return Array::error(e),
    };
    let mut operands = vec![&k];
    if let Some(a) = a {
        operands.push(a);
    }
    if let Some(p) = p {
        operands.push(p);
    }
    apply_one(
        Op::Choice {
            n,
            shape: shape.to_vec(),
            replace,
            axis,
            has_a: a.is_some(),
            has_p: p.is_some(),
        },
        key.kind,
        &operands,
    )
}

/// The raw threefry2x32 hash of a `u32` count array under raw key data
/// `u32[2]`, as JAX's `threefry_2x32(keypair, count)`: the flat count cut
/// in two halves (zero-padded when odd) as the cipher's two words. Every
/// key and bit in this module comes from this cipher.
#[track_caller]
pub fn threefry_2x32(key_data: &Array, count: &Array) -> Array {
    let checked = key_data.aval().and_then(|k| {
        let c = count.aval()?;
        if k.dtype != DType::U32 || k.shape.as_slice() != [2] || c.dtype != DType::U32 {
            return Err(invalid(format!(
                "random::threefry_2x32 takes u32[2] key data and a u32 count, got {k} and {c}"
            )));
        }
        check_shape("threefry_2x32", &c.shape)
    });
    match checked {
        Ok(()) => apply_one(Op::Hash, KeyImpl::Threefry2x32, &[key_data, count]),
        Err(e) => Array::error(e),
    }
}

// --- dispatch: one jitted program per call signature ---------------------

/// What a call computes; the operands come separately (key data first).
#[derive(Debug, Clone)]
enum Op {
    Hash,
    Seed,
    Split {
        shape: Vec<i64>,
        rows: bool,
    },
    FoldIn,
    Bits {
        shape: Vec<i64>,
        dtype: DType,
    },
    Uniform {
        shape: Vec<i64>,
        dtype: DType,
    },
    Normal {
        shape: Vec<i64>,
        dtype: DType,
    },
    TruncatedNormal {
        shape: Vec<i64>,
        dtype: DType,
    },
    Bernoulli {
        shape: Vec<i64>,
    },
    Dropout {
        rate: f64,
    },
    Gumbel {
        shape: Vec<i64>,
        dtype: DType,
    },
    Categorical {
        axis: usize,
        shape: Vec<i64>,
        replace: bool,
    },
    Randint {
        shape: Vec<i64>,
        dtype: DType,
    },
    PermutationN {
        n: i64,
    },
    Permutation {
        axis: usize,
        independent: bool,
    },
    Choice {
        n: i64,
        shape: Vec<i64>,
        replace: bool,
        axis: usize,
        has_a: bool,
        has_p: bool,
    },
}

/// An op with the key implementation and partitionable switch it is
/// traced with.
#[derive(Debug, Clone)]
struct Call {
    op: Op,
    scheme: Scheme,
}

type JitIn = (Vec<Array>, Static<Call>);
type Body = fn(JitIn) -> Vec<Array>;

static RANDOM: LazyLock<Jit<JitIn, Vec<Array>, Body>> =
    LazyLock::new(|| jit(body as Body).named("oxla_random"));

fn body((operands, Static(call)): JitIn) -> Vec<Array> {
    let refs: Vec<&Array> = operands.iter().collect();
    call.op.run(&refs, call.scheme)
}

/// Runs `op` on `operands` with `n` outputs: inline inside `jit` (already
/// staged), else through one jitted program (a call primitive under grad
/// or vmap outside jit).
#[track_caller]
fn apply(op: Op, kind: KeyImpl, operands: &[&Array], n: usize) -> Vec<Array> {
    let call = Call {
        op,
        scheme: Scheme {
            partitionable: threefry_partitionable(),
            kind,
        },
    };
    let outs = if crate::trace::dynamic_level().is_some() {
        Ok(call.op.run(operands, call.scheme))
    } else {
        let leaves = operands.iter().map(|x| (*x).clone()).collect();
        RANDOM.call((leaves, Static(call)))
    };
    match outs {
        Ok(outs) if outs.len() == n => outs,
        Ok(outs) => {
            let e = invalid(format!(
                "random: internal error: {} outputs instead of {n}",
                outs.len()
            ));
            vec![Array::error(e); n]
        }
        Err(e) => vec![Array::error(e); n],
    }
}

#[track_caller]
fn apply_one(op: Op, kind: KeyImpl, operands: &[&Array]) -> Array {
    apply(op, kind, operands, 1)
        .pop()
        .unwrap_or_else(|| Array::error(invalid("random: no output".into())))
}

impl Op {
    /// The op's outputs, from traced ops only (the operands were checked
    /// by the public function).
    fn run(&self, x: &[&Array], scheme: Scheme) -> Vec<Array> {
        let key = x[0];
        let arg = |i: usize| -> Array {
            x.get(i)
                .map(|a| (*a).clone())
                .unwrap_or_else(|| Array::error(invalid(format!("random: missing operand {i}"))))
        };
        let one = |a: Result<Array>| vec![a.unwrap_or_else(Array::error)];
        match self {
            Op::Hash => {
                let count = arg(1);
                let shape = count.shape_or_empty().to_vec();
                let flat = lax::reshape(&count, &[count.size_or_one()]);
                one(Ok(lax::reshape(&threefry_2x32_flat(key, &flat), &shape)))
            }
            Op::Seed => one(Ok(seed_impl(key, scheme.kind))),
            Op::Split { shape, rows } => {
                let data = split_impl(key, shape, scheme);
                if !*rows {
                    return one(data);
                }
                let data = match data {
                    Ok(d) => d,
                    Err(e) => return vec![Array::error(e); shape[0] as usize],
                };
                (0..shape[0])
                    .map(|i| key_row(&data, i, scheme.kind))
                    .collect()
            }
            Op::FoldIn => one(fold_in_impl(key, &arg(1), scheme)),
            Op::Bits { shape, dtype } => one(bits_impl(key, shape, bit_width(*dtype), scheme)),
            Op::Uniform { shape, dtype } => {
                one(uniform_impl(key, &arg(1), &arg(2), shape, *dtype, scheme))
            }
            Op::Normal { shape, dtype } => one(normal_impl(key, shape, *dtype, scheme)),
            Op::TruncatedNormal { shape, dtype } => one(truncated_normal_impl(
                key,
                &arg(1),
                &arg(2),
                shape,
                *dtype,
                scheme,
            )),
            Op::Bernoulli { shape } => one(bernoulli_impl(key, &arg(1), shape, scheme)),
            Op::Dropout { rate } => one(dropout_impl(key, *rate, &arg(1), scheme)),
            Op::Gumbel { shape, dtype } => one(gumbel_impl(key, shape, *dtype, scheme)),
            Op::Categorical {
                axis,
                shape,
                replace,
            } => one(categorical_impl(
                key,
                &arg(1),
                *axis,
                shape,
                *replace,
                scheme,
            )),
            Op::Randint { shape, dtype } => {
                one(randint_impl(key, &arg(1), &arg(2), shape, *dtype, scheme))
            }
            Op::PermutationN { n } => {
                let range = lax::iota(crate::promotion_default_int(), &[*n], 0);
                one(shuffle(key, &range, 0, scheme))
            }
            Op::Permutation { axis, independent } => {
                one(permutation_impl(key, &arg(1), *axis, *independent, scheme))
            }
            Op::Choice {
                n,
                shape,
                replace,
                axis,
                has_a,
                has_p,
            } => {
                let a = has_a.then(|| arg(1));
                let p = has_p.then(|| arg(if *has_a { 2 } else { 1 }));
                one(choice_impl(
                    key,
                    a.as_ref(),
                    *n,
                    shape,
                    *replace,
                    p.as_ref(),
                    *axis,
                    scheme,
                ))
            }
        }
    }
}

// --- checks and small helpers --------------------------------------------

/// 64-bit dtypes become 32-bit ones without x64 (as JAX truncates them).
pub(crate) fn canonical(dtype: DType) -> DType {
    if x64_enabled() {
        return dtype;
    }
    match dtype {
        DType::F64 => DType::F32,
        DType::I64 => DType::I32,
        DType::U64 => DType::U32,
        other => other,
    }
}

fn check_shape(what: &str, shape: &[i64]) -> Result<()> {
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(invalid(format!(
            "random::{what}: negative dimension {d} in shape {shape:?}"
        )));
    }
    let size = shape
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d))
        .unwrap_or(i64::MAX);
    if size > 1 << 32 {
        return Err(invalid(format!(
            "random::{what}: shape {shape:?} has more than 2^32 elements, which oxla does not \
             support"
        )));
    }
    Ok(())
}

fn check_float(what: &str, dtype: DType) -> Result<()> {
    if dtype.is_float() {
        Ok(())
    } else {
        Err(invalid(format!(
            "random::{what}: dtype must be a float type, got {dtype}"
        )))
    }
}

fn check_broadcast(what: &str, name: &str, x: &Array, shape: &[i64]) -> Result<()> {
    let a = x.aval()?;
    if jnp::broadcast_shapes(&a.shape, shape).as_deref() != Some(shape) {
        return Err(invalid(format!(
            "random::{what}: {name} {a} does not broadcast to the shape {shape:?}"
        )));
    }
    Ok(())
}

fn normalize_axis(what: &str, axis: i64, aval: &Aval) -> Result<usize> {
    let rank = aval.shape.len() as i64;
    let a = if axis < 0 { axis + rank } else { axis };
    if (0..rank).contains(&a) {
        Ok(a as usize)
    } else {
        Err(invalid(format!(
            "random::{what}: axis {axis} is out of range for {aval}"
        )))
    }
}

/// A strongly typed scalar literal (no device transfer).
fn constant(value: Scalar, dtype: DType) -> Array {
    Array::from_inner(Inner::Scalar {
        value,
        aval: Aval::new(dtype, &[]),
    })
}

fn u32c(v: u32) -> Array {
    constant(Scalar::UInt(u64::from(v)), DType::U32)
}

fn uint_c(v: u64, dtype: DType) -> Array {
    constant(Scalar::UInt(v), dtype)
}

fn int_c(v: i128, dtype: DType) -> Array {
    if dtype.is_unsigned_int() {
        constant(Scalar::UInt(v.clamp(0, i128::from(u64::MAX)) as u64), dtype)
    } else {
        constant(
            Scalar::Int(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64),
            dtype,
        )
    }
}

fn float_c(v: f64, dtype: DType) -> Array {
    constant(Scalar::Float(v), dtype)
}

fn bit_width(dtype: DType) -> u32 {
    (dtype.byte_size() * 8) as u32
}

fn uint_of_width(bits: u32) -> DType {
    match bits {
        8 => DType::U8,
        16 => DType::U16,
        64 => DType::U64,
        _ => DType::U32,
    }
}

/// (min, max) of an integer type (bool's and the others' `(0, 1)`).
fn iinfo(dtype: DType) -> (i128, i128) {
    dtype.int_range().unwrap_or((0, 1))
}

/// `x` broadcast (numpy-style) to `shape`.
fn broadcast(x: &Array, shape: &[i64]) -> Array {
    jnp::broadcast_to(x, shape)
}

fn size_of(shape: &[i64]) -> i64 {
    shape.iter().product()
}

// --- threefry2x32 ------------------------------------------------------------

const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];

fn rotate_left(x: &Array, d: u32) -> Array {
    lax::or(
        &lax::shift_left(x, &u32c(d)),
        &lax::shift_right_logical(x, &u32c(32 - d)),
    )
}

/// The threefry2x32 block cipher with key `(k1, k2)` (u32 scalars) on the
/// counter pairs `(x0, x1)` (u32 arrays of one shape): 20 rounds, a key
/// injection after every 4.
fn threefry2x32(k1: &Array, k2: &Array, x0: &Array, x1: &Array) -> (Array, Array) {
    let shape = x0.shape_or_empty().to_vec();
    let full = |s: &Array| lax::broadcast_in_dim(s, &shape, &[]);
    let ks = [
        k1.clone(),
        k2.clone(),
        lax::xor(&lax::xor(k1, k2), &u32c(0x1BD1_1BDA)),
    ];
    let mut a = lax::add(x0, &full(&ks[0]));
    let mut b = lax::add(x1, &full(&ks[1]));
    for i in 0..5usize {
        for &r in &ROTATIONS[i % 2] {
            a = lax::add(&a, &b);
            b = rotate_left(&b, r);
            b = lax::xor(&a, &b);
        }
        a = lax::add(&a, &full(&ks[(i + 1) % 3]));
        let injected = lax::add(&ks[(i + 2) % 3], &u32c(i as u32 + 1));
        b = lax::add(&b, &full(&injected));
    }
    (a, b)
}

/// The two words of a single key.
fn key_words(key: &Array) -> (Array, Array) {
    let word = |i: i64| lax::reshape(&lax::slice(key, &[i], &[i + 1], None), &[]);
    (word(0), word(1))
}

/// JAX's `threefry_2x32(key, count)`: the cipher on a flat u32 count, its
/// halves as the two words (padded with a zero when odd).
fn threefry_2x32_flat(key: &Array, count: &Array) -> Array {
    let (k1, k2) = key_words(key);
    let m = count.size_or_one();
    let odd = m % 2;
    let padded = if odd == 1 {
        let zero = lax::broadcast_in_dim(&u32c(0), &[1], &[]);
        lax::concatenate(&[count, &zero], 0)
    } else {
        count.clone()
    };
    let half = (m + odd) / 2;
    let x0 = lax::slice(&padded, &[0], &[half], None);
    let x1 = lax::slice(&padded, &[half], &[2 * half], None);
    let (y0, y1) = threefry2x32(&k1, &k2, &x0, &x1);
    let out = lax::concatenate(&[&y0, &y1], 0);
    if odd == 1 {
        lax::slice(&out, &[0], &[m], None)
    } else {
        out
    }
}

/// JAX's `iota_2x32_shape`: the high and low words of a 64-bit row-major
/// iota of `shape` (the high word is zero below 2^32 elements).
fn iota_2x32(shape: &[i64]) -> Result<(Array, Array)> {
    let size = size_of(shape);
    if size > 1 << 32 {
        return Err(invalid(format!(
            "random: {size} elements are more than oxla's 2^32"
        )));
    }
    let hi = lax::broadcast_in_dim(&u32c(0), shape, &[]);
    let lo = if shape.is_empty() {
        hi.clone()
    } else {
        lax::reshape(&lax::iota(DType::U32, &[size], 0), shape)
    };
    Ok((hi, lo))
}

fn threefry_seed(seed: &Array) -> Array {
    let dtype = seed.dtype_or_bool();
    let hi = if dtype.byte_size() == 8 {
        lax::convert_element_type(
            &lax::shift_right_logical(seed, &int_c(32, dtype)),
            DType::U32,
        )
    } else {
        u32c(0)
    };
    let lo = lax::convert_element_type(seed, DType::U32);
    let word = |w: &Array| lax::broadcast_in_dim(w, &[1], &[]);
    lax::concatenate(&[&word(&hi), &word(&lo)], 0)
}

/// JAX's `threefry_split`: key data of `[*shape, 2]`.
fn threefry_split(key: &Array, shape: &[i64], partitionable: bool) -> Result<Array> {
    let mut out_shape = shape.to_vec();
    out_shape.push(2);
    if partitionable {
        let (k1, k2) = key_words(key);
        let (hi, lo) = iota_2x32(shape)?;
        let (b1, b2) = threefry2x32(&k1, &k2, &hi, &lo);
        let mut col = shape.to_vec();
        col.push(1);
        let b1 = lax::reshape(&b1, &col);
        let b2 = lax::reshape(&b2, &col);
        Ok(lax::concatenate(&[&b1, &b2], shape.len()))
    } else {
        let n = size_of(shape) * 2;
        if n >= i64::from(u32::MAX) {
            return Err(invalid("random::split: too many keys".into()));
        }
        let counts = lax::iota(DType::U32, &[n], 0);
        Ok(lax::reshape(&threefry_2x32_flat(key, &counts), &out_shape))
    }
}

/// JAX's `threefry_fold_in`: the cipher on the count `[0, data]`.
fn threefry_fold_in(key: &Array, data: &Array) -> Result<Array> {
    let data = lax::convert_element_type(data, DType::U32);
    let count = threefry_seed(&data);
    Ok(threefry_2x32_flat(key, &count))
}

/// JAX's `threefry_random_bits`: unsigned integers of `bit_width` bits.
fn threefry_bits(key: &Array, shape: &[i64], bit_width: u32, partitionable: bool) -> Result<Array> {
    let dtype = uint_of_width(bit_width);
    if partitionable {
        let (k1, k2) = key_words(key);
        let (hi, lo) = iota_2x32(shape)?;
        let (b1, b2) = threefry2x32(&k1, &k2, &hi, &lo);
        return Ok(match bit_width {
            64 => lax::or(
                &lax::shift_left(
                    &lax::convert_element_type(&b1, DType::U64),
                    &uint_c(32, DType::U64),
                ),
                &lax::convert_element_type(&b2, DType::U64),
            ),
            32 => lax::xor(&b1, &b2),
            _ => lax::convert_element_type(&lax::xor(&b1, &b2), dtype),
        });
    }
    let size = size_of(shape);
    let total = i128::from(bit_width) * i128::from(size);
    let max_count = (total + 31) / 32;
    if max_count >= i128::from(u32::MAX) {
        return Err(invalid(format!(
            "random::bits: {size} values of {bit_width} bits need more than 2^32 - 1 counters, \
             which oxla's non-partitionable scheme does not support"
        )));
    }
    let max_count = max_count as i64;
    let words = threefry_2x32_flat(key, &lax::iota(DType::U32, &[max_count], 0));
    let flat = match bit_width {
        64 => {
            let hi = lax::slice(&words, &[0], &[size], None);
            let lo = lax::slice(&words, &[size], &[2 * size], None);
            lax::or(
                &lax::shift_left(
                    &lax::convert_element_type(&hi, DType::U64),
                    &uint_c(32, DType::U64),
                ),
                &lax::convert_element_type(&lo, DType::U64),
            )
        }
        32 => words,
        _ => {
            // Each word holds 32 / bit_width values, lowest bits first.
            let per = i64::from(32 / bit_width);
            let grid = [max_count, per];
            let spread = lax::broadcast_in_dim(&words, &grid, &[0]);
            let shifts = lax::mul(&lax::iota(DType::U32, &grid, 1), &u32c(bit_width));
            let mask = u32c(((1u64 << bit_width) - 1) as u32);
            let parts = lax::and(&lax::shift_right_logical(&spread, &shifts), &mask);
            let parts = lax::reshape(&parts, &[max_count * per]);
            lax::convert_element_type(&lax::slice(&parts, &[0], &[size], None), dtype)
        }
    };
    Ok(lax::reshape(&flat, shape))
}

// --- samplers ----------------------------------------------------------------

fn uniform_impl(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[i64],
    dtype: DType,
    scheme: Scheme,
) -> Result<Array> {
    let info = dtype.float_info();
    let (nbits, nmant, one_bits) = (info.bits, info.mantissa_bits, info.one_bits());
    let rng_bits = if nmant < 8 { 8 } else { nbits };
    let uint = uint_of_width(nbits);
    let mut bits = bits_impl(key, shape, rng_bits, scheme)?;
    if rng_bits != nbits {
        bits = lax::convert_element_type(&bits, uint);
    }
    let float_bits = lax::or(
        &lax::shift_right_logical(&bits, &uint_c(u64::from(rng_bits - nmant), uint)),
        &uint_c(one_bits, uint),
    );
    let floats = lax::sub(
        &lax::bitcast_convert_type(&float_bits, dtype),
        &float_c(1.0, dtype),
    );
    let minval = broadcast(&lax::convert_element_type(minval, dtype), shape);
    let maxval = broadcast(&lax::convert_element_type(maxval, dtype), shape);
    let scaled = lax::add(&lax::mul(&floats, &lax::sub(&maxval, &minval)), &minval);
    Ok(lax::max(&minval, &scaled))
}

fn normal_impl(key: &Array, shape: &[i64], dtype: DType, scheme: Scheme) -> Result<Array> {
    let nmant = dtype.float_info().mantissa_bits;
    // nextafter(-1, 0) in dtype.
    let lo = float_c(-(1.0 - 2f64.powi(-(nmant as i32) - 1)), dtype);
    let u = uniform_impl(key, &lo, &float_c(1.0, dtype), shape, dtype, scheme)?;
    Ok(lax::mul(
        &float_c(std::f64::consts::SQRT_2, dtype),
        &lax::erf_inv(&u),
    ))
}

fn truncated_normal_impl(
    key: &Array,
    lower: &Array,
    upper: &Array,
    shape: &[i64],
    dtype: DType,
    scheme: Scheme,
) -> Result<Array> {
    let sqrt2 = float_c(std::f64::consts::SQRT_2, dtype);
    let lower = lax::convert_element_type(lower, dtype);
    let upper = lax::convert_element_type(upper, dtype);
    let a = lax::erf(&lax::div(&lower, &sqrt2));
    let b = lax::erf(&lax::div(&upper, &sqrt2));
    let u = uniform_impl(key, &a, &b, shape, dtype, scheme)?;
    let out = lax::mul(&sqrt2, &lax::erf_inv(&u));
    let lo = lax::nextafter(&lax::stop_gradient(&lower), &float_c(f64::INFINITY, dtype));
    let hi = lax::nextafter(
        &lax::stop_gradient(&upper),
        &float_c(f64::NEG_INFINITY, dtype),
    );
    let clipped = lax::max(&broadcast(&lo, shape), &out);
    Ok(lax::min(&broadcast(&hi, shape), &clipped))
}

fn bernoulli_impl(key: &Array, p: &Array, shape: &[i64], scheme: Scheme) -> Result<Array> {
    let dtype = p.dtype_or_bool();
    let p = lax::convert_element_type(p, dtype);
    let one = float_c(1.0, dtype);
    let u = uniform_impl(key, &float_c(0.0, dtype), &one, shape, dtype, scheme)?;
    Ok(lax::lt(&u, &broadcast(&p, shape)))
}

fn dropout_impl(key: &Array, rate: f64, x: &Array, scheme: Scheme) -> Result<Array> {
    let keep = Array::weak_scalar(1.0 - rate);
    let mask = bernoulli_impl(key, &keep, x.shape_or_empty(), scheme)?;
    let scaled = jnp::divide(x, &keep);
    Ok(lax::select_n(&mask, &[&jnp::zeros_like(&scaled), &scaled]))
}

fn gumbel_impl(key: &Array, shape: &[i64], dtype: DType, scheme: Scheme) -> Result<Array> {
    let tiny = dtype.float_info().smallest_normal;
    let u = uniform_impl(
        key,
        &float_c(tiny, dtype),
        &float_c(1.0, dtype),
        shape,
        dtype,
        scheme,
    )?;
    Ok(lax::neg(&lax::log(&lax::neg(&lax::log(&u)))))
}

fn categorical_impl(
    key: &Array,
    logits: &Array,
    axis: usize,
    shape: &[i64],
    replace: bool,
    scheme: Scheme,
) -> Result<Array> {
    let logits_shape = logits.shape_or_empty().to_vec();
    let rank = logits_shape.len();
    let dtype = logits.dtype_or_bool();
    let batch_rank = rank - 1;
    let prefix = &shape[..shape.len() - batch_rank];
    if replace {
        let mut sample_shape = shape[shape.len() - batch_rank..].to_vec();
        sample_shape.insert(axis, logits_shape[axis]);
        let mut full_shape = prefix.to_vec();
        full_shape.extend_from_slice(&sample_shape);
        let g = gumbel_impl(key, &full_shape, dtype, scheme)?;
        let noisy = lax::add(&g, &broadcast(logits, &full_shape));
        let arg_axis = prefix.len() + axis;
        Ok(lax::argmax(
            &noisy,
            arg_axis,
            crate::promotion_default_int(),
        ))
    } else {
        let g = gumbel_impl(key, &logits_shape, dtype, scheme)?;
        let noisy = lax::add(logits, &g);
        let k = size_of(prefix);
        let moved = jnp::moveaxis(&noisy, axis as i64, -1);
        let (_, indices) = lax::top_k(&moved, k);
        // [batch..., k] -> [k, batch...] -> shape.
        let last = indices.ndim_or_zero() as i64 - 1;
        let mut perm = vec![last];
        perm.extend(0..last);
        Ok(lax::reshape(&lax::transpose(&indices, &perm), shape))
    }
}

/// `val` clipped to the range of `dtype` (in `val`'s type), then converted.
fn convert_and_clip_integer(val: &Array, dtype: DType) -> Array {
    let vd = val.dtype_or_bool();
    let (dmin, dmax) = iinfo(dtype);
    let (vmin, vmax) = iinfo(vd);
    let clipped = lax::clamp(&int_c(dmin.max(vmin), vd), val, &int_c(dmax.min(vmax), vd));
    lax::convert_element_type(&clipped, dtype)
}

fn randint_impl(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[i64],
    dtype: DType,
    scheme: Scheme,
) -> Result<Array> {
    if bit_width(dtype) < 32 {
        let (lo, hi) = iinfo(dtype);
        let clip = |v: &Array, hi: i128| {
            lax::clamp(
                &int_c(lo, DType::I32),
                &lax::convert_element_type(v, DType::I32),
                &int_c(hi, DType::I32),
            )
        };
        let out = randint_sampled(
            key,
            &clip(minval, hi),
            &clip(maxval, hi + 1),
            shape,
            DType::I32,
            scheme,
        )?;
        return Ok(lax::convert_element_type(&out, dtype));
    }
    randint_sampled(key, minval, maxval, shape, dtype, scheme)
}

/// JAX's `_randint` for a type of 32 or 64 bits.
fn randint_sampled(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[i64],
    dtype: DType,
    scheme: Scheme,
) -> Result<Array> {
    let as_int = |v: &Array| {
        if v.dtype_or_bool().is_int() {
            v.clone()
        } else {
            lax::convert_element_type(v, crate::promotion_default_int())
        }
    };
    let (minval, maxval) = (as_int(minval), as_int(maxval));
    let md = maxval.dtype_or_bool();
    let (_, dmax) = iinfo(dtype);
    let (_, mmax) = iinfo(md);
    let out_of_range = lax::gt(&maxval, &int_c(dmax.min(mmax), md));
    let out_of_range = broadcast(&out_of_range, shape);
    let minval = broadcast(&convert_and_clip_integer(&minval, dtype), shape);
    let maxval = broadcast(&convert_and_clip_integer(&maxval, dtype), shape);
    let nbits = bit_width(dtype);
    let keys = split_impl(key, &[2], scheme)?;
    let row = |i: i64| key_row(&keys, i, scheme.kind);
    let higher = bits_impl(&row(0), shape, nbits, scheme)?;
    let lower = bits_impl(&row(1), shape, nbits, scheme)?;
    let unsigned = uint_of_width(nbits);
    let one = broadcast(&uint_c(1, unsigned), shape);
    let span = lax::convert_element_type(&lax::sub(&maxval, &minval), unsigned);
    let span = lax::select_n(&lax::le(&maxval, &minval), &[&span, &one]);
    let widen = lax::and(&out_of_range, &lax::gt(&maxval, &minval));
    let span = lax::select_n(&widen, &[&span, &lax::add(&span, &one)]);
    let half = broadcast(&uint_c(1u64 << (nbits / 2), unsigned), shape);
    let multiplier = lax::rem(&half, &span);
    let multiplier = lax::rem(&lax::mul(&multiplier, &multiplier), &span);
    let offset = lax::add(
        &lax::mul(&lax::rem(&higher, &span), &multiplier),
        &lax::rem(&lower, &span),
    );
    let offset = lax::rem(&offset, &span);
    Ok(lax::add(
        &minval,
        &lax::convert_element_type(&offset, dtype),
    ))
}

/// JAX's `_shuffle`: `x` sorted along `axis` by fresh random 32-bit keys,
/// as many rounds as make collisions unlikely (3 ln n / ln(2^32 - 1)).
fn shuffle(key: &Array, x: &Array, axis: usize, scheme: Scheme) -> Result<Array> {
    let size = x.size_or_one().max(1) as f64;
    let rounds = (3.0 * size.ln() / f64::from(u32::MAX).ln()).ceil() as usize;
    let mut key = key.clone();
    let mut x = x.clone();
    for _ in 0..rounds {
        let keys = split_impl(&key, &[2], scheme)?;
        let row = |i: i64| key_row(&keys, i, scheme.kind);
        let sub = row(1);
        key = row(0);
        let sort_keys = bits_impl(&sub, x.shape_or_empty(), 32, scheme)?;
        x = lax::sort(&[&sort_keys, &x], axis as i64, true, 1)
            .pop()
            .unwrap_or_else(|| Array::error(invalid("random: sort without outputs".into())));
    }
    Ok(x)
}

fn permutation_impl(
    key: &Array,
    x: &Array,
    axis: usize,
    independent: bool,
    scheme: Scheme,
) -> Result<Array> {
    if independent || x.ndim_or_zero() == 1 {
        return shuffle(key, x, axis, scheme);
    }
    let n = x.shape_or_empty()[axis];
    let range = lax::iota(crate::promotion_default_int(), &[n], 0);
    let order = shuffle(key, &range, 0, scheme)?;
    Ok(jnp::take(x, &order, Some(axis as i64), false))
}

#[allow(clippy::too_many_arguments)]
fn choice_impl(
    key: &Array,
    a: Option<&Array>,
    n: i64,
    shape: &[i64],
    replace: bool,
    p: Option<&Array>,
    axis: usize,
    scheme: Scheme,
) -> Result<Array> {
    let int = crate::promotion_default_int();
    let draws = size_of(shape);
    if draws == 0 {
        let dtype = a.map_or(int, Array::dtype_or_bool);
        return Ok(lax::broadcast_in_dim(&int_c(0, dtype), shape, &[]));
    }
    let pick = |ind: &Array| match a {
        Some(a) => jnp::take(a, ind, Some(axis as i64), false),
        None => ind.clone(),
    };
    let flat = [draws];
    let result = match p {
        None if replace => {
            let ind = randint_impl(
                key,
                &int_c(0, int),
                &int_c(i128::from(n), int),
                &flat,
                int,
                scheme,
            )?;
            pick(&ind)
        }
        None => {
            let permuted = match a {
                Some(a) => permutation_impl(key, a, axis, false, scheme)?,
                None => shuffle(key, &lax::iota(int, &[n], 0), 0, scheme)?,
            };
            let mut start = vec![0; permuted.ndim_or_zero()];
            let mut limit = permuted.shape_or_empty().to_vec();
            if let (Some(s), Some(l)) = (start.get_mut(axis), limit.get_mut(axis)) {
                *s = 0;
                *l = draws;
            }
            lax::slice(&permuted, &start, &limit, None)
        }
        Some(p) => {
            let p = if p.dtype_or_bool().is_float() {
                p.clone()
            } else {
                lax::convert_element_type(p, crate::promotion_default_float())
            };
            let dtype = p.dtype_or_bool();
            let ind = if replace {
                let cumulative = lax::cumsum(&p, 0, false);
                let total = lax::reshape(&lax::slice(&cumulative, &[n - 1], &[n], None), &[]);
                let u = uniform_impl(
                    key,
                    &float_c(0.0, dtype),
                    &float_c(1.0, dtype),
                    &flat,
                    dtype,
                    scheme,
                )?;
                let r = lax::mul(&total, &lax::sub(&float_c(1.0, dtype), &u));
                // searchsorted(cumulative, r, side='left'): how many are < r.
                let grid = [draws, n];
                let below = lax::lt(
                    &lax::broadcast_in_dim(&cumulative, &grid, &[1]),
                    &lax::broadcast_in_dim(&r, &grid, &[0]),
                );
                lax::reduce_sum(&lax::convert_element_type(&below, int), &[1])
            } else {
                let g = gumbel_impl(key, &[n], dtype, scheme)?;
                let scores = lax::add(&g, &lax::log(&p));
                let (_, top) = lax::top_k(&scores, draws);
                lax::convert_element_type(&top, int)
            };
            pick(&ind)
        }
    };
    let out_shape = match a {
        None => shape.to_vec(),
        Some(a) => {
            let s = a.shape_or_empty();
            let mut out = s[..axis].to_vec();
            out.extend_from_slice(shape);
            out.extend_from_slice(&s[axis + 1..]);
            out
        }
    };
    Ok(lax::reshape(&result, &out_shape))
}
