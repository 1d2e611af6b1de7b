//! `oxla plugin list|install` through the binary, in an OXLA_HOME of its
//! own and without the network: the listing of an installed, a stale and an
//! unpinned plugin; installed plugins skipped; a bad choice and a wheel
//! that is not the pinned one each one `error:` line with status 1.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "cli-plugin") };
}

use oxla_testing::{BoundedOutput, assert_fails_with};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn oxla(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(args)
        .env("OXLA_HOME", home)
        .output_bounded()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A plugin directory as the installer leaves it: the stamp and the
/// library (a stand-in file).
fn fake_install(plugins: &Path, dir: &str, stamp: &str, library: &str) {
    let dir = plugins.join(dir);
    fs::create_dir_all(dir.join(library).parent().unwrap()).unwrap();
    fs::write(dir.join(library), b"ELF").unwrap();
    fs::write(dir.join(".oxla-sha256"), stamp).unwrap();
}

const XLA_CPU_SHA: &str = "55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc";
const LAMMPS_SHA: &str = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1";
const XLA_CPU_LIBRARY: &str = "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so";
const LAMMPS_LIBRARY: &str = "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so";

#[test]
fn list_shows_each_plugin_and_whether_it_matches_the_pins() {
    let home = tempfile::tempdir().unwrap();
    let plugins = home.path().join("plugins");
    let empty = oxla(home.path(), &["plugin", "list"]);
    assert!(empty.status.success());
    assert!(
        stdout(&empty).starts_with(&format!("no plugins in {}\n", plugins.display())),
        "{}",
        stdout(&empty)
    );
    fake_install(
        &plugins,
        "xla-cpu-pjrt-0.0.1",
        &format!("{XLA_CPU_SHA}\n"),
        XLA_CPU_LIBRARY,
    );
    fake_install(
        &plugins,
        "lammps-jax-pjrt-cpu-0.11.2",
        "0000\n",
        LAMMPS_LIBRARY,
    );
    fs::create_dir_all(plugins.join("my-own-plugin-2.0")).unwrap();
    let o = oxla(home.path(), &["plugin", "list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("plugins in {}:", plugins.display()));
    let words: Vec<Vec<&str>> = lines[1..4]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(words[0][..3], ["lammps-jax-pjrt-cpu", "0.11.2", "cpu"]);
    assert!(lines[1].contains("stamp differs from the pins"), "{out}");
    assert_eq!(words[1][..3], ["my-own-plugin", "2.0", "-"]);
    assert!(lines[2].contains("not pinned by this oxla"), "{out}");
    assert_eq!(words[2][..3], ["xla-cpu-pjrt", "0.0.1", "cpu"]);
    assert!(lines[3].ends_with("matches the pins"), "{out}");
    assert!(
        lines[4].starts_with("choices: cpu, cuda12, cuda13, rocm, tpu"),
        "{out}"
    );
    // --dir lists another directory.
    let other = home.path().join("other");
    fake_install(&other, "xla-cpu-pjrt-0.0.1", "1111\n", XLA_CPU_LIBRARY);
    let o = oxla(
        home.path(),
        &["plugin", "list", "--dir", other.to_str().unwrap()],
    );
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!("plugins in {}:\n", other.display())),
        "{out}"
    );
    assert_eq!(out.lines().count(), 3, "{out}");
}

#[test]
fn installed_plugins_are_skipped_without_downloading() {
    let home = tempfile::tempdir().unwrap();
    let plugins = home.path().join("plugins");
    fake_install(
        &plugins,
        "xla-cpu-pjrt-0.0.1",
        &format!("{XLA_CPU_SHA}\n"),
        XLA_CPU_LIBRARY,
    );
    fake_install(
        &plugins,
        "lammps-jax-pjrt-cpu-0.11.2",
        &format!("{LAMMPS_SHA}\n"),
        LAMMPS_LIBRARY,
    );
    // An empty find-links directory: any download would fail.
    let links = home.path().join("no-wheels");
    fs::create_dir(&links).unwrap();
    let o = oxla(
        home.path(),
        &[
            "plugin",
            "install",
            "cpu",
            "--find-links",
            links.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o),
        format!(
            "plugin xla-cpu-pjrt 0.0.1 present at {0}/xla-cpu-pjrt-0.0.1\n\
             plugin lammps-jax-pjrt-cpu 0.11.2 present at {0}/lammps-jax-pjrt-cpu-0.11.2\n",
            plugins.display()
        )
    );
}

#[test]
fn an_unknown_choice_is_one_line_listing_the_choices() {
    let home = tempfile::tempdir().unwrap();
    let o = oxla(home.path(), &["plugin", "install", "cpu", "gpu"]);
    let line = assert_fails_with(&o, "unknown plugin choice \"gpu\"");
    assert_eq!(
        line,
        "error: unknown plugin choice \"gpu\"; the choices are cpu, cuda12, cuda13, rocm, tpu"
    );
    assert!(
        stdout(&o).is_empty(),
        "nothing is installed before every choice is known"
    );
    assert!(!home.path().join("plugins").exists());
}

/// A wheel that pip takes (valid metadata) but that is not the pinned one:
/// refused with both hashes, nothing installed.
#[test]
fn a_wheel_that_is_not_the_pinned_one_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let links: PathBuf = home.path().join("wheels");
    fs::create_dir(&links).unwrap();
    let wheel = links.join("xla_cpu_pjrt-0.0.1-py3-none-any.whl");
    let made = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
             \x20   z.writestr('xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so', b'not the real one')\n\
             \x20   z.writestr('xla_cpu_pjrt-0.0.1.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: xla-cpu-pjrt\\nVersion: 0.0.1\\n')\n\
             \x20   z.writestr('xla_cpu_pjrt-0.0.1.dist-info/WHEEL', 'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
             \x20   z.writestr('xla_cpu_pjrt-0.0.1.dist-info/RECORD', '')\n",
        )
        .arg(&wheel)
        .output_bounded();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let dest = home.path().join("elsewhere");
    let o = oxla(
        home.path(),
        &[
            "plugin",
            "install",
            "cpu",
            "--dir",
            dest.to_str().unwrap(),
            "--find-links",
            links.to_str().unwrap(),
        ],
    );
    let line = assert_fails_with(
        &o,
        "checksum mismatch for xla_cpu_pjrt-0.0.1-py3-none-any.whl (xla-cpu-pjrt==0.0.1)",
    );
    assert!(
        line.contains(&format!("pinned sha256 {XLA_CPU_SHA}")),
        "{line}"
    );
    assert!(line.ends_with("refusing to install it"), "{line}");
    assert_eq!(stdout(&o), "downloading xla-cpu-pjrt 0.0.1\n");
    assert_eq!(
        fs::read_dir(&dest).unwrap().count(),
        0,
        "something was left in {}",
        dest.display()
    );
}
