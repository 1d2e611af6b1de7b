//! The pins: which wheel of which version, with which SHA-256, makes up
//! each plugin choice. The pin files in `pins/` are compiled in and parsed
//! at run time (a unit test parses every one).

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use crate::error::{Error, Result, one_line};

/// The pin files compiled into this crate, as `(file name, text)`: one per
/// [`Choice`] and `profiler-plugins.toml` (the plugin the profiler's tests
/// use, the plugin pin of `cuda12.toml`).
pub const EMBEDDED_PINS: [(&str, &str); 6] = [
    ("plugins.toml", include_str!("../pins/plugins.toml")),
    ("cuda12.toml", include_str!("../pins/cuda12.toml")),
    ("cuda13.toml", include_str!("../pins/cuda13.toml")),
    ("rocm.toml", include_str!("../pins/rocm.toml")),
    ("tpu.toml", include_str!("../pins/tpu.toml")),
    (
        "profiler-plugins.toml",
        include_str!("../pins/profiler-plugins.toml"),
    ),
];

/// One pinned wheel: a name and version on the package index and the
/// SHA-256 of the file pip must download for them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wheel {
    /// The distribution's name on the index (`nvidia-cublas-cu12`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The wheel file's SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// The CPython version whose wheel is pinned (`"3.11"`), for packages
    /// that build one wheel per Python version; pip is then told to
    /// download that one whatever Python runs it.
    #[serde(default)]
    pub python: Option<String>,
}

impl Wheel {
    /// The pip requirement, `name==version`.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.name, self.version)
    }
}

impl fmt::Display for Wheel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

/// A pinned PJRT plugin: its wheel, where the plugin library lies inside
/// it, and the wheels of the libraries it loads (unpacked into the same
/// directory, laid out as a site-packages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The plugin's own wheel.
    pub wheel: Wheel,
    /// The PJRT platform (`cpu`, `cuda`, `rocm`, `tpu`).
    pub platform: String,
    /// The plugin library, relative to the unpacked wheel.
    pub library: String,
    /// The PJRT C header inside the wheel, where it ships one.
    pub header: Option<String>,
    /// The library wheels it needs, in the order they are unpacked.
    pub requires: Vec<Wheel>,
}

impl Plugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.wheel.name
    }

    /// The plugin's version.
    pub fn version(&self) -> &str {
        &self.wheel.version
    }

    /// The directory it is unpacked into, `<name>-<version>`.
    pub fn dir_name(&self) -> String {
        format!("{}-{}", self.wheel.name, self.wheel.version)
    }

    /// The wheels an install unpacks: the plugin's, then (with
    /// `with_libraries`) the ones it requires.
    pub fn wheels(&self, with_libraries: bool) -> Vec<&Wheel> {
        let libraries = if with_libraries {
            &self.requires[..]
        } else {
            &[]
        };
        std::iter::once(&self.wheel).chain(libraries).collect()
    }

    /// The `.oxla-sha256` stamp of an install: the SHA-256 of every wheel
    /// of [`Plugin::wheels`], one per line.
    pub fn stamp(&self, with_libraries: bool) -> String {
        self.wheels(with_libraries)
            .iter()
            .map(|w| format!("{}\n", w.sha256))
            .collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    plugin: Vec<RawPlugin>,
    #[serde(default)]
    wheel: Vec<Wheel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: String,
    version: String,
    platform: String,
    sha256: String,
    library: String,
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    python: Option<String>,
    #[serde(default)]
    requires: Vec<String>,
}

/// A parsed pin file: `[[plugin]]` entries, and `[[wheel]]` entries that
/// plugins name in `requires`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The file's name (in messages).
    pub file: String,
    /// The plugins, their `requires` resolved.
    pub plugins: Vec<Plugin>,
    /// Every `[[wheel]]` entry.
    pub wheels: Vec<Wheel>,
}

impl Manifest {
    /// Parses the pin file `text`, named `file` in errors. Checks that every
    /// SHA-256 is 64 lowercase hex digits, that no wheel is pinned twice,
    /// and that every required wheel is pinned.
    pub fn parse(file: &str, text: &str) -> Result<Manifest> {
        let pins_error = |message: String| Error::Pins {
            file: file.to_string(),
            message: one_line(&message),
        };
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            pins_error(match line {
                Some(line) => format!("line {line}: {}", e.message()),
                None => e.message().to_string(),
            })
        })?;
        let mut seen = HashSet::new();
        for wheel in &raw.wheel {
            if !seen.insert(wheel.name.as_str()) {
                return Err(pins_error(format!("wheel {} is pinned twice", wheel.name)));
            }
        }
        let check_hash = |name: &str, sha256: &str| {
            if sha256.len() == 64
                && sha256
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                Ok(())
            } else {
                Err(pins_error(format!(
                    "the sha256 of {name} is {sha256:?}, not 64 lowercase hex digits"
                )))
            }
        };
        for wheel in &raw.wheel {
            check_hash(&wheel.name, &wheel.sha256)?;
        }
        let mut plugins = Vec::new();
        for p in raw.plugin {
            check_hash(&p.name, &p.sha256)?;
            let requires = p
                .requires
                .iter()
                .map(|name| {
                    raw.wheel
                        .iter()
                        .find(|w| &w.name == name)
                        .cloned()
                        .ok_or_else(|| Error::MissingWheelPin {
                            file: file.to_string(),
                            plugin: p.name.clone(),
                            wheel: name.clone(),
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            plugins.push(Plugin {
                wheel: Wheel {
                    name: p.name,
                    version: p.version,
                    sha256: p.sha256,
                    python: p.python,
                },
                platform: p.platform,
                library: p.library,
                header: p.header,
                requires,
            });
        }
        Ok(Manifest {
            file: file.to_string(),
            plugins,
            wheels: raw.wheel,
        })
    }

    /// The compiled-in pin file `file` (one of [`EMBEDDED_PINS`]).
    pub fn embedded(file: &str) -> Result<Manifest> {
        let (name, text) = EMBEDDED_PINS
            .iter()
            .find(|(name, _)| *name == file)
            .ok_or_else(|| Error::Pins {
                file: file.to_string(),
                message: "no such pin file in this oxla".to_string(),
            })?;
        Manifest::parse(name, text)
    }
}

/// What `oxla plugin install` installs: a platform's pinned plugin (and for
/// CUDA the NVIDIA library wheels it loads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Choice {
    /// Both pinned CPU plugins (`plugins.toml`).
    Cpu,
    /// The CUDA 12 plugin with its NVIDIA libraries (`cuda12.toml`).
    Cuda12,
    /// The CUDA 13 plugin with its NVIDIA libraries (`cuda13.toml`).
    Cuda13,
    /// The ROCm 7 plugin, which uses the machine's ROCm (`rocm.toml`).
    Rocm,
    /// libtpu (`tpu.toml`).
    Tpu,
}

impl Choice {
    /// Every choice.
    pub const ALL: [Choice; 5] = [
        Choice::Cpu,
        Choice::Cuda12,
        Choice::Cuda13,
        Choice::Rocm,
        Choice::Tpu,
    ];

    /// The choice's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Cpu => "cpu",
            Choice::Cuda12 => "cuda12",
            Choice::Cuda13 => "cuda13",
            Choice::Rocm => "rocm",
            Choice::Tpu => "tpu",
        }
    }

    /// The pin file it installs.
    pub fn pins_file(self) -> &'static str {
        match self {
            Choice::Cpu => "plugins.toml",
            Choice::Cuda12 => "cuda12.toml",
            Choice::Cuda13 => "cuda13.toml",
            Choice::Rocm => "rocm.toml",
            Choice::Tpu => "tpu.toml",
        }
    }

    /// The parsed pin file of this choice.
    pub fn manifest(self) -> Result<Manifest> {
        Manifest::embedded(self.pins_file())
    }

    /// The plugins this choice installs.
    pub fn plugins(self) -> Result<Vec<Plugin>> {
        Ok(self.manifest()?.plugins)
    }

    /// The choices' names, comma-separated.
    pub fn names() -> String {
        Choice::ALL.map(Choice::name).join(", ")
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Choice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Choice> {
        Choice::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| Error::UnknownChoice {
                given: s.to_string(),
                choices: Choice::names(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_pin_file_parses_with_full_hashes_and_no_unused_wheel() {
        for (file, _) in EMBEDDED_PINS {
            let manifest = Manifest::embedded(file).unwrap();
            assert!(!manifest.plugins.is_empty(), "{file}");
            let required: HashSet<&str> = manifest
                .plugins
                .iter()
                .flat_map(|p| p.requires.iter().map(|w| w.name.as_str()))
                .collect();
            for wheel in &manifest.wheels {
                assert!(
                    required.contains(wheel.name.as_str()),
                    "{file}: {} unused",
                    wheel.name
                );
            }
            for plugin in &manifest.plugins {
                assert!(!plugin.library.is_empty(), "{file}");
                assert!(
                    ["cpu", "cuda", "rocm", "tpu"].contains(&plugin.platform.as_str()),
                    "{file}: {}",
                    plugin.platform
                );
            }
        }
    }

    #[test]
    fn each_choice_installs_its_platforms_plugins() {
        let names = |c: Choice| -> Vec<String> {
            c.plugins().unwrap().iter().map(Plugin::dir_name).collect()
        };
        assert_eq!(
            names(Choice::Cpu),
            ["xla-cpu-pjrt-0.0.1", "lammps-jax-pjrt-cpu-0.11.2"]
        );
        assert_eq!(names(Choice::Cuda12), ["jax-cuda12-pjrt-0.10.2"]);
        assert_eq!(names(Choice::Cuda13), ["jax-cuda13-pjrt-0.12.0.1"]);
        assert_eq!(names(Choice::Rocm), ["jax-rocm7-pjrt-0.12.0"]);
        assert_eq!(names(Choice::Tpu), ["libtpu-0.0.51"]);
        let platform = |c: Choice| c.plugins().unwrap()[0].platform.clone();
        assert_eq!(platform(Choice::Cpu), "cpu");
        assert_eq!(platform(Choice::Cuda13), "cuda");
        assert_eq!(platform(Choice::Rocm), "rocm");
        assert_eq!(platform(Choice::Tpu), "tpu");
        assert_eq!(Choice::Cuda12.plugins().unwrap()[0].requires.len(), 12);
        assert_eq!(Choice::Cuda13.plugins().unwrap()[0].requires.len(), 15);
        assert!(Choice::Rocm.plugins().unwrap()[0].requires.is_empty());
        let tpu = &Choice::Tpu.plugins().unwrap()[0];
        assert_eq!(tpu.library, "libtpu/libtpu.so");
        assert_eq!(tpu.wheel.python.as_deref(), Some("3.11"));
    }

    /// The CPU pins ship the PJRT C header oxla-pjrt's layout test reads.
    #[test]
    fn one_cpu_plugin_ships_the_pjrt_header() {
        let plugins = Choice::Cpu.plugins().unwrap();
        let with_header: Vec<_> = plugins.iter().filter(|p| p.header.is_some()).collect();
        assert_eq!(with_header.len(), 1);
        assert_eq!(with_header[0].name(), "xla-cpu-pjrt");
    }

    /// ci/setup installs the profiler's plugin as `cuda12
    /// --without-libraries`, so profiler-plugins.toml (what the profiler's
    /// tests look for) must be exactly cuda12.toml's plugin.
    #[test]
    fn the_profiler_plugin_is_the_cuda12_plugin_without_its_libraries() {
        let profiler = Manifest::embedded("profiler-plugins.toml").unwrap();
        let cuda12 = &Choice::Cuda12.plugins().unwrap()[0];
        assert_eq!(profiler.plugins.len(), 1);
        let plugin = &profiler.plugins[0];
        assert!(plugin.requires.is_empty());
        assert_eq!(plugin.wheel, cuda12.wheel);
        assert_eq!(plugin.library, cuda12.library);
        assert_eq!(plugin.stamp(true), cuda12.stamp(false));
    }

    /// The stamp format of ci/install_plugins.py, so installs it made stay
    /// valid: each pin on its own line, plugin first.
    #[test]
    fn stamps_list_the_plugin_then_its_libraries() {
        let cuda12 = &Choice::Cuda12.plugins().unwrap()[0];
        let stamp = cuda12.stamp(true);
        let lines: Vec<&str> = stamp.lines().collect();
        assert_eq!(lines.len(), 13);
        assert_eq!(lines[0], cuda12.wheel.sha256);
        assert_eq!(lines[1], cuda12.requires[0].sha256);
        assert!(stamp.ends_with('\n'));
        assert_eq!(cuda12.stamp(false), format!("{}\n", cuda12.wheel.sha256));
        let cpu = &Choice::Cpu.plugins().unwrap()[0];
        assert_eq!(
            cpu.stamp(true),
            "55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc\n"
        );
    }

    #[test]
    fn choices_parse_by_name_and_an_unknown_one_lists_them() {
        for choice in Choice::ALL {
            assert_eq!(choice.name().parse::<Choice>().unwrap(), choice);
        }
        assert_eq!("CUDA12".parse::<Choice>().unwrap(), Choice::Cuda12);
        let error = "cuda".parse::<Choice>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown plugin choice \"cuda\"; the choices are cpu, cuda12, cuda13, rocm, tpu"
        );
    }

    fn plugin_text(sha: &str, extra: &str) -> String {
        format!(
            "[[plugin]]\nname = \"fake\"\nversion = \"1.0\"\nplatform = \"cpu\"\n\
             sha256 = \"{sha}\"\nlibrary = \"fake/plugin.so\"\n{extra}"
        )
    }

    #[test]
    fn a_required_wheel_without_a_pin_is_named() {
        let text = plugin_text(&"a".repeat(64), "requires = [\"nvidia-absent-cu12\"]\n");
        let error = Manifest::parse("test.toml", &text).unwrap_err();
        assert!(matches!(error, Error::MissingWheelPin { .. }), "{error}");
        assert_eq!(
            error.to_string(),
            "pins test.toml: plugin fake requires nvidia-absent-cu12, which has no [[wheel]] entry"
        );
    }

    #[test]
    fn a_broken_pin_file_is_one_line_with_its_line_number() {
        let error = Manifest::parse("broken.toml", "[[plugin]\nname = ").unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("pins broken.toml: line 1: "),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
        let error = Manifest::parse(
            "unknown.toml",
            &plugin_text(&"a".repeat(64), "colour = 1\n"),
        )
        .unwrap_err();
        assert!(error.to_string().contains("colour"), "{error}");
    }

    #[test]
    fn malformed_or_doubled_pins_are_refused() {
        let short = Manifest::parse("t.toml", &plugin_text("abc", "")).unwrap_err();
        assert!(
            short.to_string().contains("not 64 lowercase hex digits"),
            "{short}"
        );
        let upper = Manifest::parse("t.toml", &plugin_text(&"A".repeat(64), "")).unwrap_err();
        assert!(matches!(upper, Error::Pins { .. }), "{upper}");
        let wheel =
            |sha: &str| format!("[[wheel]]\nname = \"w\"\nversion = \"1\"\nsha256 = \"{sha}\"\n");
        let twice = plugin_text(
            &"a".repeat(64),
            &format!(
                "requires = [\"w\"]\n{}{}",
                wheel(&"b".repeat(64)),
                wheel(&"c".repeat(64))
            ),
        );
        let error = Manifest::parse("t.toml", &twice).unwrap_err();
        assert!(
            error.to_string().contains("wheel w is pinned twice"),
            "{error}"
        );
    }
}
