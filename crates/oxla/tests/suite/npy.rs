//! Arrays to and from .npy files, read and written by NumPy.

use std::path::Path;

use oxla::{Array, DType};

#[test]
fn arrays_round_trip_through_numpy_files() {
    let dir = tempfile::tempdir().unwrap();
    let x = Array::from_slice(&[1.5f32, -2.0, 3.25, 0.0, 7.0, 8.0], &[2, 3]).unwrap();
    x.to_npy(dir.path().join("x.npy")).unwrap();
    let script = dir.path().join("check.py");
    std::fs::write(
        &script,
        "import sys, numpy as np\n\
         d = sys.argv[1]\n\
         x = np.load(d + '/x.npy')\n\
         assert x.dtype == np.float32 and x.shape == (2, 3), (x.dtype, x.shape)\n\
         assert x.tolist() == [[1.5, -2.0, 3.25], [0.0, 7.0, 8.0]], x\n\
         np.save(d + '/y.npy', np.arange(12, dtype=np.int16).reshape(3, 4).T)\n",
    )
    .unwrap();
    oxla_testing::run_python(&script, &[dir.path()]);
    let y = Array::from_npy(dir.path().join("y.npy")).unwrap();
    assert_eq!(y.dtype(), DType::I16);
    assert_eq!(y.shape(), &[4, 3]);
    assert_eq!(
        y.to_vec::<i16>().unwrap(),
        vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
    );
    let err = Array::from_npy(Path::new("/nonexistent/z.npy")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/z.npy"), "{err}");
}

/// `jnp.save` writes what JAX's `jnp.load` reads, and `jnp.load` reads
/// what JAX's `jnp.save` writes.
#[test]
fn jnp_save_and_load_interoperate_with_jaxs() {
    let dir = tempfile::tempdir().unwrap();
    let x = Array::from_slice(&[1u8, 2, 250], &[3]).unwrap();
    oxla::numpy::save(dir.path().join("x.npy"), &x).unwrap();
    let script = dir.path().join("check.py");
    std::fs::write(
        &script,
        "import sys, jax.numpy as jnp\n\
         d = sys.argv[1]\n\
         x = jnp.load(d + '/x.npy')\n\
         assert x.dtype == jnp.uint8 and x.tolist() == [1, 2, 250], x\n\
         jnp.save(d + '/y.npy', jnp.linspace(0, 1, 5, dtype=jnp.float32))\n",
    )
    .unwrap();
    oxla_testing::run_python(&script, &[dir.path()]);
    let y = oxla::numpy::load(dir.path().join("y.npy")).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
}

/// `jnp.savez` and `jnp.savez_compressed` write archives that `np.load`
/// reads by name, and `load_npz` reads what `jnp.savez` and
/// `np.savez_compressed` write, bf16 included.
#[test]
fn savez_archives_interoperate_with_numpys() {
    let dir = tempfile::tempdir().unwrap();
    let x = Array::from_slice(&[1.5f32, -2.0, 3.25, 0.0], &[2, 2]).unwrap();
    let steps = Array::from_slice(&[7i32, 8], &[2]).unwrap();
    let half = oxla::lax::convert_element_type(&x, DType::BF16);
    oxla::numpy::savez(
        dir.path().join("plain.npz"),
        &[&x, &steps],
        &[("half", &half)],
    )
    .unwrap();
    oxla::numpy::savez_compressed(dir.path().join("packed.npz"), &[], &[("x", &x)]).unwrap();
    let script = dir.path().join("check.py");
    std::fs::write(
        &script,
        "import sys, zipfile, numpy as np, jax.numpy as jnp, ml_dtypes\n\
         d = sys.argv[1]\n\
         with np.load(d + '/plain.npz') as z:\n\
         \x20   assert sorted(z.files) == ['arr_0', 'arr_1', 'half'], z.files\n\
         \x20   assert z['arr_0'].tolist() == [[1.5, -2.0], [3.25, 0.0]], z['arr_0']\n\
         \x20   assert z['arr_1'].dtype == np.int32 and z['arr_1'].tolist() == [7, 8]\n\
         \x20   h = z['half'].view(ml_dtypes.bfloat16)\n\
         \x20   assert h.astype(np.float32).tolist() == [[1.5, -2.0], [3.25, 0.0]], h\n\
         with zipfile.ZipFile(d + '/plain.npz') as f:\n\
         \x20   assert all(i.compress_type == zipfile.ZIP_STORED for i in f.infolist())\n\
         with zipfile.ZipFile(d + '/packed.npz') as f:\n\
         \x20   assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in f.infolist())\n\
         assert jnp.load(d + '/packed.npz')['x'].tolist() == [[1.5, -2.0], [3.25, 0.0]]\n\
         np.savez_compressed(d + '/numpy.npz', np.arange(6, dtype=np.int16).reshape(2, 3),\n\
         \x20                   flag=np.array([True, False]))\n",
    )
    .unwrap();
    oxla_testing::run_python(&script, &[dir.path()]);
    let back = oxla::numpy::load_npz(dir.path().join("numpy.npz")).unwrap();
    assert_eq!(back.keys().collect::<Vec<_>>(), ["arr_0", "flag"]);
    assert_eq!(back["arr_0"].shape(), &[2, 3]);
    assert_eq!(
        back["arr_0"].to_vec::<i16>().unwrap(),
        vec![0, 1, 2, 3, 4, 5]
    );
    assert_eq!(back["flag"].to_vec::<bool>().unwrap(), vec![true, false]);
    let ours = oxla::numpy::load_npz(dir.path().join("plain.npz")).unwrap();
    assert_eq!(ours["half"].dtype(), DType::BF16);
    assert_eq!(ours["arr_1"].to_vec::<i32>().unwrap(), vec![7, 8]);

    // A keyword that takes a positional array's name, a missing file, and
    // a file that is not an archive: errors naming the cause.
    let clash = oxla::numpy::savez(dir.path().join("clash.npz"), &[&x], &[("arr_0", &steps)]);
    let message = clash.unwrap_err().to_string();
    assert!(
        message.contains("jnp.savez: cannot use un-named variables and keyword arr_0"),
        "{message}"
    );
    assert!(
        message.contains("npy.rs"),
        "names the caller's line: {message}"
    );
    assert!(!dir.path().join("clash.npz").exists());
    let missing = oxla::numpy::load_npz(dir.path().join("missing.npz")).unwrap_err();
    assert!(missing.to_string().contains("missing.npz"), "{missing}");
    x.to_npy(dir.path().join("x.npy")).unwrap();
    let not_zip = oxla::numpy::load_npz(dir.path().join("x.npy")).unwrap_err();
    assert!(
        not_zip.to_string().contains("not a valid .npz archive"),
        "{not_zip}"
    );
}
