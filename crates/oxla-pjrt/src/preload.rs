//! What a plugin needs before it is loaded: the NVIDIA libraries of a CUDA
//! plugin, and the compiler options that point XLA at the CUDA tools.
//!
//! JAX's CUDA plugin package loads NVIDIA's libraries from their pip wheels
//! (`nvidia/<package>/lib/`) before it opens the plugin, so that the
//! plugin's own `dlopen`s find those copies instead of searching the
//! system. oxla does the same: [`prepare_plugin`] looks for each library
//! first in the site-packages tree the plugin sits in (where `ci/setup
//! --cuda` unpacks the plugin and its library wheels together), then in the
//! Python site-packages directories, and loads the ones it finds with
//! `RTLD_GLOBAL`, in dependency order. A library found nowhere is left to
//! the system's search path, as JAX leaves it. The CUDA compiler tools
//! (`ptxas`, `libdevice`) ship in `nvidia/cuda_nvcc`; when present, XLA is
//! told where with the `xla_gpu_cuda_data_dir` compile option.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

use crate::compile::OptionValue;
use crate::discovery::Platform;
use crate::error::{Error, Result};

/// A shared library a plugin expects to find loaded, as a pip wheel lays it
/// out: `<site-packages>/<package_dir>/lib/<file>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeededLibrary {
    /// The wheel's directory under site-packages (`nvidia/cublas`).
    pub package_dir: &'static str,
    /// The library's file name, which is also its soname (`libcublas.so.12`).
    pub file: &'static str,
}

const fn needed(package_dir: &'static str, file: &'static str) -> NeededLibrary {
    NeededLibrary { package_dir, file }
}

/// CUDA 12's libraries in dependency order (each after the ones it links):
/// the list JAX's CUDA 12 plugin preloads, plus nvJitLink, which cuSPARSE
/// and cuSOLVER link against.
const CUDA12_LIBRARIES: [NeededLibrary; 12] = [
    needed("nvidia/cuda_runtime", "libcudart.so.12"),
    needed("nvidia/cuda_nvrtc", "libnvrtc.so.12"),
    needed("nvidia/nvjitlink", "libnvJitLink.so.12"),
    needed("nvidia/cublas", "libcublasLt.so.12"),
    needed("nvidia/cublas", "libcublas.so.12"),
    needed("nvidia/nccl", "libnccl.so.2"),
    needed("nvidia/cuda_cupti", "libcupti.so.12"),
    needed("nvidia/cusparse", "libcusparse.so.12"),
    needed("nvidia/cufft", "libcufft.so.11"),
    needed("nvidia/cusolver", "libcusolver.so.11"),
    needed("nvidia/nvshmem", "libnvshmem_host.so.3"),
    needed("nvidia/cudnn", "libcudnn.so.9"),
];

/// CUDA 13's libraries in dependency order; CUDA 13's wheels share one
/// directory, `nvidia/cu13`.
const CUDA13_LIBRARIES: [NeededLibrary; 12] = [
    needed("nvidia/cu13", "libcudart.so.13"),
    needed("nvidia/cu13", "libnvrtc.so.13"),
    needed("nvidia/cu13", "libnvJitLink.so.13"),
    needed("nvidia/cu13", "libcublasLt.so.13"),
    needed("nvidia/cu13", "libcublas.so.13"),
    needed("nvidia/nccl", "libnccl.so.2"),
    needed("nvidia/cu13", "libcupti.so.13"),
    needed("nvidia/cu13", "libcusparse.so.12"),
    needed("nvidia/cu13", "libcufft.so.12"),
    needed("nvidia/cu13", "libcusolver.so.12"),
    needed("nvidia/nvshmem", "libnvshmem_host.so.3"),
    needed("nvidia/cudnn", "libcudnn.so.9"),
];

/// The libraries and the CUDA tools directory (under site-packages) of one
/// CUDA major version.
struct CudaLayout {
    libraries: &'static [NeededLibrary],
    tools_dir: &'static str,
}

const CUDA12: CudaLayout = CudaLayout {
    libraries: &CUDA12_LIBRARIES,
    tools_dir: "nvidia/cuda_nvcc",
};

const CUDA13: CudaLayout = CudaLayout {
    libraries: &CUDA13_LIBRARIES,
    tools_dir: "nvidia/cu13",
};

/// The CUDA layout a plugin was built for: CUDA 13 when it lives in JAX's
/// `xla_cuda13` package, CUDA 12 otherwise.
fn cuda_layout(plugin: &Path) -> &'static CudaLayout {
    if plugin.components().any(|c| c.as_os_str() == "xla_cuda13") {
        &CUDA13
    } else {
        &CUDA12
    }
}

/// The libraries `platform`'s plugin at `plugin` expects to find loaded,
/// in load order.
pub fn needed_libraries(platform: Platform, plugin: &Path) -> &'static [NeededLibrary] {
    match platform {
        Platform::Cuda => cuda_layout(plugin).libraries,
        // XLA:CPU is self-contained; ROCm plugins use the system's ROCm
        // installation; libtpu carries what it needs.
        Platform::Cpu | Platform::Rocm | Platform::Tpu => &[],
    }
}

/// What [`prepare_plugin`] did for one plugin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preparation {
    /// The libraries loaded, in load order.
    pub loaded: Vec<PathBuf>,
    /// The libraries found in no wheel directory (left to the system's
    /// search path).
    pub not_found: Vec<&'static str>,
    /// Compile options the plugin needs on every compilation
    /// (`xla_gpu_cuda_data_dir` for CUDA).
    pub compile_overrides: Vec<(String, OptionValue)>,
}

impl Preparation {
    /// Adds a hint to a failed load of the plugin when libraries it needs
    /// were not found.
    pub fn explain_load_failure(&self, platform: Platform, error: Error) -> Error {
        match error {
            Error::Load { path, message } if !self.not_found.is_empty() => Error::Load {
                path,
                message: format!(
                    "{message}\n  the {platform} plugin needs libraries oxla found in no wheel \
                     directory: {}\n  install them with `oxla plugin install cuda12` (or cuda13; or \
                     `pip install jax[cuda12]`), or put them on LD_LIBRARY_PATH",
                    self.not_found.join(", ")
                ),
            },
            other => other,
        }
    }
}

/// Where a plugin at `plugin` finds wheels besides the site-packages list:
/// the site-packages tree it sits in (`<root>/jax_plugins/xla_cuda12/
/// xla_cuda_plugin.so`).
fn plugin_site_root(plugin: &Path) -> Option<&Path> {
    plugin.ancestors().nth(3)
}

/// Libraries loaded so far (never closed: plugins hold pointers into them)
/// and each prepared plugin's preparation, by canonical plugin path.
#[derive(Default)]
struct Prepared {
    libraries: Vec<Library>,
    plugins: HashMap<PathBuf, Arc<Preparation>>,
}

fn prepared() -> &'static Mutex<Prepared> {
    static PREPARED: OnceLock<Mutex<Prepared>> = OnceLock::new();
    PREPARED.get_or_init(Default::default)
}

/// Loads the libraries `platform`'s plugin at `plugin` needs (see the module
/// documentation), looking beside the plugin and then in `site_packages`,
/// and works out the compile options it needs. Done once per plugin; later
/// calls return the first preparation. A library that exists but does not
/// load is an error naming it.
pub fn prepare_plugin(
    platform: Platform,
    plugin: &Path,
    site_packages: &[PathBuf],
) -> Result<Arc<Preparation>> {
    let key = plugin
        .canonicalize()
        .unwrap_or_else(|_| plugin.to_path_buf());
    let mut state = prepared().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(done) = state.plugins.get(&key) {
        return Ok(done.clone());
    }
    let roots: Vec<&Path> = plugin_site_root(&key)
        .into_iter()
        .chain(site_packages.iter().map(PathBuf::as_path))
        .collect();
    let mut preparation = Preparation::default();
    for library in needed_libraries(platform, &key) {
        let found = roots.iter().map(|root| {
            root.join(library.package_dir)
                .join("lib")
                .join(library.file)
        });
        let Some(path) = found.into_iter().find(|p| p.is_file()) else {
            preparation.not_found.push(library.file);
            continue;
        };
        // SAFETY: loading a shared library runs its initializers; NVIDIA's
        // libraries are made to be loaded this way (JAX does the same).
        let handle =
            unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| {
                Error::Load {
                    path: path.clone(),
                    message: format!(
                        "{e} (a library the {platform} plugin {} needs)",
                        key.display()
                    ),
                }
            })?;
        state.libraries.push(handle);
        preparation.loaded.push(path);
    }
    if platform == Platform::Cuda {
        let tools = cuda_layout(&key).tools_dir;
        if let Some(dir) = roots
            .iter()
            .map(|root| root.join(tools))
            .find(|dir| dir.join("bin").join("ptxas").is_file())
        {
            preparation.compile_overrides.push((
                "xla_gpu_cuda_data_dir".to_string(),
                OptionValue::String(dir.display().to_string()),
            ));
        }
    }
    let preparation = Arc::new(preparation);
    state.plugins.insert(key, preparation.clone());
    Ok(preparation)
}

/// The preparation [`prepare_plugin`] made for the plugin at `plugin`, if
/// any.
pub fn preparation_of(plugin: &Path) -> Option<Arc<Preparation>> {
    let key = plugin
        .canonicalize()
        .unwrap_or_else(|_| plugin.to_path_buf());
    let state = prepared().lock().unwrap_or_else(|p| p.into_inner());
    state.plugins.get(&key).cloned()
}
