//! The options every subcommand that talks to a plugin shares.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use oxla_pjrt::{Api, Client, ClientOptions, Platform, find_plugin};

/// Which plugin to use.
#[derive(Debug, Args)]
pub struct PluginArgs {
    /// Path of a PJRT plugin library (default: discovered for --platform).
    #[arg(long, value_name = "PATH")]
    pub plugin: Option<PathBuf>,
    /// Platform whose plugin to discover: cpu, cuda, rocm or tpu.
    #[arg(long, default_value = "cpu")]
    pub platform: Platform,
}

impl PluginArgs {
    /// Loads the plugin and creates a client with the plugin's defaults.
    pub fn client(&self) -> anyhow::Result<Client> {
        self.client_for_devices(None)
    }

    /// Loads the plugin and creates a client; on the CPU platform with
    /// `devices` set, with that many CPU devices.
    pub fn client_for_devices(&self, devices: Option<usize>) -> anyhow::Result<Client> {
        let path = find_plugin(self.platform, self.plugin.as_deref())?;
        let api = Api::load_for(self.platform, &path)?;
        let options = match devices {
            Some(n) if self.platform == Platform::Cpu => {
                ClientOptions::new().cpu_device_count(n as i64)
            }
            _ => ClientOptions::new(),
        };
        Client::new(api, &options)
            .with_context(|| format!("cannot create a client of {}", path.display()))
    }
}

/// Whether `OXLA_LOG_COMPILES` asks for a line per compilation.
fn log_compiles() -> bool {
    oxla_pjrt::settings::flag("OXLA_LOG_COMPILES")
}

/// Reports how a compilation went: cache warnings always, the source when
/// `OXLA_LOG_COMPILES` is set.
pub fn report(what: &std::path::Path, source: oxla_cache::Source, warnings: &[String]) {
    for w in warnings {
        eprintln!("{w}");
    }
    if !log_compiles() {
        return;
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    match source {
        oxla_cache::Source::Compiled { compile } => {
            eprintln!("oxla: compiled {} in {:.2} ms", what.display(), ms(compile));
        }
        oxla_cache::Source::DiskHit { load, saved } => eprintln!(
            "oxla: disk cache hit for {}: loaded in {:.2} ms, saved {:.2} ms of compilation",
            what.display(),
            ms(load),
            ms(saved)
        ),
    }
}
