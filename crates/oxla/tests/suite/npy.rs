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
