//! Pieces of JAX's jaxpr syntax shared by the families' parameter printers.

/// A tuple as Python prints it: `(1,)`, `(1, 2)`, `()`.
pub(crate) fn tuple(d: &[i64]) -> String {
    match d.len() {
        1 => format!("({},)", d[0]),
        _ => format!(
            "({})",
            d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A list as Python prints it: `[1, 2]`.
pub(crate) fn list(d: &[i64]) -> String {
    format!(
        "[{}]",
        d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
    )
}

/// `(low, high)` pairs as Python prints a tuple of them.
pub(crate) fn pairs(padding: &[(i64, i64)]) -> String {
    format!(
        "({})",
        padding
            .iter()
            .map(|(l, h)| format!("({l}, {h})"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A bool as Python prints it.
pub(crate) fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}
