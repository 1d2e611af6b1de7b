//! Reading OCDBT's binary fields (little-endian integers, LEB128 varints,
//! byte strings) from a buffer, each overrun an error naming the file.

use std::path::Path;

use oxla::{Error, Result};

use crate::checkpoint::checkpoint_error;

/// A position in `data`, a decoded part of the file `file`.
pub(super) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    file: &'a Path,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, read from `file`.
    pub(super) fn new(data: &'a [u8], file: &'a Path) -> Self {
        Cursor { data, pos: 0, file }
    }

    /// An error saying `what` is wrong with the file.
    pub(super) fn corrupt(&self, what: impl std::fmt::Display) -> Error {
        checkpoint_error(self.file, format!("corrupt OCDBT data: {what}"))
    }

    /// The next `n` bytes.
    pub(super) fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return Err(self.corrupt(format!(
                "{what} needs {n} bytes at offset {}, only {} remain",
                self.pos,
                self.data.len() - self.pos
            )));
        };
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// One byte.
    pub(super) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }

    /// A little-endian `u32`.
    pub(super) fn u32_le(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A little-endian `u64`.
    pub(super) fn u64_le(&mut self, what: &str) -> Result<u64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.bytes(8, what)?);
        Ok(u64::from_le_bytes(b))
    }

    /// A LEB128 varint (at most ten bytes, within `u64`).
    pub(super) fn varint(&mut self, what: &str) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = self.u8(what)?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && byte > 1 {
                break;
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.corrupt(format!("{what} is a varint longer than 64 bits")))
    }

    /// A varint that must be a count or length within the data, as `usize`
    /// (each counted item takes at least one byte, so a count past the
    /// remaining bytes is corrupt rather than a huge allocation).
    pub(super) fn count(&mut self, what: &str) -> Result<usize> {
        let n = self.varint(what)?;
        if n > self.remaining() as u64 {
            return Err(self.corrupt(format!(
                "{what} {n} exceeds the {} bytes that remain",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    /// A varint that must fit `usize` (a length or offset into another file).
    pub(super) fn size(&mut self, what: &str) -> Result<usize> {
        let n = self.varint(what)?;
        usize::try_from(n).map_err(|_| self.corrupt(format!("{what} {n} is too large")))
    }

    /// `n` varints (one column of a node's table) as `usize` sizes.
    pub(super) fn sizes(&mut self, n: usize, what: &str) -> Result<Vec<usize>> {
        (0..n).map(|_| self.size(what)).collect()
    }

    /// The bytes not yet read.
    pub(super) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// An error unless every byte was read.
    pub(super) fn finish(&self, what: &str) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.corrupt(format!("{n} unexpected bytes after the {what}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_overruns() {
        let file = Path::new("x");
        let mut c = Cursor::new(&[0x80, 0x08, 0x80, 0xc2, 0xd7, 0x2f, 0x05], file);
        assert_eq!(c.varint("a").unwrap(), 1024);
        assert_eq!(c.varint("b").unwrap(), 100_000_000);
        assert!(c.count("c").is_err(), "5 items in 0 bytes");
        let mut c = Cursor::new(&[0xff; 11], file);
        assert!(c.varint("d").is_err());
        let mut c = Cursor::new(&[1, 2, 3], file);
        assert!(
            c.u32_le("e")
                .unwrap_err()
                .to_string()
                .contains("e needs 4 bytes")
        );
    }
}
