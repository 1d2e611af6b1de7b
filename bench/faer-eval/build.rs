//! Links the system's LAPACK (Debian ships only the versioned runtime
//! library, `liblapack.so.3`, OpenBLAS's with `libopenblas0-pthread`).
fn main() {
    println!("cargo:rustc-link-arg=-l:liblapack.so.3");
}
