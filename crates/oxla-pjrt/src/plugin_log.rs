//! How much the plugins' own C++ logging (absl / TSL) prints.
//!
//! XLA's plugins log through TSL, which reads `TF_CPP_MIN_LOG_LEVEL` (0
//! info, 1 warning, 2 error, 3 fatal) once, at their first log line. Left
//! alone they print info lines on every run (`cpu_device_count set via
//! create_options`) after absl's preamble (`WARNING: All log messages
//! before absl::InitializeLog() is called are written to STDERR`). oxla is
//! quiet by default, as JAX's Python side is: before the first plugin is
//! loaded it sets `TF_CPP_MIN_LOG_LEVEL` to the level that
//! `OXLA_PLUGIN_LOG` names (`info`, `warning` or `error`; `warning` when
//! unset), unless the user has set `TF_CPP_MIN_LOG_LEVEL` themselves,
//! which then wins.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The variable that chooses the plugins' log level.
pub const PLUGIN_LOG_VAR: &str = "OXLA_PLUGIN_LOG";

/// The variable the plugins read (TSL's), which oxla sets.
pub const TSL_LOG_VAR: &str = "TF_CPP_MIN_LOG_LEVEL";

/// The least severe plugin log line that is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginLogLevel {
    /// Everything, info lines included.
    Info,
    /// Warnings and errors (the default).
    Warning,
    /// Errors only.
    Error,
}

impl PluginLogLevel {
    /// The level `OXLA_PLUGIN_LOG`'s value names; an error listing the
    /// accepted values otherwise.
    pub fn parse(value: &str) -> Result<PluginLogLevel> {
        match value.trim().to_ascii_lowercase().as_str() {
            "info" => Ok(PluginLogLevel::Info),
            "warning" | "warn" => Ok(PluginLogLevel::Warning),
            "error" => Ok(PluginLogLevel::Error),
            _ => Err(Error::InvalidArgument(format!(
                "{PLUGIN_LOG_VAR}={value:?}: expected info, warning or error"
            ))),
        }
    }

    /// TSL's number for the level (`TF_CPP_MIN_LOG_LEVEL`).
    pub fn tsl_level(self) -> &'static str {
        match self {
            PluginLogLevel::Info => "0",
            PluginLogLevel::Warning => "1",
            PluginLogLevel::Error => "2",
        }
    }
}

/// What [`configure_plugin_logging`] decided, kept for the process.
static CONFIGURED: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Sets `TF_CPP_MIN_LOG_LEVEL` from `OXLA_PLUGIN_LOG` (default: warning)
/// unless the user set it; once per process, before the first plugin is
/// loaded. An `OXLA_PLUGIN_LOG` that names no level is an error, on every
/// load, and nothing is set.
pub(crate) fn configure_plugin_logging() -> Result<()> {
    CONFIGURED
        .get_or_init(|| {
            let wanted = match std::env::var(PLUGIN_LOG_VAR) {
                Ok(value) => PluginLogLevel::parse(&value).map_err(|e| e.to_string())?,
                Err(_) => PluginLogLevel::Warning,
            };
            if std::env::var_os(TSL_LOG_VAR).is_none() {
                // SAFETY: this runs once, before oxla loads its first
                // plugin (the only code here that reads the variable, at its
                // first log line); oxla starts no thread that reads or writes
                // the environment. A program that changes the environment
                // from another thread at this moment would race, as with any
                // `set_var`; JAX sets the same variable the same way.
                unsafe { std::env::set_var(TSL_LOG_VAR, wanted.tsl_level()) };
            }
            Ok(())
        })
        .clone()
        .map_err(Error::InvalidArgument)
}

#[cfg(test)]
mod tests {
    use super::PluginLogLevel;

    #[test]
    fn levels_parse_and_map_to_tsl_numbers() {
        for (text, level, tsl) in [
            ("info", PluginLogLevel::Info, "0"),
            ("WARNING", PluginLogLevel::Warning, "1"),
            ("warn", PluginLogLevel::Warning, "1"),
            (" error ", PluginLogLevel::Error, "2"),
        ] {
            let parsed = PluginLogLevel::parse(text).unwrap();
            assert_eq!((parsed, parsed.tsl_level()), (level, tsl), "{text}");
        }
        let e = PluginLogLevel::parse("verbose").unwrap_err().to_string();
        assert!(
            e.contains("OXLA_PLUGIN_LOG=\"verbose\"") && e.contains("info, warning or error"),
            "{e}"
        );
    }
}
