//! What a file given to `oxla run` or `oxla inspect` holds: a StableHLO
//! module (MLIR text or bytecode) or a `jax.export` file.

use std::path::Path;

use anyhow::{Context, bail};
use oxla_export::{ExportError, Exported};
use oxla_pjrt::Program;

/// A program file's contents.
pub enum Artifact {
    /// A StableHLO module.
    Module(Program),
    /// A `jax.export` file.
    Export(Box<Exported>),
}

/// Reads `file` and tells MLIR bytecode (by its magic), `jax.export`
/// flatbuffers (by verifying them) and MLIR text (UTF-8) apart.
pub fn read_artifact(file: &Path) -> anyhow::Result<Artifact> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    if bytes.is_empty() {
        bail!(
            "{} is empty: oxla runs a StableHLO module (MLIR text or bytecode) or a jax.export file",
            file.display()
        );
    }
    let program = Program::mlir(bytes);
    if program.is_mlir_bytecode() {
        return Ok(Artifact::Module(program));
    }
    let export_error = match Exported::from_bytes(program.code()) {
        Ok(exported) => return Ok(Artifact::Export(Box::new(exported))),
        Err(e @ ExportError::UnsupportedVersion(_)) => {
            return Err(e).with_context(|| format!("cannot read {}", file.display()));
        }
        Err(e) => e,
    };
    if std::str::from_utf8(program.code()).is_ok() {
        return Ok(Artifact::Module(program));
    }
    bail!(
        "{} is neither MLIR text, MLIR bytecode nor a jax.export file ({export_error})",
        file.display()
    )
}

/// An export's inputs and outputs, one leaf a line, with their paths.
pub fn export_signature(exported: &Exported) -> String {
    let leaf = |i: usize, path: &str, aval: &dyn std::fmt::Display| match path {
        "" => format!("\n  [{i}] {aval}"),
        path => format!("\n  [{i}] {path} {aval}"),
    };
    let mut text = format!("function: {}", exported.function_name);
    text.push_str(&format!("\ninputs: {}", exported.in_tree.to_jax_string()));
    for (i, (path, aval)) in exported
        .in_tree
        .leaf_paths()
        .iter()
        .zip(&exported.in_avals)
        .enumerate()
    {
        text.push_str(&leaf(i, path, aval));
        if !exported.module_kept_var_idx.contains(&i) {
            text.push_str("  (unused by the module)");
        }
    }
    text.push_str(&format!("\noutputs: {}", exported.out_tree.to_jax_string()));
    for (i, (path, aval)) in exported
        .out_tree
        .leaf_paths()
        .iter()
        .zip(&exported.out_avals)
        .enumerate()
    {
        text.push_str(&leaf(i, path, aval));
    }
    text
}
