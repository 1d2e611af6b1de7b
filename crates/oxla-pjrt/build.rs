//! Generates the prost types for proto/*_subset.proto (XLA's protos and
//! TSL's profiler protos, compiled with protox, so no protoc is needed) and
//! compiles src/guard.cpp. Reads nothing outside this crate: the PJRT C API
//! is declared by hand in src/ffi/ (checked against the pinned header by
//! tests/plugin/layout.rs), not generated here.

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());

    // guard.cpp catches C++ exceptions that escape a plugin's functions.
    let guard = manifest_dir.join("src").join("guard.cpp");
    println!("cargo:rerun-if-changed={}", guard.display());
    cc::Build::new()
        .cpp(true)
        .file(&guard)
        .compile("oxla_pjrt_guard");

    let proto_dir = manifest_dir.join("proto");
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
