//! Text as Orbax's Python writes it: JSON as `json.dumps` spells it (`", "`
//! and `": "` between items, non-ASCII escaped as `\uXXXX`), and a tuple of
//! strings as `str(tuple)` spells it (`('params', '0')`, `('a',)`).

use std::io::Write;

use serde::Serialize;
use serde_json::ser::Formatter;

/// `value` as `json.dumps(value)` writes it.
pub(super) fn json_dumps(value: &impl Serialize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    value
        .serialize(&mut serializer)
        .expect("JSON of maps, lists, strings and numbers");
    out
}

/// serde_json's compact output with Python's separators and ASCII only.
struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// `str(tuple(items))` in Python, for strings.
pub(super) fn tuple_repr(items: &[&str]) -> String {
    let inner: Vec<String> = items.iter().map(|s| str_repr(s)).collect();
    match inner.as_slice() {
        [one] => format!("({one},)"),
        many => format!("({})", many.join(", ")),
    }
}

/// `repr(s)` in Python: single quotes unless `s` holds one and no double
/// quote; backslashes, the quote, and control characters escaped.
fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_python_writes_it() {
        let value = serde_json::json!({"a": [1, 2], "b": {"c": null, "d": "é"}});
        assert_eq!(
            String::from_utf8(json_dumps(&value)).unwrap(),
            r#"{"a": [1, 2], "b": {"c": null, "d": "\u00e9"}}"#
        );
        assert_eq!(tuple_repr(&["a"]), "('a',)");
        assert_eq!(tuple_repr(&["l", "0", "w"]), "('l', '0', 'w')");
        assert_eq!(tuple_repr(&[]), "()");
        assert_eq!(tuple_repr(&["it's"]), r#"("it's",)"#);
        assert_eq!(tuple_repr(&["a'b\"c\\"]), r#"('a\'b"c\\',)"#);
    }
}
