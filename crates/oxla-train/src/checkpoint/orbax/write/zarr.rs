//! Each array as a zarr array, as TensorStore writes one for Orbax: zarr
//! 2 (Orbax's default) as `.zarray` metadata (compact JSON, keys sorted)
//! and chunks keyed `0.0`, zstd-compressed at level 1 or raw; zarr 3 as
//! `zarr.json` and chunks keyed `c/0/0`, each a `sharding_indexed` shard
//! of one inner chunk (zstd level 3 or raw) with its index and CRC-32C.
//! Chunks are C order, little-endian.

use oxla::DType;
use serde_json::{Value as Json, json};

use super::super::chunks::{element_count, for_each_run, unravel};
use super::super::zarr::{KeyEncoding, v2_dtype_name};

/// The zstd level Orbax asks TensorStore for in zarr 2 (its `.zarray`
/// says so).
const ZSTD_LEVEL: i32 = 1;
/// The zstd level of Orbax's zarr 3 arrays (their `zarr.json` says so).
const ZARR3_ZSTD_LEVEL: i32 = 3;

/// The zarr format arrays are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    /// Zarr 2: `.zarray`, chunks `0.0`.
    V2,
    /// Zarr 3: `zarr.json`, one-chunk shards `c/0/0`.
    V3,
}

impl Format {
    /// The key of an array's metadata under its name.
    pub(super) fn metadata_key(self) -> &'static str {
        match self {
            Format::V2 => ".zarray",
            Format::V3 => "zarr.json",
        }
    }

    /// How chunk grid indices become keys.
    pub(super) fn keys(self) -> KeyEncoding {
        match self {
            Format::V2 => KeyEncoding::V2(".".to_string()),
            Format::V3 => KeyEncoding::Default("/".to_string()),
        }
    }

    /// The metadata text of an array of `dtype` and `shape` in chunks of
    /// `chunks`.
    pub(super) fn metadata(
        self,
        dtype: DType,
        shape: &[usize],
        chunks: &[usize],
        compression: bool,
    ) -> Vec<u8> {
        match self {
            Format::V2 => zarray(dtype, shape, chunks, compression),
            Format::V3 => zarr_json(dtype, shape, chunks, compression),
        }
    }

    /// A chunk's elements as stored.
    pub(super) fn encode_chunk(self, chunk: &[u8], compression: bool) -> std::io::Result<Vec<u8>> {
        match self {
            Format::V2 if compression => zstd::bulk::compress(chunk, ZSTD_LEVEL),
            Format::V2 => Ok(chunk.to_vec()),
            Format::V3 => {
                let inner = if compression {
                    zstd::bulk::compress(chunk, ZARR3_ZSTD_LEVEL)?
                } else {
                    chunk.to_vec()
                };
                Ok(one_chunk_shard(inner))
            }
        }
    }
}

/// A `sharding_indexed` shard holding one encoded inner chunk: the chunk,
/// then its index (offset 0 and length, little-endian `u64`s) and the
/// index's CRC-32C (little-endian).
fn one_chunk_shard(mut inner: Vec<u8>) -> Vec<u8> {
    let mut index = [0u8; 16];
    index[8..].copy_from_slice(&(inner.len() as u64).to_le_bytes());
    inner.extend_from_slice(&index);
    inner.extend_from_slice(&crc32c::crc32c(&index).to_le_bytes());
    inner
}

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
fn zarray(dtype: DType, shape: &[usize], chunks: &[usize], compression: bool) -> Vec<u8> {
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

/// The `zarr.json` text of an array of `dtype` and `shape` in chunks of
/// `chunks`, as TensorStore writes it for Orbax: one `sharding_indexed`
/// codec whose inner chunk is the whole chunk, `bytes` (little-endian,
/// no endianness for one-byte types) and optionally `zstd`; fill value 0.
fn zarr_json(dtype: DType, shape: &[usize], chunks: &[usize], compression: bool) -> Vec<u8> {
    let little = json!({"configuration": {"endian": "little"}, "name": "bytes"});
    let bytes = if dtype.byte_size() == 1 {
        json!({"name": "bytes"})
    } else {
        little.clone()
    };
    let mut codecs = vec![bytes];
    if compression {
        codecs.push(json!({
            "configuration": {"checksum": false, "level": ZARR3_ZSTD_LEVEL},
            "name": "zstd",
        }));
    }
    // Zarr 3's zero of each kind of type, as TensorStore spells it.
    let fill = if dtype == DType::Bool {
        json!(false)
    } else if dtype.is_complex() {
        json!([0.0, 0.0])
    } else if dtype.is_float() {
        json!(0.0)
    } else {
        json!(0)
    };
    let meta: Json = json!({
        "chunk_grid": {"configuration": {"chunk_shape": chunks}, "name": "regular"},
        "chunk_key_encoding": {"name": "default"},
        "codecs": [{
            "configuration": {
                "chunk_shape": chunks,
                "codecs": codecs,
                "index_codecs": [little, {"name": "crc32c"}],
            },
            "name": "sharding_indexed",
        }],
        "data_type": dtype.numpy_name(),
        "fill_value": fill,
        "node_type": "array",
        "shape": shape,
        "zarr_format": 3,
    });
    serde_json::to_vec(&meta).expect("JSON of numbers and strings")
}

/// Calls `put(key, chunk)` for each chunk of the block `bytes` (of
/// `shape`, `item`-byte elements, C order) in chunks of `chunks`, in C
/// order of the block's chunk grid: `key` is the chunk's key in `keys`
/// (zarr 2's `0.1`, `0` for a scalar) at its place in the array's grid,
/// the block's first chunk being at `first`; `chunk` its elements (C
/// order; past the block's edge, zeros).
pub(super) fn for_each_chunk<E>(
    bytes: &[u8],
    shape: &[usize],
    chunks: &[usize],
    item: usize,
    keys: &KeyEncoding,
    first: &[usize],
    mut put: impl FnMut(String, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let key = |position: &[usize]| {
        let at: Vec<usize> = position.iter().zip(first).map(|(p, f)| p + f).collect();
        keys.key(&at)
    };
    if chunks == shape {
        return put(key(&vec![0; shape.len()]), bytes);
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
        put(key(&position), &block)?;
    }
    Ok(())
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
        for_each_chunk(
            &bytes,
            &[2, 4],
            &[2, 2],
            1,
            &Format::V2.keys(),
            &[0, 0],
            put,
        )
        .unwrap();
        let want = vec![
            ("0.0".to_string(), vec![1, 2, 5, 6]),
            ("0.1".to_string(), vec![3, 4, 7, 8]),
        ];
        assert_eq!(got, want);
        let whole = |k: String, v: &[u8]| {
            assert_eq!((k.as_str(), v), ("0.0", &bytes[..]));
            Ok::<(), ()>(())
        };
        for_each_chunk(
            &bytes,
            &[2, 4],
            &[2, 4],
            1,
            &Format::V2.keys(),
            &[0, 0],
            whole,
        )
        .unwrap();
        // The same block as the second row of blocks of a larger array.
        let zarr3_keys = |k: String, _: &[u8]| {
            assert!(k == "c/1/0" || k == "c/1/1", "{k}");
            Ok::<(), ()>(())
        };
        for_each_chunk(
            &bytes,
            &[2, 4],
            &[2, 2],
            1,
            &Format::V3.keys(),
            &[1, 0],
            zarr3_keys,
        )
        .unwrap();
    }

    #[test]
    fn zarr3_shards_and_metadata_are_tensorstores() {
        // TensorStore's shard of two raw bfloat16 zeros for Orbax: the
        // chunk, offset 0, length 4, and the index's CRC-32C.
        let shard = Format::V3.encode_chunk(&[0; 4], false).unwrap();
        let want = "000000000000000000000000040000000000000087186d63";
        let hex: String = shard.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, want);
        let text =
            String::from_utf8(Format::V3.metadata(DType::F32, &[6, 4], &[3, 2], true)).unwrap();
        assert_eq!(
            text,
            r#"{"chunk_grid":{"configuration":{"chunk_shape":[3,2]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"configuration":{"chunk_shape":[3,2],"codecs":[{"configuration":{"endian":"little"},"name":"bytes"},{"configuration":{"checksum":false,"level":3},"name":"zstd"}],"index_codecs":[{"configuration":{"endian":"little"},"name":"bytes"},{"name":"crc32c"}]},"name":"sharding_indexed"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[6,4],"zarr_format":3}"#
        );
        let text = String::from_utf8(Format::V3.metadata(DType::Bool, &[2], &[2], false)).unwrap();
        assert!(
            text.contains(r#""codecs":[{"name":"bytes"}]"#)
                && text.contains(r#""fill_value":false"#),
            "{text}"
        );
    }
}
