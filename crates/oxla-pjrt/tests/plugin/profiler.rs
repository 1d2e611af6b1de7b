//! The PJRT profiler extension: the pinned CPU plugins have none (oxla
//! then records only its own spans); a plugin that has one (the CUDA
//! plugin of crates/oxla-plugins/pins/profiler-plugins.toml, which
//! ci/setup installs for these tests on x86_64 and which profiles without a
//! GPU, and any plugin named by `OXLA_TEST_PROFILER_PLUGIN`) is driven
//! through a whole session, and its errors come back with the plugin's code
//! and message.

use std::path::PathBuf;

use oxla_pjrt::profiler_proto::ProfileOptions;
use oxla_pjrt::{Api, Error, ErrorCode, PluginProfiler};

use crate::support::{pinned_plugins, plugins_of};

#[test]
fn the_pinned_cpu_plugins_have_no_profiler_extension() {
    for plugin in pinned_plugins() {
        let api = Api::load(&plugin.path).unwrap();
        assert!(!PluginProfiler::available(&api), "{}", plugin.name);
        let session = PluginProfiler::start(&api, &ProfileOptions::default()).unwrap();
        assert!(session.is_none(), "{}", plugin.name);
    }
}

/// The plugins with a profiler: the one ci/setup installs for these tests
/// (x86_64), and any named by `OXLA_TEST_PROFILER_PLUGIN`.
fn profiling_plugins() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::env::var_os("OXLA_TEST_PROFILER_PLUGIN")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if cfg!(target_arch = "x86_64") {
        let dir = oxla_pjrt::oxla_home().join("profiler-plugins");
        found.extend(
            plugins_of("profiler-plugins.toml", &dir)
                .into_iter()
                .map(|p| p.path),
        );
    }
    found
}

#[test]
fn a_plugin_profiler_records_a_session_and_reports_its_errors() {
    for path in profiling_plugins() {
        let api = Api::load(&path).unwrap();
        assert!(PluginProfiler::available(&api), "{}", path.display());
        let options = ProfileOptions {
            host_tracer_level: 2,
            device_tracer_level: 1,
            ..Default::default()
        };
        let session = PluginProfiler::start(&api, &options).unwrap().unwrap();
        // One host tracer per process: a second session cannot start, and
        // says why in the plugin's words.
        match PluginProfiler::start(&api, &options) {
            Err(Error::Plugin {
                function,
                code,
                message,
            }) => {
                assert_eq!(function, "PLUGIN_Profiler_Start");
                assert_eq!(code, ErrorCode::Internal, "{message}");
                assert!(message.contains("TraceMeRecorder"), "{message}");
            }
            other => panic!("a second session started: {other:?}"),
        }
        let space = session.collect().unwrap();
        // Whatever it recorded decodes; without a GPU the plugin records
        // no device planes.
        assert!(space.errors.is_empty(), "{:?}", space.errors);
        // A new session works after the last one ended.
        let again = PluginProfiler::start(&api, &options).unwrap().unwrap();
        again.collect().unwrap();
    }
}
