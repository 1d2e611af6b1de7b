//! Compiles src/guard.cpp. Reads nothing outside this crate: the PJRT C
//! API is declared by hand in src/ffi/ (checked against the pinned header
//! by tests/plugin/layout.rs) and the protobuf messages in src/protos/
//! (checked against the former generated code's bytes by
//! src/protos/tests.rs); nothing is generated here.

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
}
