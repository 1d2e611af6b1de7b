//! The framing TensorStore's OCDBT gives every manifest, version tree
//! node and B+tree node, both ways: a header (big-endian magic,
//! little-endian `u64` length of the whole record, varint format version
//! and compression), a body (zstd-compressed or not) and a CRC-32C footer
//! of everything before it.

use std::io::Read;
use std::path::Path;

use oxla::Result;

use super::cursor::Cursor;
use super::encoder::Encoder;
use crate::checkpoint::checkpoint_error;

/// The magic number of a manifest.
pub(super) const MANIFEST_MAGIC: u32 = 0x0cdb_3a2a;
/// The magic number of a version tree node.
pub(super) const VERSION_NODE_MAGIC: u32 = 0x0cdb_1234;
/// The magic number of a B+tree node.
pub(super) const BTREE_NODE_MAGIC: u32 = 0x0cdb_20de;
/// The most a manifest may decode to (they hold a few tables).
pub(super) const MANIFEST_LIMIT: usize = 64 << 20;
/// Header (magic, length, two one-byte varints at least) and footer.
const MIN_ENCODED: usize = 4 + 8 + 1 + 1 + 4;
/// The only format version there is.
const FORMAT_VERSION: u64 = 0;

/// `body` framed as a record with `magic`, compressed with zstd at
/// `zstd_level` (`None`: stored as it is).
pub(super) fn encode_record(
    magic: u32,
    body: &[u8],
    zstd_level: Option<i32>,
) -> std::io::Result<Vec<u8>> {
    let compressed;
    let (compression, stored) = match zstd_level {
        None => (0, body),
        Some(level) => {
            compressed = zstd::bulk::compress(body, level)?;
            (1, compressed.as_slice())
        }
    };
    let mut out = Encoder::new();
    out.bytes(&magic.to_be_bytes());
    out.u64_le(0); // the length, filled in below
    out.varint(FORMAT_VERSION);
    out.varint(compression);
    out.bytes(stored);
    let mut bytes = out.into_bytes();
    let length = (bytes.len() + 4) as u64;
    bytes[4..12].copy_from_slice(&length.to_le_bytes());
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    Ok(bytes)
}

/// The body of one encoded record (manifest or node): checks the magic,
/// length, version and CRC-32C, and decompresses (at most `limit` bytes).
pub(super) fn decode_record(
    bytes: &[u8],
    magic: u32,
    file: &Path,
    limit: usize,
) -> Result<Vec<u8>> {
    let corrupt = |what: String| checkpoint_error(file, format!("corrupt OCDBT data: {what}"));
    if bytes.len() < MIN_ENCODED {
        return Err(corrupt(format!(
            "a record of {} bytes is shorter than its header and checksum (truncated?)",
            bytes.len()
        )));
    }
    let found = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if found != magic {
        return Err(corrupt(format!(
            "magic {found:#010x}, expected {magic:#010x}"
        )));
    }
    let mut c = Cursor::new(bytes, file);
    c.bytes(4, "magic")?;
    let length = c.u64_le("record length")?;
    if length != bytes.len() as u64 {
        return Err(corrupt(format!(
            "the header says {length} bytes, the record has {} (truncated?)",
            bytes.len()
        )));
    }
    let (content, footer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes([footer[0], footer[1], footer[2], footer[3]]);
    let computed = crc32c::crc32c(content);
    if stored != computed {
        return Err(corrupt(format!(
            "CRC-32C {computed:#010x} of the record, its footer says {stored:#010x}"
        )));
    }
    let mut c = Cursor::new(content, file);
    c.bytes(12, "header")?;
    let version = c.varint("format version")?;
    if version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "format version {version} (only 0 is known)"
        )));
    }
    let compression = c.varint("compression format")?;
    let body = c.bytes(c.remaining(), "body")?;
    match compression {
        0 => Ok(body.to_vec()),
        1 => zstd_decode(body, limit).map_err(|e| corrupt(format!("zstd body: {e}"))),
        other => Err(corrupt(format!("compression format {other} (0 or 1)"))),
    }
}

/// `data` zstd-decompressed; an error past `limit` bytes.
pub(super) fn zstd_decode(data: &[u8], limit: usize) -> std::result::Result<Vec<u8>, String> {
    let decoder = zstd::stream::read::Decoder::with_buffer(data).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() > limit {
        return Err(format!("decompresses past the {limit}-byte limit"));
    }
    Ok(out)
}
