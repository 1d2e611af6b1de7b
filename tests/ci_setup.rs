//! ci/setup's dataset installer (ci/install_datasets.py) against archives
//! built locally: a wrong SHA-256 stops it with a clear message and installs
//! nothing; a right one installs; a second run only checks. Runs the Python
//! unittests in ci/test_install_datasets.py with the system's python3 (the
//! one ci/setup itself uses). The plugin installer, `oxla plugin install`,
//! is tested in crates/oxla-plugins; here only the pins it compiles in
//! (crates/oxla-plugins/pins/) are checked as files.

use oxla_testing::BoundedOutput;
use std::path::Path;
use std::process::Command;

/// Runs one of ci/'s unittest files and checks how many tests it ran.
fn run_unittest(file: &str, expected_tests: usize) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", file])
        .current_dir(&repo)
        .output_bounded();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains(&format!("Ran {expected_tests} tests")),
        "{log}"
    );
}

#[test]
fn install_datasets_checks_pins_and_is_idempotent() {
    run_unittest("ci/test_install_datasets.py", 4);
}

#[test]
fn pinned_datasets_have_full_sha256_pins() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(repo.join("third_party/datasets.toml")).unwrap();
    let pins: Vec<&str> = manifest
        .split("sha256 = \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    // Two archives and nine members.
    assert_eq!(pins.len(), 11);
    for pin in pins {
        assert_full_sha256(pin);
    }
}

/// A full SHA-256: 64 hex digits.
fn assert_full_sha256(pin: &str) {
    assert_eq!(pin.len(), 64, "{pin}");
    assert!(pin.chars().all(|c| c.is_ascii_hexdigit()), "{pin}");
}

#[test]
fn pinned_plugins_have_full_sha256_pins() {
    let plugins = oxla_plugins::Choice::Cpu.plugins().unwrap();
    assert_eq!(plugins.len(), 2);
    for plugin in &plugins {
        assert_full_sha256(&plugin.wheel.sha256);
    }
}

/// What `ci/setup --cuda` installs (3 GB, so not downloaded here): one
/// plugin whose every required wheel has a full SHA-256 pin, no wheel pinned
/// twice or left unused, and the plugin library where oxla's discovery
/// looks for a CUDA plugin.
#[test]
fn pinned_cuda_wheels_are_complete() {
    let manifest = oxla_plugins::Choice::Cuda12.manifest().unwrap();
    assert_eq!(manifest.plugins.len(), 1);
    let plugin = &manifest.plugins[0];
    assert_eq!(plugin.name(), "jax-cuda12-pjrt");
    assert_eq!(plugin.library, "jax_plugins/xla_cuda12/xla_cuda_plugin.so");
    let mut names: Vec<&str> = manifest.wheels.iter().map(|w| w.name.as_str()).collect();
    names.sort();
    let mut required: Vec<&str> = plugin.requires.iter().map(|w| w.name.as_str()).collect();
    required.sort();
    assert_eq!(
        names, required,
        "every required wheel pinned once, none unused"
    );
    assert_eq!(required.len(), 12);
    for wheel in plugin.wheels(true) {
        assert_full_sha256(&wheel.sha256);
    }
}

/// Every Python package ci/setup installs is pinned to one version with at
/// least one full SHA-256 (`--require-hashes` refuses anything else).
#[test]
fn python_requirements_are_pinned_with_hashes() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(repo.join("third_party/python-requirements.txt")).unwrap();
    let joined = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\\n", " ");
    let requirements: Vec<&str> = joined.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(requirements.len() >= 13, "{requirements:?}");
    for requirement in requirements {
        let mut words = requirement.split_whitespace();
        let pin = words.next().unwrap();
        assert!(pin.contains("=="), "{pin} is not pinned to one version");
        let hashes: Vec<&str> = words
            .map(|w| {
                w.strip_prefix("--hash=sha256:")
                    .unwrap_or_else(|| panic!("{pin}: {w}"))
            })
            .collect();
        assert!(!hashes.is_empty(), "{pin} has no hash");
        for hash in hashes {
            assert_eq!(hash.len(), 64, "{pin}: {hash}");
            assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{pin}: {hash}");
        }
    }
}

/// rust-toolchain.toml pins the toolchain that builds oxla, at least the
/// workspace's rust-version, and cargo in the repository resolves to it.
#[test]
fn the_pinned_rust_toolchain_is_the_one_in_use() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let pin: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo.join("rust-toolchain.toml")).unwrap())
            .unwrap();
    let channel = pin["toolchain"]["channel"].as_str().unwrap().to_string();
    let version = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap()).collect() };
    assert!(
        version(&channel) >= version(env!("CARGO_PKG_RUST_VERSION")),
        "the pin {channel} is older than rust-version {}",
        env!("CARGO_PKG_RUST_VERSION")
    );
    let out = Command::new("rustc")
        .arg("--version")
        .current_dir(&repo)
        .output_bounded();
    let used = String::from_utf8_lossy(&out.stdout);
    assert!(
        used.starts_with(&format!("rustc {channel} ")),
        "rustc in the repository is {used:?}, the pin is {channel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every Debian package ci/setup installs names a file the build or the
/// tests read from it (an absolute path), which ci/setup checks dpkg
/// attributes to that package; and the packages whose files melior's
/// build and the README's own-project section need are all listed.
#[test]
fn debian_packages_name_the_files_they_provide() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(repo.join("third_party/debian-packages.txt")).unwrap();
    let mut packages = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 2, "expected `package /path`: {line:?}");
        assert!(fields[1].starts_with('/'), "not an absolute path: {line:?}");
        packages.push(fields[0]);
    }
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let default_build = [
        "llvm-22-dev",
        "libmlir-22-dev",
        "libpolly-22-dev",
        "libclang1-22",
        "libclang-common-22-dev",
        "libzstd-dev",
        "zlib1g-dev",
    ];
    for needed in default_build
        .iter()
        .chain(&["protobuf-compiler", "libprotobuf-dev"])
    {
        assert!(
            packages.contains(needed),
            "{needed} is not in debian-packages.txt"
        );
    }
    // The README's own-project section lists the build packages oxla's
    // default features need (no protoc: that is `distributed`'s).
    for package in default_build {
        assert!(
            readme.contains(package),
            "README.md does not list {package}"
        );
    }
}
