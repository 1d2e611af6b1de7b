//! The on-disk entry: a header (magic, format version, key, body checksum,
//! compile time, body length) and the deflate-compressed serialized
//! executable.

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use crate::key::Key;

/// The first bytes of every entry.
pub const MAGIC: &[u8; 8] = b"OXLACC\x00\x01";
/// The entry format; part of every key too, so a new format never reads an old entry.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the body: magic, version, key, checksum, compile nanos, length.
pub(crate) const HEADER_LEN: usize = 8 + 4 + 32 + 32 + 8 + 8;
/// Where the header's compile nanoseconds start.
const COMPILE_NANOS_AT: usize = 76;

/// The little-endian u64 at `at` (the caller checked the length).
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// A decoded entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key it was written for.
    pub key: Key,
    /// How long the compilation it saves took, in nanoseconds.
    pub compile_nanos: u64,
    /// The serialized executable.
    pub executable: Vec<u8>,
}

/// Why an entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Too short, wrong magic, or a length that does not add up.
    #[error("truncated or not an oxla cache entry")]
    Malformed,
    /// Written by another entry format.
    #[error("written by cache format {0}, this oxla reads format {FORMAT_VERSION}")]
    ForeignVersion(u32),
    /// Stored under another key (renamed or copied file).
    #[error("holds the entry of another key")]
    WrongKey,
    /// The body does not match its checksum.
    #[error("its checksum does not match its contents")]
    Checksum,
    /// The body does not decompress.
    #[error("its contents do not decompress: {0}")]
    Decompress(String),
}

/// Encodes an entry.
pub fn encode(entry: &Entry) -> Vec<u8> {
    let mut compressed = Vec::new();
    {
        let mut encoder =
            flate2::write::DeflateEncoder::new(&mut compressed, flate2::Compression::fast());
        let _ = encoder.write_all(&entry.executable);
        let _ = encoder.finish();
    }
    let checksum: [u8; 32] = Sha256::digest(&compressed).into();
    let mut out = Vec::with_capacity(HEADER_LEN + compressed.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&entry.key.0);
    out.extend_from_slice(&checksum);
    out.extend_from_slice(&entry.compile_nanos.to_le_bytes());
    out.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
    out.extend_from_slice(&compressed);
    out
}

/// The compile time recorded in an entry's header, without reading its body.
pub fn header_compile_nanos(bytes: &[u8]) -> Option<u64> {
    (bytes.len() >= HEADER_LEN && bytes.starts_with(MAGIC)).then(|| u64_at(bytes, COMPILE_NANOS_AT))
}

/// Decodes and checks an entry read for `expected` (any key when `None`).
pub fn decode(bytes: &[u8], expected: Option<Key>) -> Result<Entry, EntryError> {
    if bytes.len() < HEADER_LEN || !bytes.starts_with(MAGIC) {
        return Err(EntryError::Malformed);
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(EntryError::ForeignVersion(version));
    }
    let key = Key(bytes[12..44].try_into().expect("32 bytes"));
    if expected.is_some_and(|k| k != key) {
        return Err(EntryError::WrongKey);
    }
    let checksum = &bytes[44..76];
    let compile_nanos = u64_at(bytes, COMPILE_NANOS_AT);
    let length = u64_at(bytes, COMPILE_NANOS_AT + 8);
    let body = &bytes[HEADER_LEN..];
    if body.len() as u64 != length {
        return Err(EntryError::Malformed);
    }
    if Sha256::digest(body).as_slice() != checksum {
        return Err(EntryError::Checksum);
    }
    let mut executable = Vec::new();
    flate2::read::DeflateDecoder::new(body)
        .read_to_end(&mut executable)
        .map_err(|e| EntryError::Decompress(e.to_string()))?;
    Ok(Entry {
        key,
        compile_nanos,
        executable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            key: Key([7; 32]),
            compile_nanos: 1234,
            executable: (0..5000u32).map(|i| (i % 251) as u8).collect(),
        }
    }

    #[test]
    fn entries_round_trip_and_damage_is_detected() {
        let e = entry();
        let bytes = encode(&e);
        assert!(bytes.len() < e.executable.len(), "compressed");
        assert_eq!(decode(&bytes, Some(e.key)).unwrap(), e);
        assert_eq!(header_compile_nanos(&bytes), Some(1234));
        assert_eq!(
            decode(&bytes[..bytes.len() - 1], None),
            Err(EntryError::Malformed)
        );
        assert_eq!(decode(&bytes[..20], None), Err(EntryError::Malformed));
        assert_eq!(
            decode(&bytes, Some(Key([8; 32]))),
            Err(EntryError::WrongKey)
        );
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&flipped, None), Err(EntryError::Checksum));
        let mut foreign = bytes.clone();
        foreign[8] = 9;
        assert_eq!(decode(&foreign, None), Err(EntryError::ForeignVersion(9)));
    }
}
