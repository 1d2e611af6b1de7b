//! VHLO tensor types and small integer tensors as the text form prints
//! them: `!vhlo.tensor_v1<?x3x!vhlo.f32_v1>`, and the dense attributes
//! `#vhlo.tensor_v1<dense<"0x0300000000000000"> : tensor<1xi64>>` whose
//! values shape computations fold.

use super::super::VhloError;

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// A ranked VHLO tensor type: its dims (`None` for `?`), element type
/// text and encoding (bounds of a dynamic dim), if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TensorType {
    pub(crate) dims: Vec<Option<i64>>,
    pub(crate) element: String,
    pub(crate) encoding: Option<String>,
}

const TENSOR: &str = "!vhlo.tensor_v1<";

/// The byte offset of the first comma of `s` outside brackets.
fn top_level_comma(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut previous = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' if previous == '-' => {}
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
        previous = c;
    }
    None
}

impl TensorType {
    /// Reads a ranked tensor type; `None` for any other type (tokens,
    /// tuples, unranked tensors).
    pub(crate) fn parse(ty: &str) -> Option<TensorType> {
        let body = ty.trim().strip_prefix(TENSOR)?.strip_suffix('>')?;
        let (body, encoding) = match top_level_comma(body) {
            Some(i) => (&body[..i], Some(body[i + 1..].trim().to_string())),
            None => (body, None),
        };
        let mut dims = Vec::new();
        let mut rest = body;
        loop {
            if let Some(after) = rest.strip_prefix("?x") {
                dims.push(None);
                rest = after;
                continue;
            }
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && rest[digits..].starts_with('x') {
                dims.push(Some(rest[..digits].parse().ok()?));
                rest = &rest[digits + 1..];
                continue;
            }
            break;
        }
        Some(TensorType {
            dims,
            element: rest.to_string(),
            encoding,
        })
    }

    /// A tensor of `dims` with this type's element type and no encoding.
    pub(crate) fn with_dims(&self, dims: &[i64]) -> TensorType {
        TensorType {
            dims: dims.iter().map(|&d| Some(d)).collect(),
            element: self.element.clone(),
            encoding: None,
        }
    }

    /// The dims, when none is dynamic.
    pub(crate) fn static_dims(&self) -> Option<Vec<i64>> {
        self.dims.iter().copied().collect()
    }

    /// The type as VHLO prints it.
    pub(crate) fn text(&self) -> String {
        let dims: String = self
            .dims
            .iter()
            .map(|d| d.map_or_else(|| "?x".to_string(), |d| format!("{d}x")))
            .collect();
        let encoding = self
            .encoding
            .as_ref()
            .map(|e| format!(", {e}"))
            .unwrap_or_default();
        format!("{TENSOR}{dims}{}{encoding}>", self.element)
    }

    /// The width and signedness of an integer (or boolean) element type.
    pub(crate) fn integer_element(&self) -> Option<IntegerType> {
        integer_type(&self.element)
    }
}

/// The most elements of a dimension list or folded constant read here.
const MAX_LIST: usize = 1 << 16;

/// An integer element type: its width and whether it is unsigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntegerType {
    pub(crate) bits: u32,
    pub(crate) unsigned: bool,
}

impl IntegerType {
    /// `value` wrapped to this type's range, as the hardware computes it.
    pub(crate) fn wrap(self, value: i64) -> i64 {
        if self.bits >= 64 {
            return value;
        }
        let mask = (1u64 << self.bits) - 1;
        let v = (value as u64) & mask;
        if self.unsigned || self.bits == 1 {
            v as i64
        } else {
            let shift = 64 - self.bits;
            ((v << shift) as i64) >> shift
        }
    }

    /// The builtin spelling (`i32`, `ui8`, `i1`).
    fn builtin(self) -> String {
        match (self.bits, self.unsigned) {
            (1, _) => "i1".to_string(),
            (b, true) => format!("ui{b}"),
            (b, false) => format!("i{b}"),
        }
    }
}

/// The integer type of a VHLO element type (`!vhlo.i32_v1`, `!vhlo.bool_v1`).
pub(crate) fn integer_type(element: &str) -> Option<IntegerType> {
    let name = element.strip_prefix("!vhlo.")?.strip_suffix("_v1")?;
    if name == "bool" {
        return Some(IntegerType {
            bits: 1,
            unsigned: true,
        });
    }
    let (unsigned, digits) = match name.strip_prefix("ui") {
        Some(d) => (true, d),
        None => (false, name.strip_prefix('i')?),
    };
    let bits: u32 = digits.parse().ok()?;
    [8, 16, 32, 64]
        .contains(&bits)
        .then_some(IntegerType { bits, unsigned })
}

/// The values of a dense integer (or boolean) attribute
/// (`#vhlo.tensor_v1<dense<...> : tensor<...>>`) with `count` elements of
/// `ty`: hexadecimal data (one element repeated when it holds one),
/// `true`/`false`, or numbers, nested or splat.
pub(crate) fn dense_integers(
    attribute: &str,
    ty: IntegerType,
    count: usize,
) -> Result<Vec<i64>, VhloError> {
    let inner = attribute
        .trim()
        .strip_prefix("#vhlo.tensor_v1<dense<")
        .and_then(|rest| rest.rsplit_once("> :"))
        .map(|(data, _)| data.trim())
        .ok_or_else(|| bad(format!("not a dense attribute: {attribute}")))?;
    let values: Vec<i64> =
        if let Some(hex) = inner.strip_prefix("\"0x").and_then(|h| h.strip_suffix('"')) {
            let bytes = hex
                .as_bytes()
                .chunks(2)
                .map(|pair| {
                    std::str::from_utf8(pair)
                        .ok()
                        .filter(|p| p.len() == 2)
                        .and_then(|p| u8::from_str_radix(p, 16).ok())
                })
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| bad(format!("bad hexadecimal data in {attribute}")))?;
            let width = (ty.bits as usize).div_ceil(8);
            bytes
                .chunks(width)
                .map(|chunk| {
                    let mut raw = [0u8; 8];
                    raw[..chunk.len()].copy_from_slice(chunk);
                    ty.wrap(i64::from_le_bytes(raw))
                })
                .collect()
        } else {
            inner
                .split([',', '[', ']'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| match s {
                    "true" => Ok(1),
                    "false" => Ok(0),
                    n => n
                        .parse::<i64>()
                        .map(|v| ty.wrap(v))
                        .map_err(|_| bad(format!("bad integer {n} in {attribute}"))),
                })
                .collect::<Result<_, _>>()?
        };
    match values.len() {
        n if n == count => Ok(values),
        _ if count > MAX_LIST => Err(bad(format!(
            "{count} elements in {attribute}, more than a shape computation holds"
        ))),
        1 => Ok(vec![values[0]; count]),
        n => Err(bad(format!(
            "{n} values for {count} elements in {attribute}"
        ))),
    }
}

/// A dense attribute of `values` with `dims` and element type `ty`, as
/// hexadecimal data.
pub(crate) fn dense_attribute(values: &[i64], dims: &[i64], ty: IntegerType) -> String {
    let width = (ty.bits as usize).div_ceil(8);
    let hex: String = values
        .iter()
        .flat_map(|v| v.to_le_bytes()[..width].to_vec())
        .map(|b| format!("{b:02X}"))
        .collect();
    let shape: String = dims.iter().map(|d| format!("{d}x")).collect();
    let data = if values.is_empty() {
        String::new()
    } else if ty.bits == 1 {
        let list: Vec<&str> = values
            .iter()
            .map(|&v| if v != 0 { "true" } else { "false" })
            .collect();
        if dims.is_empty() {
            list[0].to_string()
        } else {
            format!("[{}]", list.join(", "))
        }
    } else {
        format!("\"0x{hex}\"")
    };
    format!(
        "#vhlo.tensor_v1<dense<{data}> : tensor<{shape}{}>>",
        ty.builtin()
    )
}

/// A 1-d `i64` dense attribute, as VHLO writes dimension lists.
pub(crate) fn i64_list_attribute(values: &[i64]) -> String {
    dense_attribute(
        values,
        &[values.len() as i64],
        IntegerType {
            bits: 64,
            unsigned: false,
        },
    )
}

/// The integers of a dimension-list attribute (a 1-d dense `i64` tensor,
/// or an `array<i64: ...>`).
pub(crate) fn integer_list(attribute: &str) -> Result<Vec<i64>, VhloError> {
    let t = attribute.trim();
    if let Some(body) = t
        .strip_prefix("array<i64")
        .and_then(|b| b.strip_suffix('>'))
    {
        return body
            .trim_start_matches(':')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().map_err(|_| bad(format!("bad integer in {t}"))))
            .collect();
    }
    // The element count: the product of the type's dims (`tensor<2x2xi64>`
    // holds a convolution's padding pairs).
    let count = t
        .rsplit_once("tensor<")
        .and_then(|(_, shape)| {
            shape
                .split('x')
                .map_while(|n| n.parse::<usize>().ok())
                .try_fold(1usize, usize::checked_mul)
        })
        .filter(|&n| n <= MAX_LIST)
        .ok_or_else(|| bad(format!("not a dimension list oxla reads: {t}")))?;
    dense_integers(
        t,
        IntegerType {
            bits: 64,
            unsigned: false,
        },
        count,
    )
}

/// The value of an integer attribute (`#vhlo.integer_v1<2 : i64>`).
pub(crate) fn integer_attribute(attribute: &str) -> Result<i64, VhloError> {
    attribute
        .trim()
        .strip_prefix("#vhlo.integer_v1<")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| bad(format!("not an integer attribute: {attribute}")))
}

/// An `i64` integer attribute.
#[cfg(test)]
pub(crate) fn i64_attribute(value: i64) -> String {
    format!("#vhlo.integer_v1<{value} : i64>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_types_read_and_print_back() {
        for text in [
            "!vhlo.tensor_v1<?x3x!vhlo.f32_v1>",
            "!vhlo.tensor_v1<!vhlo.i32_v1>",
            "!vhlo.tensor_v1<2x?x!vhlo.complex_v1<!vhlo.f32_v1>>",
        ] {
            assert_eq!(TensorType::parse(text).unwrap().text(), text);
        }
        let t = TensorType::parse("!vhlo.tensor_v1<?x3x!vhlo.f32_v1>").unwrap();
        assert_eq!(t.dims, vec![None, Some(3)]);
        assert_eq!(
            t.with_dims(&[5, 3]).text(),
            "!vhlo.tensor_v1<5x3x!vhlo.f32_v1>"
        );
        assert!(TensorType::parse("!vhlo.token_v1").is_none());
    }

    #[test]
    fn dense_integers_read_hex_splats_and_lists() {
        let i32t = integer_type("!vhlo.i32_v1").unwrap();
        let a = dense_attribute(&[3, -1], &[2], i32t);
        assert_eq!(
            a,
            "#vhlo.tensor_v1<dense<\"0x03000000FFFFFFFF\"> : tensor<2xi32>>"
        );
        assert_eq!(dense_integers(&a, i32t, 2).unwrap(), vec![3, -1]);
        let splat = "#vhlo.tensor_v1<dense<\"0x07000000\"> : tensor<3xi32>>";
        assert_eq!(dense_integers(splat, i32t, 3).unwrap(), vec![7, 7, 7]);
        let b = integer_type("!vhlo.bool_v1").unwrap();
        assert_eq!(
            dense_integers("#vhlo.tensor_v1<dense<[true, false]> : tensor<2xi1>>", b, 2).unwrap(),
            vec![1, 0]
        );
        assert_eq!(
            integer_list(&i64_list_attribute(&[0, 2])).unwrap(),
            vec![0, 2]
        );
        assert_eq!(integer_list("array<i64: 1, 0>").unwrap(), vec![1, 0]);
        let pairs =
            "#vhlo.tensor_v1<dense<\"0x01000000000000000200000000000000\"> : tensor<1x2xi64>>";
        assert_eq!(integer_list(pairs).unwrap(), vec![1, 2]);
        assert_eq!(
            integer_list("#vhlo.tensor_v1<dense<> : tensor<0xi64>>").unwrap(),
            Vec::<i64>::new()
        );
        assert_eq!(integer_attribute(&i64_attribute(-4)).unwrap(), -4);
        assert_eq!(i32t.wrap(1 << 33), 0);
    }
}
