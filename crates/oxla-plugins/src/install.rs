//! Installing a pinned plugin: `pip download` each wheel, check its
//! SHA-256, unpack into a staging directory, stamp, rename into place.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result, is_disk_full, one_line};
use crate::pins::{Plugin, Wheel};

/// The stamp file in an installed plugin's directory: the SHA-256 of every
/// wheel unpacked there, one per line (see [`Plugin::stamp`]).
pub const STAMP_FILE: &str = ".oxla-sha256";

/// Opens a file for writing while unpacking (tests put a full disk here).
type CreateFile = fn(&Path) -> io::Result<Box<dyn Write>>;

fn create_file(path: &Path) -> io::Result<Box<dyn Write>> {
    Ok(Box::new(File::create(path)?))
}

/// A step of an install, reported as it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// Downloading `wheel`, the `number`th of `count`.
    Download {
        /// The wheel.
        wheel: &'a Wheel,
        /// Its position, from 1.
        number: usize,
        /// How many wheels the install downloads.
        count: usize,
    },
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The plugin's directory, `<dest>/<name>-<version>`.
    pub dir: PathBuf,
    /// The plugin library in it.
    pub library: PathBuf,
    /// Whether it was there already, with the stamp of these pins (nothing
    /// was downloaded).
    pub was_present: bool,
    /// How many library wheels were unpacked beside the plugin.
    pub libraries: usize,
}

/// Installs pinned plugins into one directory: each plugin into
/// `<dest>/<name>-<version>/`, as `ci/install_plugins.py` did (same layout,
/// same `.oxla-sha256` stamp, so installs of either are recognised).
///
/// Wheels are fetched with `python3 -m pip download --no-deps
/// --only-binary=:all:`, so pip's configuration (index, proxy,
/// certificates, find-links) applies.
#[derive(Debug, Clone)]
pub struct Installer {
    dest: PathBuf,
    with_libraries: bool,
    python: OsString,
    pip_args: Vec<OsString>,
    create: CreateFile,
}

impl Installer {
    /// An installer into `dest` (created when missing), with the library
    /// wheels plugins require, running pip with `python3`.
    pub fn new(dest: impl Into<PathBuf>) -> Installer {
        Installer {
            dest: dest.into(),
            with_libraries: true,
            python: OsString::from("python3"),
            pip_args: Vec::new(),
            create: create_file,
        }
    }

    /// Whether to unpack the library wheels a plugin `requires` beside it
    /// (default: yes). Without them a CUDA plugin loads but finds no GPU
    /// libraries; the profiler's tests need no more.
    pub fn with_libraries(mut self, with_libraries: bool) -> Installer {
        self.with_libraries = with_libraries;
        self
    }

    /// The Python that runs pip (default `python3`).
    pub fn python(mut self, python: impl Into<OsString>) -> Installer {
        self.python = python.into();
        self
    }

    /// Extra arguments for `pip download`, e.g. `--no-index --find-links
    /// DIR` to take wheels from a directory only.
    pub fn pip_args<I, S>(mut self, args: I) -> Installer
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.pip_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The directory plugins are installed into.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Where `plugin` is (or would be) installed.
    pub fn dir_of(&self, plugin: &Plugin) -> PathBuf {
        self.dest.join(plugin.dir_name())
    }

    /// Whether `plugin` is installed with the stamp of its pins (with or
    /// without libraries, as this installer would install it) and its
    /// library present.
    pub fn is_present(&self, plugin: &Plugin) -> bool {
        let dir = self.dir_of(plugin);
        fs::read_to_string(dir.join(STAMP_FILE))
            .is_ok_and(|stamp| stamp == plugin.stamp(self.with_libraries))
            && dir.join(&plugin.library).is_file()
    }

    /// Installs `plugin` unless [`Installer::is_present`]: downloads every
    /// wheel into a temporary directory in `dest`, checks each against its
    /// pin, unpacks them all into `<dest>/.<name>-<version>.partial`, writes
    /// the stamp and renames it to `<dest>/<name>-<version>` (replacing an
    /// install of other pins). On any failure nothing is left behind and an
    /// earlier install stays as it was. `progress` hears of each step.
    pub fn install(
        &self,
        plugin: &Plugin,
        progress: &mut dyn FnMut(Step<'_>),
    ) -> Result<Installed> {
        let dir = self.dir_of(plugin);
        let wheels = plugin.wheels(self.with_libraries);
        let installed = Installed {
            library: dir.join(&plugin.library),
            dir: dir.clone(),
            was_present: true,
            libraries: wheels.len() - 1,
        };
        if self.is_present(plugin) {
            return Ok(installed);
        }
        fs::create_dir_all(&self.dest).map_err(Error::io("create directory", &self.dest))?;
        let downloads = tempfile::Builder::new()
            .prefix(".download-")
            .tempdir_in(&self.dest)
            .map_err(Error::io("create a temporary directory in", &self.dest))?;
        let mut files = Vec::new();
        for (i, wheel) in wheels.iter().enumerate() {
            progress(Step::Download {
                wheel,
                number: i + 1,
                count: wheels.len(),
            });
            let file = self.fetch(wheel, downloads.path())?;
            check_sha256(wheel, &file)?;
            files.push((*wheel, file));
        }
        self.commit(plugin, &files)?;
        downloads
            .close()
            .map_err(Error::io("remove the downloads in", &self.dest))?;
        Ok(Installed {
            was_present: false,
            ..installed
        })
    }

    /// Downloads `wheel` with pip into a directory of its own under `into`
    /// and returns the file.
    fn fetch(&self, wheel: &Wheel, into: &Path) -> Result<PathBuf> {
        let target = into.join(format!("{}-{}", wheel.name, wheel.version));
        fs::create_dir(&target).map_err(Error::io("create directory", &target))?;
        let python = self.python.to_string_lossy().into_owned();
        let mut command = Command::new(&self.python);
        command.args([
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
        ]);
        if let Some(version) = &wheel.python {
            command.args(["--implementation", "cp", "--python-version", version]);
        }
        let output = command
            .args(&self.pip_args)
            .arg("-d")
            .arg(&target)
            .arg(wheel.requirement())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::PythonMissing {
                wheel: wheel.requirement(),
                python: python.clone(),
                message: if e.kind() == io::ErrorKind::NotFound {
                    "not found".to_string()
                } else {
                    e.to_string()
                },
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stdout = String::from_utf8_lossy(&output.stdout);
            let message = pip_message(&stderr, &stdout);
            if stderr.contains("No module named pip") {
                return Err(Error::PipMissing {
                    wheel: wheel.requirement(),
                    python,
                    message,
                });
            }
            let status = match output.status.code() {
                Some(code) => format!("exit status {code}"),
                None => format!("{}", output.status),
            };
            return Err(Error::Pip {
                wheel: wheel.requirement(),
                status,
                message,
            });
        }
        let mut found: Vec<PathBuf> = fs::read_dir(&target)
            .map_err(Error::io("read directory", &target))?
            .flatten()
            .map(|e| e.path())
            .collect();
        found.sort();
        match found.as_slice() {
            [file] if file.extension().is_some_and(|e| e == "whl") => Ok(file.clone()),
            _ => Err(Error::UnexpectedDownload {
                wheel: wheel.requirement(),
                found: if found.is_empty() {
                    "nothing".to_string()
                } else {
                    found
                        .iter()
                        .map(|f| file_name(f))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            }),
        }
    }

    /// Unpacks the checked `files` into the staging directory, stamps it
    /// and renames it into place; removes the staging directory on failure.
    fn commit(&self, plugin: &Plugin, files: &[(&Wheel, PathBuf)]) -> Result<()> {
        let dir = self.dir_of(plugin);
        let staging = Staging::new(self.dest.join(format!(".{}.partial", plugin.dir_name())))?;
        for (wheel, file) in files {
            self.unpack(wheel, file, staging.path())?;
        }
        let (plugin_wheel, plugin_file) = &files[0];
        if !staging.path().join(&plugin.library).is_file() {
            return Err(Error::CorruptWheel {
                wheel: plugin_wheel.requirement(),
                file: file_name(plugin_file),
                message: format!("it has no {} (the pinned plugin library)", plugin.library),
            });
        }
        let stamp = staging.path().join(STAMP_FILE);
        (self.create)(&stamp)
            .and_then(|mut out| {
                out.write_all(plugin.stamp(self.with_libraries).as_bytes())?;
                out.flush()
            })
            .map_err(|e| self.write_error(plugin_wheel, plugin_file, &stamp, e))?;
        match fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(Error::io("remove the old install", &dir)(e));
            }
            _ => {}
        }
        fs::rename(staging.path(), &dir).map_err(Error::io("rename into place", &dir))?;
        staging.keep();
        Ok(())
    }

    /// Unpacks the wheel `file` into `into`, keeping the executable bits
    /// (ptxas must stay runnable).
    fn unpack(&self, wheel: &Wheel, file: &Path, into: &Path) -> Result<()> {
        let corrupt = |message: String| Error::CorruptWheel {
            wheel: wheel.requirement(),
            file: file_name(file),
            message: one_line(&message),
        };
        let reader = File::open(file).map_err(Error::io("open", file))?;
        let mut archive = zip::ZipArchive::new(BufReader::new(reader))
            .map_err(|e| corrupt(format!("not a readable zip archive: {e}")))?;
        let mut buffer = vec![0u8; 1 << 18];
        for i in 0..archive.len() {
            let mut member = archive
                .by_index(i)
                .map_err(|e| corrupt(format!("member {i}: {e}")))?;
            let name = member.name().map(|n| n.into_owned()).unwrap_or_default();
            let relative = member.enclosed_name().ok_or_else(|| {
                corrupt(format!(
                    "member {name:?} would land outside the plugin's directory"
                ))
            })?;
            let target = into.join(relative);
            if member.is_dir() {
                fs::create_dir_all(&target)
                    .map_err(|e| self.write_error(wheel, file, &target, e))?;
                continue;
            }
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| self.write_error(wheel, file, parent, e))?;
            }
            // A member unpacked twice (two wheels sharing a file) is
            // replaced, even where the first copy is read-only.
            let _ = fs::remove_file(&target);
            let mut out =
                (self.create)(&target).map_err(|e| self.write_error(wheel, file, &target, e))?;
            loop {
                let n = match member.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(corrupt(format!("member {name}: {e}"))),
                };
                out.write_all(&buffer[..n])
                    .map_err(|e| self.write_error(wheel, file, &target, e))?;
            }
            out.flush()
                .map_err(|e| self.write_error(wheel, file, &target, e))?;
            drop(out);
            if let Some(mode) = member.unix_mode().filter(|m| m & 0o111 != 0) {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(&target, fs::Permissions::from_mode(mode & 0o777))
                    .map_err(Error::io("set the permissions of", &target))?;
            }
        }
        Ok(())
    }

    /// The error for a failed write of `path` while unpacking `file`.
    fn write_error(&self, wheel: &Wheel, file: &Path, path: &Path, error: io::Error) -> Error {
        if is_disk_full(&error) {
            Error::DiskFull {
                wheel: wheel.requirement(),
                file: file_name(file),
                dir: self.dest.clone(),
                source: error,
            }
        } else {
            Error::io("write", path)(error)
        }
    }
}

/// A staging directory, removed when dropped unless kept.
struct Staging {
    path: PathBuf,
    keep: bool,
}

impl Staging {
    /// A fresh, empty staging directory at `path` (a leftover of an
    /// interrupted install is removed first).
    fn new(path: PathBuf) -> Result<Staging> {
        match fs::remove_dir_all(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(Error::io("remove the leftover", &path)(e));
            }
            _ => {}
        }
        fs::create_dir(&path).map_err(Error::io("create directory", &path))?;
        Ok(Staging { path, keep: false })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// It was renamed into place: nothing to remove.
    fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// The SHA-256 of `path`, in lowercase hex.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut digest = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        digest.update(&buffer[..n]);
    }
    Ok(format!("{:x}", digest.finalize()))
}

fn check_sha256(wheel: &Wheel, file: &Path) -> Result<()> {
    let got = sha256_file(file).map_err(Error::io("read", file))?;
    if got == wheel.sha256 {
        Ok(())
    } else {
        Err(Error::HashMismatch {
            wheel: wheel.requirement(),
            file: file_name(file),
            pinned: wheel.sha256.clone(),
            got,
        })
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The last non-empty line of `text`, trimmed.
fn last_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

/// What a failed pip said: its last line, and, where it could not reach
/// the package index (its last line is then only "No matching
/// distribution"), why, from its retry warnings.
fn pip_message(stderr: &str, stdout: &str) -> String {
    let last = last_line(stderr)
        .or_else(|| last_line(stdout))
        .unwrap_or_else(|| "(no message)".to_string());
    let unreachable = stderr.lines().rev().find_map(|line| {
        if let Some((_, reason)) = line.split_once("Failed to establish a new connection: ") {
            Some(
                reason
                    .split('\'')
                    .next()
                    .unwrap_or(reason)
                    .trim()
                    .to_string(),
            )
        } else if let Some((_, reason)) = line.split_once("Could not fetch URL ") {
            Some(reason.trim().to_string())
        } else {
            line.split_once("after connection broken by ")
                .map(|(_, reason)| reason.trim().to_string())
        }
    });
    match unreachable {
        Some(reason) if !last.contains(&reason) => {
            format!("{last} (the package index was not reached: {reason})")
        }
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::Manifest;
    use std::io::Cursor;

    /// A wheel holding `members` (name, mode, contents).
    fn wheel_bytes(members: &[(&str, u32, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, mode, contents) in members {
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .unix_permissions(*mode);
            writer.start_file(*name, options).unwrap();
            writer.write_all(contents).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn fake_plugin(sha: &str) -> Plugin {
        let text = format!(
            "[[plugin]]\nname = \"fake-pjrt-plugin\"\nversion = \"1.0\"\nplatform = \"cpu\"\n\
             sha256 = \"{sha}\"\nlibrary = \"fake_pjrt_plugin/plugin.so\"\n"
        );
        Manifest::parse("test.toml", &text)
            .unwrap()
            .plugins
            .remove(0)
    }

    /// A writer on a disk that fills up after 1000 bytes.
    struct FullDisk {
        file: File,
        written: usize,
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written >= 1000 {
                return Err(io::Error::from(io::ErrorKind::StorageFull));
            }
            let n = buf.len().min(1000 - self.written);
            self.written += n;
            self.file.write(&buf[..n])
        }

        fn flush(&mut self) -> io::Result<()> {
            self.file.flush()
        }
    }

    fn full_disk(path: &Path) -> io::Result<Box<dyn Write>> {
        Ok(Box::new(FullDisk {
            file: File::create(path)?,
            written: 0,
        }))
    }

    /// A plugin being unpacked when the disk fills: a DiskFull error naming
    /// the wheel, no staging directory, no install, the old install kept.
    #[test]
    fn a_full_disk_while_unpacking_installs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        fs::create_dir(&dest).unwrap();
        let big = vec![7u8; 64 * 1024];
        let file = tmp.path().join("fake_pjrt_plugin-1.0-py3-none-any.whl");
        fs::write(
            &file,
            wheel_bytes(&[("fake_pjrt_plugin/plugin.so", 0o755, &big)]),
        )
        .unwrap();
        let plugin = fake_plugin(&sha256_file(&file).unwrap());
        // An earlier install of other pins stays as it was.
        let old = dest.join("fake-pjrt-plugin-1.0");
        fs::create_dir(&old).unwrap();
        fs::write(old.join(STAMP_FILE), "old\n").unwrap();
        let mut installer = Installer::new(&dest);
        installer.create = full_disk;
        let error = installer
            .commit(&plugin, &[(&plugin.wheel, file.clone())])
            .unwrap_err();
        assert!(matches!(error, Error::DiskFull { .. }), "{error}");
        let message = error.to_string();
        assert!(
            message.starts_with(
                "disk full while unpacking fake_pjrt_plugin-1.0-py3-none-any.whl \
                 (fake-pjrt-plugin==1.0) into "
            ),
            "{message}"
        );
        assert!(message.ends_with("; nothing was installed"), "{message}");
        assert!(!message.contains('\n'));
        let left: Vec<_> = fs::read_dir(&dest)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["fake-pjrt-plugin-1.0"], "staging left behind");
        assert_eq!(fs::read_to_string(old.join(STAMP_FILE)).unwrap(), "old\n");
    }

    /// The stamp is the last write: a disk that fills there also leaves
    /// nothing.
    #[test]
    fn a_full_disk_while_stamping_installs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        fs::create_dir(&dest).unwrap();
        let file = tmp.path().join("fake_pjrt_plugin-1.0-py3-none-any.whl");
        fs::write(
            &file,
            wheel_bytes(&[("fake_pjrt_plugin/plugin.so", 0o755, b"ELF")]),
        )
        .unwrap();
        let plugin = fake_plugin(&sha256_file(&file).unwrap());
        let mut installer = Installer::new(&dest);
        fn full_at_stamp(path: &Path) -> io::Result<Box<dyn Write>> {
            if path.ends_with(STAMP_FILE) {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            } else {
                create_file(path)
            }
        }
        installer.create = full_at_stamp;
        let error = installer
            .commit(&plugin, &[(&plugin.wheel, file)])
            .unwrap_err();
        assert!(matches!(error, Error::DiskFull { .. }), "{error}");
        assert_eq!(fs::read_dir(&dest).unwrap().count(), 0);
    }

    #[test]
    fn a_corrupt_or_truncated_wheel_installs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        fs::create_dir(&dest).unwrap();
        let bytes = wheel_bytes(&[("fake_pjrt_plugin/plugin.so", 0o755, &[1u8; 4096])]);
        let cases: [(&str, Vec<u8>, &str); 3] = [
            (
                "truncated",
                bytes[..bytes.len() / 2].to_vec(),
                "not a readable zip archive",
            ),
            (
                "garbage",
                b"this is no zip archive".to_vec(),
                "not a readable zip archive",
            ),
            (
                "empty",
                wheel_bytes(&[]),
                "it has no fake_pjrt_plugin/plugin.so",
            ),
        ];
        for (case, contents, expected) in cases {
            let file = tmp.path().join(format!("{case}.whl"));
            fs::write(&file, contents).unwrap();
            let plugin = fake_plugin(&sha256_file(&file).unwrap());
            let error = Installer::new(&dest)
                .commit(&plugin, &[(&plugin.wheel, file)])
                .unwrap_err();
            assert!(
                matches!(error, Error::CorruptWheel { .. }),
                "{case}: {error}"
            );
            let message = error.to_string();
            assert!(
                message.starts_with(&format!(
                    "corrupt wheel {case}.whl (fake-pjrt-plugin==1.0): "
                )),
                "{message}"
            );
            assert!(message.contains(expected), "{case}: {message}");
            assert_eq!(fs::read_dir(&dest).unwrap().count(), 0, "{case}");
        }
    }

    /// A member whose compressed data is damaged: the zip's directory reads
    /// fine, the member does not (a CRC or inflate error).
    #[test]
    fn a_damaged_member_installs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        // Incompressible, so that the member fills the middle of the file.
        let mut state = 12345u32;
        let contents: Vec<u8> = (0..20000)
            .map(|_| {
                state = state.wrapping_mul(1103515245).wrapping_add(12345);
                (state >> 16) as u8
            })
            .collect();
        let mut bytes = wheel_bytes(&[
            ("fake_pjrt_plugin/plugin.so", 0o755, b"ELF"),
            ("fake_pjrt_plugin/data.bin", 0o644, &contents),
        ]);
        // Flip bytes in the middle of the second member's compressed data.
        let at = bytes.len() / 2;
        for b in &mut bytes[at..at + 16] {
            *b ^= 0x5a;
        }
        let file = tmp.path().join("damaged.whl");
        fs::write(&file, bytes).unwrap();
        let plugin = fake_plugin(&sha256_file(&file).unwrap());
        fs::create_dir(&dest).unwrap();
        let error = Installer::new(&dest)
            .commit(&plugin, &[(&plugin.wheel, file)])
            .unwrap_err();
        assert!(matches!(error, Error::CorruptWheel { .. }), "{error}");
        assert!(error.to_string().contains("data.bin"), "{error}");
        assert_eq!(fs::read_dir(&dest).unwrap().count(), 0);
    }

    #[test]
    fn a_member_outside_the_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        fs::create_dir(&dest).unwrap();
        let file = tmp.path().join("evil.whl");
        fs::write(&file, wheel_bytes(&[("../../escaped.so", 0o644, b"x")])).unwrap();
        let plugin = fake_plugin(&sha256_file(&file).unwrap());
        let error = Installer::new(&dest)
            .commit(&plugin, &[(&plugin.wheel, file)])
            .unwrap_err();
        assert!(error.to_string().contains("would land outside"), "{error}");
        assert!(!tmp.path().join("escaped.so").exists());
        assert_eq!(fs::read_dir(&dest).unwrap().count(), 0);
    }

    #[test]
    fn unpacking_keeps_executable_bits_and_writes_the_stamp() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("plugins");
        fs::create_dir(&dest).unwrap();
        let file = tmp.path().join("fake.whl");
        fs::write(
            &file,
            wheel_bytes(&[
                ("fake_pjrt_plugin/plugin.so", 0o755, b"ELF"),
                ("fake_pjrt_plugin/bin/ptxas", 0o750, b"#!"),
                ("fake_pjrt_plugin/README", 0o644, b"text"),
            ]),
        )
        .unwrap();
        let plugin = fake_plugin(&sha256_file(&file).unwrap());
        let installer = Installer::new(&dest);
        installer.commit(&plugin, &[(&plugin.wheel, file)]).unwrap();
        let dir = dest.join("fake-pjrt-plugin-1.0");
        let mode = |p: &str| fs::metadata(dir.join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("fake_pjrt_plugin/plugin.so"), 0o755);
        assert_eq!(mode("fake_pjrt_plugin/bin/ptxas"), 0o750);
        assert_eq!(mode("fake_pjrt_plugin/README") & 0o111, 0);
        assert_eq!(
            fs::read_to_string(dir.join(STAMP_FILE)).unwrap(),
            format!("{}\n", plugin.wheel.sha256)
        );
        assert!(installer.is_present(&plugin));
        assert!(
            !installer
                .clone()
                .with_libraries(false)
                .is_present(&fake_plugin(&"0".repeat(64)))
        );
    }

    /// pip with no network ends on "No matching distribution"; the reason
    /// is in its retry warnings.
    #[test]
    fn pips_message_says_why_the_index_was_not_reached() {
        let refused = "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, \
             status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.\
             connection.HTTPConnection object at 0x7f0e2ddeb150>: Failed to establish a new \
             connection: [Errno 111] Connection refused')': /simple/xla-cpu-pjrt/\n\
             ERROR: Could not find a version that satisfies the requirement xla-cpu-pjrt==0.0.1 \
             (from versions: none)\n\
             ERROR: No matching distribution found for xla-cpu-pjrt==0.0.1\n";
        assert_eq!(
            pip_message(refused, ""),
            "ERROR: No matching distribution found for xla-cpu-pjrt==0.0.1 (the package index \
             was not reached: [Errno 111] Connection refused)"
        );
        let certificate = "Could not fetch URL https://pypi.org/simple/xla-cpu-pjrt/: There was a \
             problem confirming the ssl certificate: CERTIFICATE_VERIFY_FAILED - skipping\n\
             ERROR: No matching distribution found for xla-cpu-pjrt==0.0.1\n";
        assert!(
            pip_message(certificate, "").ends_with(
                "(the package index was not reached: https://pypi.org/simple/xla-cpu-pjrt/: \
                 There was a problem confirming the ssl certificate: CERTIFICATE_VERIFY_FAILED \
                 - skipping)"
            ),
            "{}",
            pip_message(certificate, "")
        );
        assert_eq!(pip_message("ERROR: nope\n\n", ""), "ERROR: nope");
        assert_eq!(pip_message("", "only stdout\n"), "only stdout");
        assert_eq!(pip_message("", ""), "(no message)");
    }

    #[test]
    fn sha256_of_a_file_is_lowercase_hex() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("abc");
        fs::write(&file, b"abc").unwrap();
        assert_eq!(
            sha256_file(&file).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
