//! What is installed in a plugin directory, and whether it matches the pins.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::install::STAMP_FILE;
use crate::pins::{Choice, Plugin};

/// The state of one directory of a plugin directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Its stamp is the one these pins give, and its library is there.
    Current {
        /// Installed without the library wheels the plugin requires.
        without_libraries: bool,
    },
    /// Its stamp is not the one of these pins (installed by another oxla,
    /// or a different build of the same version).
    Stale,
    /// It has no `.oxla-sha256` stamp (not installed by oxla).
    Unstamped,
    /// Its stamp matches, but the plugin library is missing.
    LibraryMissing {
        /// The library, relative to the plugin's directory.
        library: String,
    },
    /// Its name and version are pinned by no choice of this oxla.
    NotPinned,
    /// The staging directory of an install that was interrupted.
    Interrupted,
}

impl Status {
    /// Whether it is installed as the pins say.
    pub fn is_current(&self) -> bool {
        matches!(self, Status::Current { .. })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Current {
                without_libraries: false,
            } => f.write_str("matches the pins"),
            Status::Current {
                without_libraries: true,
            } => f.write_str("matches the pins (without its library wheels)"),
            Status::Stale => f.write_str("stamp differs from the pins: install it again"),
            Status::Unstamped => f.write_str("no .oxla-sha256 stamp: not installed by oxla"),
            Status::LibraryMissing { library } => {
                write!(f, "{library} is missing: install it again")
            }
            Status::NotPinned => f.write_str("not pinned by this oxla"),
            Status::Interrupted => f.write_str("interrupted install: the next install removes it"),
        }
    }
}

/// One directory of a plugin directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// The directory.
    pub dir: PathBuf,
    /// The plugin's name.
    pub name: String,
    /// Its version (empty where the directory's name has none).
    pub version: String,
    /// The choice that pins it, where one does.
    pub choice: Option<Choice>,
    /// Whether it matches the pins.
    pub status: Status,
}

/// Every plugin pinned by a choice, with the choice.
fn pinned() -> Result<Vec<(Choice, Plugin)>> {
    let mut all = Vec::new();
    for choice in Choice::ALL {
        all.extend(choice.plugins()?.into_iter().map(|p| (choice, p)));
    }
    Ok(all)
}

/// `name-version` split before the last `-` that a digit follows.
fn split_name(dir_name: &str) -> (String, String) {
    let at = dir_name
        .match_indices('-')
        .map(|(i, _)| i)
        .rfind(|&i| dir_name[i + 1..].starts_with(|c: char| c.is_ascii_digit()));
    match at {
        Some(i) => (dir_name[..i].to_string(), dir_name[i + 1..].to_string()),
        None => (dir_name.to_string(), String::new()),
    }
}

/// The plugins in `dest` (an `$OXLA_HOME/plugins`-like directory), by
/// directory name, each with whether it matches the embedded pins. A
/// missing `dest` has none.
pub fn list(dest: &Path) -> Result<Vec<InstalledPlugin>> {
    let entries = match fs::read_dir(dest) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read directory", dest)(e)),
    };
    let pinned = pinned()?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(Error::io("read directory", dest))?;
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let dir_name = entry.file_name().to_string_lossy().into_owned();
        if let Some(staged) = dir_name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".partial"))
        {
            let (name, version) = split_name(staged);
            let choice = pinned
                .iter()
                .find(|(_, p)| p.dir_name() == staged)
                .map(|(c, _)| *c);
            found.push(InstalledPlugin {
                dir,
                name,
                version,
                choice,
                status: Status::Interrupted,
            });
            continue;
        }
        if dir_name.starts_with('.') {
            continue;
        }
        let Some((choice, plugin)) = pinned.iter().find(|(_, p)| p.dir_name() == dir_name) else {
            let (name, version) = split_name(&dir_name);
            found.push(InstalledPlugin {
                dir,
                name,
                version,
                choice: None,
                status: Status::NotPinned,
            });
            continue;
        };
        let status = match fs::read_to_string(dir.join(STAMP_FILE)) {
            Err(_) => Status::Unstamped,
            Ok(stamp) if stamp == plugin.stamp(true) || stamp == plugin.stamp(false) => {
                if dir.join(&plugin.library).is_file() {
                    Status::Current {
                        without_libraries: !plugin.requires.is_empty()
                            && stamp == plugin.stamp(false),
                    }
                } else {
                    Status::LibraryMissing {
                        library: plugin.library.clone(),
                    }
                }
            }
            Ok(_) => Status::Stale,
        };
        found.push(InstalledPlugin {
            dir,
            name: plugin.name().to_string(),
            version: plugin.version().to_string(),
            choice: Some(*choice),
            status,
        });
    }
    found.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install_fake(dest: &Path, plugin: &Plugin, stamp: &str, with_library: bool) {
        let dir = dest.join(plugin.dir_name());
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(STAMP_FILE), stamp).unwrap();
        if with_library {
            let library = dir.join(&plugin.library);
            fs::create_dir_all(library.parent().unwrap()).unwrap();
            fs::write(library, b"ELF").unwrap();
        }
    }

    #[test]
    fn list_tells_each_directory_from_the_pins() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path();
        assert_eq!(list(&dest.join("absent")).unwrap(), []);
        let cpu = Choice::Cpu.plugins().unwrap();
        let cuda12 = Choice::Cuda12.plugins().unwrap().remove(0);
        let tpu = Choice::Tpu.plugins().unwrap().remove(0);
        install_fake(dest, &cpu[0], &cpu[0].stamp(true), true);
        install_fake(dest, &cpu[1], "0000\n", true);
        install_fake(dest, &cuda12, &cuda12.stamp(false), true);
        install_fake(dest, &tpu, &tpu.stamp(true), false);
        fs::create_dir_all(dest.join("jax-cuda12-pjrt-0.4.0")).unwrap();
        fs::create_dir_all(dest.join("jax-rocm7-pjrt-0.12.0")).unwrap();
        fs::create_dir_all(dest.join(".jax-cuda13-pjrt-0.12.0.1.partial")).unwrap();
        fs::create_dir_all(dest.join(".download-abc")).unwrap();
        fs::write(dest.join("notes.txt"), "").unwrap();
        let listed: Vec<(String, String, Option<Choice>, Status)> = list(dest)
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.version, p.choice, p.status))
            .collect();
        let row = |name: &str, version: &str, choice, status| {
            (name.to_string(), version.to_string(), choice, status)
        };
        assert_eq!(
            listed,
            [
                row(
                    "jax-cuda13-pjrt",
                    "0.12.0.1",
                    Some(Choice::Cuda13),
                    Status::Interrupted
                ),
                row(
                    "jax-cuda12-pjrt",
                    "0.10.2",
                    Some(Choice::Cuda12),
                    Status::Current {
                        without_libraries: true
                    }
                ),
                row("jax-cuda12-pjrt", "0.4.0", None, Status::NotPinned),
                row(
                    "jax-rocm7-pjrt",
                    "0.12.0",
                    Some(Choice::Rocm),
                    Status::Unstamped
                ),
                row(
                    "lammps-jax-pjrt-cpu",
                    "0.11.2",
                    Some(Choice::Cpu),
                    Status::Stale
                ),
                row(
                    "libtpu",
                    "0.0.51",
                    Some(Choice::Tpu),
                    Status::LibraryMissing {
                        library: "libtpu/libtpu.so".to_string()
                    }
                ),
                row(
                    "xla-cpu-pjrt",
                    "0.0.1",
                    Some(Choice::Cpu),
                    Status::Current {
                        without_libraries: false
                    }
                ),
            ]
        );
    }

    #[test]
    fn names_split_before_the_version() {
        assert_eq!(
            split_name("jax-cuda12-pjrt-0.10.2"),
            ("jax-cuda12-pjrt".into(), "0.10.2".into())
        );
        assert_eq!(
            split_name("libtpu-0.0.51"),
            ("libtpu".into(), "0.0.51".into())
        );
        assert_eq!(split_name("something"), ("something".into(), String::new()));
    }
}
