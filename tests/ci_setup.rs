//! ci/setup's plugin installer (ci/install_plugins.py) against a wheel built
//! locally: a wrong SHA-256 stops it with a clear message and installs
//! nothing; a right one installs; a second run only checks. Runs the Python
//! unittest in ci/test_install_plugins.py with the system's python3 (the one
//! ci/setup itself uses).

use std::path::Path;
use std::process::Command;

#[test]
fn install_plugins_checks_pins_and_is_idempotent() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", "ci/test_install_plugins.py"])
        .current_dir(&repo)
        .output()
        .expect("python3");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Ran 2 tests"), "{log}");
}

#[test]
fn pinned_plugins_have_full_sha256_pins() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(repo.join("third_party/plugins.toml")).unwrap();
    let pins: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("sha256 = \""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    assert_eq!(pins.len(), 2);
    for pin in pins {
        assert_eq!(pin.len(), 64, "{pin}");
        assert!(pin.chars().all(|c| c.is_ascii_hexdigit()), "{pin}");
    }
}
