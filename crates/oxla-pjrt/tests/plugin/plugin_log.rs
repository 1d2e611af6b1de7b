//! The plugins' own C++ log lines: quiet by default (warnings and up), more
//! with `OXLA_PLUGIN_LOG=info`, the user's `TF_CPP_MIN_LOG_LEVEL` kept, and a
//! bad `OXLA_PLUGIN_LOG` a clear error. Each case runs this test binary again
//! as a child (the level is read once per process), running only
//! `make_a_client_in_a_child`, and reads the child's stderr.

use std::process::Command;

use oxla_pjrt::{Client, ClientOptions};

use crate::support::pinned_plugins;

/// The info line the CPU plugins log when `cpu_device_count` is set.
const INFO_LINE: &str = "cpu_device_count set via create_options";
/// absl's preamble before the first line it prints.
const ABSL_PREAMBLE: &str = "absl::InitializeLog";

/// Runs the child with `env` (and without the variables it does not
/// name), returning (success, stderr).
fn child(env: &[(&str, &str)]) -> (bool, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "plugin_log::make_a_client_in_a_child",
            "--ignored",
            "--nocapture",
        ])
        .env("OXLA_TEST_PLUGIN_LOG_CHILD", "1")
        .env_remove("OXLA_PLUGIN_LOG")
        .env_remove("TF_CPP_MIN_LOG_LEVEL");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plugin_logs_are_quiet_by_default_and_shown_on_request() {
    let (ok, quiet) = child(&[]);
    assert!(ok, "{quiet}");
    assert!(
        !quiet.contains(INFO_LINE) && !quiet.contains(ABSL_PREAMBLE),
        "default run printed plugin info lines:\n{quiet}"
    );

    let (ok, loud) = child(&[("OXLA_PLUGIN_LOG", "info")]);
    assert!(ok, "{loud}");
    assert!(
        loud.contains(INFO_LINE),
        "OXLA_PLUGIN_LOG=info hid the info line:\n{loud}"
    );

    let (ok, users) = child(&[("OXLA_PLUGIN_LOG", "error"), ("TF_CPP_MIN_LOG_LEVEL", "0")]);
    assert!(ok, "{users}");
    assert!(
        users.contains(INFO_LINE),
        "the user's TF_CPP_MIN_LOG_LEVEL=0 was overridden:\n{users}"
    );

    let (ok, bad) = child(&[("OXLA_PLUGIN_LOG", "chatty")]);
    assert!(!ok, "a bad OXLA_PLUGIN_LOG loaded the plugin:\n{bad}");
    // The child prints the error with Debug (quotes escaped) as it panics.
    assert!(
        bad.contains("OXLA_PLUGIN_LOG=")
            && bad.contains("chatty")
            && bad.contains("expected info, warning or error"),
        "{bad}"
    );
}

/// The child: loads each pinned CPU plugin and makes a client with
/// `cpu_device_count` (which makes the plugins log an info line).
#[test]
#[ignore = "run as a child by plugin_logs_are_quiet_by_default_and_shown_on_request"]
fn make_a_client_in_a_child() {
    if std::env::var_os("OXLA_TEST_PLUGIN_LOG_CHILD").is_none() {
        return;
    }
    for plugin in pinned_plugins() {
        let api = oxla_pjrt::Api::load(&plugin.path).unwrap();
        Client::new(api, &ClientOptions::new().cpu_device_count(1)).unwrap();
    }
}
