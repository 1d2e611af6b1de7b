//! Zarr arrays (format 2 `.zarray` and format 3 `zarr.json` metadata) as
//! TensorStore writes them for Orbax: the metadata as a dtype, a shape, a
//! regular chunk grid, a fill value and a codec chain; chunks decoded by
//! that chain (raw little- or big-endian bytes, zstd, CRC-32C, and zarr
//! 3's `sharding_indexed`) and assembled in C order. Zarr 2's dtype names
//! serve the writer too.

use oxla::DType;
use serde_json::Value as Json;

/// A failure to read an array, said without the file's name (the caller
/// adds it).
pub(super) type Problem = String;

/// A zarr array's metadata.
#[derive(Clone, Debug)]
pub(super) struct ArrayMeta {
    /// The element type.
    pub dtype: DType,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The chunk grid's cell shape.
    pub chunk_shape: Vec<usize>,
    /// One element of the fill value, little-endian.
    pub fill: Vec<u8>,
    /// How a chunk's grid index becomes its key.
    pub keys: KeyEncoding,
    /// How a chunk's stored bytes become its elements.
    pub codecs: Vec<Codec>,
}

/// A chunk key encoding.
#[derive(Clone, Debug)]
pub(super) enum KeyEncoding {
    /// Zarr 2's, and zarr 3's `v2`: the indices joined by the separator
    /// (`0.0`; `0` for a scalar).
    V2(String),
    /// Zarr 3's `default`: `c` and each index after the separator
    /// (`c/0/0`; `c` for a scalar).
    Default(String),
}

impl KeyEncoding {
    /// The key of the chunk at grid index `index`.
    pub(super) fn key(&self, index: &[usize]) -> String {
        let joined = |sep: &str| {
            index
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self {
            KeyEncoding::V2(_) if index.is_empty() => "0".to_string(),
            KeyEncoding::V2(sep) => joined(sep),
            KeyEncoding::Default(_) if index.is_empty() => "c".to_string(),
            KeyEncoding::Default(sep) => format!("c{sep}{}", joined(sep)),
        }
    }
}

/// One step of a codec chain, in encoding order.
#[derive(Clone, Debug)]
pub(super) enum Codec {
    /// Elements as bytes (array to bytes); big-endian or little.
    Bytes { big_endian: bool },
    /// Zarr 3's sharding (array to bytes): inner chunks of `chunk_shape`,
    /// each encoded by `codecs`, and an index of (offset, length) pairs
    /// encoded by `index_codecs`, at the end or the start.
    Sharding {
        chunk_shape: Vec<usize>,
        codecs: Vec<Codec>,
        index_codecs: Vec<Codec>,
        index_at_end: bool,
    },
    /// Zstandard (bytes to bytes).
    Zstd,
    /// A CRC-32C of the bytes appended (bytes to bytes).
    Crc32c,
}

/// The metadata of a zarr 2 array (`.zarray`'s text).
pub(super) fn parse_v2(json: &Json) -> Result<ArrayMeta, Problem> {
    let field = |name: &str| json.get(name).ok_or_else(|| format!("no \"{name}\" field"));
    let dtype_text = field("dtype")?
        .as_str()
        .ok_or("\"dtype\" is not a string (structured dtypes are not read)")?;
    let (dtype, big_endian) = v2_dtype(dtype_text)?;
    if let Some(order) = json.get("order").and_then(Json::as_str)
        && order != "C"
    {
        return Err(format!(
            "order {order:?}: only C-order chunks are read (Orbax writes C)"
        ));
    }
    if json.get("filters").is_some_and(|f| !f.is_null()) {
        return Err(format!("filters {} are not read", json["filters"]));
    }
    let mut codecs = vec![Codec::Bytes { big_endian }];
    match json.get("compressor") {
        None | Some(Json::Null) => {}
        Some(compressor) => codecs.push(compressor_codec(compressor)?),
    }
    let separator = json
        .get("dimension_separator")
        .and_then(Json::as_str)
        .unwrap_or(".")
        .to_string();
    Ok(ArrayMeta {
        dtype,
        shape: dims(field("shape")?, "shape")?,
        chunk_shape: dims(field("chunks")?, "chunks")?,
        fill: fill_bytes(dtype, json.get("fill_value").unwrap_or(&Json::Null))?,
        keys: KeyEncoding::V2(separator),
        codecs,
    })
}

/// The metadata of a zarr 3 array (`zarr.json`'s text); `None` for a
/// group.
pub(super) fn parse_v3(json: &Json) -> Result<Option<ArrayMeta>, Problem> {
    if json.get("node_type").and_then(Json::as_str) == Some("group") {
        return Ok(None);
    }
    let field = |name: &str| json.get(name).ok_or_else(|| format!("no \"{name}\" field"));
    let type_name = field("data_type")?
        .as_str()
        .ok_or("\"data_type\" is not a string")?;
    let dtype = DType::ALL
        .into_iter()
        .find(|d| d.numpy_name() == type_name)
        .ok_or_else(|| format!("data type {type_name:?} has no oxla dtype"))?;
    let grid = field("chunk_grid")?;
    if grid.get("name").and_then(Json::as_str) != Some("regular") {
        return Err(format!("chunk grid {grid} is not regular"));
    }
    let chunk_shape = dims(&grid["configuration"]["chunk_shape"], "chunk_shape")?;
    let keys = match json.get("chunk_key_encoding") {
        None => KeyEncoding::Default("/".to_string()),
        Some(encoding) => {
            let separator = encoding["configuration"]["separator"].as_str();
            match encoding.get("name").and_then(Json::as_str) {
                Some("default") => KeyEncoding::Default(separator.unwrap_or("/").to_string()),
                Some("v2") => KeyEncoding::V2(separator.unwrap_or(".").to_string()),
                _ => return Err(format!("chunk key encoding {encoding}")),
            }
        }
    };
    Ok(Some(ArrayMeta {
        dtype,
        shape: dims(field("shape")?, "shape")?,
        chunk_shape,
        fill: fill_bytes(dtype, field("fill_value")?)?,
        keys,
        codecs: v3_codecs(field("codecs")?)?,
    }))
}

/// A zarr 3 codec chain (an identity `transpose` is dropped).
fn v3_codecs(json: &Json) -> Result<Vec<Codec>, Problem> {
    let list = json.as_array().ok_or("\"codecs\" is not a list")?;
    let mut codecs = Vec::with_capacity(list.len());
    for codec in list {
        let name = codec.get("name").and_then(Json::as_str).unwrap_or("");
        let config = &codec["configuration"];
        codecs.push(match name {
            "bytes" => Codec::Bytes {
                big_endian: config["endian"].as_str() == Some("big"),
            },
            "zstd" => Codec::Zstd,
            "crc32c" => Codec::Crc32c,
            "sharding_indexed" => Codec::Sharding {
                chunk_shape: dims(&config["chunk_shape"], "sharding chunk_shape")?,
                codecs: v3_codecs(&config["codecs"])?,
                index_codecs: v3_codecs(&config["index_codecs"])?,
                index_at_end: config["index_location"].as_str() != Some("start"),
            },
            "transpose" => {
                let order = &config["order"];
                let identity = order.as_array().is_some_and(|o| {
                    o.iter()
                        .enumerate()
                        .all(|(i, v)| v.as_u64() == Some(i as u64))
                });
                if !identity {
                    return Err(format!("a transpose codec of order {order} is not read"));
                }
                continue;
            }
            _ => return Err(format!("codec {codec} is not read (Orbax writes zstd)")),
        });
    }
    Ok(codecs)
}

/// A zarr 2 compressor.
fn compressor_codec(json: &Json) -> Result<Codec, Problem> {
    match json.get("id").and_then(Json::as_str) {
        Some("zstd") => Ok(Codec::Zstd),
        _ => Err(format!(
            "compressor {json} is not read (Orbax's default is zstd; blosc, gzip and others \
             are not supported)"
        )),
    }
}

/// A zarr 2 dtype string (`<f4`, `|b1`, `bfloat16`) as a dtype and
/// whether it is big-endian.
fn v2_dtype(text: &str) -> Result<(DType, bool), Problem> {
    let named = |name: &str| DType::ALL.into_iter().find(|&d| v2_dtype_name(d) == name);
    if let Some(d) = DType::ALL.into_iter().find(|d| d.numpy_name() == text) {
        return Ok((d, false));
    }
    let unknown = || format!("dtype {text:?} has no oxla dtype");
    let (order, code) = text.split_at_checked(1).ok_or_else(unknown)?;
    // The little-endian (or byte-sized, `|`) spelling of the same type.
    let dtype = named(&format!("<{code}"))
        .or_else(|| named(&format!("|{code}")))
        .ok_or_else(unknown)?;
    match order {
        "<" | "|" | "=" => Ok((dtype, false)),
        ">" => Ok((dtype, true)),
        _ => Err(unknown()),
    }
}

/// Zarr 2's name of `dtype`, little-endian, as TensorStore writes it in
/// `.zarray` (`<f4`, `|b1`; bfloat16 has no NumPy type code, so its name).
pub(super) fn v2_dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::BF16 => "bfloat16",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
    }
}

/// A list of dimensions.
fn dims(json: &Json, what: &str) -> Result<Vec<usize>, Problem> {
    json.as_array()
        .and_then(|a| {
            a.iter()
                .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                .collect()
        })
        .ok_or_else(|| format!("\"{what}\" {json} is not a list of sizes"))
}

/// One element of `dtype` holding the fill value `json`, little-endian
/// (zeros for `null`).
fn fill_bytes(dtype: DType, json: &Json) -> Result<Vec<u8>, Problem> {
    let bad = || format!("fill value {json} does not fit {dtype}");
    if json.is_null() {
        return Ok(vec![0; dtype.byte_size()]);
    }
    if dtype.is_complex() {
        let parts = json.as_array().filter(|p| p.len() == 2).ok_or_else(bad)?;
        let mut out = fill_bytes(dtype.real_part(), &parts[0])?;
        out.extend(fill_bytes(dtype.real_part(), &parts[1])?);
        return Ok(out);
    }
    if let Some(hex) = json.as_str().and_then(|s| s.strip_prefix("0x")) {
        // Zarr 3 spells a float's raw bits in hex.
        let bits = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        return Ok(bits.to_le_bytes()[..dtype.byte_size()].to_vec());
    }
    let float = || -> Result<f64, Problem> {
        match json {
            Json::String(s) if s == "NaN" => Ok(f64::NAN),
            Json::String(s) if s == "Infinity" => Ok(f64::INFINITY),
            Json::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => json.as_f64().ok_or_else(bad),
        }
    };
    let int = || -> Result<i128, Problem> {
        match json {
            Json::Bool(b) => Ok(i128::from(*b)),
            _ => json
                .as_i64()
                .map(i128::from)
                .or(json.as_u64().map(i128::from))
                .ok_or_else(bad),
        }
    };
    Ok(match dtype {
        DType::F16 => half::f16::from_f64(float()?).to_le_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f64(float()?).to_le_bytes().to_vec(),
        DType::F32 => (float()? as f32).to_le_bytes().to_vec(),
        DType::F64 => float()?.to_le_bytes().to_vec(),
        _ => {
            let v = int()?;
            let size = dtype.byte_size();
            let fits = if dtype.is_unsigned_int() || dtype == DType::Bool {
                let max = if dtype == DType::Bool {
                    1
                } else {
                    (1i128 << (8 * size)) - 1
                };
                (0..=max).contains(&v)
            } else {
                let half = 1i128 << (8 * size - 1);
                (-half..half).contains(&v)
            };
            if !fits {
                return Err(bad());
            }
            v.to_le_bytes()[..size].to_vec()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_keys_and_fill_values() {
        assert_eq!(v2_dtype("<f4").unwrap(), (DType::F32, false));
        assert_eq!(v2_dtype(">i8").unwrap(), (DType::I64, true));
        assert_eq!(v2_dtype("bfloat16").unwrap(), (DType::BF16, false));
        assert!(v2_dtype("<M8").is_err());
        assert_eq!(v2_dtype("|i1").unwrap(), (DType::I8, false));
        assert_eq!(v2_dtype("<b1").unwrap(), (DType::Bool, false));
        for d in DType::ALL {
            assert_eq!(v2_dtype(v2_dtype_name(d)).unwrap(), (d, false), "{d}");
        }
        assert_eq!(KeyEncoding::V2(".".into()).key(&[1, 2]), "1.2");
        assert_eq!(KeyEncoding::V2(".".into()).key(&[]), "0");
        assert_eq!(KeyEncoding::Default("/".into()).key(&[0, 3]), "c/0/3");
        assert_eq!(KeyEncoding::Default("/".into()).key(&[]), "c");
        assert_eq!(fill_bytes(DType::F32, &Json::Null).unwrap(), vec![0; 4]);
        assert_eq!(
            fill_bytes(DType::BF16, &serde_json::json!(1.0)).unwrap(),
            vec![0x80, 0x3f]
        );
        assert_eq!(
            fill_bytes(DType::F32, &serde_json::json!("NaN")).unwrap(),
            f32::NAN.to_le_bytes().to_vec()
        );
        assert_eq!(
            fill_bytes(DType::I16, &serde_json::json!(-2)).unwrap(),
            vec![0xfe, 0xff]
        );
        assert!(fill_bytes(DType::U8, &serde_json::json!(300)).is_err());
    }
}
