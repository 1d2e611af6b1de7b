//! Preloading a CUDA plugin's NVIDIA libraries, on a fake site-packages tree
//! laid out as `ci/setup --cuda` lays out the real one: stand-in libraries
//! with the real sonames under `nvidia/<package>/lib/`, and a fake PJRT
//! plugin at `jax_plugins/xla_cuda12/xla_cuda_plugin.so` that links against
//! them without a search path, so it loads only after they are preloaded.

use std::path::{Path, PathBuf};

use oxla_pjrt::{Api, ApiVersion, Error, OptionValue, Platform, needed_libraries, prepare_plugin};

use crate::support::{compile_fake_plugin, compile_shared_library};

/// Linker arguments that record each of `links` (a directory and a file
/// name) as needed, with no search path left in the output.
fn link_args(links: &[(&Path, &str)]) -> Vec<String> {
    let mut args = vec!["-Wl,--no-as-needed".to_string()];
    for (dir, name) in links {
        args.push(format!("-L{}", dir.display()));
        args.push(format!("-l:{name}"));
    }
    args
}

/// Builds the stand-in for `package_dir/lib/file` under `site`, exporting
/// `symbol` and linked against `links` (file names in `link_dir`).
fn stand_in(site: &Path, package_dir: &str, file: &str, links: &[(&Path, &str)]) -> PathBuf {
    let lib = site.join(package_dir).join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let symbol = file.split('.').next().unwrap();
    let source = lib.join(format!("{symbol}.c"));
    std::fs::write(
        &source,
        format!("int {symbol}_stand_in(void) {{ return 12; }}\n"),
    )
    .unwrap();
    let out = lib.join(file);
    let mut args = vec![format!("-Wl,-soname,{file}")];
    args.extend(link_args(links));
    compile_shared_library(&source, &out, &args);
    std::fs::remove_file(source).unwrap();
    out
}

/// A fake CUDA plugin under `site` that needs the libraries `links`.
fn fake_cuda_plugin(site: &Path, links: &[(&Path, &str)]) -> PathBuf {
    let dir = site.join("jax_plugins/xla_cuda12");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("xla_cuda_plugin.so");
    compile_fake_plugin(ApiVersion::HEADER.major, &out, &link_args(links));
    out
}

#[test]
fn a_cuda_plugin_loads_after_its_nvidia_libraries_are_preloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site-packages");
    let cudart = stand_in(&site, "nvidia/cuda_runtime", "libcudart.so.12", &[]);
    let lt = stand_in(&site, "nvidia/cublas", "libcublasLt.so.12", &[]);
    let lt_dir = lt.parent().unwrap();
    // cuBLAS links cuBLASLt without a search path: it loads only once
    // cuBLASLt is loaded, so this also checks the load order.
    let cublas = stand_in(
        &site,
        "nvidia/cublas",
        "libcublas.so.12",
        &[(lt_dir, "libcublasLt.so.12")],
    );
    let tools = site.join("nvidia/cuda_nvcc/bin");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("ptxas"), b"").unwrap();
    let plugin = fake_cuda_plugin(
        &site,
        &[
            (cudart.parent().unwrap(), "libcudart.so.12"),
            (lt_dir, "libcublas.so.12"),
        ],
    );

    // Without the libraries loaded, the plugin does not load.
    let err = Api::load(&plugin).unwrap_err();
    assert!(matches!(err, Error::Load { .. }), "{err}");
    assert!(err.to_string().contains("libcudart.so.12"), "{err}");

    let prepared = prepare_plugin(Platform::Cuda, &plugin, &[]).unwrap();
    let canonical = |p: &Path| p.canonicalize().unwrap();
    assert_eq!(
        prepared.loaded,
        vec![canonical(&cudart), canonical(&lt), canonical(&cublas)]
    );
    let expected_missing: Vec<&str> = needed_libraries(Platform::Cuda, &plugin)
        .iter()
        .map(|l| l.file)
        .filter(|f| !["libcudart.so.12", "libcublasLt.so.12", "libcublas.so.12"].contains(f))
        .collect();
    assert_eq!(prepared.not_found, expected_missing);
    assert_eq!(
        prepared.compile_overrides,
        vec![(
            "xla_gpu_cuda_data_dir".to_string(),
            OptionValue::String(
                canonical(&site)
                    .join("nvidia/cuda_nvcc")
                    .display()
                    .to_string()
            )
        )]
    );

    let api = Api::load(&plugin).expect("the plugin loads once its libraries are loaded");
    assert_eq!(api.version().major, ApiVersion::HEADER.major);
    // Preparing again returns the first preparation.
    let again = prepare_plugin(Platform::Cuda, &plugin, &[]).unwrap();
    assert_eq!(*again, *prepared);
}

#[test]
fn a_plugin_whose_libraries_are_missing_says_how_to_install_them() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site-packages");
    let absent = stand_in(&site, "elsewhere", "liboxla_absent_cuda.so.1", &[]);
    let plugin = fake_cuda_plugin(
        &site,
        &[(absent.parent().unwrap(), "liboxla_absent_cuda.so.1")],
    );
    std::fs::remove_file(&absent).unwrap();
    let err = Api::load_for(Platform::Cuda, &plugin).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("liboxla_absent_cuda.so.1"), "{text}");
    assert!(text.contains("libcudnn.so.9"), "{text}");
    assert!(text.contains("oxla plugin install cuda12"), "{text}");
}

#[test]
fn a_library_that_exists_but_does_not_load_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site-packages");
    let lib = site.join("nvidia/cuda_runtime/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("libcudart.so.12"), b"not a library").unwrap();
    let plugin = site.join("jax_plugins/xla_cuda12/xla_cuda_plugin.so");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, b"").unwrap();
    let err = prepare_plugin(Platform::Cuda, &plugin, &[]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("libcudart.so.12"), "{text}");
    assert!(text.contains("the cuda plugin"), "{text}");
}

#[test]
fn cpu_plugins_need_no_libraries() {
    assert!(needed_libraries(Platform::Cpu, Path::new("x.so")).is_empty());
    assert_eq!(
        needed_libraries(
            Platform::Cuda,
            Path::new("/s/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
        )[0]
        .file,
        "libcudart.so.13"
    );
}
