//! Merging the modules of exported functions into the program that calls
//! them: each module's functions are renamed under the function's symbol
//! (its `main` becomes the symbol itself), made private, and moved into the
//! program's module, so one executable runs both. A module is either
//! StableHLO (`func.func`, called with `func.call`) or VHLO read from a
//! portable artifact (`vhlo.func_v1`, called with `vhlo.call_v1`, which
//! XLA upgrades to StableHLO when it compiles the program).

use melior::Context;
use melior::ir::Module;
use melior::ir::attribute::Attribute;
use melior::ir::block::BlockLike;
use melior::ir::operation::{Operation, OperationLike, OperationMutLike};
use oxla_core::ExportedFunction;

use crate::emit::LowerError;

/// The dialect of an exported module's functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FunctionDialect {
    /// `func.func`, called with `func.call`.
    Func,
    /// `vhlo.func_v1`, called with `vhlo.call_v1`.
    Vhlo,
}

impl FunctionDialect {
    /// The dialect of `module`'s functions.
    pub(crate) fn of(module: &str) -> FunctionDialect {
        if module.contains("\"vhlo.func_v1\"") {
            FunctionDialect::Vhlo
        } else {
            FunctionDialect::Func
        }
    }

    fn function_op(self) -> &'static str {
        match self {
            FunctionDialect::Func => "func.func",
            FunctionDialect::Vhlo => "vhlo.func_v1",
        }
    }

    /// The op that calls a function.
    pub(crate) fn call_op(self) -> &'static str {
        match self {
            FunctionDialect::Func => "func.call",
            FunctionDialect::Vhlo => "vhlo.call_v1",
        }
    }

    /// How an attribute refers to the function `name`.
    pub(crate) fn symbol_reference(self, name: &str) -> String {
        match self {
            FunctionDialect::Func => format!("@{name}"),
            FunctionDialect::Vhlo => format!("#vhlo.string_v1<\"{name}\">"),
        }
    }
}

/// Whether `c` may appear in a bare MLIR symbol name.
fn symbol_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-')
}

/// The names of the top-level functions of a module in generic form.
fn function_names(module: &Module<'_>, dialect: FunctionDialect) -> Vec<String> {
    let mut names = Vec::new();
    let mut op = module.body().first_operation();
    while let Some(current) = op {
        if current.name().as_string_ref().as_str() == Ok(dialect.function_op())
            && let Ok(name) = current.attribute("sym_name")
        {
            let text = name.to_string();
            let text = text
                .strip_prefix("#vhlo.string_v1<")
                .and_then(|t| t.strip_suffix('>'))
                .unwrap_or(&text);
            names.push(text.trim_matches('"').to_string());
        }
        op = current.next_in_block();
    }
    names
}

/// `text` with each `(old, new)` function renamed (and, for VHLO, its
/// public functions made private).
fn rename_symbols(text: &str, renames: &[(String, String)], dialect: FunctionDialect) -> String {
    match dialect {
        FunctionDialect::Func => rename_func_symbols(text, renames),
        FunctionDialect::Vhlo => {
            let mut out = text.replace(
                "sym_visibility = #vhlo.string_v1<\"public\">",
                "sym_visibility = #vhlo.string_v1<\"private\">",
            );
            for (old, new) in renames {
                out = out.replace(
                    &dialect.symbol_reference(old),
                    &dialect.symbol_reference(new),
                );
            }
            out
        }
    }
}

/// `text` with every reference `@old` and definition `sym_name = "old"`
/// of each `(old, new)` pair renamed.
fn rename_func_symbols(text: &str, renames: &[(String, String)]) -> String {
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

/// Parses `function`'s module in `context` (no dialect registered, so it
/// must be in generic form).
fn parse<'c>(
    context: &'c Context,
    function: &ExportedFunction,
    text: &str,
) -> Result<Module<'c>, LowerError> {
    Module::parse(context, text).ok_or_else(|| {
        LowerError::Mlir(format!(
            "the module of the exported function {} is not StableHLO or VHLO in MLIR's \
             generic form, the form oxla merges into its programs",
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
    let dialect = FunctionDialect::of(function.module());
    if !function_names(&module, dialect).iter().any(|n| n == "main") {
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
    let dialect = FunctionDialect::of(function.module());
    let original = parse(context, function, function.module())?;
    let renames: Vec<(String, String)> = function_names(&original, dialect)
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
    let text = rename_symbols(function.module(), &renames, dialect);
    let renamed = parse(context, function, &text)?;
    let private = Attribute::parse(context, "\"private\"")
        .ok_or_else(|| LowerError::Mlir("cannot parse a visibility".into()))?;
    while let Some(mut op) = renamed.body().first_operation_mut() {
        let is_function = op.name().as_string_ref().as_str() == Ok(dialect.function_op());
        op.remove_from_parent();
        // SAFETY: the operation was just detached from its block, so
        // nothing else owns it; the wrapper destroys it if not appended.
        let mut owned = unsafe { Operation::from_raw(op.to_raw()) };
        if is_function {
            if dialect == FunctionDialect::Func {
                owned.set_attribute("sym_visibility", private);
            }
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
        let renamed = rename_func_symbols(text, &[("main".into(), "f".into())]);
        assert_eq!(
            renamed,
            r#"{callee = @f} {callee = @main.impl} sym_name = "f" @f"#
        );
    }

    #[test]
    fn vhlo_functions_are_renamed_and_made_private() {
        let text = r#"sym_name = #vhlo.string_v1<"main">, sym_visibility = #vhlo.string_v1<"public"> callee = #vhlo.string_v1<"main.impl">"#;
        let renamed = rename_symbols(
            text,
            &[
                ("main".into(), "f".into()),
                ("main.impl".into(), "f.impl".into()),
            ],
            FunctionDialect::Vhlo,
        );
        assert_eq!(
            renamed,
            r#"sym_name = #vhlo.string_v1<"f">, sym_visibility = #vhlo.string_v1<"private"> callee = #vhlo.string_v1<"f.impl">"#
        );
    }
}
