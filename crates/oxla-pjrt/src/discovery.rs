//! Finding a PJRT plugin for a platform.
//!
//! Order: an explicit path; `OXLA_PJRT_PLUGIN`; oxla's plugin directory
//! (`$OXLA_HOME/plugins`, default `~/.cache/oxla/plugins`, where ci/setup
//! unpacks the pinned wheels); the Python site-packages places of the known
//! plugin packages. The first existing file wins; when none exists the error
//! lists every place looked at and how to install a plugin.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A PJRT platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// XLA:CPU.
    Cpu,
    /// NVIDIA GPUs.
    Cuda,
    /// AMD GPUs.
    Rocm,
    /// Google TPUs.
    Tpu,
}

impl Platform {
    /// Every platform.
    pub const ALL: [Platform; 4] = [Platform::Cpu, Platform::Cuda, Platform::Rocm, Platform::Tpu];

    /// The platform's name, as PJRT clients report it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Cpu => "cpu",
            Platform::Cuda => "cuda",
            Platform::Rocm => "rocm",
            Platform::Tpu => "tpu",
        }
    }

    /// The `JAX_PLATFORMS` value that runs JAX on this platform: its
    /// name, plus `cpu` beside an accelerator, where JAX's host callbacks
    /// (`pure_callback`, `debug.print`) need a CPU device listed.
    pub fn jax_platforms(self) -> String {
        match self {
            Platform::Cpu => "cpu".to_string(),
            Platform::Cuda | Platform::Rocm | Platform::Tpu => format!("{},cpu", self.name()),
        }
    }

    /// What one device of the platform is called (`TPU`, `GPU`).
    pub fn device_name(self) -> &'static str {
        match self {
            Platform::Cpu => "CPU",
            Platform::Cuda | Platform::Rocm => "GPU",
            Platform::Tpu => "TPU",
        }
    }

    /// Where known plugin packages keep their library, relative to a wheel's
    /// root (which is also a site-packages directory), most preferred first.
    pub fn known_library_paths(self) -> &'static [&'static str] {
        match self {
            Platform::Cpu => &[
                "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
                "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
            ],
            Platform::Cuda => &[
                "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
                "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            ],
            Platform::Rocm => &[
                "jax_plugins/xla_rocm7/xla_rocm_plugin.so",
                "jax_plugins/xla_rocm6/xla_rocm_plugin.so",
            ],
            Platform::Tpu => &["libtpu/libtpu.so"],
        }
    }

    /// How to get a plugin for this platform.
    pub fn install_hint(self) -> &'static str {
        match self {
            Platform::Cpu => {
                "install one with `oxla plugin install cpu` (it unpacks the pinned xla-cpu-pjrt and \
                 lammps-jax-pjrt-cpu wheels into oxla's plugin directory; `bash ci/setup` in the \
                 oxla repository runs it), or `pip install lammps-jax-pjrt-cpu`, or point \
                 OXLA_PJRT_PLUGIN at a PJRT plugin .so"
            }
            Platform::Cuda => {
                "install one with `oxla plugin install cuda12` (or cuda13: the pinned plugin with \
                 NVIDIA's libraries), or point OXLA_PJRT_PLUGIN at a PJRT plugin .so"
            }
            Platform::Rocm => {
                "install one with `oxla plugin install rocm` (the pinned plugin; ROCm 7 itself from \
                 the machine), or point OXLA_PJRT_PLUGIN at a PJRT plugin .so"
            }
            Platform::Tpu => {
                "install one with `oxla plugin install tpu` (the pinned libtpu), or point \
                 OXLA_PJRT_PLUGIN at libtpu.so"
            }
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Platform {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Platform::ALL
            .into_iter()
            .find(|p| p.name() == s.to_ascii_lowercase())
            .ok_or_else(|| {
                Error::InvalidArgument(format!("unknown platform {s:?} (cpu, cuda, rocm, tpu)"))
            })
    }
}

/// oxla's home: `$OXLA_HOME`, or `~/.cache/oxla`.
pub fn oxla_home() -> PathBuf {
    if let Some(home) = env::var_os("OXLA_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    let home = env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    home.join(".cache").join("oxla")
}

/// Where ci/setup unpacks plugin wheels: `<oxla home>/plugins`.
pub fn plugin_dir() -> PathBuf {
    oxla_home().join("plugins")
}

/// A candidate location for a plugin library, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The file that would be loaded.
    pub path: PathBuf,
    /// What made oxla look there.
    pub source: CandidateSource,
}

/// Why a candidate was looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateSource {
    /// The caller named it.
    Explicit,
    /// `OXLA_PJRT_PLUGIN`.
    Environment,
    /// oxla's plugin directory.
    PluginDir,
    /// A Python site-packages directory.
    SitePackages,
}

impl fmt::Display for CandidateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CandidateSource::Explicit => "explicit path",
            CandidateSource::Environment => "OXLA_PJRT_PLUGIN",
            CandidateSource::PluginDir => "oxla plugin directory",
            CandidateSource::SitePackages => "Python site-packages",
        })
    }
}

/// Python site-packages directories worth looking in: `PYTHONPATH`, the
/// active virtualenv, oxla's venv, the user's and the system's.
fn site_packages_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env::var_os("PYTHONPATH")
        .map(|p| env::split_paths(&p).collect())
        .unwrap_or_default();
    let home = env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Some(venv) = env::var_os("VIRTUAL_ENV") {
        prefixes.push(PathBuf::from(venv));
    }
    prefixes.push(oxla_home().join("venv"));
    prefixes.push(home.join(".local"));
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    for prefix in prefixes {
        let lib = prefix.join("lib");
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("python3"))
            })
            .collect();
        pythons.sort();
        for python in pythons.into_iter().rev() {
            dirs.push(python.join("site-packages"));
            dirs.push(python.join("dist-packages"));
        }
    }
    dirs.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    dirs
}

/// The places discovery looks in besides an explicit path. Taken from the
/// process environment by [`SearchPlaces::from_environment`]; tests build
/// their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPlaces {
    /// `OXLA_PJRT_PLUGIN`, if set.
    pub env_plugin: Option<PathBuf>,
    /// oxla's plugin directory (one unpacked wheel per subdirectory).
    pub plugin_dir: PathBuf,
    /// Python site-packages directories, in order.
    pub site_packages: Vec<PathBuf>,
}

impl SearchPlaces {
    /// The places this process's environment names.
    pub fn from_environment() -> Self {
        Self {
            env_plugin: env::var_os("OXLA_PJRT_PLUGIN")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            plugin_dir: plugin_dir(),
            site_packages: site_packages_dirs(),
        }
    }

    /// Every place to look for a `platform` plugin, in order (existing or
    /// not). `explicit` is a path the caller named.
    pub fn candidates(&self, platform: Platform, explicit: Option<&Path>) -> Vec<Candidate> {
        let mut out = Vec::new();
        if let Some(path) = explicit {
            out.push(Candidate {
                path: path.to_path_buf(),
                source: CandidateSource::Explicit,
            });
        }
        if let Some(path) = &self.env_plugin {
            out.push(Candidate {
                path: path.clone(),
                source: CandidateSource::Environment,
            });
        }
        let mut unpacked: Vec<PathBuf> = std::fs::read_dir(&self.plugin_dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        unpacked.sort();
        if unpacked.is_empty() {
            out.push(Candidate {
                path: self.plugin_dir.clone(),
                source: CandidateSource::PluginDir,
            });
        }
        for relative in platform.known_library_paths() {
            for dir in &unpacked {
                out.push(Candidate {
                    path: dir.join(relative),
                    source: CandidateSource::PluginDir,
                });
            }
        }
        for site in &self.site_packages {
            for relative in platform.known_library_paths() {
                out.push(Candidate {
                    path: site.join(relative),
                    source: CandidateSource::SitePackages,
                });
            }
        }
        out
    }

    /// The plugin library for `platform`: the first existing candidate. An
    /// explicit path or `OXLA_PJRT_PLUGIN` that does not exist is an error by
    /// itself (a typo must not silently pick another plugin).
    pub fn find(&self, platform: Platform, explicit: Option<&Path>) -> Result<PathBuf> {
        let all = self.candidates(platform, explicit);
        for candidate in &all {
            let exists = candidate.path.is_file();
            match candidate.source {
                CandidateSource::Explicit | CandidateSource::Environment if !exists => {
                    return Err(Error::Load {
                        path: candidate.path.clone(),
                        message: format!("no such file (given as {})", candidate.source),
                    });
                }
                _ if exists => return Ok(candidate.path.clone()),
                _ => {}
            }
        }
        Err(Error::PluginNotFound {
            platform,
            searched: all.into_iter().map(|c| c.path).collect(),
        })
    }
}

/// The plugin library for `platform`, searched in the places this process's
/// environment names (see [`SearchPlaces::find`]).
pub fn find_plugin(platform: Platform, explicit: Option<&Path>) -> Result<PathBuf> {
    SearchPlaces::from_environment().find(platform, explicit)
}

/// The message of [`Error::PluginNotFound`].
pub(crate) fn describe_not_found(platform: Platform, searched: &[PathBuf]) -> String {
    let mut text = format!("no PJRT plugin for platform {platform} found; looked at:");
    for path in searched {
        text.push_str("\n  ");
        text.push_str(&path.display().to_string());
    }
    text.push('\n');
    text.push_str(platform.install_hint());
    text
}
