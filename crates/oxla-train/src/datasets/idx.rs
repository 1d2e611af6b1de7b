//! The IDX format of the original MNIST files: a big-endian header (two
//! zero bytes, a type code, the rank, then each dimension as a u32) and the
//! values in row-major order.

use std::path::Path;

use super::dataset_error;
use oxla::Error;

/// An IDX array of unsigned bytes (type code 0x08), the type MNIST uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxBytes {
    /// The dimensions.
    pub dims: Vec<usize>,
    /// The values, row-major.
    pub data: Vec<u8>,
}

/// Parses an IDX file's bytes (`path` names it in errors): ubyte arrays
/// only; a wrong magic, a truncated or oversized body is an error.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<IdxBytes, Error> {
    let bad = |m: String| dataset_error(path, format!("not an IDX ubyte file: {m}"));
    if bytes.len() < 4 {
        return Err(bad(format!(
            "{} bytes, shorter than the header",
            bytes.len()
        )));
    }
    if bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 {
        return Err(bad(format!(
            "magic {:02x}{:02x}{:02x}{:02x}, expected 000008 then the rank",
            bytes[0], bytes[1], bytes[2], bytes[3]
        )));
    }
    let rank = usize::from(bytes[3]);
    let header = 4 + 4 * rank;
    if bytes.len() < header {
        return Err(bad(format!(
            "{} bytes, shorter than a rank-{rank} header",
            bytes.len()
        )));
    }
    let dims: Vec<usize> = (0..rank)
        .map(|i| {
            let at = 4 + 4 * i;
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
        })
        .collect();
    let count = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| bad(format!("dimensions {dims:?} overflow")))?;
    let body = &bytes[header..];
    if body.len() != count {
        return Err(bad(format!(
            "dimensions {dims:?} need {count} bytes of data, the file has {}",
            body.len()
        )));
    }
    Ok(IdxBytes {
        dims,
        data: body.to_vec(),
    })
}
