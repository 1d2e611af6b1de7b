//! Loading plugins: versions, attributes, and every way loading can fail.

use std::path::{Path, PathBuf};

use oxla_pjrt::{Api, ApiVersion, Client, ClientOptions, Error};

use crate::support::{compile_fake_plugin, compile_shared_library, pinned_plugins};

#[test]
fn pinned_plugins_load_with_their_api_versions() {
    let versions: Vec<ApiVersion> = pinned_plugins()
        .iter()
        .map(|p| {
            let api = Api::load(&p.path).unwrap();
            assert_eq!(api.version().major, ApiVersion::HEADER.major, "{}", p.name);
            let attributes = api.plugin_attributes().unwrap();
            assert!(!attributes.is_empty(), "{} has no attributes", p.name);
            api.version()
        })
        .collect();
    // One plugin is older than the other: the suite covers two API versions.
    assert_eq!(versions.len(), 2);
    assert_ne!(versions[0], versions[1]);
    assert!(
        versions.contains(&ApiVersion {
            major: 0,
            minor: 81
        }),
        "{versions:?}"
    );
    assert!(versions.iter().any(|v| v.minor > 81), "{versions:?}");
}

#[test]
fn loading_twice_returns_the_same_plugin() {
    let p = &pinned_plugins()[0];
    let a = Api::load(&p.path).unwrap();
    let b = Api::load(&p.path).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

#[test]
fn a_missing_file_is_a_load_error() {
    let err = Api::load(Path::new("/nonexistent/libnothing.so")).unwrap_err();
    assert!(matches!(err, Error::Load { .. }), "{err}");
    assert!(
        err.to_string().contains("/nonexistent/libnothing.so"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_library_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.so");
    std::fs::write(&path, b"this is not an ELF file").unwrap();
    let err = Api::load(&path).unwrap_err();
    assert!(matches!(err, Error::Load { .. }), "{err}");
}

#[test]
fn a_library_without_get_pjrt_api_is_refused() {
    // A shared library of our own (any architecture), with no GetPjrtApi.
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("not_a_plugin.c");
    std::fs::write(&source, "int not_a_plugin(void) { return 0; }\n").unwrap();
    let library = dir.path().join("libnot_a_plugin.so");
    compile_shared_library(&source, &library, &[]);
    let err = Api::load(&library).unwrap_err();
    assert!(err.to_string().contains("not a PJRT plugin"), "{err}");
}

/// Compiles fixtures/fake_plugin.c with FAKE_MAJOR=`major` into `dir`.
fn build_fake_plugin(dir: &Path, major: i32) -> PathBuf {
    let out = dir.join(format!("libfake_pjrt_{major}.so"));
    compile_fake_plugin(major, &out, &[]);
    out
}

#[test]
fn a_plugin_with_another_major_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fake = build_fake_plugin(dir.path(), ApiVersion::HEADER.major + 1);
    let err = Api::load(&fake).unwrap_err();
    match &err {
        Error::IncompatibleApi {
            found,
            expected_major,
            ..
        } => {
            assert_eq!(found.major, ApiVersion::HEADER.major + 1);
            assert_eq!(*expected_major, ApiVersion::HEADER.major);
        }
        other => panic!("expected IncompatibleApi, got {other}"),
    }
    assert!(err.to_string().contains("C API 1.1"), "{err}");
}

#[test]
fn a_function_beyond_the_plugins_table_is_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let fake = build_fake_plugin(dir.path(), ApiVersion::HEADER.major);
    let api = Api::load(&fake).unwrap();
    assert_eq!(api.version(), ApiVersion { major: 0, minor: 1 });
    let err = Client::new(api.clone(), &ClientOptions::new()).unwrap_err();
    match &err {
        Error::Unsupported { function, api } => {
            assert_eq!(*function, "PJRT_Client_Create");
            assert_eq!(api.minor, 1);
        }
        other => panic!("expected Unsupported, got {other}"),
    }
    assert_eq!(
        err.to_string(),
        "PJRT_Client_Create is not supported by this plugin (PJRT C API 0.1)"
    );
    let err = api.plugin_attributes().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unsupported {
                function: "PJRT_Plugin_Attributes",
                ..
            }
        ),
        "{err}"
    );
}
