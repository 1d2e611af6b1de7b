//! TFRecord framing, the container of an event file: each record is its
//! length (u64, little-endian), the masked CRC-32C of those 8 bytes, the
//! data, and the masked CRC-32C of the data.

use std::io::Write;
use std::path::Path;

use super::Error;

/// The CRC-32C of `bytes`, masked as TFRecord's (rotated right by 15 bits
/// plus a constant, so a CRC of data holding CRCs stays well mixed).
pub(crate) fn masked_crc(bytes: &[u8]) -> u32 {
    let crc = crc32c::crc32c(bytes);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Writes one record holding `data`.
pub(crate) fn write_record(out: &mut impl Write, data: &[u8]) -> std::io::Result<()> {
    let length = (data.len() as u64).to_le_bytes();
    out.write_all(&length)?;
    out.write_all(&masked_crc(&length).to_le_bytes())?;
    out.write_all(data)?;
    out.write_all(&masked_crc(data).to_le_bytes())
}

/// The data of each record of `bytes`, the contents of the file `path`
/// (named in errors): a truncated record or a checksum that does not match
/// is an [`Error::Corrupt`] naming the byte offset of the record.
pub(crate) fn read_records(path: &Path, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let corrupt = |offset: usize, message: String| Error::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        message,
    };
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let header = bytes.get(at..at + 12).ok_or_else(|| {
            corrupt(
                at,
                format!(
                    "a truncated record header ({} of 12 bytes)",
                    bytes.len() - at
                ),
            )
        })?;
        let (length, length_crc) = header.split_at(8);
        if masked_crc(length) != u32_le(length_crc) {
            return Err(corrupt(
                at,
                "the checksum of the record length does not match".into(),
            ));
        }
        let length = u64::from_le_bytes(length.try_into().expect("8 bytes"));
        let start = at + 12;
        let end = usize::try_from(length)
            .ok()
            .and_then(|n| start.checked_add(n))
            .filter(|&end| end.checked_add(4).is_some_and(|e| e <= bytes.len()))
            .ok_or_else(|| {
                corrupt(
                    at,
                    format!(
                        "a truncated record: its length is {length} bytes, {} remain in the file",
                        bytes.len() - start
                    ),
                )
            })?;
        let data = &bytes[start..end];
        if masked_crc(data) != u32_le(&bytes[end..end + 4]) {
            return Err(corrupt(
                at,
                "the checksum of the record data does not match".into(),
            ));
        }
        records.push(data.to_vec());
        at = end + 4;
    }
    Ok(records)
}

/// A little-endian u32 of 4 bytes.
fn u32_le(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_flipped_bit_is_caught() {
        let mut file = Vec::new();
        write_record(&mut file, b"first").unwrap();
        write_record(&mut file, b"").unwrap();
        write_record(&mut file, b"third record").unwrap();
        let path = Path::new("mem");
        let records = read_records(path, &file).unwrap();
        assert_eq!(
            records,
            vec![b"first".to_vec(), vec![], b"third record".to_vec()]
        );
        file[14] ^= 1;
        let e = read_records(path, &file).unwrap_err().to_string();
        assert!(e.contains("offset 0") && e.contains("record data"), "{e}");
        let e = read_records(path, &file[..5]).unwrap_err().to_string();
        assert!(e.contains("truncated record header"), "{e}");
    }
}
