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
