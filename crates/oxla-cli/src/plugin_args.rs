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
        let api = Api::load(&path)?;
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
