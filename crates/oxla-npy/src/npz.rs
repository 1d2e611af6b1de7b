//! NumPy's `.npz` archives: a zip file of `.npy` members, one per named
//! array, as `np.savez` (stored) and `np.savez_compressed` (deflated)
//! write them and `np.load` reads them.

use std::io::{Read, Seek, Write};

use crate::{HostArray, NpyError, Result};

/// How the members of an archive are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as they are, as `np.savez` writes them.
    Stored,
    /// Deflated, as `np.savez_compressed` writes them.
    Deflated,
}

fn archive_error(e: impl std::fmt::Display) -> NpyError {
    NpyError::Archive(e.to_string())
}

/// Writes `arrays` to `writer` as a `.npz` archive: member `<name>.npy`
/// for each `(name, array)`, in the order given. Names must be distinct.
///
/// ```
/// use oxla_dtype::ElementType;
/// use oxla_npy::HostArray;
/// use oxla_npy::npz::{Compression, read_npz, write_npz};
/// # fn main() -> oxla_npy::Result<()> {
/// let x = HostArray::new(ElementType::U8, vec![3], vec![1, 2, 3]);
/// let mut file = std::io::Cursor::new(Vec::new());
/// write_npz(&mut file, &[("x", &x)], Compression::Deflated)?;
/// let back = read_npz(file)?;
/// assert_eq!(back, vec![("x".to_string(), x)]);
/// # Ok(())
/// # }
/// ```
pub fn write_npz<W: Write + Seek>(
    writer: W,
    arrays: &[(&str, &HostArray)],
    compression: Compression,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    if let Some((name, _)) = arrays.iter().find(|(name, _)| !seen.insert(*name)) {
        return Err(NpyError::Archive(format!(
            "two arrays are named {name:?}; each member of an archive needs its own name"
        )));
    }
    let method = match compression {
        Compression::Stored => zip::CompressionMethod::Stored,
        Compression::Deflated => zip::CompressionMethod::Deflated,
    };
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .large_file(true);
    let mut zip = zip::ZipWriter::new(writer);
    for (name, array) in arrays {
        zip.start_file(format!("{name}.npy"), options)
            .map_err(archive_error)?;
        zip.write_all(&array.to_npy_bytes())
            .map_err(archive_error)?;
    }
    zip.finish().map_err(archive_error)?;
    Ok(())
}

/// The arrays of a `.npz` archive (stored or deflated members), each
/// named as its member without the `.npy` suffix, in the archive's order.
pub fn read_npz<R: Read + Seek>(reader: R) -> Result<Vec<(String, HostArray)>> {
    let mut zip = zip::ZipArchive::new(reader).map_err(archive_error)?;
    let mut arrays = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(archive_error)?;
        let member_name = member.name().map_err(archive_error)?.to_string();
        let name = member_name
            .strip_suffix(".npy")
            .unwrap_or(&member_name)
            .to_string();
        let mut data = Vec::new();
        member.read_to_end(&mut data).map_err(archive_error)?;
        let array = HostArray::from_npy_bytes(&data)
            .map_err(|e| NpyError::Archive(format!("member {member_name}: {e}")))?;
        arrays.push((name, array));
    }
    Ok(arrays)
}
