//! One-line summaries of arrays for the terminal.

use oxla_npy::{HostArray, NpyType};
use oxla_pjrt::ElementType;

/// How many leading elements a summary shows.
const SHOWN: usize = 6;

/// Whether values of the array print as f32 (its type has no more precision).
fn prints_as_f32(array: &HostArray) -> bool {
    matches!(
        array.npy_type,
        NpyType::Void2
            | NpyType::Element(
                ElementType::F16 | ElementType::Bf16 | ElementType::F32 | ElementType::C64
            )
    )
}

/// A number as numpy would show it: shortest round-trip digits, in
/// scientific notation when very small or very large.
fn format_number(v: f64, as_f32: bool) -> String {
    let magnitude = v.abs();
    let scientific = v != 0.0 && v.is_finite() && !(1e-4..1e16).contains(&magnitude);
    match (as_f32, scientific) {
        (true, true) => format!("{:e}", v as f32),
        (true, false) => format!("{}", v as f32),
        (false, true) => format!("{v:e}"),
        (false, false) => format!("{v}"),
    }
}

/// `f32[2,3]` for an array.
pub fn type_string(array: &HostArray) -> String {
    let dims: Vec<String> = array.dims.iter().map(i64::to_string).collect();
    format!("{}[{}]", array.element_type(), dims.join(","))
}

/// `f32[2,3] min -1 max 2.5 mean 0.3 [0.1, 0.2, ...]`.
pub fn summarize(array: &HostArray) -> String {
    let values = array.to_f64_vec();
    let complex = matches!(
        array.npy_type,
        NpyType::Element(ElementType::C64 | ElementType::C128)
    );
    let as_f32 = prints_as_f32(array);
    let number = |v: f64| format_number(v, as_f32);
    let shown: Vec<String> = if complex {
        values
            .chunks_exact(2)
            .take(SHOWN)
            .map(|c| {
                let sign = if c[1] < 0.0 { "-" } else { "+" };
                format!("{}{sign}{}j", number(c[0]), number(c[1].abs()))
            })
            .collect()
    } else {
        values.iter().take(SHOWN).map(|&v| number(v)).collect()
    };
    let count = if complex {
        values.len() / 2
    } else {
        values.len()
    };
    let more = if count > SHOWN { ", ..." } else { "" };
    let mut text = type_string(array);
    if !complex && values.len() > 1 {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        text.push_str(&format!(
            "  min {}  max {}  mean {}",
            number(min),
            number(max),
            number(mean)
        ));
    }
    text.push_str(&format!("  [{}{more}]", shown.join(", ")));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_show_type_stats_and_leading_values() {
        let bytes: Vec<u8> = [1.0f32, -2.0, 3.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let a = HostArray::new(ElementType::F32, vec![3], bytes);
        assert_eq!(
            summarize(&a),
            "f32[3]  min -2  max 3.5  mean 0.8333333  [1, -2, 3.5]"
        );
        let tiny = HostArray::new(ElementType::F64, vec![], 6.98e-14f64.to_le_bytes().to_vec());
        assert_eq!(summarize(&tiny), "f64[]  [6.98e-14]");
        let c: Vec<u8> = [1.0f32, -1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let z = HostArray::new(ElementType::C64, vec![], c);
        assert_eq!(summarize(&z), "c64[]  [1-1j]");
        let bf = HostArray::new(
            ElementType::Bf16,
            vec![1],
            1.5f32.to_bits().to_le_bytes()[2..].to_vec(),
        );
        assert_eq!(summarize(&bf), "bf16[1]  [1.5]");
        let h = HostArray::new(ElementType::F16, vec![2], vec![0x00, 0x3c, 0x00, 0xc0]);
        assert_eq!(summarize(&h), "f16[2]  min -2  max 1  mean -0.5  [1, -2]");
        let many = HostArray::new(ElementType::U8, vec![8], (0..8).collect());
        assert!(summarize(&many).ends_with("[0, 1, 2, 3, 4, 5, ...]"));
    }
}
