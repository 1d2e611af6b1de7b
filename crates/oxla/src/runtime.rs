//! The process's default PJRT client, and compiling lowered jaxprs.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use oxla_core::Jaxpr;
use oxla_pjrt::{Client, ClientOptions, LoadedExecutable, Platform, Program};

use crate::error::{Error, Result};

/// The default client: the plugin of `OXLA_PLATFORM` (default `cpu`),
/// created on first use and kept for the process. On the CPU it has one
/// device, as JAX's (`OXLA_CPU_DEVICE_COUNT` asks for more, as
/// `--xla_force_host_platform_device_count` does in JAX): the plugin's
/// default of 4 devices splits its thread pool and runs one program about
/// 15% slower. A GPU client takes memory as `OXLA_GPU_PREALLOCATE`,
/// `OXLA_GPU_MEMORY_FRACTION` and `OXLA_GPU_ALLOCATOR` (or JAX's
/// `XLA_PYTHON_CLIENT_*` names) say.
pub fn client() -> Result<&'static Client> {
    #[cfg(test)]
    if NO_PLUGIN.with(std::cell::Cell::get) {
        return Err(Error::Internal(
            "the PJRT client was asked for by code that must run without a plugin".into(),
        ));
    }
    CLIENT
        .get_or_init(|| {
            let platform = default_platform();
            Client::for_platform(platform, &default_options(platform)).map_err(Arc::new)
        })
        .as_ref()
        .map_err(|e| Error::Runtime(e.clone()))
}

#[cfg(test)]
thread_local! {
    /// Set by tests that must not start a plugin: [`client`] then fails.
    static NO_PLUGIN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with [`client`] failing on this thread (for the rule tests
/// that run without a plugin).
#[cfg(test)]
pub(crate) fn without_plugin<R>(f: impl FnOnce() -> R) -> R {
    let saved = NO_PLUGIN.with(|n| n.replace(true));
    let result = f();
    NO_PLUGIN.with(|n| n.set(saved));
    result
}

/// The platform of `OXLA_PLATFORM` (default `cpu`), read once (a
/// mistyped value is one warning).
fn default_platform() -> Platform {
    static PLATFORM: OnceLock<Platform> = OnceLock::new();
    *PLATFORM.get_or_init(|| {
        oxla_pjrt::settings::setting("OXLA_PLATFORM", "cpu, cuda, rocm, tpu", |p| p.parse().ok())
            .or_default(Platform::Cpu)
    })
}

/// The platform programs are lowered for: the default client's.
pub(crate) fn lowering_platform() -> oxla_lower::Platform {
    lowering_platform_of(default_platform())
}

/// How programs for `platform` are lowered.
pub(crate) fn lowering_platform_of(platform: Platform) -> oxla_lower::Platform {
    match platform {
        Platform::Cpu => oxla_lower::Platform::Cpu,
        Platform::Cuda | Platform::Rocm | Platform::Tpu => oxla_lower::Platform::Accelerator,
    }
}

/// The default client's options on `platform` (see [`client`]).
fn default_options(platform: Platform) -> ClientOptions {
    match platform {
        Platform::Cpu => {
            let requested = *REQUESTED_CPU_DEVICES
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            ClientOptions::new().cpu_device_count(requested.unwrap_or_else(|| {
                oxla_pjrt::settings::setting(
                    "OXLA_CPU_DEVICE_COUNT",
                    "a whole number of devices, at least 1",
                    |n| n.parse().ok().filter(|n: &i64| *n >= 1),
                )
                .or_default(1)
            }))
        }
        Platform::Cuda | Platform::Rocm => ClientOptions::new().with_gpu_memory_from_environment(),
        Platform::Tpu => ClientOptions::new(),
    }
}

/// Makes the default client as process `node_id` of a job of `num_nodes`
/// processes, sharing `key_value` (under the platform's name and a colon,
/// JAX's prefix) with the others. GPU plugins build their multi-node
/// client from it (`node_id`, `num_nodes`); the CPU plugins take neither
/// option and stay local; TPU plugins learn their slice from the machine.
/// An error when the default client already exists.
#[cfg(feature = "distributed")]
pub(crate) fn create_job_client(
    key_value: Arc<dyn oxla_pjrt::KeyValueStore>,
    node_id: usize,
    num_nodes: usize,
) -> Result<&'static Client> {
    let mut created_here = false;
    let made = CLIENT.get_or_init(|| {
        created_here = true;
        let platform = default_platform();
        let mut options = default_options(platform);
        if matches!(platform, Platform::Cuda | Platform::Rocm) {
            options = options
                .set("node_id", oxla_pjrt::Value::Int64(node_id as i64))
                .set("num_nodes", oxla_pjrt::Value::Int64(num_nodes as i64));
        }
        let key_value = oxla_pjrt::KeyValueCallbacks::new(key_value, format!("{platform}:"));
        Client::for_platform_with_key_value_store(platform, &options, key_value).map_err(Arc::new)
    });
    if !created_here {
        return Err(Error::InvalidArgument(
            "distributed::initialize must come before the process's first array or \
             compilation (the client already exists)"
                .into(),
        ));
    }
    made.as_ref().map_err(|e| Error::Runtime(e.clone()))
}

static CLIENT: OnceLock<std::result::Result<Client, Arc<oxla_pjrt::Error>>> = OnceLock::new();

/// The CPU device count asked for with [`set_cpu_device_count`].
static REQUESTED_CPU_DEVICES: Mutex<Option<i64>> = Mutex::new(None);

/// Gives the default CPU client `n` devices (JAX's `jax_num_cpu_devices`;
/// overrides `OXLA_CPU_DEVICE_COUNT`), for meshes of CPU devices. Must come
/// before the client is made (the first array or compilation); afterwards
/// it is an error unless the client already has `n` devices.
pub fn set_cpu_device_count(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::InvalidArgument(
            "set_cpu_device_count(0): a client needs at least one device".into(),
        ));
    }
    let mut requested = REQUESTED_CPU_DEVICES
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(Ok(existing)) = CLIENT.get() {
        let has = existing.addressable_devices()?.len();
        if has != n {
            return Err(Error::InvalidArgument(format!(
                "set_cpu_device_count({n}) after the client was made with {has} device(s); call \
                 it before the first array or compilation"
            )));
        }
        return Ok(());
    }
    *requested = Some(n as i64);
    Ok(())
}

/// Lowers and compiles any jaxpr (constants first, then inputs, as
/// parameters) for one device of the default client: what `jit` does
/// after tracing, for jaxprs built or edited by hand. The plugin's
/// verifier is the judge of hand-made ones: an op it rejects gives
/// [`Error::Compile`] with the plugin's message and the op's source line.
pub fn compile_jaxpr(jaxpr: &Jaxpr, name: &str) -> Result<LoadedExecutable> {
    compile(jaxpr, name).map(|(executable, _)| executable)
}

/// Lowers and compiles a jaxpr for one device of the default client.
pub(crate) fn compile(jaxpr: &Jaxpr, function: &str) -> Result<(LoadedExecutable, String)> {
    compile_on(jaxpr, function, None)
}

/// [`compile`] for the device with id `device` (the default device when
/// `None`).
pub(crate) fn compile_on(
    jaxpr: &Jaxpr,
    function: &str,
    device: Option<i64>,
) -> Result<(LoadedExecutable, String)> {
    let text = oxla_lower::lower(
        jaxpr,
        &oxla_lower::Lowering {
            platform: lowering_platform(),
            ..oxla_lower::Lowering::default()
        },
    )?;
    Ok((compile_text_on(text.clone(), function, device)?.0, text))
}

fn disk_cache_slot() -> &'static Mutex<Option<Arc<oxla_cache::DiskCache>>> {
    static SLOT: OnceLock<Mutex<Option<Arc<oxla_cache::DiskCache>>>> = OnceLock::new();
    SLOT.get_or_init(|| Mutex::new(oxla_cache::DiskCache::from_env().map(Arc::new)))
}

/// The persistent compile cache in use (`None` when off).
pub fn disk_cache() -> Option<Arc<oxla_cache::DiskCache>> {
    disk_cache_slot().lock().ok().and_then(|c| c.clone())
}

/// Moves the persistent compile cache to `dir`, or turns it off with `None`
/// (the default is `OXLA_CACHE_DIR`, else `<oxla home>/compile`). The size
/// limit stays `OXLA_CACHE_MAX_BYTES`'s, the sharing the environment's
/// (`OXLA_CACHE_SHARED`; see [`set_compile_cache`]).
pub fn set_compile_cache_dir(dir: Option<PathBuf>) {
    let max_bytes = oxla_cache::DiskCache::max_bytes_from_env();
    set_cache(dir.map(|d| oxla_cache::DiskCache::with_env_sharing(d, max_bytes)));
}

/// Moves the persistent compile cache to `dir` (or turns it off with
/// `None`), shared as `sharing` says: [`oxla_cache::Sharing::Private`]
/// trusts only this user's files, [`oxla_cache::Sharing::Shared`] only
/// entries tagged (HMAC-SHA256) under its key.
pub fn set_compile_cache(dir: Option<PathBuf>, sharing: oxla_cache::Sharing) {
    let max_bytes = oxla_cache::DiskCache::max_bytes_from_env();
    set_cache(dir.map(|d| oxla_cache::DiskCache::with_sharing(d, max_bytes, sharing)));
}

fn set_cache(cache: Option<oxla_cache::DiskCache>) {
    if let Ok(mut slot) = disk_cache_slot().lock() {
        *slot = cache.map(Arc::new);
    }
}

/// The persistent cache for a program's text, and the plugin readied for
/// it: a program that calls host callbacks registers oxla's FFI handler
/// with the plugin and skips the persistent cache (its closures' ids are
/// this process's; another process would find other closures under them).
pub(crate) fn prepare_compile(
    client: &oxla_pjrt::Client,
    text: &str,
) -> Result<Option<Arc<oxla_cache::DiskCache>>> {
    if text.contains(oxla_core::HOST_CALLBACK_TARGET) {
        client
            .enable_host_callbacks()
            .map_err(|e| Error::Runtime(Arc::new(e)))?;
        return Ok(None);
    }
    Ok(disk_cache())
}

/// Compiles StableHLO text for one device of the default client (the
/// device with id `device`, or the default one when `None`), through the
/// persistent cache; reports cache problems once as diagnostics.
pub(crate) fn compile_text_on(
    text: String,
    function: &str,
    device: Option<i64>,
) -> Result<(LoadedExecutable, oxla_cache::Source)> {
    let options = match device {
        None => client()?.default_compile_options(),
        Some(id) => client()?
            .default_compile_options()
            .device_assignment(oxla_pjrt::DeviceAssignment::new(&[vec![id]])?),
    };
    let cache = prepare_compile(client()?, &text)?;
    let span = tracing::info_span!("compile", function = %function, source = tracing::field::Empty)
        .entered();
    let compiled = oxla_cache::compile(client()?, &Program::mlir(text), &options, cache.as_deref())
        .map_err(|e| Error::Compile {
            function: function.to_string(),
            source: Arc::new(e),
        })?;
    span.record("source", tracing::field::debug(&compiled.source));
    for warning in &compiled.warnings {
        crate::config::diagnostic(warning);
    }
    Ok((compiled.executable, compiled.source))
}
