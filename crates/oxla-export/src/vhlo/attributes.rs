//! The attributes and types of the table as MLIR text: VHLO's (from the
//! encodings of StableHLO's `VhloBytecode.cpp`), the builtin ones VHLO
//! modules use (from MLIR's `BuiltinDialectBytecode.td`), and those written
//! as text. Decoded once each, on first use.

use std::cell::{Cell, RefCell};

use super::VhloError;
use super::container::{Bytecode, Entry};
use super::encoding::Reader;

/// A decoded type.
#[derive(Clone, Debug)]
pub(crate) enum Type {
    /// A scalar: VHLO mnemonic (empty for a builtin type), builtin
    /// spelling, bit width (0 when not numeric).
    Scalar {
        vhlo: &'static str,
        builtin: &'static str,
        bits: u32,
    },
    /// A builtin integer type (width, spelling).
    BuiltinInteger { bits: u32, text: String },
    /// A complex number of an element type.
    Complex { vhlo: bool, element: Box<Type> },
    /// A function type.
    Function {
        vhlo: bool,
        inputs: Vec<Type>,
        outputs: Vec<Type>,
    },
    /// A ranked tensor.
    Tensor {
        vhlo: bool,
        dims: Vec<i64>,
        element: Box<Type>,
        encoding: Option<String>,
    },
    /// An unranked tensor.
    Unranked { vhlo: bool, element: Box<Type> },
    /// A tuple.
    Tuple { vhlo: bool, types: Vec<Type> },
    /// A type written as text in the bytecode.
    Text(String),
}

fn dims_text(dims: &[i64]) -> String {
    dims.iter()
        .map(|&d| {
            if d < 0 {
                "?x".to_string()
            } else {
                format!("{d}x")
            }
        })
        .collect()
}

fn join(types: &[Type], f: impl Fn(&Type) -> String) -> String {
    types.iter().map(f).collect::<Vec<_>>().join(", ")
}

impl Type {
    /// The type as the bytecode's dialect prints it (VHLO or builtin).
    pub(crate) fn text(&self) -> String {
        match self {
            Type::Scalar { vhlo, builtin, .. } => {
                if vhlo.is_empty() {
                    builtin.to_string()
                } else {
                    format!("!vhlo.{vhlo}")
                }
            }
            Type::BuiltinInteger { text, .. } | Type::Text(text) => text.clone(),
            Type::Complex {
                vhlo: true,
                element,
            } => format!("!vhlo.complex_v1<{}>", element.text()),
            Type::Complex {
                vhlo: false,
                element,
            } => format!("complex<{}>", element.text()),
            Type::Function {
                vhlo: true,
                inputs,
                outputs,
            } => {
                let list = |t: &[Type]| {
                    if t.is_empty() {
                        "()".to_string()
                    } else {
                        join(t, Type::text)
                    }
                };
                format!("!vhlo.func_v1<({}) -> {}>", list(inputs), list(outputs))
            }
            Type::Function {
                vhlo: false,
                inputs,
                outputs,
            } => format!(
                "({}) -> ({})",
                join(inputs, Type::text),
                join(outputs, Type::text)
            ),
            Type::Tensor {
                vhlo,
                dims,
                element,
                encoding,
            } => {
                let encoding = encoding
                    .as_ref()
                    .map(|e| format!(", {e}"))
                    .unwrap_or_default();
                let prefix = if *vhlo { "!vhlo.tensor_v1" } else { "tensor" };
                format!("{prefix}<{}{}{encoding}>", dims_text(dims), element.text())
            }
            Type::Unranked {
                vhlo: true,
                element,
            } => {
                format!("!vhlo.unranked_tensor_v1<{}>", element.text())
            }
            Type::Unranked {
                vhlo: false,
                element,
            } => format!("tensor<*x{}>", element.text()),
            Type::Tuple { vhlo: true, types } => {
                format!("!vhlo.tuple_v1<{}>", join(types, Type::text))
            }
            Type::Tuple { vhlo: false, types } => format!("tuple<{}>", join(types, Type::text)),
        }
    }

    /// The builtin spelling of a VHLO type (as VHLO's tensor and integer
    /// attributes print their values).
    pub(crate) fn builtin_text(&self) -> Result<String, VhloError> {
        Ok(match self {
            Type::Scalar { builtin, .. } => builtin.to_string(),
            Type::BuiltinInteger { text, .. } => text.clone(),
            Type::Complex { element, .. } => format!("complex<{}>", element.builtin_text()?),
            Type::Tensor { dims, element, .. } => {
                format!("tensor<{}{}>", dims_text(dims), element.builtin_text()?)
            }
            Type::Function { .. } | Type::Unranked { .. } | Type::Tuple { .. } | Type::Text(_) => {
                return Err(VhloError(format!("no builtin form for {}", self.text())));
            }
        })
    }

    /// The bit width of a scalar type.
    fn bits(&self) -> Result<u32, VhloError> {
        match self {
            Type::Scalar { bits, .. } | Type::BuiltinInteger { bits, .. } if *bits > 0 => Ok(*bits),
            other => Err(VhloError(format!("{} has no bit width", other.text()))),
        }
    }

    fn is_bool(&self) -> bool {
        matches!(self, Type::Scalar { builtin: "i1", .. })
            || matches!(self, Type::BuiltinInteger { bits: 1, .. })
    }

    fn is_unsigned(&self) -> bool {
        matches!(self, Type::Scalar { builtin, .. } if builtin.starts_with("ui"))
            || matches!(self, Type::BuiltinInteger { text, .. } if text.starts_with("ui"))
    }

    fn is_float(&self) -> bool {
        matches!(self, Type::Scalar { builtin, .. } if builtin.starts_with('f') || builtin.starts_with("bf") || builtin.starts_with("tf"))
    }
}

/// The types made of other types, laid out alike in VHLO and builtin.
#[derive(Clone, Copy)]
enum Composite {
    Complex,
    Function,
    Tensor,
    TensorWithEncoding,
    Tuple,
    Unranked,
}

/// The VHLO scalar types by bytecode code: (code, mnemonic, builtin, bits).
const VHLO_SCALARS: &[(u64, &str, &str, u32)] = &[
    (0, "bool_v1", "i1", 1),
    (2, "bf16_v1", "bf16", 16),
    (3, "f16_v1", "f16", 16),
    (4, "f32_v1", "f32", 32),
    (5, "f64_v1", "f64", 64),
    (6, "f8E4M3FN_v1", "f8E4M3FN", 8),
    (7, "f8E5M2_v1", "f8E5M2", 8),
    (9, "index_v1", "index", 64),
    (10, "i4_v1", "i4", 4),
    (11, "i8_v1", "i8", 8),
    (12, "i16_v1", "i16", 16),
    (13, "i32_v1", "i32", 32),
    (14, "i64_v1", "i64", 64),
    (15, "ui4_v1", "ui4", 4),
    (16, "ui8_v1", "ui8", 8),
    (17, "ui16_v1", "ui16", 16),
    (18, "ui32_v1", "ui32", 32),
    (19, "ui64_v1", "ui64", 64),
    (22, "token_v1", "none", 0),
    (26, "witness_v1", "none", 0),
    (27, "f8E4M3FNUZ_v1", "f8E4M3FNUZ", 8),
    (28, "f8E5M2FNUZ_v1", "f8E5M2FNUZ", 8),
    (29, "f8E4M3B11FNUZ_v1", "f8E4M3B11FNUZ", 8),
    (31, "i2_v1", "i2", 2),
    (32, "ui2_v1", "ui2", 2),
    (33, "none_v1", "none", 0),
    (34, "tf31_v1", "tf32", 19),
    (35, "f8E4M3_v1", "f8E4M3", 8),
    (36, "f8E3M4_v1", "f8E3M4", 8),
    (37, "f4E2M1FN_v1", "f4E2M1FN", 4),
    (38, "f6E2M3FN_v1", "f6E2M3FN", 6),
    (39, "f6E3M2FN_v1", "f6E3M2FN", 6),
    (40, "f8E8M0FNU_v1", "f8E8M0FNU", 8),
];

/// The builtin scalar types by bytecode code: (code, spelling, bits).
const BUILTIN_SCALARS: &[(u64, &str, u32)] = &[
    (1, "index", 64),
    (3, "bf16", 16),
    (4, "f16", 16),
    (5, "f32", 32),
    (6, "f64", 64),
    (7, "f80", 80),
    (8, "f128", 128),
    (12, "none", 0),
];

/// The VHLO enum attributes by code: (code, mnemonic, case names by value).
const VHLO_ENUMS: &[(u64, &str, &[&str])] = &[
    (
        3,
        "comparison_direction_v1",
        &["EQ", "NE", "GE", "GT", "LE", "LT"],
    ),
    (
        4,
        "comparison_type_v1",
        &["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"],
    ),
    (
        5,
        "api_version_v1",
        &[
            "API_VERSION_UNSPECIFIED",
            "API_VERSION_ORIGINAL",
            "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED",
            "API_VERSION_TYPED_FFI",
        ],
    ),
    (7, "fft_type_v1", &["FFT", "IFFT", "RFFT", "IRFFT"]),
    (11, "precision_v1", &["DEFAULT", "HIGH", "HIGHEST"]),
    (12, "rng_algorithm_v1", &["DEFAULT", "THREE_FRY", "PHILOX"]),
    (13, "rng_distribution_v1", &["", "UNIFORM", "NORMAL"]),
    (
        16,
        "transpose_v1",
        &["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
    ),
    (
        19,
        "result_accuracy_mode_v1",
        &["DEFAULT", "HIGHEST", "TOLERANCE"],
    ),
];

/// `s` quoted as MLIR prints strings.
pub(crate) fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\22"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:02X}")),
        }
    }
    out.push('"');
    out
}

/// A double as MLIR's float parser reads it back exactly.
fn float_literal(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.17e}")
    } else {
        format!("0x{:016X}", x.to_bits())
    }
}

/// The value of a float of `bits` bits stored as an integer.
fn float_from_bits(raw: u64, bits: u32, name: &str) -> Result<f64, VhloError> {
    Ok(match bits {
        64 => f64::from_bits(raw),
        32 => f64::from(f32::from_bits(raw as u32)),
        16 if name == "bf16" => f64::from(half::bf16::from_bits(raw as u16)),
        16 => f64::from(half::f16::from_bits(raw as u16)),
        _ => return Err(VhloError(format!("{name} floats are not read"))),
    })
}

/// The attributes and types of a bytecode file, decoded on demand.
pub(crate) struct Tables<'b, 'a> {
    bytecode: &'b Bytecode<'a>,
    attrs: RefCell<Vec<Option<String>>>,
    types: RefCell<Vec<Option<Type>>>,
    depth: Cell<usize>,
}

/// How deeply attributes, types and regions may nest.
pub(crate) const MAX_NESTING: usize = 200;

/// Leaves one level of nesting when dropped.
struct NestingGuard<'t>(&'t Cell<usize>);

impl Drop for NestingGuard<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

impl<'b, 'a> Tables<'b, 'a> {
    pub(crate) fn new(bytecode: &'b Bytecode<'a>) -> Self {
        Tables {
            bytecode,
            attrs: RefCell::new(vec![None; bytecode.attrs.len()]),
            types: RefCell::new(vec![None; bytecode.types.len()]),
            depth: Cell::new(0),
        }
    }

    /// String `index` of the string table.
    pub(crate) fn bytecode_string(&self, index: usize) -> Result<&'a str, VhloError> {
        self.string(index)
    }

    fn string(&self, index: usize) -> Result<&'a str, VhloError> {
        self.bytecode
            .strings
            .get(index)
            .copied()
            .ok_or_else(|| VhloError(format!("string {index} out of range")))
    }

    /// Enters the decoding of one more nested entry: an error past
    /// [`MAX_NESTING`] (a cycle, or nesting no real module has).
    fn enter(&self) -> Result<NestingGuard<'_>, VhloError> {
        let depth = self.depth.get() + 1;
        if depth > MAX_NESTING {
            return Err(VhloError(
                "attributes and types nest too deeply (or in a cycle)".into(),
            ));
        }
        self.depth.set(depth);
        Ok(NestingGuard(&self.depth))
    }

    /// Entry `index` of `entries`, decoded by `decode` once and kept in
    /// `cache`.
    fn memoized<T: Clone>(
        &self,
        cache: &RefCell<Vec<Option<T>>>,
        entries: &[Entry<'_>],
        index: usize,
        what: &str,
        decode: impl FnOnce(&Entry<'_>) -> Result<T, VhloError>,
    ) -> Result<T, VhloError> {
        if let Some(Some(value)) = cache.borrow().get(index) {
            return Ok(value.clone());
        }
        let _guard = self.enter()?;
        let entry = entries
            .get(index)
            .ok_or_else(|| VhloError(format!("{what} {index} out of range")))?;
        let value = decode(entry)?;
        cache.borrow_mut()[index] = Some(value.clone());
        Ok(value)
    }

    /// Attribute `index` as text.
    pub(crate) fn attr(&self, index: usize) -> Result<String, VhloError> {
        self.memoized(&self.attrs, &self.bytecode.attrs, index, "attribute", |e| {
            self.decode_attr(e)
        })
    }

    /// Type `index`.
    pub(crate) fn ty(&self, index: usize) -> Result<Type, VhloError> {
        self.memoized(&self.types, &self.bytecode.types, index, "type", |e| {
            self.decode_type(e)
        })
    }

    /// A count, then that many type indices.
    pub(crate) fn type_list(&self, r: &mut Reader<'_>) -> Result<Vec<Type>, VhloError> {
        let n = r.count()?;
        (0..n).map(|_| self.ty(r.index()?)).collect()
    }

    fn text_entry(entry: &Entry<'_>) -> Result<String, VhloError> {
        let data = entry.data.strip_suffix(&[0]).unwrap_or(entry.data);
        std::str::from_utf8(data)
            .map(str::to_string)
            .map_err(|_| VhloError("an attribute written as text is not UTF-8".into()))
    }

    fn decode_type(&self, entry: &Entry<'_>) -> Result<Type, VhloError> {
        if !entry.custom {
            return Ok(Type::Text(Self::text_entry(entry)?));
        }
        let mut r = Reader::new(entry.data);
        let code = r.varint()?;
        let vhlo = match entry.dialect.as_str() {
            "vhlo" => true,
            "builtin" => false,
            other => {
                return Err(VhloError(format!(
                    "types of the {other} dialect are not read"
                )));
            }
        };
        if vhlo
            && let Some((_, mnemonic, builtin, bits)) = VHLO_SCALARS.iter().find(|s| s.0 == code)
        {
            return Ok(Type::Scalar {
                vhlo: mnemonic,
                builtin,
                bits: *bits,
            });
        }
        if !vhlo && let Some((_, text, bits)) = BUILTIN_SCALARS.iter().find(|s| s.0 == code) {
            return Ok(Type::Scalar {
                vhlo: "",
                builtin: text,
                bits: *bits,
            });
        }
        if !vhlo && code == 0 {
            let v = r.varint()?;
            let bits = (v >> 2) as u32;
            let prefix = match v & 3 {
                0 => "i",
                1 => "si",
                _ => "ui",
            };
            return Ok(Type::BuiltinInteger {
                bits,
                text: format!("{prefix}{bits}"),
            });
        }
        let kind = match (vhlo, code) {
            (true, 1) | (false, 9) => Composite::Complex,
            (true, 8) | (false, 2) => Composite::Function,
            (true, 20) | (false, 13) => Composite::Tensor,
            (true, 21) | (false, 14) => Composite::TensorWithEncoding,
            (true, 23) | (false, 15) => Composite::Tuple,
            (true, 25) | (false, 18) => Composite::Unranked,
            (true, other) => {
                return Err(VhloError(format!(
                    "VHLO type code {other} (quantized, buffer and future types) is not read"
                )));
            }
            (false, other) => {
                return Err(VhloError(format!("builtin type code {other} is not read")));
            }
        };
        self.composite(kind, vhlo, &mut r)
    }

    /// A type built from other types, in either dialect (same layouts).
    fn composite(
        &self,
        kind: Composite,
        vhlo: bool,
        r: &mut Reader<'_>,
    ) -> Result<Type, VhloError> {
        let dims = |r: &mut Reader<'_>| -> Result<Vec<i64>, VhloError> {
            let n = r.count()?;
            (0..n).map(|_| r.signed_varint()).collect()
        };
        Ok(match kind {
            Composite::Complex => Type::Complex {
                vhlo,
                element: Box::new(self.ty(r.index()?)?),
            },
            Composite::Function => Type::Function {
                vhlo,
                inputs: self.type_list(r)?,
                outputs: self.type_list(r)?,
            },
            Composite::Tensor | Composite::TensorWithEncoding => {
                let encoding = match kind {
                    Composite::TensorWithEncoding => Some(self.attr(r.index()?)?),
                    Composite::Tensor
                    | Composite::Complex
                    | Composite::Function
                    | Composite::Tuple
                    | Composite::Unranked => None,
                };
                Type::Tensor {
                    vhlo,
                    dims: dims(r)?,
                    element: Box::new(self.ty(r.index()?)?),
                    encoding,
                }
            }
            Composite::Tuple => Type::Tuple {
                vhlo,
                types: self.type_list(r)?,
            },
            Composite::Unranked => Type::Unranked {
                vhlo,
                element: Box::new(self.ty(r.index()?)?),
            },
        })
    }

    /// An integer of `ty`'s width: one byte up to 8 bits, a signed varint
    /// up to 64.
    fn int_bits(r: &mut Reader<'_>, bits: u32) -> Result<u64, VhloError> {
        match bits {
            0..=8 => Ok(u64::from(r.byte()?)),
            9..=64 => Ok(r.signed_varint()? as u64),
            _ => Err(VhloError(format!("{bits}-bit integers are not read"))),
        }
    }

    fn integer_text(value: u64, ty: &Type) -> Result<String, VhloError> {
        let bits = ty.bits()?;
        if ty.is_bool() {
            return Ok(if value & 1 == 1 { "true" } else { "false" }.to_string());
        }
        let masked = if bits >= 64 {
            value
        } else {
            value & ((1u64 << bits) - 1)
        };
        let number = if ty.is_unsigned() {
            masked.to_string()
        } else {
            let shift = 64 - bits.min(64);
            (((masked << shift) as i64) >> shift).to_string()
        };
        Ok(format!("{number} : {}", ty.builtin_text()?))
    }

    fn dense_text(&self, ty: &Type, data: &[u8]) -> Result<String, VhloError> {
        let (dims, element) = match ty {
            Type::Tensor { dims, element, .. } => (dims, element),
            other => {
                return Err(VhloError(format!(
                    "dense data of the non-tensor {}",
                    other.text()
                )));
            }
        };
        let count = dims
            .iter()
            .try_fold(
                1i64,
                |acc, &d| if d < 0 { None } else { acc.checked_mul(d) },
            )
            .ok_or_else(|| VhloError(format!("dense data of the shape {}", ty.text())))?;
        let builtin = ty.builtin_text()?;
        if count == 0 {
            return Ok(format!("dense<> : {builtin}"));
        }
        if element.is_bool() {
            let values: Vec<bool> = if data.len() as i64 == count {
                data.iter().map(|&b| b != 0).collect()
            } else if data.len() == 1 {
                vec![data[0] != 0]
            } else if (data.len() as i64) * 8 >= count {
                (0..count as usize)
                    .map(|i| data[i / 8] >> (i % 8) & 1 == 1)
                    .collect()
            } else {
                return Err(VhloError(format!(
                    "{} bytes of data for {builtin}",
                    data.len()
                )));
            };
            if values.iter().all(|&v| v == values[0]) {
                return Ok(format!("dense<{}> : {builtin}", values[0]));
            }
            return Ok(format!("dense<{}> : {builtin}", nested(&values, dims)));
        }
        let bits = element.bits().or_else(|_| match &**element {
            Type::Complex { element, .. } => element.bits().map(|b| 2 * b),
            other => Err(VhloError(format!("no width for {}", other.text()))),
        })?;
        if !bits.is_multiple_of(8) {
            return Err(VhloError(format!(
                "dense {builtin} data of sub-byte elements is not read"
            )));
        }
        let hex: String = data.iter().map(|b| format!("{b:02X}")).collect();
        Ok(format!("dense<\"0x{hex}\"> : {builtin}"))
    }

    // Long by design: one arm per VHLO attribute kind, each a few lines, in
    // the order of the VHLO spec; splitting it would scatter that table.
    fn decode_attr(&self, entry: &Entry<'_>) -> Result<String, VhloError> {
        if !entry.custom {
            return Self::text_entry(entry);
        }
        let mut r = Reader::new(entry.data);
        let code = r.varint()?;
        let attrs = |r: &mut Reader<'_>| -> Result<Vec<String>, VhloError> {
            let n = r.count()?;
            (0..n).map(|_| self.attr(r.index()?)).collect()
        };
        let dims = |r: &mut Reader<'_>| -> Result<String, VhloError> {
            let n = r.count()?;
            let values = (0..n)
                .map(|_| {
                    r.signed_varint().map(|d| {
                        if d < 0 {
                            "?".to_string()
                        } else {
                            d.to_string()
                        }
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("[{}]", values.join(", ")))
        };
        match entry.dialect.as_str() {
            "vhlo" => {
                if let Some((_, mnemonic, cases)) = VHLO_ENUMS.iter().find(|e| e.0 == code) {
                    let value = r.index()?;
                    let case = cases
                        .get(value)
                        .filter(|c| !c.is_empty())
                        .ok_or_else(|| VhloError(format!("{mnemonic} value {value}")))?;
                    return Ok(format!("#vhlo<{mnemonic} {case}>"));
                }
                Ok(match code {
                    1 => format!("#vhlo.array_v1<[{}]>", attrs(&mut r)?.join(", ")),
                    2 => format!("#vhlo.bool_v1<{}>", r.varint()? != 0),
                    6 => {
                        let n = r.count()?;
                        let pairs = (0..n)
                            .map(|_| {
                                Ok(format!(
                                    "{} = {}",
                                    self.attr(r.index()?)?,
                                    self.attr(r.index()?)?
                                ))
                            })
                            .collect::<Result<Vec<_>, VhloError>>()?;
                        format!("#vhlo.dict_v1<{{{}}}>", pairs.join(", "))
                    }
                    8 => {
                        let ty = self.ty(r.index()?)?;
                        let raw = Self::int_bits(&mut r, ty.bits()?)?;
                        let value = float_from_bits(raw, ty.bits()?, &ty.builtin_text()?)?;
                        format!("#vhlo.float_v1<{} : {}>", float_literal(value), ty.text())
                    }
                    9 => {
                        let ty = self.ty(r.index()?)?;
                        let raw = Self::int_bits(&mut r, ty.bits()?)?;
                        format!("#vhlo.integer_v1<{}>", Self::integer_text(raw, &ty)?)
                    }
                    10 => {
                        let output = dims(&mut r)?;
                        let operand = r.signed_varint()?;
                        let operand_tuple = dims(&mut r)?;
                        format!(
                            "#vhlo.output_operand_alias_v1<outputTupleIndices = {output}, \
                             operandIndex = {operand}, operandTupleIndices = {operand_tuple}>"
                        )
                    }
                    14 => format!("#vhlo.string_v1<{}>", escaped(self.string(r.index()?)?)),
                    15 => {
                        let ty = self.ty(r.index()?)?;
                        let data = r.blob()?;
                        format!("#vhlo.tensor_v1<{}>", self.dense_text(&ty, data)?)
                    }
                    17 => format!("#vhlo.type_v1<{}>", self.ty(r.index()?)?.text()),
                    18 => format!("#vhlo.type_extensions_v1<bounds = {}>", dims(&mut r)?),
                    20 => {
                        let atol = f64::from_bits(r.signed_varint()? as u64);
                        let rtol = f64::from_bits(r.signed_varint()? as u64);
                        let ulps = r.signed_varint()?;
                        let mode = self.attr(r.index()?)?;
                        format!(
                            "#vhlo.result_accuracy_v1<atol = {}, rtol = {}, ulps = {ulps}, mode = {mode}>",
                            float_literal(atol),
                            float_literal(rtol)
                        )
                    }
                    other => {
                        return Err(VhloError(format!(
                            "VHLO attribute code {other} (sharding meshes and axes) is not read"
                        )));
                    }
                })
            }
            "builtin" => Ok(match code {
                0 => format!("[{}]", attrs(&mut r)?.join(", ")),
                1 => {
                    let n = r.count()?;
                    let pairs = (0..n)
                        .map(|_| {
                            let name = self.attr(r.index()?)?;
                            Ok(format!("{name} = {}", self.attr(r.index()?)?))
                        })
                        .collect::<Result<Vec<_>, VhloError>>()?;
                    format!("{{{}}}", pairs.join(", "))
                }
                2 => escaped(self.string(r.index()?)?),
                3 => {
                    let value = escaped(self.string(r.index()?)?);
                    format!("{value} : {}", self.ty(r.index()?)?.text())
                }
                4 => {
                    let root = self.attr(r.index()?)?;
                    format!("@{root}")
                }
                6 => self.ty(r.index()?)?.text(),
                7 => "unit".to_string(),
                8 => {
                    let ty = self.ty(r.index()?)?;
                    let raw = Self::int_bits(&mut r, ty.bits()?)?;
                    Self::integer_text(raw, &ty)?
                }
                9 => {
                    let ty = self.ty(r.index()?)?;
                    let raw = Self::int_bits(&mut r, ty.bits()?)?;
                    format!("0x{raw:X} : {}", ty.text())
                }
                10..=15 | 22 => "loc(unknown)".to_string(),
                17 => {
                    let ty = self.ty(r.index()?)?;
                    let size = r.index()?;
                    let data = r.blob()?;
                    let bits = ty.bits()? as usize;
                    if !bits.is_multiple_of(8) || data.len() != size * bits / 8 {
                        return Err(VhloError("a dense array of sub-byte elements".into()));
                    }
                    let width = bits / 8;
                    let values = data
                        .chunks(width)
                        .map(|c| {
                            let mut raw = [0u8; 8];
                            raw[..width].copy_from_slice(c);
                            let v = u64::from_le_bytes(raw);
                            if ty.is_float() {
                                float_from_bits(v, bits as u32, &ty.builtin_text()?)
                                    .map(float_literal)
                            } else {
                                Self::integer_text(v, &ty)
                                    .map(|t| t.split(" : ").next().unwrap_or("").to_string())
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    format!("array<{}: {}>", ty.text(), values.join(", "))
                }
                18 => {
                    let ty = self.ty(r.index()?)?;
                    self.dense_text(&ty, r.blob()?)?
                }
                other => {
                    return Err(VhloError(format!(
                        "builtin attribute code {other} is not read"
                    )));
                }
            }),
            "sdy" => self.decode_sdy_attr(code, &mut r),
            other => Err(VhloError(format!(
                "attributes of the {other} dialect are not read"
            ))),
        }
    }
}

/// `values` laid out as nested lists of `dims`.
fn nested(values: &[bool], dims: &[i64]) -> String {
    match dims.split_first() {
        None => values.first().copied().unwrap_or(false).to_string(),
        Some((&n, rest)) => {
            let chunk = values.len() / n.max(1) as usize;
            let parts: Vec<String> = values
                .chunks(chunk.max(1))
                .map(|c| nested(c, rest))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}
