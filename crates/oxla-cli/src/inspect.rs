//! `oxla inspect FILE`: what an export (or a StableHLO module) contains.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use oxla_export::{DisabledCheck, Exported, Sharding};

use crate::artifact::{Artifact, export_signature, read_artifact};
use crate::plugin_args::PluginArgs;
use crate::run::signature;

/// Arguments of `oxla inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A jax.export file, or a StableHLO module (compiled to read its signature).
    file: PathBuf,
    #[command(flatten)]
    plugin: PluginArgs,
}

fn shardings(label: &str, shardings: &[Sharding]) -> String {
    if shardings.iter().all(|s| *s == Sharding::Unspecified) {
        return format!("{label}: unspecified");
    }
    let mut text = format!("{label}:");
    for (i, s) in shardings.iter().enumerate() {
        text.push_str(&format!("\n  [{i}] {s}"));
    }
    text
}

fn describe(exported: &Exported, indent: &str) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let checks: Vec<String> = exported
        .disabled_checks
        .iter()
        .map(|c| match c {
            DisabledCheck::Platform => "platform".to_string(),
            DisabledCheck::CustomCall(target) => format!("custom_call({target})"),
            DisabledCheck::ShapeAssertions => "shape_assertions".to_string(),
        })
        .collect();
    let mut lines = vec![
        export_signature(exported),
        format!("written by: {}", exported.producer()),
        format!(
            "serialization: version field {}, format {}",
            exported.serialization_version, exported.format_version,
        ),
        format!(
            "calling convention: {}",
            exported.calling_convention_version
        ),
        format!("platforms: {}", list(&exported.platforms)),
        format!("devices: {}", exported.nr_devices),
        shardings("input shardings", &exported.in_shardings),
        shardings("output shardings", &exported.out_shardings),
        format!("ordered effects: {}", list(&exported.ordered_effects)),
        format!("unordered effects: {}", list(&exported.unordered_effects)),
        format!("disabled safety checks: {}", list(&checks)),
        format!("uses global constants: {}", exported.uses_global_constants),
        format!(
            "module: {} bytes, {}",
            exported.mlir_module.len(),
            exported.module_form()
        ),
    ];
    match &exported.vjp {
        Some(vjp) => lines.push(format!("vjp: included\n{}", describe(vjp, "  "))),
        None => lines.push("vjp: not included".to_string()),
    }
    lines
        .join("\n")
        .lines()
        .map(|l| format!("{indent}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `oxla inspect`.
pub fn run(args: &InspectArgs) -> anyhow::Result<()> {
    match read_artifact(&args.file)? {
        Artifact::Export(exported) => println!("{}", describe(&exported, "")),
        Artifact::Module(program) => {
            let client = args.plugin.client()?;
            let executable = client
                .compile(&program, &client.default_compile_options())
                .with_context(|| format!("cannot compile {}", args.file.display()))?;
            println!("StableHLO module, {} bytes", program.code().len());
            println!("{}", signature(executable.program_shape()?));
        }
    }
    Ok(())
}
