//! The primitive encodings of MLIR bytecode: prefix varints (the number of
//! trailing zero bits of the first byte counts the bytes that follow),
//! zigzag signed varints, null-terminated strings, sized blobs, sections.

use super::VhloError;

/// Reads encoded values from a byte slice.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn truncated(&self, what: &str) -> VhloError {
        VhloError(format!("truncated {what} at byte {}", self.pos))
    }

    pub(crate) fn byte(&mut self) -> Result<u8, VhloError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.truncated("byte"))?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], VhloError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| self.truncated("bytes"))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, VhloError> {
        let first = self.byte()?;
        if first & 1 == 1 {
            return Ok(u64::from(first >> 1));
        }
        if first == 0 {
            let rest = self.bytes(8)?;
            return Ok(u64::from_le_bytes(rest.try_into().expect("8 bytes")));
        }
        let extra = first.trailing_zeros() as usize;
        let rest = self.bytes(extra)?;
        let mut value = u64::from(first);
        for (i, b) in rest.iter().enumerate() {
            value |= u64::from(*b) << (8 * (i + 1));
        }
        Ok(value >> (extra + 1))
    }

    /// A varint used as an index or count.
    pub(crate) fn index(&mut self) -> Result<usize, VhloError> {
        usize::try_from(self.varint()?).map_err(|_| VhloError("an index overflows".into()))
    }

    /// A count of items that each take at least one more byte: an error
    /// when the bytes left cannot hold them.
    pub(crate) fn count(&mut self) -> Result<usize, VhloError> {
        let n = self.index()?;
        if n > self.data.len().saturating_sub(self.pos) {
            return Err(VhloError(format!(
                "a count of {n} past the end of its data"
            )));
        }
        Ok(n)
    }

    /// A varint whose lowest bit is a flag: `(value, flag)`.
    pub(crate) fn varint_with_flag(&mut self) -> Result<(u64, bool), VhloError> {
        let v = self.varint()?;
        Ok((v >> 1, v & 1 == 1))
    }

    pub(crate) fn signed_varint(&mut self) -> Result<i64, VhloError> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub(crate) fn cstr(&mut self) -> Result<&'a str, VhloError> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.truncated("string"))?;
        let s = std::str::from_utf8(&rest[..end])
            .map_err(|_| VhloError(format!("a string at byte {} is not UTF-8", self.pos)))?;
        self.pos += end + 1;
        Ok(s)
    }

    pub(crate) fn blob(&mut self) -> Result<&'a [u8], VhloError> {
        let n = self.index()?;
        self.bytes(n)
    }

    /// A section: its id and its data (alignment padding skipped).
    pub(crate) fn section(&mut self) -> Result<(u8, &'a [u8]), VhloError> {
        let id_and_alignment = self.byte()?;
        let length = self.index()?;
        if id_and_alignment & 0x80 != 0 {
            let alignment = self.index()?;
            if alignment == 0 || !alignment.is_power_of_two() {
                return Err(VhloError(format!("bad section alignment {alignment}")));
            }
            while !self.pos.is_multiple_of(alignment) {
                self.byte()?;
            }
        }
        Ok((id_and_alignment & 0x7f, self.bytes(length)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length_decode() {
        // 1 byte: value << 1 | 1; 2 bytes: value << 2 | 0b10.
        let mut r = Reader::new(&[0x0d, 0xa3, 0x02, 0x02, 0x00, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(r.varint().unwrap(), 6);
        assert_eq!(r.varint().unwrap(), 81);
        assert_eq!(r.varint().unwrap(), 128);
        assert_eq!(r.varint().unwrap(), 1);
        assert!(r.at_end());
        let mut r = Reader::new(&[0x05, 0x03, 0x07]);
        assert_eq!(r.signed_varint().unwrap(), 1);
        assert_eq!(r.signed_varint().unwrap(), -1);
        assert_eq!(r.signed_varint().unwrap(), -2);
        assert!(Reader::new(&[0x02]).varint().is_err());
    }
}
