//! Binding a multi-platform export's platform index. JAX's `main` of an
//! export for several platforms takes an `i32` platform index first and
//! branches on it (`lax.platform_dependent`, or lowering rules that differ
//! by platform). Passed as a runtime argument, every platform's branch is
//! compiled, and a CPU plugin cannot compile a CUDA branch's kernels (it
//! fails or aborts). Made a constant of `main`, XLA folds the branches
//! away before it compiles them, as it does when oxla's `ExportedFn`
//! passes the index as a constant in its own program.

use super::VhloError;
use super::text::{self, Op};

/// The type of JAX's platform index, as VHLO prints it.
const PLATFORM_INDEX_TYPE: &str = "!vhlo.tensor_v1<!vhlo.i32_v1>";

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// `artifact` (a portable artifact whose public `main` takes the platform
/// index first) with that argument replaced by the constant `index`, written
/// as a portable artifact for StableHLO `version` (`"1.10.0"`): `main` then
/// takes the export's kept inputs alone.
pub fn bind_platform_index(
    artifact: &[u8],
    index: i32,
    version: &str,
) -> Result<Vec<u8>, VhloError> {
    let text = super::artifact_to_text(artifact)?;
    let mut ops = text::parse(&text)?;
    let main = find_main(&mut ops).ok_or_else(|| bad("the module has no function `main`"))?;
    bind_first_argument(main, index)?;
    super::writer::write(&ops, &format!("StableHLO_v{version}"))
}

/// The public `main` function among `ops` or inside their modules.
fn find_main(ops: &mut [Op]) -> Option<&mut Op> {
    for op in ops {
        let is_main = op.name == "vhlo.func_v1"
            && property(op, "sym_name") == Some("#vhlo.string_v1<\"main\">");
        if is_main {
            return Some(op);
        }
        if op.name == "builtin.module" {
            for region in &mut op.regions {
                for block in &mut region.blocks {
                    if let Some(main) = find_main(&mut block.ops) {
                        return Some(main);
                    }
                }
            }
        }
    }
    None
}

fn property<'o>(op: &'o Op, name: &str) -> Option<&'o str> {
    op.properties
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn property_mut<'o>(op: &'o mut Op, name: &str) -> Option<&'o mut String> {
    op.properties
        .iter_mut()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// Removes `main`'s first argument (checked to be an `i32` scalar) from its
/// type, its argument attributes and its entry block, and defines the
/// value it named by a constant at the top of the block.
fn bind_first_argument(main: &mut Op, index: i32) -> Result<(), VhloError> {
    let block = main
        .regions
        .first_mut()
        .and_then(|r| r.blocks.first_mut())
        .ok_or_else(|| bad("`main` has no body"))?;
    let (name, ty) = match block.arguments.first() {
        Some(first) => first.clone(),
        None => return Err(bad("`main` takes no platform index: it has no arguments")),
    };
    if ty != PLATFORM_INDEX_TYPE {
        return Err(bad(format!(
            "`main`'s first argument is {ty}, not the i32 platform index"
        )));
    }
    block.arguments.remove(0);
    let bytes: String = index
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    block.ops.insert(
        0,
        Op {
            name: "vhlo.constant_v1".into(),
            results: vec![name],
            operands: vec![],
            properties: vec![(
                "value".into(),
                format!("#vhlo.tensor_v1<dense<\"0x{bytes}\"> : tensor<i32>>"),
            )],
            regions: vec![],
            attributes: vec![],
            operand_types: vec![],
            result_types: vec![PLATFORM_INDEX_TYPE.into()],
        },
    );
    let function_type =
        property_mut(main, "function_type").ok_or_else(|| bad("`main` has no function_type"))?;
    *function_type = without_first_input(function_type)?;
    if let Some(arg_attrs) = property_mut(main, "arg_attrs") {
        *arg_attrs = without_first_element(arg_attrs)?;
    }
    Ok(())
}

/// `#vhlo.type_v1<!vhlo.func_v1<(A, B, ...) -> R>>` without `A`.
fn without_first_input(function_type: &str) -> Result<String, VhloError> {
    let open = "!vhlo.func_v1<(";
    let start = function_type
        .find(open)
        .ok_or_else(|| bad(format!("unexpected function type {function_type}")))?
        + open.len();
    let end = start + closing(&function_type[start..], ')')?;
    let inputs = top_level_items(&function_type[start..end]);
    Ok(format!(
        "{}{}{}",
        &function_type[..start],
        inputs[1.min(inputs.len())..].join(", "),
        &function_type[end..]
    ))
}

/// `#vhlo.array_v1<[X, Y, ...]>` without `X`.
fn without_first_element(array: &str) -> Result<String, VhloError> {
    let inner = array
        .strip_prefix("#vhlo.array_v1<[")
        .and_then(|a| a.strip_suffix("]>"))
        .ok_or_else(|| bad(format!("unexpected argument attributes {array}")))?;
    let items = top_level_items(inner);
    Ok(format!(
        "#vhlo.array_v1<[{}]>",
        items[1.min(items.len())..].join(", ")
    ))
}

/// Walks `s`, calling `visit(offset, char)` for each char outside strings
/// at bracket depth 0 (where a closing bracket of the enclosing text is
/// too) until it returns `true`; returns that offset. The `>` of an arrow
/// (`->`) closes nothing.
fn scan_top_level(s: &str, mut visit: impl FnMut(usize, char) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    let (mut quoted, mut escaped) = (false, false);
    let mut previous = ' ';
    for (i, c) in s.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
        } else {
            if depth == 0 && visit(i, c) {
                return Some(i);
            }
            match c {
                '"' => quoted = true,
                '(' | '[' | '{' | '<' => depth += 1,
                '>' if previous == '-' => {}
                ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        previous = c;
    }
    None
}

/// The offset of the `close` that ends the text `s` begins inside of.
fn closing(s: &str, close: char) -> Result<usize, VhloError> {
    scan_top_level(s, |_, c| c == close).ok_or_else(|| bad(format!("no closing {close:?} in {s}")))
}

/// The comma-separated items of `s` at its top level (not inside brackets
/// or strings), trimmed; none for an empty `s`.
fn top_level_items(s: &str) -> Vec<String> {
    let mut commas = Vec::new();
    scan_top_level(s, |i, c| {
        if c == ',' {
            commas.push(i);
        }
        false
    });
    let mut items = Vec::new();
    let mut start = 0;
    for comma in commas.into_iter().chain([s.len()]) {
        let item = s[start..comma].trim();
        if !item.is_empty() || comma != s.len() {
            items.push(item.to_string());
        }
        start = comma + 1;
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_input_leaves_the_function_type() {
        let t = "#vhlo.type_v1<!vhlo.func_v1<(!vhlo.tensor_v1<!vhlo.i32_v1>, \
                 !vhlo.tensor_v1<3x!vhlo.f32_v1>) -> !vhlo.tensor_v1<3x!vhlo.f32_v1>>>";
        assert_eq!(
            without_first_input(t).unwrap(),
            "#vhlo.type_v1<!vhlo.func_v1<(!vhlo.tensor_v1<3x!vhlo.f32_v1>) -> \
             !vhlo.tensor_v1<3x!vhlo.f32_v1>>>"
        );
        let only = "#vhlo.type_v1<!vhlo.func_v1<(!vhlo.tensor_v1<!vhlo.i32_v1>) -> ()>>";
        assert_eq!(
            without_first_input(only).unwrap(),
            "#vhlo.type_v1<!vhlo.func_v1<() -> ()>>"
        );
    }

    #[test]
    fn the_first_element_leaves_the_attributes_whatever_their_strings_hold() {
        let a = "#vhlo.array_v1<[#vhlo.dict_v1<{#vhlo.string_v1<\"jax.global_constant\"> = \
                 #vhlo.string_v1<\"_platform_index\">}>, #vhlo.dict_v1<{#vhlo.string_v1<\"a\"> \
                 = #vhlo.string_v1<\"x, ]> \\\" y\">}>]>";
        assert_eq!(
            without_first_element(a).unwrap(),
            "#vhlo.array_v1<[#vhlo.dict_v1<{#vhlo.string_v1<\"a\"> = #vhlo.string_v1<\"x, ]> \
             \\\" y\">}>]>"
        );
        assert!(without_first_element("#vhlo.dict_v1<{}>").is_err());
    }

    #[test]
    fn bytes_that_are_not_an_artifact_are_an_error() {
        assert!(bind_platform_index(b"module {}", 0, "1.10.0").is_err());
    }
}
