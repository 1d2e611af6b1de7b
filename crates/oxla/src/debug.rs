//! `debug::print` (JAX's `jax.debug.print`): prints traced values from
//! inside jitted code, as an ordered effectful host callback. Each `{}`
//! (or `{N}`) placeholder takes an argument formatted as an `Array` prints
//! (numpy's layout); `{{` and `}}` are braces. Under `vmap` it prints one
//! line per example, under `grad` the forward values, inside `cond`,
//! `while_loop` and `scan` bodies each time the body runs.

use oxla_core::DType;
use std::io::Write;

use oxla_core::{Location, VmapMethod};

use crate::array::{Array, write_host};
use crate::callback::host_call;
use crate::error::{Error, Result};

/// One piece of a format string.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Argument(usize),
}

/// Splits `format` into text and argument references, checked against
/// `count` arguments.
fn parse(format: &str, count: usize) -> std::result::Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut inside = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(ch) => inside.push(ch),
                        None => return Err(format!("an unclosed `{{` in {format:?}")),
                    }
                }
                let index = if inside.is_empty() {
                    next += 1;
                    next - 1
                } else {
                    inside.parse().map_err(|_| {
                        format!("`{{{inside}}}` in {format:?}: placeholders are `{{}}` or `{{N}}`")
                    })?
                };
                if index >= count {
                    return Err(format!(
                        "{format:?} refers to argument {index}, and {count} were given"
                    ));
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Argument(index));
            }
            '}' => return Err(format!("a lone `}}` in {format:?} (write `}}}}`)")),
            other => text.push(other),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Prints `format` with `args` from inside a program (or now, eagerly):
/// one line on standard output each time the program reaches the call.
#[track_caller]
pub fn print(format: &str, args: &[&Array]) -> Result<()> {
    let location = Location::from_caller(std::panic::Location::caller());
    let pieces = parse(format, args.len()).map_err(|message| Error::Usage {
        function: "debug::print",
        message,
        location,
    })?;
    host_call(
        "debug::print",
        move |values| {
            let mut line = String::new();
            for piece in &pieces {
                match piece {
                    Piece::Text(text) => line.push_str(text),
                    Piece::Argument(i) => {
                        let value = &values[*i];
                        let dtype = DType::from(value.element_type());
                        write_host(&mut line, dtype, value).map_err(|e| e.to_string())?;
                    }
                }
            }
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}")
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write to standard output: {e}"))?;
            Ok(Vec::new())
        },
        &[],
        args,
        true,
        VmapMethod::Sequential,
        location,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_split_and_checked() {
        assert_eq!(
            parse("x={} y={1} {{}}", 2).unwrap(),
            vec![
                Piece::Text("x=".into()),
                Piece::Argument(0),
                Piece::Text(" y=".into()),
                Piece::Argument(1),
                Piece::Text(" {}".into()),
            ]
        );
        assert!(parse("{} {}", 1).unwrap_err().contains("argument 1"));
        assert!(parse("{x}", 1).unwrap_err().contains("placeholders"));
        assert!(parse("{", 1).unwrap_err().contains("unclosed"));
        assert!(parse("}", 0).unwrap_err().contains("lone"));
    }
}
