//! Decoding a zarr chunk's stored bytes by its codec chain, and moving
//! blocks between a chunk and the whole array (C order, little-endian
//! elements): placed in when reading, cut out when writing.

use oxla::DType;

use super::record::zstd_decode;
use super::zarr::{Codec, Problem};

/// The elements (C order, little-endian) of a chunk of `shape` stored as
/// `data` by `codecs`; a missing inner chunk of a shard holds `fill`.
pub(super) fn decode_chunk(
    codecs: &[Codec],
    mut data: Vec<u8>,
    shape: &[usize],
    dtype: DType,
    fill: &[u8],
) -> Result<Vec<u8>, Problem> {
    let item = dtype.byte_size();
    let raw = element_count(shape)?
        .checked_mul(item)
        .ok_or("the chunk's size overflows")?;
    let Some((array_to_bytes, bytes_to_bytes)) = codecs.split_first() else {
        return Err("an empty codec chain".to_string());
    };
    // A shard's inner chunks may each grow a little when compressed.
    let limit = raw.saturating_mul(2).saturating_add(1 << 20);
    for codec in bytes_to_bytes.iter().rev() {
        data = match codec {
            Codec::Zstd => zstd_decode(&data, limit).map_err(|e| format!("zstd: {e}"))?,
            Codec::Crc32c => strip_crc32c(data)?,
            Codec::Bytes { .. } | Codec::Sharding { .. } => {
                return Err("an array-to-bytes codec after the first codec".to_string());
            }
        };
    }
    match array_to_bytes {
        Codec::Bytes { big_endian } => {
            if data.len() != raw {
                return Err(format!(
                    "a chunk of shape {shape:?} {dtype} holds {} bytes, not {raw}",
                    data.len()
                ));
            }
            if *big_endian {
                let part = dtype.real_part().byte_size();
                data.chunks_exact_mut(part).for_each(<[u8]>::reverse);
            }
            Ok(data)
        }
        Codec::Sharding {
            chunk_shape,
            codecs,
            index_codecs,
            index_at_end,
        } => decode_shard(
            &data,
            shape,
            chunk_shape,
            codecs,
            index_codecs,
            *index_at_end,
            dtype,
            fill,
        ),
        Codec::Zstd | Codec::Crc32c => {
            Err("a chain whose first codec is bytes-to-bytes".to_string())
        }
    }
}

/// A shard of `shape`: its inner chunks of `chunk_shape`, located by the
/// index (an (offset, length) pair of little-endian `u64`s per inner
/// chunk, `u64::MAX` twice for a missing one).
#[allow(clippy::too_many_arguments)]
fn decode_shard(
    data: &[u8],
    shape: &[usize],
    chunk_shape: &[usize],
    codecs: &[Codec],
    index_codecs: &[Codec],
    index_at_end: bool,
    dtype: DType,
    fill: &[u8],
) -> Result<Vec<u8>, Problem> {
    if chunk_shape.len() != shape.len() || chunk_shape.contains(&0) {
        return Err(format!(
            "inner chunk shape {chunk_shape:?} does not fit the shard shape {shape:?}"
        ));
    }
    let grid: Vec<usize> = shape
        .iter()
        .zip(chunk_shape)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let count = element_count(&grid)?;
    let checksummed = index_codecs.iter().any(|c| matches!(c, Codec::Crc32c));
    let index_len = count
        .checked_mul(16)
        .and_then(|n| n.checked_add(if checksummed { 4 } else { 0 }))
        .filter(|&n| n <= data.len())
        .ok_or_else(|| format!("a shard of {} bytes is shorter than its index", data.len()))?;
    let index = if index_at_end {
        &data[data.len() - index_len..]
    } else {
        &data[..index_len]
    };
    let big_endian_index = index_codecs
        .iter()
        .any(|c| matches!(c, Codec::Bytes { big_endian: true }));
    let mut index = index.to_vec();
    if checksummed {
        index = strip_crc32c(index).map_err(|e| format!("shard index: {e}"))?;
    }
    let item = dtype.byte_size();
    let mut out = fill.repeat(element_count(shape)?);
    for (i, pair) in index.chunks_exact(16).enumerate() {
        let word = |b: &[u8]| {
            let bytes: [u8; 8] = b.try_into().expect("eight bytes");
            if big_endian_index {
                u64::from_be_bytes(bytes)
            } else {
                u64::from_le_bytes(bytes)
            }
        };
        let (offset, length) = (word(&pair[..8]), word(&pair[8..]));
        if offset == u64::MAX && length == u64::MAX {
            continue;
        }
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(length).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= data.len())
            .ok_or_else(|| {
                format!(
                    "inner chunk {i} at offset {offset} of {length} bytes lies past the \
                     {}-byte shard",
                    data.len()
                )
            })?;
        let inner = decode_chunk(codecs, data[range].to_vec(), chunk_shape, dtype, fill)?;
        let position = unravel(i, &grid);
        let origin: Vec<usize> = position
            .iter()
            .zip(chunk_shape)
            .map(|(p, c)| p * c)
            .collect();
        copy_region(&mut out, shape, &inner, chunk_shape, &origin, item);
    }
    Ok(out)
}

/// `data` without its trailing CRC-32C, which must match.
fn strip_crc32c(mut data: Vec<u8>) -> Result<Vec<u8>, Problem> {
    if data.len() < 4 {
        return Err("a crc32c-coded value shorter than its checksum".to_string());
    }
    let footer = data.split_off(data.len() - 4);
    let stored = u32::from_le_bytes([footer[0], footer[1], footer[2], footer[3]]);
    let computed = crc32c::crc32c(&data);
    if stored != computed {
        return Err(format!(
            "CRC-32C {computed:#010x} of the data, stored {stored:#010x}"
        ));
    }
    Ok(data)
}

/// The number of elements of `shape`.
pub(super) fn element_count(shape: &[usize]) -> Result<usize, Problem> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("shape {shape:?} has too many elements"))
}

/// The multi-index of the C-order position `flat` in a grid of `grid`.
pub(super) fn unravel(mut flat: usize, grid: &[usize]) -> Vec<usize> {
    let mut index = vec![0; grid.len()];
    for (i, &g) in grid.iter().enumerate().rev() {
        index[i] = flat % g;
        flat /= g;
    }
    index
}

/// Copies the part of the block `src` (of `src_shape`, placed at
/// `origin`) that lies inside `dst` (of `dst_shape`), elements of `item`
/// bytes, both C order.
pub(super) fn copy_region(
    dst: &mut [u8],
    dst_shape: &[usize],
    src: &[u8],
    src_shape: &[usize],
    origin: &[usize],
    item: usize,
) {
    for_each_run(dst_shape, src_shape, origin, item, |block, array, n| {
        dst[array..array + n].copy_from_slice(&src[block..block + n]);
    });
}

/// Calls `run(block_offset, array_offset, bytes)` for each contiguous run
/// of the part of a block of `block_shape`, placed at `origin` in an array
/// of `array_shape`, that lies inside the array: where the run starts in
/// the block's bytes and in the array's (both C order, elements of `item`
/// bytes). Reading a chunk copies runs one way, writing one the other.
pub(super) fn for_each_run(
    array_shape: &[usize],
    block_shape: &[usize],
    origin: &[usize],
    item: usize,
    mut run: impl FnMut(usize, usize, usize),
) {
    let rank = array_shape.len();
    if rank == 0 {
        run(0, 0, item);
        return;
    }
    let extent: Vec<usize> = (0..rank)
        .map(|d| block_shape[d].min(array_shape[d].saturating_sub(origin[d])))
        .collect();
    if extent.contains(&0) {
        return;
    }
    let strides = |shape: &[usize]| {
        let mut s = vec![1usize; rank];
        for d in (0..rank - 1).rev() {
            s[d] = s[d + 1] * shape[d + 1];
        }
        s
    };
    let (block_strides, array_strides) = (strides(block_shape), strides(array_shape));
    let row = extent[rank - 1] * item;
    let rows = element_count(&extent[..rank - 1]).unwrap_or(0);
    for r in 0..rows {
        let at = unravel(r, &extent[..rank - 1]);
        let (mut b, mut a) = (0, origin[rank - 1]);
        for axis in 0..rank - 1 {
            b += at[axis] * block_strides[axis];
            a += (origin[axis] + at[axis]) * array_strides[axis];
        }
        run(b * item, a * item, row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_chunks_are_clipped() {
        // A 3x3 array of u8 from 2x2 chunks: the chunk at (1, 1) holds one
        // element inside the array.
        let mut dst = vec![0u8; 9];
        copy_region(&mut dst, &[3, 3], &[1, 2, 3, 4], &[2, 2], &[0, 0], 1);
        copy_region(&mut dst, &[3, 3], &[5, 6, 7, 8], &[2, 2], &[2, 2], 1);
        assert_eq!(dst, vec![1, 2, 0, 3, 4, 0, 0, 0, 5]);
    }

    #[test]
    fn big_endian_and_wrong_sizes() {
        let codecs = [Codec::Bytes { big_endian: true }];
        let got = decode_chunk(&codecs, vec![0, 1, 0, 2], &[2], DType::I16, &[0, 0]).unwrap();
        assert_eq!(got, vec![1, 0, 2, 0]);
        assert!(decode_chunk(&codecs, vec![0, 1, 0], &[2], DType::I16, &[0, 0]).is_err());
    }
}
