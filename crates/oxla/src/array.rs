//! `Array`: the one array type users see, concrete (on a device), traced
//! (inside `jit`), a host scalar, or an error carried from an operator.

use oxla_pjrt::ElementType;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use oxla_core::{Atom, Aval, DType, Location, Scalar};
use oxla_npy::HostArray;
use oxla_pjrt::Buffer;

use crate::config::x64_enabled;
use crate::element::{Element, scalar_bytes};
use crate::error::{Error, Result};
use crate::runtime::client;

/// What an [`Array`] is.
pub(crate) enum Inner {
    /// A value on a device, or split over the devices of a mesh.
    Concrete {
        /// Its buffer or shards.
        value: Stored,
        /// Its type (with weak type, which the buffer does not know).
        aval: Aval,
        /// Set when the buffer was donated to a jitted call (what it was
        /// donated to): the array cannot be used again.
        donated: std::sync::OnceLock<String>,
        /// Its entry in the live-array registry (memory profiles).
        _tracked: crate::memory::Tracked,
    },
    /// A value being traced by `jit`.
    Traced {
        /// The trace it belongs to.
        trace: u64,
        /// Its variable in that trace.
        atom: Atom,
        /// Its type.
        aval: Aval,
    },
    /// A value being differentiated in forward mode by the jvp trace `trace`.
    Jvp {
        /// The trace it belongs to.
        trace: u64,
        /// Its value.
        primal: Array,
        /// Its tangent (never a symbolic zero: a value with a zero tangent
        /// is just its primal).
        tangent: Array,
    },
    /// A value being batched by the vmap trace `trace`.
    Batched {
        /// The trace it belongs to.
        trace: u64,
        /// Every batch element's value, stacked along `bdim`.
        value: Array,
        /// Where the batch dimension is in `value`.
        bdim: usize,
        /// The type of one batch element.
        aval: Aval,
    },
    /// A Rust scalar, weakly typed, not yet on a device.
    Scalar {
        /// The value.
        value: Scalar,
        /// Its (weak, rank-0) type.
        aval: Aval,
    },
    /// The error an operator ran into; every op on it returns it again.
    Error(Error),
}

/// Where a concrete array's value is.
pub(crate) enum Stored {
    /// In one buffer on one device.
    One(Buffer),
    /// In shards over a mesh.
    Sharded(crate::sharding::Sharded),
}

/// An n-dimensional array. Cloning is cheap (shared, immutable).
///
/// Operators (`a + b`) cannot return a `Result`: when one fails (say, on
/// incompatible shapes), the result is an array carrying the error, which
/// every later op passes on and the next `Result`-returning call reports
/// (`to_vec`, `jit(f).call`, [`Array::check`]).
#[derive(Clone)]
pub struct Array {
    pub(crate) inner: Arc<Inner>,
}

impl Array {
    pub(crate) fn from_inner(inner: Inner) -> Array {
        Array {
            inner: Arc::new(inner),
        }
    }

    /// An array carrying `e`: every op on it passes the error on and the
    /// next call that returns a `Result` reports it. Lets a function that
    /// must return an `Array` pass on an error (`.unwrap_or_else(Array::error)`).
    pub fn error(e: Error) -> Array {
        Array::from_inner(Inner::Error(e))
    }

    /// An array from host data in row-major order. 64-bit data becomes
    /// 32-bit unless x64 is enabled (as `jnp.asarray` does).
    #[track_caller]
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Array> {
        let bytes = T::as_bytes(data).to_vec();
        Array::from_bytes(T::DTYPE, shape, &bytes)
    }

    /// A strongly typed scalar array.
    #[track_caller]
    pub fn scalar<T: Element>(value: T) -> Result<Array> {
        Array::from_slice(&[value], &[])
    }

    /// A weakly typed scalar, as a Rust literal in an expression is.
    pub fn weak_scalar<T: Element>(value: T) -> Array {
        let dtype = if T::DTYPE.is_float() {
            crate::promotion_default_float()
        } else if T::DTYPE.is_int() {
            crate::promotion_default_int()
        } else {
            T::DTYPE
        };
        let mut aval = Aval::weak_scalar(dtype);
        aval.weak_type = dtype != DType::Bool;
        Array::from_inner(Inner::Scalar {
            value: value.to_scalar(),
            aval,
        })
    }

    /// An array from raw little-endian bytes of `dtype`.
    #[track_caller]
    pub fn from_bytes(dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Array> {
        let (dtype, bytes) = canonicalize_host(dtype, bytes);
        let _span = tracing::info_span!(
            "transfer",
            direction = "host-to-device",
            bytes = bytes.len()
        )
        .entered();
        let buffer = client()?.buffer_from_bytes(&bytes, ElementType::from(dtype), shape, None)?;
        Ok(Array::wrap_buffer(buffer, Aval::new(dtype, shape)))
    }

    /// An array over a device buffer of oxla's client, for example one
    /// whose data is still arriving
    /// (`client()?.create_buffers_for_async_host_to_device`): computations
    /// on it are enqueued at once and run when the data is there.
    pub fn from_buffer(buffer: Buffer) -> Result<Array> {
        if !client()?.owns(&buffer) {
            return Err(Error::InvalidArgument(
                "Array::from_buffer: the buffer belongs to another PJRT client than oxla's".into(),
            ));
        }
        let (element, dims) = buffer.array_type()?;
        let dims = dims.to_vec();
        let dtype = DType::from(element);
        if oxla_core::promotion::canonicalize(dtype, x64_enabled()) != dtype {
            return Err(Error::InvalidArgument(format!(
                "Array::from_buffer: a {dtype} buffer needs x64 (oxla::config::enable_x64(true))"
            )));
        }
        Ok(Array::wrap_buffer(buffer, Aval::new(dtype, &dims)))
    }

    /// Reads a `.npy` file (bfloat16 as saved by ml_dtypes, `<V2`).
    pub fn from_npy(path: impl AsRef<Path>) -> Result<Array> {
        let host = HostArray::read_file(path.as_ref())?;
        Array::from_bytes(DType::from(host.element_type()), &host.dims, &host.bytes)
    }

    /// Writes the array to a `.npy` file.
    #[track_caller]
    pub fn to_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(self.to_host()?.write_file(path.as_ref())?)
    }

    /// An array over `buffer`, registered as made at the caller's line (or
    /// the equation's, inside a rule).
    #[track_caller]
    pub(crate) fn wrap_buffer(buffer: Buffer, aval: Aval) -> Array {
        let location = crate::ops::current_location(std::panic::Location::caller());
        let bytes = device_bytes(&[&buffer], &aval);
        Array::from_inner(Inner::Concrete {
            value: Stored::One(buffer),
            _tracked: crate::memory::Tracked::new(&aval, bytes, location),
            aval,
            donated: std::sync::OnceLock::new(),
        })
    }

    /// An array over shards, registered as [`wrap_buffer`](Self::wrap_buffer) is.
    #[track_caller]
    pub(crate) fn wrap_sharded(sharded: crate::sharding::Sharded, aval: Aval) -> Array {
        let location = crate::ops::current_location(std::panic::Location::caller());
        // On a mesh with explicit axes the type shows the layout.
        let aval = aval.with_sharding(sharded.layout.explicit_type());
        let shards: Vec<&Buffer> = sharded.shards.iter().collect();
        let bytes = device_bytes(&shards, &aval);
        Array::from_inner(Inner::Concrete {
            value: Stored::Sharded(sharded),
            _tracked: crate::memory::Tracked::new(&aval, bytes, location),
            aval,
            donated: std::sync::OnceLock::new(),
        })
    }

    /// The shards of an array split over a mesh.
    pub(crate) fn sharded(&self) -> Option<&crate::sharding::Sharded> {
        match &*self.inner {
            Inner::Concrete {
                value: Stored::Sharded(s),
                ..
            } => Some(s),
            Inner::Jvp { primal, .. } => primal.sharded(),
            Inner::Concrete { .. }
            | Inner::Traced { .. }
            | Inner::Batched { .. }
            | Inner::Scalar { .. }
            | Inner::Error(_) => None,
        }
    }

    /// An error naming what the array was donated to, if it was (a use at
    /// `location`).
    pub(crate) fn check_not_donated(&self, location: Location) -> Result<()> {
        match &*self.inner {
            Inner::Concrete { donated, .. } => match donated.get() {
                Some(what) => Err(Error::Donated {
                    what: what.clone(),
                    location,
                }),
                None => Ok(()),
            },
            Inner::Traced { .. }
            | Inner::Jvp { .. }
            | Inner::Batched { .. }
            | Inner::Scalar { .. }
            | Inner::Error(_) => Ok(()),
        }
    }

    /// The id of the trace this array is a tracer of, if it is one.
    pub(crate) fn trace_id(&self) -> Option<u64> {
        match &*self.inner {
            Inner::Traced { trace, .. }
            | Inner::Jvp { trace, .. }
            | Inner::Batched { trace, .. } => Some(*trace),
            Inner::Concrete { .. } | Inner::Scalar { .. } | Inner::Error(_) => None,
        }
    }

    /// Marks a concrete array as donated to `what` (its buffer now belongs
    /// to an output).
    pub(crate) fn mark_donated(&self, what: String) {
        if let Inner::Concrete { donated, .. } = &*self.inner {
            let _ = donated.set(what);
        }
    }

    /// The abstract value (dtype, shape, weak type); for an error array, the error.
    pub fn aval(&self) -> Result<&Aval> {
        match &*self.inner {
            Inner::Concrete { aval, .. }
            | Inner::Traced { aval, .. }
            | Inner::Batched { aval, .. }
            | Inner::Scalar { aval, .. } => Ok(aval),
            Inner::Jvp { primal, .. } => primal.aval(),
            Inner::Error(e) => Err(e.clone()),
        }
    }

    /// The dimensions.
    ///
    /// # Panics
    ///
    /// When the array carries an error (an op that made it failed): the
    /// panic prints that error with the op's source line. An array whose
    /// error went unchecked has no shape, and a made-up one would be a
    /// silent wrong answer (a parameter count of 1, `shape()[0]` out of
    /// bounds far from the cause), so oxla stops there, as indexing out of
    /// bounds does. To handle the error instead, ask first: `x.check()?`,
    /// or [`try_shape`](Self::try_shape) / [`aval`](Self::aval).
    #[track_caller]
    pub fn shape(&self) -> &[i64] {
        &self.known_aval("shape").shape
    }

    /// The dimensions, or the error the array carries.
    pub fn try_shape(&self) -> Result<&[i64]> {
        self.aval().map(|a| a.shape.as_slice())
    }

    /// The element type. Panics, printing the error, on an array that
    /// carries one (see [`shape`](Self::shape)); [`aval`](Self::aval)
    /// returns it instead.
    #[track_caller]
    pub fn dtype(&self) -> DType {
        self.known_aval("dtype").dtype
    }

    /// Number of dimensions. Panics on an array that carries an error (see
    /// [`shape`](Self::shape)).
    #[track_caller]
    pub fn ndim(&self) -> usize {
        self.known_aval("ndim").shape.len()
    }

    /// Number of elements. Panics on an array that carries an error (see
    /// [`shape`](Self::shape)).
    #[track_caller]
    pub fn size(&self) -> i64 {
        self.known_aval("size").shape.iter().product()
    }

    /// The aval, for a public accessor that has no `Result` to return.
    #[track_caller]
    fn known_aval(&self, accessor: &str) -> &Aval {
        match self.aval() {
            Ok(aval) => aval,
            Err(e) => panic!(
                "Array::{accessor}() of an array that carries an error (check it with \
                 `x.check()?` first): {e}"
            ),
        }
    }

    /// The dimensions, empty for an error array: for oxla's own ops, which
    /// pass an input's error on through the primitive they bind.
    pub fn shape_or_empty(&self) -> &[i64] {
        self.aval().map(|a| a.shape.as_slice()).unwrap_or(&[])
    }

    /// The element type, bool for an error array (see
    /// [`shape_or_empty`](Self::shape_or_empty)).
    pub fn dtype_or_bool(&self) -> DType {
        self.aval().map(|a| a.dtype).unwrap_or(DType::Bool)
    }

    /// Number of dimensions, 0 for an error array.
    pub fn ndim_or_zero(&self) -> usize {
        self.shape_or_empty().len()
    }

    /// Number of elements, 1 for an error array.
    pub(crate) fn size_or_one(&self) -> i64 {
        self.shape_or_empty().iter().product()
    }

    /// Whether the dtype is weak.
    pub fn weak_type(&self) -> bool {
        self.aval().is_ok_and(|a| a.weak_type)
    }

    /// `Ok(self)`, or the error this array carries.
    pub fn check(&self) -> Result<&Array> {
        self.aval().map(|_| self)
    }

    /// Whether this array is a tracer (of jit, a differentiation or vmap).
    pub fn is_traced(&self) -> bool {
        self.trace_id().is_some()
    }

    /// The device buffer of a concrete array (a host scalar is put on the
    /// device first).
    #[track_caller]
    pub(crate) fn buffer(&self) -> Result<BufferRef<'_>> {
        self.buffer_at(Location::from_caller(std::panic::Location::caller()))
    }

    /// [`buffer`](Self::buffer) for a use at `location`.
    pub(crate) fn buffer_at(&self, location: Location) -> Result<BufferRef<'_>> {
        self.check_not_donated(location)?;
        match &*self.inner {
            Inner::Concrete {
                value: Stored::One(buffer),
                ..
            } => Ok(BufferRef::Borrowed(buffer)),
            Inner::Concrete {
                value: Stored::Sharded(s),
                aval,
                ..
            } => Err(Error::Internal(format!(
                "{location}: an array of {aval} split over {} reached a single-device program",
                s.layout.mesh
            ))),
            Inner::Scalar { value, aval } => {
                guard("host-to-device", aval, location)?;
                let bytes = scalar_bytes(aval.dtype, *value);
                Ok(BufferRef::Owned(client()?.buffer_from_bytes(
                    &bytes,
                    ElementType::from(aval.dtype),
                    &[],
                    None,
                )?))
            }
            // A value under forward-mode differentiation has a concrete
            // primal when it is differentiated outside jit (as in JAX).
            Inner::Jvp { primal, .. } => primal.buffer_at(location),
            Inner::Traced { aval, .. } | Inner::Batched { aval, .. } => {
                Err(Error::Concretization {
                    aval: Box::new(aval.clone()),
                    location,
                })
            }
            Inner::Error(e) => Err(e.clone()),
        }
    }

    /// Waits until the value is computed.
    #[track_caller]
    pub fn block_until_ready(&self) -> Result<&Array> {
        match self.sharded() {
            Some(s) => {
                for shard in &s.shards {
                    shard.block_until_ready()?;
                }
            }
            None => {
                self.buffer()?.get().block_until_ready()?;
            }
        }
        Ok(self)
    }

    /// Whether the value is computed (or its computation failed), without
    /// waiting: calls return before the device finishes, as in JAX.
    #[track_caller]
    pub fn is_ready(&self) -> Result<bool> {
        match self.sharded() {
            Some(s) => {
                for shard in &s.shards {
                    if !shard.is_ready()? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            None => Ok(self.buffer()?.get().is_ready()?),
        }
    }

    /// The value on the host.
    #[track_caller]
    pub fn to_host(&self) -> Result<HostArray> {
        let aval = self.aval()?.clone();
        if let Some(sharded) = self.sharded() {
            self.check_not_donated(Location::from_caller(std::panic::Location::caller()))?;
            return sharded.to_host(&aval);
        }
        let buffer = self.buffer()?;
        let bytes = {
            let _span = tracing::info_span!("transfer", direction = "device-to-host").entered();
            buffer.get().to_host_bytes()?
        };
        Ok(HostArray::new(
            ElementType::from(aval.dtype),
            aval.shape.to_vec(),
            bytes,
        ))
    }

    /// The elements, row-major, as `T` (which must be the dtype's type).
    #[track_caller]
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let aval = self.aval()?;
        if aval.dtype != T::DTYPE {
            return Err(Error::InvalidArgument(format!(
                "to_vec::<{}>() of a {} array",
                T::DTYPE,
                aval
            )));
        }
        let host = self.to_host()?;
        Ok(T::from_bytes(&host.bytes)?)
    }

    /// The single element of a size-1 array.
    #[track_caller]
    pub fn item<T: Element>(&self) -> Result<T> {
        let v = self.to_vec::<T>()?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(Error::InvalidArgument(format!(
                "item() of an array with {} elements",
                v.len()
            ))),
        }
    }
}

/// Applies the transfer guard to an implicit transfer.
pub(crate) fn guard(direction: &'static str, aval: &Aval, location: Location) -> Result<()> {
    match crate::config::transfer_guard() {
        crate::config::TransferGuard::Allow => Ok(()),
        crate::config::TransferGuard::Log => {
            crate::config::diagnostic(&format!(
                "oxla: implicit {direction} transfer of {aval} at {location}"
            ));
            Ok(())
        }
        crate::config::TransferGuard::Disallow => Err(Error::TransferGuard {
            direction,
            aval: Box::new(aval.clone()),
            location,
        }),
    }
}

/// A buffer borrowed from an array or made for a host scalar.
pub(crate) enum BufferRef<'a> {
    Borrowed(&'a Buffer),
    Owned(Buffer),
}

impl BufferRef<'_> {
    pub(crate) fn get(&self) -> &Buffer {
        match self {
            BufferRef::Borrowed(b) => b,
            BufferRef::Owned(b) => b,
        }
    }
}

/// Without x64, 64-bit host data becomes 32-bit (as JAX canonicalizes).
fn canonicalize_host(dtype: DType, bytes: &[u8]) -> (DType, Vec<u8>) {
    if x64_enabled() {
        return (dtype, bytes.to_vec());
    }
    match dtype {
        DType::F64 => (
            DType::F32,
            bytes
                .chunks_exact(8)
                .flat_map(|c| {
                    (f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32).to_le_bytes()
                })
                .collect(),
        ),
        DType::I64 => (
            DType::I32,
            bytes
                .chunks_exact(8)
                .flat_map(|c| {
                    (i64::from_le_bytes(c.try_into().expect("8 bytes")) as i32).to_le_bytes()
                })
                .collect(),
        ),
        DType::C128 => (
            DType::C64,
            bytes
                .chunks_exact(8)
                .flat_map(|c| {
                    (f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32).to_le_bytes()
                })
                .collect(),
        ),
        DType::U64 => (
            DType::U32,
            bytes
                .chunks_exact(8)
                .flat_map(|c| {
                    (u64::from_le_bytes(c.try_into().expect("8 bytes")) as u32).to_le_bytes()
                })
                .collect(),
        ),
        other => (other, bytes.to_vec()),
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Concrete { aval, .. } => write!(f, "Array({aval}: {self})"),
            Inner::Traced { aval, .. } => write!(f, "Traced<{aval}>"),
            Inner::Jvp {
                primal, tangent, ..
            } => write!(f, "JvpTracer({primal:?}, {tangent:?})"),
            Inner::Batched { value, bdim, .. } => write!(f, "BatchTracer({value:?}, bdim={bdim})"),
            Inner::Scalar { value, aval } => write!(f, "{value}:{aval}"),
            Inner::Error(e) => write!(f, "Error({e})"),
        }
    }
}

impl fmt::Display for Array {
    /// Like numpy: `[[1. 2.]\n [3. 4.]]`. Printing copies the array to the
    /// host: an implicit transfer, subject to the transfer guard.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Formatting goes through `dyn Display`, which loses the caller's line.
        let printing = Location {
            file: "<printing an Array>",
            line: 0,
            column: 0,
        };
        if let Inner::Concrete { aval, .. } = &*self.inner
            && let Err(e) = guard("device-to-host", aval, printing)
        {
            return write!(f, "<error: {e}>");
        }
        match &*self.inner {
            Inner::Traced { aval, .. } | Inner::Batched { aval, .. } => {
                return write!(f, "Traced<{aval}>");
            }
            Inner::Jvp { primal, .. } => return write!(f, "{primal}"),
            Inner::Error(e) => return write!(f, "<error: {e}>"),
            Inner::Scalar { value, .. } => return write!(f, "{value}"),
            Inner::Concrete { .. } => {}
        }
        match self.to_host() {
            Ok(host) => write_host(f, self.dtype_or_bool(), &host),
            Err(e) => write!(f, "<error: {e}>"),
        }
    }
}

/// The bytes `buffers` hold: each the elements of its shape (asking the
/// plugin for its padded size would cost a C API call per array).
fn device_bytes(buffers: &[&Buffer], aval: &Aval) -> u64 {
    let whole = aval.size().max(0) as u64 * aval.dtype.byte_size() as u64;
    match buffers {
        [_] => whole,
        shards => shards
            .iter()
            .map(|b| {
                b.array_type()
                    .map(|(element, dims)| {
                        dims.iter().map(|&d| d.max(0) as u64).product::<u64>()
                            * element.byte_size() as u64
                    })
                    .unwrap_or(whole / shards.len().max(1) as u64)
            })
            .sum(),
    }
}

/// Writes host data of `dtype` as an array prints (numpy's layout).
pub(crate) fn write_host(f: &mut dyn fmt::Write, dtype: DType, host: &HostArray) -> fmt::Result {
    let numbers = host.to_f64_vec();
    if dtype.is_complex() {
        return write_complex(f, dtype, &numbers, &host.dims);
    }
    if host.dims.is_empty() && dtype.is_float() {
        // A 0-d array prints like a scalar: `7.0`, `0.5`.
        let v = numbers.first().copied().unwrap_or(f64::NAN);
        let text = if dtype == DType::F64 {
            format!("{v:?}")
        } else {
            format!("{:?}", v as f32)
        };
        return f.write_str(&text);
    }
    let values = format_elements(dtype, &numbers);
    write_nested(f, &values, &host.dims, 0)
}

/// Complex host data (`parts` interleaved real, imaginary) as numpy prints
/// it: `[1. +2.j  3.5-4.j ]`, a 0-d value as `(1+2j)`.
fn write_complex(f: &mut dyn fmt::Write, dtype: DType, parts: &[f64], dims: &[i64]) -> fmt::Result {
    let part = dtype.real_part();
    let re: Vec<f64> = parts.iter().step_by(2).copied().collect();
    let im: Vec<f64> = parts.iter().skip(1).step_by(2).copied().collect();
    let sign = |v: f64| if v.is_sign_negative() { '-' } else { '+' };
    if dims.is_empty() {
        let (re, im) = (
            re.first().copied().unwrap_or(f64::NAN),
            im.first().copied().unwrap_or(f64::NAN),
        );
        let short = |v: f64| {
            let text = if part == DType::F64 {
                format!("{v}")
            } else {
                format!("{}", v as f32)
            };
            text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
        };
        return write!(f, "({}{}{}j)", short(re), sign(im), short(im.abs()));
    }
    let re_texts = format_elements(part, &re);
    let im_abs: Vec<f64> = im.iter().map(|v| v.abs()).collect();
    let im_texts = format_elements(part, &im_abs);
    let texts: Vec<String> = re_texts
        .iter()
        .zip(&im_texts)
        .zip(&im)
        .map(|((r, i), v)| {
            let i = i.trim_start();
            let padding = i.len() - i.trim_end().len();
            format!("{r}{}{}j{}", sign(*v), i.trim_end(), " ".repeat(padding))
        })
        .collect();
    write_nested(f, &texts, dims, 0)
}

/// numpy's element texts: floats with up to 8 fraction digits (`1.`,
/// `0.33333334`), decimal points aligned; integers right-aligned; bools as
/// `True`/`False`.
fn format_elements(dtype: DType, values: &[f64]) -> Vec<String> {
    if dtype == DType::Bool {
        let texts: Vec<String> = values
            .iter()
            .map(|&v| (if v != 0.0 { "True" } else { "False" }).to_string())
            .collect();
        return pad(texts, true);
    }
    if !dtype.is_float() {
        return pad(values.iter().map(|v| format!("{v}")).collect(), true);
    }
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let max = finite.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let min_nonzero = finite
        .iter()
        .filter(|v| **v != 0.0)
        .fold(f64::INFINITY, |m, v| m.min(v.abs()));
    let scientific = max >= 1e16
        || (min_nonzero < 1e-4 && max > 0.0)
        || (max > 0.0 && max / min_nonzero > 1e3 && min_nonzero < 1e-3);
    let texts: Vec<String> = values
        .iter()
        .map(|&v| {
            if v.is_nan() {
                "nan".to_string()
            } else if v.is_infinite() {
                (if v > 0.0 { "inf" } else { "-inf" }).to_string()
            } else if scientific {
                format!("{v:.8e}")
            } else {
                let single = if dtype == DType::F64 {
                    v
                } else {
                    f64::from(v as f32)
                };
                let shortest = if dtype == DType::F64 {
                    format!("{single}")
                } else {
                    format!("{}", single as f32)
                };
                match shortest.split_once('.') {
                    Some((_, frac)) if frac.len() > 8 => {
                        format!("{single:.8}").trim_end_matches('0').to_string()
                    }
                    Some(_) => shortest,
                    None => format!("{shortest}."),
                }
            }
        })
        .collect();
    // Align the decimal points: pad integer parts on the left, fractions on the right.
    let split: Vec<(String, String)> = texts
        .iter()
        .map(|t| match t.split_once('.') {
            Some((i, f)) => (i.to_string(), format!(".{f}")),
            None => (t.clone(), String::new()),
        })
        .collect();
    let int_width = split.iter().map(|(i, _)| i.len()).max().unwrap_or(0);
    let frac_width = split.iter().map(|(_, f)| f.len()).max().unwrap_or(0);
    split
        .into_iter()
        .map(|(i, f)| format!("{i:>int_width$}{f:<frac_width$}"))
        .collect()
}

/// Right-aligns texts to one width.
fn pad(texts: Vec<String>, right: bool) -> Vec<String> {
    let width = texts.iter().map(String::len).max().unwrap_or(0);
    texts
        .into_iter()
        .map(|t| {
            if right {
                format!("{t:>width$}")
            } else {
                format!("{t:<width$}")
            }
        })
        .collect()
}

fn write_nested(
    f: &mut dyn fmt::Write,
    values: &[String],
    shape: &[i64],
    depth: usize,
) -> fmt::Result {
    match shape {
        [] => f.write_str(values.first().map_or("", String::as_str)),
        [_] => write!(f, "[{}]", values.join(" ")),
        [n, rest @ ..] => {
            let chunk = rest.iter().product::<i64>().max(0) as usize;
            f.write_str("[")?;
            for i in 0..*n as usize {
                if i > 0 {
                    // numpy leaves rank-1 blank lines between blocks of rank >= 2.
                    write!(f, "{}{}", "\n".repeat(rest.len()), " ".repeat(depth + 1))?;
                }
                let part = if chunk == 0 {
                    &[][..]
                } else {
                    &values[i * chunk..(i + 1) * chunk]
                };
                write_nested(f, part, rest, depth + 1)?;
            }
            f.write_str("]")
        }
    }
}
