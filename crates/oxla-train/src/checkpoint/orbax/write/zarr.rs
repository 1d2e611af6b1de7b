//! Each array as a zarr 2 array, as TensorStore writes one for Orbax: the
//! `.zarray` metadata (compact JSON, keys sorted) and the chunks in C order,
//! little-endian, zstd-compressed at level 1 or raw, keyed `0.0`-style.

use oxla::DType;

use super::super::chunks::{element_count, for_each_run, unravel};
use super::super::zarr::{KeyEncoding, v2_dtype_name};

/// The zstd level Orbax asks TensorStore for (its `.zarray` says so).
const ZSTD_LEVEL: i32 = 1;

/// The chunk shape Orbax's `choose_chunk_shape` picks for an array of
/// `shape` with `item`-byte elements written whole by one process: the
/// whole array without a byte limit; with one, the largest dimension of the
/// chunk (the first of equals) cut to its next smaller divisor until the
/// chunk holds at most `limit` bytes. An error when one element is more.
pub(super) fn chunk_shape(
    shape: &[usize],
    item: usize,
    limit: Option<usize>,
) -> Result<Vec<usize>, String> {
    let Some(limit) = limit else {
        return Ok(shape.to_vec());
    };
    if limit < item {
        return Err(format!(
            "a chunk byte size of {limit} is less than one {item}-byte element"
        ));
    }
    let most = limit / item;
    let divisors: Vec<Vec<usize>> = shape.iter().map(|&d| divisors(d)).collect();
    let mut at: Vec<usize> = divisors.iter().map(|d| d.len() - 1).collect();
    let mut chunk = shape.to_vec();
    while chunk.iter().product::<usize>() > most {
        let largest = (0..chunk.len())
            .filter(|&d| chunk[d] > 1)
            .max_by(|&a, &b| chunk[a].cmp(&chunk[b]).then(b.cmp(&a)));
        let Some(d) = largest else { break };
        at[d] -= 1;
        chunk[d] = divisors[d][at[d]];
    }
    Ok(chunk)
}

/// The divisors of `n` (at least 1), ascending.
fn divisors(n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut i = 1;
    while i * i <= n {
        if n.is_multiple_of(i) {
            low.push(i);
            if i != n / i {
                high.push(n / i);
            }
        }
        i += 1;
    }
    low.extend(high.into_iter().rev());
    low
}

/// The `.zarray` text of an array of `dtype` and `shape` in chunks of
/// `chunks`, as TensorStore writes it.
pub(super) fn zarray(
    dtype: DType,
    shape: &[usize],
    chunks: &[usize],
    compression: bool,
) -> Vec<u8> {
    let compressor = if compression {
        serde_json::json!({"id": "zstd", "level": ZSTD_LEVEL})
    } else {
        serde_json::Value::Null
    };
    // serde_json's maps keep their keys sorted, as TensorStore writes them.
    let meta = serde_json::json!({
        "chunks": chunks,
        "compressor": compressor,
        "dimension_separator": ".",
        "dtype": v2_dtype_name(dtype),
        "fill_value": null,
        "filters": null,
        "order": "C",
        "shape": shape,
        "zarr_format": 2,
    });
    serde_json::to_vec(&meta).expect("JSON of numbers and strings")
}

/// Calls `put(key, chunk)` for each chunk of the array `bytes` (of
/// `shape`, `item`-byte elements, C order) in chunks of `chunks`, in C
/// order of the chunk grid: `key` is the chunk's zarr 2 key (`0.1`, `0`
/// for a scalar), `chunk` its elements (C order; past the array's edge,
/// zeros).
pub(super) fn for_each_chunk<E>(
    bytes: &[u8],
    shape: &[usize],
    chunks: &[usize],
    item: usize,
    mut put: impl FnMut(String, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let keys = KeyEncoding::V2(".".to_string());
    if chunks == shape {
        return put(keys.key(&vec![0; shape.len()]), bytes);
    }
    let grid: Vec<usize> = shape
        .iter()
        .zip(chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let count = element_count(&grid).expect("the grid of an array in memory");
    let chunk_bytes = element_count(chunks).expect("a chunk of an array in memory") * item;
    let mut block = vec![0; chunk_bytes];
    for i in 0..count {
        let position = unravel(i, &grid);
        let origin: Vec<usize> = position.iter().zip(chunks).map(|(p, c)| p * c).collect();
        block.fill(0);
        for_each_run(shape, chunks, &origin, item, |b, a, n| {
            block[b..b + n].copy_from_slice(&bytes[a..a + n]);
        });
        put(keys.key(&position), &block)?;
    }
    Ok(())
}

/// A chunk's elements as stored: zstd-compressed (level 1) or as they are.
pub(super) fn encode_chunk(chunk: &[u8], compression: bool) -> std::io::Result<Vec<u8>> {
    if compression {
        zstd::bulk::compress(chunk, ZSTD_LEVEL)
    } else {
        Ok(chunk.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_shapes_are_orbaxs() {
        assert_eq!(divisors(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), vec![1]);
        // Orbax's choice for (300, 250) float32 with chunk_byte_size=40_000.
        assert_eq!(
            chunk_shape(&[300, 250], 4, Some(40_000)).unwrap(),
            vec![100, 50]
        );
        assert_eq!(chunk_shape(&[300, 250], 4, None).unwrap(), vec![300, 250]);
        assert_eq!(chunk_shape(&[], 4, Some(4)).unwrap(), Vec::<usize>::new());
        assert_eq!(chunk_shape(&[7, 7], 4, Some(4)).unwrap(), vec![1, 1]);
        assert!(chunk_shape(&[8], 4, Some(3)).is_err());
    }

    #[test]
    fn chunks_are_blocks_of_the_array() {
        // A 2x4 u8 array in 2x2 chunks: 0.0 holds columns 0-1, 0.1 columns 2-3.
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut got = Vec::new();
        let put = |k: String, v: &[u8]| {
            got.push((k, v.to_vec()));
            Ok::<(), ()>(())
        };
        for_each_chunk(&bytes, &[2, 4], &[2, 2], 1, put).unwrap();
        let want = vec![
            ("0.0".to_string(), vec![1, 2, 5, 6]),
            ("0.1".to_string(), vec![3, 4, 7, 8]),
        ];
        assert_eq!(got, want);
        let whole = |k: String, v: &[u8]| {
            assert_eq!((k.as_str(), v), ("0.0", &bytes[..]));
            Ok::<(), ()>(())
        };
        for_each_chunk(&bytes, &[2, 4], &[2, 4], 1, whole).unwrap();
    }
}
