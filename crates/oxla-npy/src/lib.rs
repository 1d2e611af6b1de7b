//! NumPy `.npy` files (format versions 1, 2 and 3) as [`HostArray`]s: an
//! element type, a shape, and row-major little-endian bytes, ready to become
//! a device buffer; and `.npz` archives of them ([`npz`]).
//!
//! Reading accepts both byte orders and Fortran order (converted to
//! row-major little-endian). bfloat16 has no NumPy type code: `ml_dtypes`
//! saves it as the 2-byte void type `<V2`, which reads as
//! [`NpyType::Void2`] and is written back the same way, so files round-trip
//! with `np.save`/`np.load(...).view(ml_dtypes.bfloat16)`.
#![warn(missing_docs)]

use std::io::{Read, Write};
use std::ops::Range;
use std::path::Path;

use oxla_dtype::ElementType;

pub mod npz;

/// Errors of reading or writing `.npy` data.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes are not a `.npy` file oxla can read.
    #[error("not a valid .npy file: {0}")]
    Format(String),
    /// The array's dtype has no oxla element type.
    #[error(
        "unsupported .npy dtype {0:?} (oxla reads bool, int8-64, uint8-64, float16/32/64, complex64/128 and bfloat16 as <V2)"
    )]
    UnsupportedDtype(String),
    /// The bytes are not a `.npz` archive oxla can read, or one of its
    /// members could not be written.
    #[error("not a valid .npz archive: {0}")]
    Archive(String),
}

/// Result type of this crate.
pub type Result<T, E = NpyError> = std::result::Result<T, E>;

/// The element type of a `.npy` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyType {
    /// A NumPy type with an oxla element type.
    Element(ElementType),
    /// `V2`: two opaque bytes, how `ml_dtypes` saves bfloat16.
    Void2,
}

impl NpyType {
    /// Bytes per element.
    pub fn byte_size(self) -> usize {
        match self {
            NpyType::Element(t) => t.byte_size(),
            NpyType::Void2 => 2,
        }
    }

    /// Whether an array of this type can be fed where `wanted` is expected:
    /// the same type, or `V2` where bf16 is expected.
    pub fn feeds(self, wanted: ElementType) -> bool {
        match self {
            NpyType::Element(t) => t == wanted,
            NpyType::Void2 => wanted == ElementType::Bf16,
        }
    }

    /// The bytes of one element that must be swapped together when the byte
    /// order differs (complex numbers swap each half).
    fn swap_unit(self) -> usize {
        match self {
            NpyType::Element(ElementType::C64) => 4,
            NpyType::Element(ElementType::C128) => 8,
            NpyType::Void2 => 1,
            NpyType::Element(t) => t.byte_size(),
        }
    }

    fn descr(self) -> &'static str {
        match self {
            NpyType::Void2 => "|V2",
            NpyType::Element(t) => match t {
                ElementType::Pred => "|b1",
                ElementType::S8 => "|i1",
                ElementType::S16 => "<i2",
                ElementType::S32 => "<i4",
                ElementType::S64 => "<i8",
                ElementType::U8 => "|u1",
                ElementType::U16 => "<u2",
                ElementType::U32 => "<u4",
                ElementType::U64 => "<u8",
                ElementType::F16 => "<f2",
                ElementType::Bf16 => "<V2",
                ElementType::F32 => "<f4",
                ElementType::F64 => "<f8",
                ElementType::C64 => "<c8",
                ElementType::C128 => "<c16",
            },
        }
    }

    /// Parses a NumPy `descr` such as `<f4`; returns the type and whether
    /// the data is big-endian.
    fn parse_descr(descr: &str) -> Result<(NpyType, bool)> {
        let unsupported = || NpyError::UnsupportedDtype(descr.to_string());
        let (order, code) = match descr.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
            _ => ('=', descr),
        };
        let t = match code {
            "b1" => NpyType::Element(ElementType::Pred),
            "i1" => NpyType::Element(ElementType::S8),
            "i2" => NpyType::Element(ElementType::S16),
            "i4" => NpyType::Element(ElementType::S32),
            "i8" => NpyType::Element(ElementType::S64),
            "u1" => NpyType::Element(ElementType::U8),
            "u2" => NpyType::Element(ElementType::U16),
            "u4" => NpyType::Element(ElementType::U32),
            "u8" => NpyType::Element(ElementType::U64),
            "f2" => NpyType::Element(ElementType::F16),
            "f4" => NpyType::Element(ElementType::F32),
            "f8" => NpyType::Element(ElementType::F64),
            "c8" => NpyType::Element(ElementType::C64),
            "c16" => NpyType::Element(ElementType::C128),
            "V2" => NpyType::Void2,
            _ => return Err(unsupported()),
        };
        let big_endian = order == '>' || (order == '=' && cfg!(target_endian = "big"));
        Ok((t, big_endian))
    }
}

impl std::fmt::Display for NpyType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NpyType::Element(t) => write!(f, "{t}"),
            NpyType::Void2 => f.write_str("V2 (bf16 from ml_dtypes)"),
        }
    }
}

/// A dense array on the host: element type, shape, row-major little-endian bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostArray {
    /// Element type.
    pub npy_type: NpyType,
    /// Dimensions.
    pub dims: Vec<i64>,
    /// Row-major, little-endian element bytes.
    pub bytes: Vec<u8>,
}

const MAGIC: &[u8] = b"\x93NUMPY";

impl HostArray {
    /// An array of `element_type` (bf16 is stored as `V2`).
    pub fn new(element_type: ElementType, dims: Vec<i64>, bytes: Vec<u8>) -> Self {
        let npy_type = match element_type {
            ElementType::Bf16 => NpyType::Void2,
            other => NpyType::Element(other),
        };
        Self {
            npy_type,
            dims,
            bytes,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dims.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type the bytes hold (`V2` is bf16).
    pub fn element_type(&self) -> ElementType {
        match self.npy_type {
            NpyType::Element(t) => t,
            NpyType::Void2 => ElementType::Bf16,
        }
    }

    /// The elements as `f64`, complex numbers as interleaved (re, im) pairs.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        use half::{bf16, f16};
        let b = &self.bytes;
        macro_rules! le {
            ($t:ty) => {
                b.chunks_exact(std::mem::size_of::<$t>())
                    .map(|c| {
                        <$t>::from_le_bytes(c.try_into().expect("chunk of the type's size")) as f64
                    })
                    .collect()
            };
        }
        match self.element_type() {
            ElementType::Pred | ElementType::U8 => b.iter().map(|&x| f64::from(x)).collect(),
            ElementType::S8 => b.iter().map(|&x| f64::from(x as i8)).collect(),
            ElementType::S16 => le!(i16),
            ElementType::S32 => le!(i32),
            ElementType::S64 => le!(i64),
            ElementType::U16 => le!(u16),
            ElementType::U32 => le!(u32),
            ElementType::U64 => le!(u64),
            ElementType::F16 => b
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            ElementType::Bf16 => b
                .chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            ElementType::F32 | ElementType::C64 => le!(f32),
            ElementType::F64 | ElementType::C128 => le!(f64),
        }
    }

    /// A zero-filled array of `shape` whose leading corner holds this array's
    /// elements in `ranges` (one per dimension): a device's shard of a
    /// sharded array, padded where the shard runs past the array's edge.
    pub fn block(&self, ranges: &[Range<i64>], shape: &[i64]) -> HostArray {
        let elem = self.npy_type.byte_size();
        let mut out = HostArray {
            npy_type: self.npy_type,
            dims: shape.to_vec(),
            bytes: vec![0; shape.iter().map(|&d| d.max(0) as usize).product::<usize>() * elem],
        };
        copy_region(
            &self.bytes,
            &self.dims,
            ranges,
            &mut out.bytes,
            shape,
            elem,
            Direction::OutOf,
        );
        out
    }

    /// Writes the leading corner of `block` into this array at `ranges`: the
    /// inverse of [`HostArray::block`], for assembling a sharded result.
    pub fn put_block(&mut self, ranges: &[Range<i64>], block: &HostArray) {
        let elem = self.npy_type.byte_size();
        let dims = self.dims.clone();
        copy_region(
            &block.bytes,
            &block.dims,
            ranges,
            &mut self.bytes,
            &dims,
            elem,
            Direction::Into,
        );
    }

    /// Reads a `.npy` file.
    pub fn read_file(path: &Path) -> Result<Self> {
        let io = |source| NpyError::Io {
            path: path.display().to_string(),
            source,
        };
        let bytes = std::fs::read(path).map_err(io)?;
        Self::from_npy_bytes(&bytes)
    }

    /// Writes a `.npy` file (format version 1.0, or 2.0 for huge headers).
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let io = |source| NpyError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut file = std::fs::File::create(path).map_err(io)?;
        file.write_all(&self.to_npy_bytes()).map_err(io)
    }

    /// Parses the bytes of a `.npy` file.
    pub fn from_npy_bytes(data: &[u8]) -> Result<Self> {
        let format = |m: &str| NpyError::Format(m.to_string());
        if data.len() < 10 || !data.starts_with(MAGIC) {
            return Err(format("missing the \\x93NUMPY magic"));
        }
        let major = data[6];
        let (header_len, header_start) = match major {
            1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10usize),
            2 | 3 => {
                if data.len() < 12 {
                    return Err(format("truncated header length"));
                }
                (
                    u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
                    12,
                )
            }
            v => return Err(NpyError::Format(format!("unknown format version {v}"))),
        };
        let header_end = header_start
            .checked_add(header_len)
            .filter(|&end| end <= data.len())
            .ok_or_else(|| format("truncated header"))?;
        let header = std::str::from_utf8(&data[header_start..header_end])
            .map_err(|_| format("header is not text"))?;
        let fields = HeaderFields::parse(header)?;
        let (npy_type, big_endian) = NpyType::parse_descr(&fields.descr)?;
        let count = fields
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))
            .ok_or_else(|| format("shape too large"))?;
        let size = count
            .checked_mul(npy_type.byte_size())
            .ok_or_else(|| format("shape too large"))?;
        let body = &data[header_end..];
        if body.len() < size {
            return Err(NpyError::Format(format!(
                "data has {} bytes, the header's {}{:?} needs {size}",
                body.len(),
                fields.descr,
                fields.shape
            )));
        }
        let mut bytes = body[..size].to_vec();
        if big_endian {
            let unit = npy_type.swap_unit();
            bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
        }
        let dims: Vec<i64> = fields.shape.iter().map(|&d| d as i64).collect();
        if fields.fortran_order && dims.len() > 1 {
            bytes = fortran_to_c_order(&bytes, &fields.shape, npy_type.byte_size());
        }
        Ok(HostArray {
            npy_type,
            dims,
            bytes,
        })
    }

    /// The bytes of a `.npy` file holding this array.
    pub fn to_npy_bytes(&self) -> Vec<u8> {
        let shape = match self.dims.len() {
            1 => format!("({},)", self.dims[0]),
            _ => format!(
                "({})",
                self.dims
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.npy_type.descr()
        );
        // Pad with spaces so that the data starts on a 64-byte boundary.
        let (version, prefix) = if header.len() + 11 < 65536 {
            (1u8, 10)
        } else {
            (2u8, 12)
        };
        let total = (prefix + header.len() + 1).div_ceil(64) * 64;
        header.push_str(&" ".repeat(total - prefix - header.len() - 1));
        header.push('\n');
        let mut out = Vec::with_capacity(total + self.bytes.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[version, 0]);
        match version {
            1 => out.extend_from_slice(&(header.len() as u16).to_le_bytes()),
            _ => out.extend_from_slice(&(header.len() as u32).to_le_bytes()),
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Reads the whole of a reader as a `.npy` file.
    pub fn read_from(mut reader: impl Read) -> Result<Self> {
        let mut data = Vec::new();
        reader
            .read_to_end(&mut data)
            .map_err(|source| NpyError::Io {
                path: "<reader>".into(),
                source,
            })?;
        Self::from_npy_bytes(&data)
    }
}

/// Which way [`copy_region`] copies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// From `ranges` of the big array into the corner of the small one.
    OutOf,
    /// From the corner of the small array into `ranges` of the big one.
    Into,
}

/// Copies the region `ranges` of a row-major array `big` (of `big_dims`)
/// to or from the leading corner of `small` (of `small_dims`), row by row.
/// `source` is the big array's bytes when copying out of it, the small
/// one's when copying into `target` = the big one.
fn copy_region(
    source: &[u8],
    source_dims: &[i64],
    ranges: &[Range<i64>],
    target: &mut [u8],
    target_dims: &[i64],
    elem: usize,
    direction: Direction,
) {
    let (big_dims, small_dims) = match direction {
        Direction::OutOf => (source_dims, target_dims),
        Direction::Into => (target_dims, source_dims),
    };
    let rank = ranges.len();
    let extent: Vec<i64> = ranges.iter().map(|r| (r.end - r.start).max(0)).collect();
    if rank == 0 {
        let n = elem.min(source.len()).min(target.len());
        target[..n].copy_from_slice(&source[..n]);
        return;
    }
    if extent.contains(&0) {
        return;
    }
    let strides = |dims: &[i64]| -> Vec<usize> {
        let mut s = vec![1usize; rank];
        for i in (0..rank - 1).rev() {
            s[i] = s[i + 1] * dims[i + 1] as usize;
        }
        s
    };
    let (big_strides, small_strides) = (strides(big_dims), strides(small_dims));
    let row = extent[rank - 1] as usize * elem;
    let mut index = vec![0i64; rank];
    loop {
        let big: usize = (0..rank)
            .map(|i| (ranges[i].start + index[i]) as usize * big_strides[i])
            .sum();
        let small: usize = (0..rank)
            .map(|i| index[i] as usize * small_strides[i])
            .sum();
        let (from, to) = match direction {
            Direction::OutOf => (big * elem, small * elem),
            Direction::Into => (small * elem, big * elem),
        };
        target[to..to + row].copy_from_slice(&source[from..from + row]);
        // Next row: advance every index but the last.
        let mut axis = rank - 1;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < extent[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// The three keys of a `.npy` header dict.
struct HeaderFields {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

impl HeaderFields {
    /// Parses `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
    fn parse(header: &str) -> Result<Self> {
        let bad = |what: &str| NpyError::Format(format!("header {what}: {:?}", header.trim()));
        let value_after = |key: &str| -> Result<&str> {
            let at = header
                .find(&format!("'{key}'"))
                .ok_or_else(|| bad(&format!("has no '{key}'")))?;
            let rest = &header[at + key.len() + 2..];
            let colon = rest.find(':').ok_or_else(|| bad("is malformed"))?;
            Ok(rest[colon + 1..].trim_start())
        };
        let descr_text = value_after("descr")?;
        let descr = descr_text
            .strip_prefix('\'')
            .and_then(|s| s.split('\'').next())
            .ok_or_else(|| bad("has a structured or unquoted descr"))?
            .to_string();
        let fortran_text = value_after("fortran_order")?;
        let fortran_order = if fortran_text.starts_with("True") {
            true
        } else if fortran_text.starts_with("False") {
            false
        } else {
            return Err(bad("has a malformed fortran_order"));
        };
        let shape_text = value_after("shape")?;
        let inner = shape_text
            .strip_prefix('(')
            .and_then(|s| s.split(')').next())
            .ok_or_else(|| bad("has a malformed shape"))?;
        let shape = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.trim_end_matches('L')
                    .parse::<u64>()
                    .map_err(|_| bad("has a malformed shape"))
            })
            .collect::<Result<Vec<u64>>>()?;
        Ok(Self {
            descr,
            fortran_order,
            shape,
        })
    }
}

/// Reorders column-major element bytes into row-major.
fn fortran_to_c_order(bytes: &[u8], shape: &[u64], elem: usize) -> Vec<u8> {
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let count: usize = dims.iter().product();
    // Column-major strides (in elements).
    let mut f_strides = vec![1usize; dims.len()];
    for i in 1..dims.len() {
        f_strides[i] = f_strides[i - 1] * dims[i - 1];
    }
    let mut out = vec![0u8; bytes.len()];
    let mut index = vec![0usize; dims.len()];
    for c in 0..count {
        let f: usize = index.iter().zip(&f_strides).map(|(i, s)| i * s).sum();
        out[c * elem..(c + 1) * elem].copy_from_slice(&bytes[f * elem..(f + 1) * elem]);
        // Advance the row-major multi-index.
        for axis in (0..dims.len()).rev() {
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(dims: &[i64]) -> HostArray {
        let n: i64 = dims.iter().product();
        let bytes = (0..n as i32).flat_map(|v| v.to_le_bytes()).collect();
        HostArray::new(ElementType::S32, dims.to_vec(), bytes)
    }

    fn values(a: &HostArray) -> Vec<i32> {
        a.bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn blocks_cut_and_reassemble_an_array() {
        let a = iota(&[4, 3]);
        let b = a.block(&[2..4, 1..3], &[2, 2]);
        assert_eq!(values(&b), vec![7, 8, 10, 11]);
        let padded = a.block(&[3..4, 0..3], &[2, 3]);
        assert_eq!(values(&padded), vec![9, 10, 11, 0, 0, 0]);
        let mut whole = HostArray::new(ElementType::S32, vec![4, 3], vec![0; 48]);
        for (rows, cols) in [(0..2, 0..2), (0..2, 2..3), (2..4, 0..2), (2..4, 2..3)] {
            let shape = [2, 2];
            whole.put_block(
                &[rows.clone(), cols.clone()],
                &a.block(&[rows, cols], &shape),
            );
        }
        assert_eq!(whole, a);
        let scalar = HostArray::new(ElementType::S32, vec![], 5i32.to_le_bytes().to_vec());
        assert_eq!(values(&scalar.block(&[], &[])), vec![5]);
    }
}
