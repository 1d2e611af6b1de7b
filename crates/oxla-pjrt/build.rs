//! Generates the PJRT C API bindings (bindgen over the pinned header that
//! ci/setup unpacks) and the prost types for proto/*_subset.proto (XLA's
//! protos and TSL's profiler protos, compiled with protox, so no protoc is
//! needed), and compiles src/guard.cpp.

use std::env;
use std::path::{Path, PathBuf};

#[derive(serde::Deserialize)]
struct Manifest {
    plugin: Vec<PinnedPlugin>,
}

#[derive(serde::Deserialize)]
struct PinnedPlugin {
    name: String,
    version: String,
    header: Option<String>,
}

fn oxla_home() -> PathBuf {
    if let Some(home) = env::var_os("OXLA_HOME") {
        return PathBuf::from(home);
    }
    let home = env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    home.join(".cache").join("oxla")
}

/// The header named by `OXLA_PJRT_HEADER`, or the one inside the pinned plugin
/// of third_party/plugins.toml that ships it.
fn pjrt_header(repo: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=OXLA_PJRT_HEADER");
    println!("cargo:rerun-if-env-changed=OXLA_HOME");
    if let Some(explicit) = env::var_os("OXLA_PJRT_HEADER") {
        return PathBuf::from(explicit);
    }
    let manifest_path = repo.join("third_party").join("plugins.toml");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    let text = std::fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", manifest_path.display()));
    let manifest: Manifest = toml::from_str(&text)
        .unwrap_or_else(|e| panic!("malformed {}: {e}", manifest_path.display()));
    let pinned = manifest
        .plugin
        .iter()
        .find(|p| p.header.is_some())
        .expect("third_party/plugins.toml pins no plugin that ships the PJRT C header");
    let header = oxla_home()
        .join("plugins")
        .join(format!("{}-{}", pinned.name, pinned.version))
        .join(pinned.header.as_deref().unwrap_or_default());
    if !header.is_file() {
        panic!(
            "the PJRT C header is not at {}.\nRun `bash ci/setup` in the oxla repository \
             (it unpacks the pinned plugin wheels), or set OXLA_PJRT_HEADER to a pjrt_c_api.h.",
            header.display()
        );
    }
    header
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir.join("..").join("..");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());

    // guard.cpp catches C++ exceptions that escape a plugin's functions.
    let guard = manifest_dir.join("src").join("guard.cpp");
    println!("cargo:rerun-if-changed={}", guard.display());
    cc::Build::new()
        .cpp(true)
        .file(&guard)
        .compile("oxla_pjrt_guard");

    let header = pjrt_header(&repo);
    println!("cargo:rerun-if-changed={}", header.display());
    // Tests compile a fake plugin against the same header.
    println!("cargo:rustc-env=OXLA_PJRT_HEADER_PATH={}", header.display());
    bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_type("PJRT_.*")
        .allowlist_var("PJRT_.*")
        .prepend_enum_name(false)
        .layout_tests(false)
        .derive_debug(false)
        .generate_comments(false)
        .generate()
        .expect("bindgen failed on the PJRT C header")
        .write_to_file(out.join("pjrt_c_api.rs"))
        .expect("cannot write the PJRT bindings");

    let proto_dir = repo.join("proto");
    let protos = [
        "xla_subset.proto",
        "profiler_subset.proto",
        "xplane_subset.proto",
    ]
    .map(|name| proto_dir.join(name));
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    let descriptors = protox::compile(&protos, [&proto_dir]).expect("protox failed on proto/");
    // Maps as BTreeMap: the encoded options are part of the disk cache key,
    // so their bytes must not depend on hash order.
    prost_build::Config::new()
        .btree_map(["."])
        .compile_fds(descriptors)
        .expect("prost-build failed on proto/");
}
