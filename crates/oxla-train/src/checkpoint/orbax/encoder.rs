//! Writing OCDBT's binary fields (little-endian integers, LEB128 varints,
//! byte strings) into a buffer: what [`Cursor`](super::cursor::Cursor)
//! reads.

/// A growing buffer of encoded fields.
#[derive(Default)]
pub(super) struct Encoder {
    out: Vec<u8>,
}

impl Encoder {
    /// An empty buffer.
    pub(super) fn new() -> Self {
        Encoder::default()
    }

    /// Bytes as they are.
    pub(super) fn bytes(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// One byte.
    pub(super) fn u8(&mut self, value: u8) {
        self.out.push(value);
    }

    /// A little-endian `u32`.
    pub(super) fn u32_le(&mut self, value: u32) {
        self.bytes(&value.to_le_bytes());
    }

    /// A little-endian `u64`.
    pub(super) fn u64_le(&mut self, value: u64) {
        self.bytes(&value.to_le_bytes());
    }

    /// A LEB128 varint.
    pub(super) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.out.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.out.push(value as u8);
    }

    /// A varint per value (one column of a table).
    pub(super) fn varints(&mut self, values: impl IntoIterator<Item = u64>) {
        for value in values {
            self.varint(value);
        }
    }

    /// The encoded bytes.
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::cursor::Cursor;
    use super::*;

    #[test]
    fn what_is_encoded_decodes() {
        let values = [
            0,
            1,
            127,
            128,
            1024,
            100_000_000,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut e = Encoder::new();
        e.varints(values);
        e.u32_le(0xdead_beef);
        e.u64_le(7);
        e.u8(9);
        let bytes = e.into_bytes();
        assert_eq!(&bytes[..5], &[0, 1, 0x7f, 0x80, 0x01]);
        let mut c = Cursor::new(&bytes, Path::new("x"));
        for v in values {
            assert_eq!(c.varint("v").unwrap(), v);
        }
        assert_eq!(c.u32_le("u32").unwrap(), 0xdead_beef);
        assert_eq!(c.u64_le("u64").unwrap(), 7);
        assert_eq!(c.u8("u8").unwrap(), 9);
        c.finish("test").unwrap();
    }
}
