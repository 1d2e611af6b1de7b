//! Shared test support: the pinned plugins, clients, and JAX's reference
//! programs and values (computed once per test binary by fixtures/jax_programs.py).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine;
use oxla_pjrt::{Api, Buffer, Client, ClientOptions, ElementType, plugin_dir};
use oxla_plugins::{Installer, Manifest, Plugin};

/// A pinned plugin, as crates/oxla-plugins/pins/plugins.toml lists it.
#[derive(Debug, Clone)]
pub struct PinnedPlugin {
    pub name: String,
    pub path: PathBuf,
}

/// The plugins of the compiled-in pin file `file` of oxla-plugins, the
/// pins `oxla plugin install` (and so ci/setup) installs.
fn pins(file: &str) -> Vec<Plugin> {
    Manifest::embedded(file)
        .unwrap_or_else(|e| panic!("{e}"))
        .plugins
}

/// The PJRT C header oxla-pjrt's declarations follow: `OXLA_PJRT_HEADER`
/// if set, else the one inside the pinned plugin of
/// crates/oxla-plugins/pins/plugins.toml that ships it, where ci/setup
/// unpacks it (under [`plugin_dir`]). Panics, with the fix, if it is not
/// there.
pub fn pjrt_header() -> PathBuf {
    if let Some(explicit) = std::env::var_os("OXLA_PJRT_HEADER") {
        return PathBuf::from(explicit);
    }
    let pinned = pins("plugins.toml")
        .into_iter()
        .find(|p| p.header.is_some())
        .expect("plugins.toml pins no plugin that ships the PJRT C header");
    let header = Installer::new(plugin_dir())
        .dir_of(&pinned)
        .join(pinned.header.as_deref().unwrap_or_default());
    assert!(
        header.is_file(),
        "the PJRT C header is not at {}: run `bash ci/setup` first (it unpacks the \
         pinned plugin wheels), or set OXLA_PJRT_HEADER to a pjrt_c_api.h",
        header.display()
    );
    header
}

/// Compiles the C `source` into the shared library `out` with `cc`, adding
/// `extra` arguments (macros, link options).
pub fn compile_shared_library(source: &Path, out: &Path, extra: &[String]) {
    let out = oxla_testing::output_within(
        std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1"])
            .args(extra)
            .arg(source)
            .arg("-o")
            .arg(out),
        oxla_testing::process_timeout(),
    );
    assert!(
        out.status.success(),
        "cc failed for {}: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles fixtures/fake_plugin.c (a PJRT plugin whose table ends after
/// PJRT_Plugin_Initialize) against the pinned header ([`pjrt_header`]) with
/// API major version `major` into `out`.
pub fn compile_fake_plugin(major: i32, out: &Path, extra: &[String]) {
    let header = pjrt_header();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_plugin.c");
    let mut args = vec![
        format!("-DFAKE_MAJOR={major}"),
        format!("-I{}", header.parent().unwrap().display()),
    ];
    args.extend_from_slice(extra);
    compile_shared_library(&source, out, &args);
}

/// Every pinned CPU plugin; panics (with the fix) if ci/setup has not run.
pub fn pinned_plugins() -> Vec<PinnedPlugin> {
    plugins_of("plugins.toml", &plugin_dir())
}

/// The plugins of the pin file `file` as ci/setup installs them under
/// `dir`; panics (with the fix) if one is missing.
pub fn plugins_of(file: &str, dir: &Path) -> Vec<PinnedPlugin> {
    let installer = Installer::new(dir);
    pins(file)
        .into_iter()
        .map(|p| {
            let path = installer.dir_of(&p).join(&p.library);
            assert!(
                path.is_file(),
                "{} is missing: run `bash ci/setup` first",
                path.display()
            );
            PinnedPlugin {
                name: p.name().to_string(),
                path,
            }
        })
        .collect()
}

/// A client of `plugin` with `devices` CPU devices.
pub fn client(plugin: &PinnedPlugin, devices: i64) -> Client {
    let api = Api::load(&plugin.path).unwrap();
    Client::new(api, &ClientOptions::new().cpu_device_count(devices)).unwrap()
}

/// One client per pinned plugin, with `devices` CPU devices each.
pub fn clients(devices: i64) -> Vec<(PinnedPlugin, Client)> {
    pinned_plugins()
        .into_iter()
        .map(|p| {
            let c = client(&p, devices);
            (p, c)
        })
        .collect()
}

pub use oxla_npy::HostArray;

/// A host array from the JSON the fixture script prints.
fn array_from_json(v: &serde_json::Value) -> HostArray {
    let element_type: ElementType = v["dtype"].as_str().unwrap().parse().unwrap();
    HostArray::new(
        element_type,
        v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect(),
        base64::engine::general_purpose::STANDARD
            .decode(v["data"].as_str().unwrap())
            .unwrap(),
    )
}

/// Copies a host array to a new buffer.
pub fn to_buffer(array: &HostArray, client: &Client, device: Option<&oxla_pjrt::Device>) -> Buffer {
    client
        .buffer_from_bytes(&array.bytes, array.element_type(), &array.dims, device)
        .unwrap()
}

/// Copies a buffer to the host.
pub fn from_buffer(buffer: &Buffer) -> HostArray {
    let (element_type, dims) = buffer.array_type().unwrap();
    HostArray::new(element_type, dims.to_vec(), buffer.to_host_bytes().unwrap())
}

/// One JAX reference program.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub mlir_text: String,
    pub portable_artifact: Vec<u8>,
    pub inputs: Vec<HostArray>,
    pub outputs: Vec<HostArray>,
    pub donated: Vec<usize>,
    pub num_partitions: usize,
    /// `input_shards[input][device]`, for sharded cases.
    pub input_shards: Vec<Vec<HostArray>>,
    /// `output_shards[output][device]`, for sharded cases.
    pub output_shards: Vec<Vec<HostArray>>,
}

/// JAX's reference cases, computed once per test binary.
pub fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jax_programs.py");
        let json: serde_json::Value =
            serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap();
        let arrays = |v: &serde_json::Value| -> Vec<HostArray> {
            v.as_array()
                .map(|a| a.iter().map(array_from_json).collect())
                .unwrap_or_default()
        };
        let nested = |v: &serde_json::Value| -> Vec<Vec<HostArray>> {
            v.as_array()
                .map(|a| a.iter().map(arrays).collect())
                .unwrap_or_default()
        };
        json["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| Case {
                name: c["name"].as_str().unwrap().to_string(),
                mlir_text: c["mlir_text"].as_str().unwrap().to_string(),
                portable_artifact: base64::engine::general_purpose::STANDARD
                    .decode(c["portable_artifact"].as_str().unwrap())
                    .unwrap(),
                inputs: arrays(&c["inputs"]),
                outputs: arrays(&c["outputs"]),
                donated: c["donated"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect(),
                num_partitions: c["num_partitions"].as_u64().unwrap() as usize,
                input_shards: nested(&c["input_shards"]),
                output_shards: nested(&c["output_shards"]),
            })
            .collect()
    })
}

/// The reference case called `name`.
pub fn case(name: &str) -> &'static Case {
    cases()
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}
