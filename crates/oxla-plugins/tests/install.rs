//! The installer end to end with the system's `python3 -m pip`, on wheels
//! made here and offered with `--no-index --find-links` (no network): a
//! wrong pin stops with a clear message and installs nothing; a right one
//! installs; a second run only checks; a plugin's library wheels are checked
//! the same way and land in its directory; pip failing (no such wheel, an
//! invalid wheel, a download that stops halfway, no pip, no Python) is one
//! line naming the wheel, and every failure leaves the directory as it was.
//! (The cases of the former ci/test_install_plugins.py, and more.)

use std::fs;
use std::io::{Cursor, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use oxla_plugins::{
    Error, Installed, Installer, Manifest, Plugin, STAMP_FILE, Status, Step, list, sha256_file,
};

const PLUGIN_MEMBER: &str = "fake_pjrt_plugin/plugin.so";
const LIBRARY_MEMBER: &str = "nvidia/fake/lib/libfake.so.12";

/// A wheel of `name` 1.0 with the tag `tag`, holding `member` (mode 0755)
/// with `contents`, as pip expects one (METADATA, WHEEL, RECORD).
fn make_wheel(dir: &Path, name: &str, tag: &str, member: &str, contents: &[u8]) -> PathBuf {
    let module = name.replace('-', "_");
    let path = dir.join(format!("{module}-1.0-{tag}.whl"));
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = |mode: u32| {
        zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(mode)
    };
    zip.start_file(member, options(0o755)).unwrap();
    zip.write_all(contents).unwrap();
    let info = format!("{module}-1.0.dist-info");
    zip.start_file(format!("{info}/METADATA"), options(0o644))
        .unwrap();
    write!(zip, "Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n").unwrap();
    zip.start_file(format!("{info}/WHEEL"), options(0o644))
        .unwrap();
    write!(
        zip,
        "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n"
    )
    .unwrap();
    zip.start_file(format!("{info}/RECORD"), options(0o644))
        .unwrap();
    fs::write(&path, zip.finish().unwrap().into_inner()).unwrap();
    path
}

/// A scratch directory with a find-links directory holding the fake plugin
/// and the fake NVIDIA library wheel.
struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    links: PathBuf,
    dest: PathBuf,
    sha: String,
    library_sha: String,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let links = root.join("wheels");
        fs::create_dir(&links).unwrap();
        let plugin = make_wheel(
            &links,
            "fake-pjrt-plugin",
            "py3-none-any",
            PLUGIN_MEMBER,
            b"\x7fELF not really",
        );
        let library = make_wheel(
            &links,
            "nvidia-fake-cu12",
            "py3-none-any",
            LIBRARY_MEMBER,
            b"\x7fELF library",
        );
        Fixture {
            sha: sha256_file(&plugin).unwrap(),
            library_sha: sha256_file(&library).unwrap(),
            dest: root.join("plugins"),
            root,
            links,
            _tmp: tmp,
        }
    }

    fn installer(&self) -> Installer {
        Installer::new(&self.dest)
            .pip_args(["--no-index", "--find-links"])
            .pip_args([&self.links])
    }

    fn install(&self, plugin: &Plugin) -> Result<Installed, Error> {
        self.installer().install(plugin, &mut |_| {})
    }

    /// The names in the destination directory (hidden ones included).
    fn left(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.dest)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    fn installed_dir(&self) -> PathBuf {
        self.dest.join("fake-pjrt-plugin-1.0")
    }
}

/// The fake plugin pinned to `sha`; with `library_sha`, requiring the fake
/// NVIDIA library wheel pinned to it.
fn plugin(sha: &str, library_sha: Option<&str>) -> Plugin {
    let mut text = format!(
        "[[plugin]]\nname = \"fake-pjrt-plugin\"\nversion = \"1.0\"\nplatform = \"cpu\"\n\
         sha256 = \"{sha}\"\nlibrary = \"{PLUGIN_MEMBER}\"\n"
    );
    if let Some(library_sha) = library_sha {
        text += &format!(
            "requires = [\"nvidia-fake-cu12\"]\n\n[[wheel]]\nname = \"nvidia-fake-cu12\"\n\
             version = \"1.0\"\nsha256 = \"{library_sha}\"\n"
        );
    }
    Manifest::parse("test.toml", &text)
        .unwrap()
        .plugins
        .remove(0)
}

fn assert_one_line(error: &Error) -> String {
    let message = error.to_string();
    assert!(!message.contains('\n'), "{message}");
    message
}

#[test]
fn a_wrong_checksum_stops_with_a_clear_message_and_installs_nothing() {
    let f = Fixture::new();
    let wrong = "0".repeat(64);
    let error = f.install(&plugin(&wrong, None)).unwrap_err();
    assert!(matches!(error, Error::HashMismatch { .. }), "{error}");
    let message = assert_one_line(&error);
    assert_eq!(
        message,
        format!(
            "checksum mismatch for fake_pjrt_plugin-1.0-py3-none-any.whl (fake-pjrt-plugin==1.0): \
             pinned sha256 {wrong}, downloaded {}; refusing to install it",
            f.sha
        )
    );
    assert_eq!(
        f.left(),
        Vec::<String>::new(),
        "downloads or staging left behind"
    );
}

#[test]
fn a_right_checksum_installs_then_only_checks() {
    let f = Fixture::new();
    let pinned = plugin(&f.sha, None);
    let mut steps = Vec::new();
    let first = f
        .installer()
        .install(&pinned, &mut |Step::Download {
                                    wheel,
                                    number,
                                    count,
                                }| {
            steps.push(format!("{wheel} {number}/{count}"))
        })
        .unwrap();
    assert_eq!(steps, ["fake-pjrt-plugin 1.0 1/1"]);
    assert!(!first.was_present);
    assert_eq!(first.libraries, 0);
    assert_eq!(first.dir, f.installed_dir());
    assert_eq!(first.library, f.installed_dir().join(PLUGIN_MEMBER));
    assert_eq!(fs::read(&first.library).unwrap(), b"\x7fELF not really");
    assert_eq!(
        fs::read_to_string(f.installed_dir().join(STAMP_FILE)).unwrap(),
        format!("{}\n", f.sha)
    );
    assert_eq!(f.left(), ["fake-pjrt-plugin-1.0"]);
    // The second run downloads nothing: even with the wheel gone.
    fs::remove_dir_all(&f.links).unwrap();
    let second = f.install(&pinned).unwrap();
    assert!(second.was_present);
}

#[test]
fn required_library_wheels_land_in_the_plugins_directory() {
    let f = Fixture::new();
    let pinned = plugin(&f.sha, Some(&f.library_sha));
    let mut count = 0;
    let first = f.installer().install(&pinned, &mut |_| count += 1).unwrap();
    assert_eq!(count, 2);
    assert_eq!(first.libraries, 1);
    let dir = f.installed_dir();
    assert!(dir.join(PLUGIN_MEMBER).is_file());
    let library = dir.join(LIBRARY_MEMBER);
    assert!(library.is_file());
    assert_eq!(
        fs::metadata(&library).unwrap().permissions().mode() & 0o777,
        0o755,
        "executable bit lost"
    );
    assert_eq!(
        fs::read_to_string(dir.join(STAMP_FILE)).unwrap(),
        format!("{}\n{}\n", f.sha, f.library_sha)
    );
    assert!(f.install(&pinned).unwrap().was_present);
}

#[test]
fn a_wrong_library_pin_installs_nothing() {
    let f = Fixture::new();
    let wrong = "1".repeat(64);
    let error = f.install(&plugin(&f.sha, Some(&wrong))).unwrap_err();
    assert!(matches!(error, Error::HashMismatch { .. }), "{error}");
    let message = assert_one_line(&error);
    assert!(message.contains("(nvidia-fake-cu12==1.0)"), "{message}");
    assert!(message.contains(&wrong), "{message}");
    assert!(message.contains(&f.library_sha), "{message}");
    assert_eq!(f.left(), Vec::<String>::new());
}

/// Without libraries (the profiler's plugin): the plugin alone, its stamp
/// one line. Installing with libraries afterwards replaces it; without
/// again replaces that.
#[test]
fn without_libraries_installs_the_plugin_alone_and_is_replaced_by_a_full_install() {
    let f = Fixture::new();
    let pinned = plugin(&f.sha, Some(&f.library_sha));
    let bare = f.installer().with_libraries(false);
    let first = bare.install(&pinned, &mut |_| {}).unwrap();
    assert_eq!(first.libraries, 0);
    let dir = f.installed_dir();
    assert!(dir.join(PLUGIN_MEMBER).is_file());
    assert!(!dir.join(LIBRARY_MEMBER).exists());
    assert_eq!(
        fs::read_to_string(dir.join(STAMP_FILE)).unwrap(),
        format!("{}\n", f.sha)
    );
    assert!(bare.install(&pinned, &mut |_| {}).unwrap().was_present);
    let full = f.install(&pinned).unwrap();
    assert!(
        !full.was_present,
        "an install without libraries is not a full one"
    );
    assert!(dir.join(LIBRARY_MEMBER).is_file());
    assert!(!bare.install(&pinned, &mut |_| {}).unwrap().was_present);
    assert!(
        !dir.join(LIBRARY_MEMBER).exists(),
        "the old install was replaced, not merged"
    );
}

/// An install of other pins (or a damaged one) is replaced; a failing
/// install leaves it as it was.
#[test]
fn an_install_of_other_pins_is_replaced_and_kept_when_the_new_one_fails() {
    let f = Fixture::new();
    let dir = f.installed_dir();
    fs::create_dir_all(dir.join("stale")).unwrap();
    fs::write(dir.join(STAMP_FILE), "other\n").unwrap();
    let error = f.install(&plugin(&"2".repeat(64), None)).unwrap_err();
    assert!(matches!(error, Error::HashMismatch { .. }));
    assert!(
        dir.join("stale").is_dir(),
        "a failed install touched the old one"
    );
    assert_eq!(f.left(), ["fake-pjrt-plugin-1.0"]);
    f.install(&plugin(&f.sha, None)).unwrap();
    assert!(!dir.join("stale").exists());
    assert!(dir.join(PLUGIN_MEMBER).is_file());
    // A stamp that matches but a library that is gone: installed again.
    fs::remove_file(dir.join(PLUGIN_MEMBER)).unwrap();
    assert!(!f.install(&plugin(&f.sha, None)).unwrap().was_present);
    assert!(dir.join(PLUGIN_MEMBER).is_file());
}

/// The leftover staging directory of an interrupted install is listed as
/// such and removed by the next install.
#[test]
fn an_interrupted_install_is_listed_and_cleaned_up() {
    let f = Fixture::new();
    let staging = f.dest.join(".fake-pjrt-plugin-1.0.partial");
    fs::create_dir_all(staging.join("half")).unwrap();
    let listed = list(&f.dest).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status, Status::Interrupted);
    assert_eq!(listed[0].name, "fake-pjrt-plugin");
    f.install(&plugin(&f.sha, None)).unwrap();
    assert_eq!(f.left(), ["fake-pjrt-plugin-1.0"]);
}

#[test]
fn a_wheel_pip_cannot_find_is_pips_last_line() {
    let f = Fixture::new();
    fs::remove_file(f.links.join("fake_pjrt_plugin-1.0-py3-none-any.whl")).unwrap();
    let error = f.install(&plugin(&f.sha, None)).unwrap_err();
    assert!(matches!(error, Error::Pip { .. }), "{error}");
    let message = assert_one_line(&error);
    assert!(
        message.starts_with("cannot download fake-pjrt-plugin==1.0: pip failed (exit status 1): "),
        "{message}"
    );
    assert!(
        message.contains("No matching distribution found for fake-pjrt-plugin==1.0"),
        "{message}"
    );
    assert_eq!(f.left(), Vec::<String>::new());
}

/// pip refuses a truncated wheel itself (it reads the wheel's metadata);
/// its one line is the error, and nothing is installed.
#[test]
fn a_truncated_wheel_is_refused_and_installs_nothing() {
    let f = Fixture::new();
    let wheel = f.links.join("fake_pjrt_plugin-1.0-py3-none-any.whl");
    let bytes = fs::read(&wheel).unwrap();
    fs::write(&wheel, &bytes[..bytes.len() / 2]).unwrap();
    let sha = sha256_file(&wheel).unwrap();
    let error = f.install(&plugin(&sha, None)).unwrap_err();
    assert!(
        matches!(error, Error::Pip { .. } | Error::CorruptWheel { .. }),
        "{error}"
    );
    let message = assert_one_line(&error);
    assert!(message.contains("fake-pjrt-plugin==1.0"), "{message}");
    assert!(message.contains("invalid"), "{message}");
    assert_eq!(f.left(), Vec::<String>::new());
}

/// A wheel whose metadata reads (so pip passes it on) but whose plugin
/// member is damaged: the unpacking finds it, nothing is installed.
#[test]
fn a_wheel_with_a_damaged_member_installs_nothing() {
    let f = Fixture::new();
    // Incompressible contents, so the member fills the file's first part.
    let mut state = 99u32;
    let contents: Vec<u8> = (0..50_000)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (state >> 16) as u8
        })
        .collect();
    let wheel = make_wheel(
        &f.links,
        "fake-pjrt-plugin",
        "py3-none-any",
        PLUGIN_MEMBER,
        &contents,
    );
    let mut bytes = fs::read(&wheel).unwrap();
    for b in &mut bytes[20_000..20_032] {
        *b ^= 0xa5;
    }
    fs::write(&wheel, &bytes).unwrap();
    let error = f
        .install(&plugin(&sha256_file(&wheel).unwrap(), None))
        .unwrap_err();
    assert!(matches!(error, Error::CorruptWheel { .. }), "{error}");
    let message = assert_one_line(&error);
    assert!(
        message.starts_with(&format!(
            "corrupt wheel fake_pjrt_plugin-1.0-py3-none-any.whl (fake-pjrt-plugin==1.0): member {PLUGIN_MEMBER}: "
        )),
        "{message}"
    );
    assert_eq!(f.left(), Vec::<String>::new());
}

/// Writes an executable shell script standing in for `python3`.
fn fake_python(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("python3");
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A download that stops halfway (the connection drops): pip exits with
/// an error after writing part of the file. The error is pip's last line;
/// the partial file goes with the temporary directory.
#[test]
fn a_download_that_stops_halfway_is_pips_last_line_and_leaves_nothing() {
    let f = Fixture::new();
    let python = fake_python(
        &f.root,
        r#"while [ "$1" != "-d" ]; do shift; done
head -c 1000 /dev/urandom > "$2/fake_pjrt_plugin-1.0-py3-none-any.whl"
echo "  Downloading fake_pjrt_plugin-1.0-py3-none-any.whl (2.0 MB)" >&2
echo "ERROR: Exception: ('Connection broken: IncompleteRead(1000 bytes read, 1999000 more expected)')" >&2
exit 2"#,
    );
    let error = f
        .installer()
        .python(&python)
        .install(&plugin(&f.sha, None), &mut |_| {})
        .unwrap_err();
    assert_eq!(
        assert_one_line(&error),
        "cannot download fake-pjrt-plugin==1.0: pip failed (exit status 2): ERROR: Exception: \
         ('Connection broken: IncompleteRead(1000 bytes read, 1999000 more expected)')"
    );
    assert_eq!(f.left(), Vec::<String>::new());
}

/// pip that succeeds without leaving one wheel is not taken at its word.
#[test]
fn pip_leaving_no_wheel_is_an_error() {
    let f = Fixture::new();
    let python = fake_python(&f.root, "exit 0");
    let error = f
        .installer()
        .python(&python)
        .install(&plugin(&f.sha, None), &mut |_| {})
        .unwrap_err();
    assert_eq!(
        assert_one_line(&error),
        "cannot download fake-pjrt-plugin==1.0: pip left nothing in its download directory, not one wheel"
    );
    assert_eq!(f.left(), Vec::<String>::new());
}

#[test]
fn a_missing_python_is_named() {
    let f = Fixture::new();
    let absent = f.root.join("no-such-python3");
    let error = f
        .installer()
        .python(&absent)
        .install(&plugin(&f.sha, None), &mut |_| {})
        .unwrap_err();
    assert!(matches!(error, Error::PythonMissing { .. }), "{error}");
    assert_eq!(
        assert_one_line(&error),
        format!(
            "cannot download fake-pjrt-plugin==1.0: cannot run {} (not found); the installer needs \
             Python 3 with pip",
            absent.display()
        )
    );
    assert_eq!(f.left(), Vec::<String>::new());
}

/// A Python without pip (a venv made `--without-pip`).
#[test]
fn a_python_without_pip_is_named() {
    let f = Fixture::new();
    let venv = f.root.join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let python = venv.join("bin/python3");
    let error = f
        .installer()
        .python(&python)
        .install(&plugin(&f.sha, None), &mut |_| {})
        .unwrap_err();
    assert!(matches!(error, Error::PipMissing { .. }), "{error}");
    let message = assert_one_line(&error);
    assert!(
        message.starts_with(&format!(
            "cannot download fake-pjrt-plugin==1.0: {} has no pip (",
            python.display()
        )),
        "{message}"
    );
    assert!(message.contains("No module named pip"), "{message}");
    assert_eq!(f.left(), Vec::<String>::new());
}

/// A pin with `python = "3.X"` makes pip download that CPython's wheel,
/// whatever Python runs pip (libtpu builds one wheel per Python version).
#[test]
fn a_pinned_python_version_picks_that_pythons_wheel() {
    let f = Fixture::new();
    fs::remove_file(f.links.join("fake_pjrt_plugin-1.0-py3-none-any.whl")).unwrap();
    let platform = format!("linux_{}", std::env::consts::ARCH);
    // A Python version other than the one running pip, so that pip would
    // pick the other wheel without the pin's `python`.
    let version = Command::new("python3")
        .args(["-c", "import sys; print(sys.version_info.minor)"])
        .output()
        .unwrap();
    let minor: u32 = String::from_utf8_lossy(&version.stdout)
        .trim()
        .parse()
        .unwrap();
    let other = if minor == 11 { 12 } else { 11 };
    for m in [minor, other] {
        make_wheel(
            &f.links,
            "fake-pjrt-plugin",
            &format!("cp3{m}-cp3{m}-{platform}"),
            PLUGIN_MEMBER,
            format!("built for 3.{m}").as_bytes(),
        );
    }
    let wanted = f.links.join(format!(
        "fake_pjrt_plugin-1.0-cp3{other}-cp3{other}-{platform}.whl"
    ));
    let mut pinned = plugin(&sha256_file(&wanted).unwrap(), None);
    pinned.wheel.python = Some(format!("3.{other}"));
    let installed = f.install(&pinned).unwrap();
    assert_eq!(
        fs::read_to_string(installed.library).unwrap(),
        format!("built for 3.{other}")
    );
}

#[test]
fn list_shows_what_the_installer_installed() {
    let f = Fixture::new();
    f.install(&plugin(&f.sha, None)).unwrap();
    let listed = list(&f.dest).unwrap();
    assert_eq!(listed.len(), 1);
    // The fake plugin is pinned by no choice of this oxla.
    assert_eq!(listed[0].status, Status::NotPinned);
    assert_eq!(
        (listed[0].name.as_str(), listed[0].version.as_str()),
        ("fake-pjrt-plugin", "1.0")
    );
}
