//! The `oxla` command.
//!
//! Every failure prints one line, `error: ...`, and exits with status 1;
//! nothing a user passes makes it abort (`oxla run` runs in a child process
//! of its own, so that a plugin aborting on a bad module is an error line).

mod artifact;
mod cache;
mod devices;
mod doctor;
mod inspect;
mod plugin;
mod plugin_args;
mod profile;
mod run;
mod summary;
mod supervise;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// oxla: JAX's programming model in Rust, on the XLA runtime (PJRT plugins).
#[derive(Debug, Parser)]
#[command(name = "oxla", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the platform, versions, PJRT C API version and devices of a plugin.
    Devices(devices::DevicesArgs),
    /// Compile a StableHLO module (.mlir text or MLIR bytecode) or a
    /// jax.export file and run it on .npy inputs; with no inputs, print the
    /// signature it expects.
    Run(run::RunArgs),
    /// Print what a jax.export file holds: signature, pytrees, shardings,
    /// platforms, devices, effects, vjp.
    Inspect(inspect::InspectArgs),
    /// Say which PJRT plugins were found where, their versions, and what is
    /// missing with how to get it.
    Doctor,
    /// Inspect or clear the persistent compile cache (OXLA_CACHE_DIR).
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Install the pinned PJRT plugins (cpu, cuda12, cuda13, rocm, tpu) into
    /// oxla's plugin directory, or list what is installed there.
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Summarise a Chrome trace (oxla::profiler::trace's oxla.trace.json):
    /// the events taking the most time, by name and function.
    Profile(profile::ProfileArgs),
}

/// Formats an error chain on one line (plugin messages can span lines).
fn one_line(error: &anyhow::Error) -> String {
    let text = format!("{error:#}");
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error (please report it): {info}");
    }));
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices(args) => devices::run(&args),
        Command::Run(args) => {
            if let Some(code) = supervise::run_in_child(&args.file().display().to_string()) {
                return code;
            }
            run::run(&args)
        }
        Command::Inspect(args) => inspect::run(&args),
        Command::Doctor => doctor::run(),
        Command::Cache(command) => cache::run(&command),
        Command::Profile(args) => profile::run(&args),
        Command::Plugin(command) => plugin::run(&command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}
