//! Merging the modules of exported functions into the program that calls
//! them: each module's functions are renamed under the function's symbol
//! (its `main` becomes the symbol itself), made private, and moved into the
//! program's module, so one executable runs both.

use melior::Context;
use melior::ir::Module;
use melior::ir::attribute::Attribute;
use melior::ir::block::BlockLike;
use melior::ir::operation::{Operation, OperationLike, OperationMutLike};
use oxla_core::ExportedFunction;

use crate::emit::LowerError;

/// Whether `c` may appear in a bare MLIR symbol name.
fn symbol_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-')
}

/// The names of the top-level functions of a module in generic form
/// (`sym_name = "name"` on `func.func` ops at nesting depth one).
fn function_names(module: &Module<'_>) -> Vec<String> {
    let mut names = Vec::new();
    let mut op = module.body().first_operation();
    while let Some(current) = op {
        if current.name().as_string_ref().as_str() == Ok("func.func")
            && let Ok(name) = current.attribute("sym_name")
        {
            let text = name.to_string();
            names.push(text.trim_matches('"').to_string());
        }
        op = current.next_in_block();
    }
    names
}

/// `text` with every reference `@old` and definition `sym_name = "old"`
/// of each `(old, new)` pair renamed.
fn rename_symbols(text: &str, renames: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (old, new) in renames {
        out = out.replace(
            &format!("sym_name = \"{old}\""),
            &format!("sym_name = \"{new}\""),
        );
        let pattern = format!("@{old}");
        let mut renamed = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(&pattern) {
            let after = &rest[at + pattern.len()..];
            renamed.push_str(&rest[..at]);
            if after.chars().next().is_some_and(symbol_char) {
                renamed.push_str(&pattern);
            } else {
                renamed.push('@');
                renamed.push_str(new);
            }
            rest = after;
        }
        renamed.push_str(rest);
        out = renamed;
    }
    out
}

/// Parses `function`'s module in `context`, checking that MLIR reads it
/// without StableHLO's dialects (generic form).
fn parse<'c>(
    context: &'c Context,
    function: &ExportedFunction,
    text: &str,
) -> Result<Module<'c>, LowerError> {
    Module::parse(context, text).ok_or_else(|| {
        LowerError::Mlir(format!(
            "the module of the exported function {} is not StableHLO in MLIR's generic form, \
             the form oxla merges into its programs",
            function.name()
        ))
    })
}

/// Checks that `function`'s module can be merged: it parses in generic
/// form and has a `main`.
pub fn check_exported_module(function: &ExportedFunction) -> Result<(), LowerError> {
    let context = Context::new();
    context.set_allow_unregistered_dialects(true);
    let module = parse(&context, function, function.module())?;
    if !function_names(&module).iter().any(|n| n == "main") {
        return Err(LowerError::Mlir(format!(
            "the module of the exported function {} has no function `main`",
            function.name()
        )));
    }
    Ok(())
}

/// Moves `function`'s functions into `module`, renamed under its symbol.
pub(crate) fn merge_into(
    context: &Context,
    module: &Module<'_>,
    function: &ExportedFunction,
) -> Result<(), LowerError> {
    let symbol = function.symbol();
    let original = parse(context, function, function.module())?;
    let renames: Vec<(String, String)> = function_names(&original)
        .into_iter()
        .map(|name| {
            let new = if name == "main" {
                symbol.clone()
            } else {
                format!("{symbol}.{name}")
            };
            (name, new)
        })
        .collect();
    drop(original);
    let renamed = parse(
        context,
        function,
        &rename_symbols(function.module(), &renames),
    )?;
    let private = Attribute::parse(context, "\"private\"")
        .ok_or_else(|| LowerError::Mlir("cannot parse a visibility".into()))?;
    while let Some(mut op) = renamed.body().first_operation_mut() {
        let is_function = op.name().as_string_ref().as_str() == Ok("func.func");
        op.remove_from_parent();
        // SAFETY: the operation was just detached from its block, so
        // nothing else owns it; the wrapper destroys it if not appended.
        let mut owned = unsafe { Operation::from_raw(op.to_raw()) };
        if is_function {
            owned.set_attribute("sym_visibility", private);
            module.body().append_operation(owned);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_symbol_references_are_renamed() {
        let text = r#"{callee = @main} {callee = @main.impl} sym_name = "main" @main"#;
        let renamed = rename_symbols(text, &[("main".into(), "f".into())]);
        assert_eq!(
            renamed,
            r#"{callee = @f} {callee = @main.impl} sym_name = "f" @f"#
        );
    }
}
