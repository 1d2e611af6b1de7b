//! The on-disk entry: a header (magic, format version, key, body checksum,
//! compile time, body length), the deflate-compressed serialized
//! executable, and an authentication tag: HMAC-SHA256 of all before it
//! under a shared cache's key (zeros in a private cache, which does not
//! read it).

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use crate::key::Key;
use crate::sharing::CacheKey;

/// The first bytes of every entry.
pub const MAGIC: &[u8; 8] = b"OXLACC\x00\x01";
/// The entry format; part of every key too, so a new format never reads an old entry.
pub const FORMAT_VERSION: u32 = 2;
/// Bytes before the body: magic, version, key, checksum, compile nanos, length.
pub(crate) const HEADER_LEN: usize = 8 + 4 + 32 + 32 + 8 + 8;
/// Bytes of the authentication tag after the body.
const TAG_LEN: usize = 32;
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
    /// A shared cache's entry whose tag is not the key's: written by
    /// someone without the key, or altered since.
    #[error(
        "its authentication tag is not the shared cache key's (written without the key, or altered)"
    )]
    Unauthenticated,
}

/// Encodes an entry, tagged under `key` (a shared cache's) or with zeros.
pub fn encode(entry: &Entry, key: Option<&CacheKey>) -> Vec<u8> {
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
    let tag = key.map_or([0; TAG_LEN], |k| k.tag(&out));
    out.extend_from_slice(&tag);
    out
}

/// The compile time recorded in an entry's header, without reading its body.
pub fn header_compile_nanos(bytes: &[u8]) -> Option<u64> {
    (bytes.len() >= HEADER_LEN && bytes.starts_with(MAGIC)).then(|| u64_at(bytes, COMPILE_NANOS_AT))
}

/// Decodes and checks an entry read for `expected` (any key when `None`);
/// with a shared cache's `key`, its tag first, so that nothing an
/// unauthenticated entry holds is decompressed or handed on.
pub fn decode(
    bytes: &[u8],
    expected: Option<Key>,
    key: Option<&CacheKey>,
) -> Result<Entry, EntryError> {
    if bytes.len() < HEADER_LEN + TAG_LEN || !bytes.starts_with(MAGIC) {
        return Err(EntryError::Malformed);
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(EntryError::ForeignVersion(version));
    }
    let (tagged, tag) = bytes.split_at(bytes.len() - TAG_LEN);
    if key.is_some_and(|k| !k.verifies(tagged, tag)) {
        return Err(EntryError::Unauthenticated);
    }
    let entry_key = Key(bytes[12..44].try_into().expect("32 bytes"));
    if expected.is_some_and(|k| k != entry_key) {
        return Err(EntryError::WrongKey);
    }
    let checksum = &bytes[44..76];
    let compile_nanos = u64_at(bytes, COMPILE_NANOS_AT);
    let length = u64_at(bytes, COMPILE_NANOS_AT + 8);
    let body = &tagged[HEADER_LEN..];
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
        key: entry_key,
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
        let bytes = encode(&e, None);
        assert!(bytes.len() < e.executable.len(), "compressed");
        assert_eq!(decode(&bytes, Some(e.key), None).unwrap(), e);
        assert_eq!(header_compile_nanos(&bytes), Some(1234));
        assert_eq!(
            decode(&bytes[..bytes.len() - 1], None, None),
            Err(EntryError::Malformed)
        );
        assert_eq!(decode(&bytes[..20], None, None), Err(EntryError::Malformed));
        assert_eq!(
            decode(&bytes, Some(Key([8; 32])), None),
            Err(EntryError::WrongKey)
        );
        let mut flipped = bytes.clone();
        flipped[HEADER_LEN + 3] ^= 1;
        assert_eq!(decode(&flipped, None, None), Err(EntryError::Checksum));
        let mut foreign = bytes.clone();
        foreign[8] = 9;
        assert_eq!(
            decode(&foreign, None, None),
            Err(EntryError::ForeignVersion(9))
        );
    }

    #[test]
    fn a_shared_entry_needs_the_keys_tag() {
        let e = entry();
        let key = CacheKey::new(*b"sixteen byte key").unwrap();
        let tagged = encode(&e, Some(&key));
        assert_eq!(decode(&tagged, Some(e.key), Some(&key)).unwrap(), e);
        let other = CacheKey::new(*b"another 16B key!").unwrap();
        assert_eq!(
            decode(&tagged, Some(e.key), Some(&other)),
            Err(EntryError::Unauthenticated)
        );
        // Untagged (a private cache's) and altered entries are refused,
        // the altered one before its checksum is read.
        let untagged = encode(&e, None);
        assert_eq!(
            decode(&untagged, Some(e.key), Some(&key)),
            Err(EntryError::Unauthenticated)
        );
        let mut altered = tagged.clone();
        altered[HEADER_LEN + 3] ^= 1;
        assert_eq!(
            decode(&altered, Some(e.key), Some(&key)),
            Err(EntryError::Unauthenticated)
        );
        assert_eq!(
            CacheKey::new(*b"short").unwrap_err().to_string(),
            "a shared cache's key needs at least 16 bytes, this one has 5"
        );
    }
}
