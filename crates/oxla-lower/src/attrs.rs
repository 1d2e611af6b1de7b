//! Attribute text for StableHLO ops (parsed by MLIR with the dialect
//! unregistered, so the text must be exactly what StableHLO prints).

use oxla_core::{Aval, DType, Scalar};

/// `array<i64: 0, 1>`
pub(crate) fn i64_array(values: &[i64]) -> String {
    if values.is_empty() {
        return "array<i64>".to_string();
    }
    format!("array<i64: {}>", comma_separated(values))
}

/// `dense<[[1, 2], [0, 0]]> : tensor<2x2xi64>`: (low, high) pairs.
pub(crate) fn padding_pairs(pairs: &[(i64, i64)]) -> String {
    if pairs.is_empty() {
        return "dense<> : tensor<0x2xi64>".to_string();
    }
    let rows: Vec<String> = pairs.iter().map(|(l, h)| format!("[{l}, {h}]")).collect();
    format!(
        "dense<[{}]> : tensor<{}x2xi64>",
        rows.join(", "),
        pairs.len()
    )
}

/// `[0, 1]` (dot dimension numbers, dense literals).
pub(crate) fn i64_list(values: &[i64]) -> String {
    format!("[{}]", comma_separated(values))
}

/// `0, 1`
fn comma_separated(values: &[i64]) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `3 : i64`
pub(crate) fn i64_attr(value: i64) -> String {
    format!("{value} : i64")
}

/// The literal text of `value` as an element of `dtype`: floats by their
/// exact bits (`0x3F800000`), so every value (NaN, infinities, subnormals)
/// round-trips; integers in decimal; bools as `true`/`false`; a complex
/// element as `(real, imaginary)` with a real scalar's value as its real
/// part.
pub(crate) fn element_literal(dtype: DType, value: Scalar) -> String {
    let as_f64 = value.as_f64();
    let as_i128 = value.as_i128();
    match dtype {
        DType::Bool => (if as_i128 != 0 { "true" } else { "false" }).to_string(),
        DType::I8
        | DType::I16
        | DType::I32
        | DType::I64
        | DType::U8
        | DType::U16
        | DType::U32
        | DType::U64 => as_i128.to_string(),
        DType::F16 => format!("0x{:04X}", half::f16::from_f64(as_f64).to_bits()),
        DType::BF16 => format!("0x{:04X}", half::bf16::from_f64(as_f64).to_bits()),
        DType::F32 => format!("0x{:08X}", (as_f64 as f32).to_bits()),
        DType::F64 => format!("0x{:016X}", as_f64.to_bits()),
        DType::C64 | DType::C128 => {
            let part = dtype.real_part();
            let (re, im) = value.complex_parts();
            format!(
                "({}, {})",
                element_literal(part, Scalar::Float(re)),
                element_literal(part, Scalar::Float(im))
            )
        }
    }
}

/// `dense<0x3F800000> : tensor<2xf32>`: a splat of `value` of `aval`'s type.
pub(crate) fn dense_splat(aval: &Aval, value: Scalar) -> String {
    format!(
        "dense<{}> : {}",
        element_literal(aval.dtype, value),
        aval.mlir_type()
    )
}

/// The comparison type StableHLO wants for a dtype.
pub(crate) fn compare_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => {
            "#stablehlo<comparison_type FLOAT>"
        }
        DType::Bool | DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
            "#stablehlo<comparison_type UNSIGNED>"
        }
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => "#stablehlo<comparison_type SIGNED>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_are_exact_bits() {
        assert_eq!(
            element_literal(DType::F32, Scalar::Float(1.0)),
            "0x3F800000"
        );
        assert_eq!(element_literal(DType::BF16, Scalar::Float(1.0)), "0x3F80");
        assert_eq!(
            element_literal(DType::F64, Scalar::Float(f64::NEG_INFINITY)),
            "0xFFF0000000000000"
        );
        assert_eq!(element_literal(DType::I32, Scalar::Int(-3)), "-3");
        assert_eq!(element_literal(DType::Bool, Scalar::Int(1)), "true");
        assert_eq!(i64_array(&[]), "array<i64>");
        assert_eq!(i64_array(&[1, 0]), "array<i64: 1, 0>");
    }
}
