//! Shared test support: the pinned plugins, clients, and JAX's reference
//! programs and values (computed once per test binary by fixtures/jax_programs.py).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine;
use oxla_pjrt::{Api, Buffer, Client, ClientOptions, ElementType, plugin_dir};

/// A pinned plugin, as third_party/plugins.toml lists it.
#[derive(Debug, Clone)]
pub struct PinnedPlugin {
    pub name: String,
    pub path: PathBuf,
}

#[derive(serde::Deserialize)]
struct Manifest {
    plugin: Vec<ManifestEntry>,
}

#[derive(serde::Deserialize)]
struct ManifestEntry {
    name: String,
    version: String,
    library: String,
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every pinned plugin; panics (with the fix) if ci/setup has not run.
pub fn pinned_plugins() -> Vec<PinnedPlugin> {
    let text = std::fs::read_to_string(repo_root().join("third_party/plugins.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    manifest
        .plugin
        .into_iter()
        .map(|p| {
            let path = plugin_dir()
                .join(format!("{}-{}", p.name, p.version))
                .join(&p.library);
            assert!(
                path.is_file(),
                "{} is missing: run `bash ci/setup` first",
                path.display()
            );
            PinnedPlugin { name: p.name, path }
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

/// Host bytes of an array, with its type.
#[derive(Debug, Clone, PartialEq)]
pub struct HostArray {
    pub element_type: ElementType,
    pub dims: Vec<i64>,
    pub bytes: Vec<u8>,
}

impl HostArray {
    fn from_json(v: &serde_json::Value) -> Self {
        HostArray {
            element_type: v["dtype"].as_str().unwrap().parse().unwrap(),
            dims: v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_i64().unwrap())
                .collect(),
            bytes: base64::engine::general_purpose::STANDARD
                .decode(v["data"].as_str().unwrap())
                .unwrap(),
        }
    }

    pub fn to_buffer(&self, client: &Client, device: Option<&oxla_pjrt::Device>) -> Buffer {
        client
            .buffer_from_bytes(&self.bytes, self.element_type, &self.dims, device)
            .unwrap()
    }

    pub fn from_buffer(buffer: &Buffer) -> Self {
        HostArray {
            element_type: buffer.element_type().unwrap(),
            dims: buffer.dims().unwrap(),
            bytes: buffer.to_host_bytes().unwrap(),
        }
    }

    /// Elements as f64 (complex as interleaved re, im).
    fn values(&self) -> Vec<f64> {
        use half::{bf16, f16};
        let b = &self.bytes;
        macro_rules! conv {
            ($t:ty) => {
                b.chunks_exact(std::mem::size_of::<$t>())
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()) as f64)
                    .collect()
            };
        }
        match self.element_type {
            ElementType::Pred | ElementType::U8 => b.iter().map(|&x| x as f64).collect(),
            ElementType::S8 => b.iter().map(|&x| x as i8 as f64).collect(),
            ElementType::S16 => conv!(i16),
            ElementType::S32 => conv!(i32),
            ElementType::S64 => conv!(i64),
            ElementType::U16 => conv!(u16),
            ElementType::U32 => conv!(u32),
            ElementType::U64 => conv!(u64),
            ElementType::F16 => b
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            ElementType::Bf16 => b
                .chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            ElementType::F32 | ElementType::C64 => conv!(f32),
            ElementType::F64 | ElementType::C128 => conv!(f64),
        }
    }

    /// Asserts `self` (oxla's) matches `expected` (JAX's) within the dtype's tolerance.
    pub fn assert_close(&self, expected: &HostArray, what: &str) {
        assert_eq!(self.element_type, expected.element_type, "{what}: dtype");
        assert_eq!(self.dims, expected.dims, "{what}: shape");
        let (rtol, atol) = match self.element_type {
            ElementType::F16 | ElementType::Bf16 => (1e-2, 1e-2),
            ElementType::F32 | ElementType::C64 => (1e-5, 1e-6),
            ElementType::F64 | ElementType::C128 => (1e-12, 1e-14),
            _ => (0.0, 0.0),
        };
        for (i, (got, want)) in self.values().iter().zip(expected.values()).enumerate() {
            assert!(
                (got - want).abs() <= atol + rtol * want.abs(),
                "{what}: element {i}: oxla {got}, jax {want}"
            );
        }
    }
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

/// The Python of oxla's venv (made by ci/setup), or `OXLA_PYTHON`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("OXLA_PYTHON") {
        return PathBuf::from(p);
    }
    let p = oxla_pjrt::oxla_home().join("venv/bin/python");
    assert!(
        p.is_file(),
        "{} is missing: run `bash ci/setup` first",
        p.display()
    );
    p
}

/// JAX's reference cases, computed once per test binary.
pub fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jax_programs.py");
        let out = std::process::Command::new(python())
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let arrays = |v: &serde_json::Value| -> Vec<HostArray> {
            v.as_array()
                .map(|a| a.iter().map(HostArray::from_json).collect())
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
