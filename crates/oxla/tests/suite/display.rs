//! Arrays print as numpy prints them.

use std::path::Path;

use oxla::Array;

#[test]
fn arrays_print_like_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("show.py");
    std::fs::write(
        &script,
        "import json, numpy as np\n\
         arrays = [np.array([[3, 5, 7], [9, 11, 13]], np.float32), np.array([1.5, 2.0], np.float32),\n\
         np.array([0.1, -2.25, 1/3], np.float32), np.array([[1, -20], [300, 4]], np.int32),\n\
         np.array([True, False]), np.array(7.0, np.float32), np.array([[[1, 2]], [[3, 4]]], np.int32)]\n\
         print(json.dumps([str(a) for a in arrays]))\n",
    )
    .unwrap();
    let expected: Vec<String> =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[Path::new("")][..0])).unwrap();
    let ours = [
        Array::from_slice(&[3.0f32, 5.0, 7.0, 9.0, 11.0, 13.0], &[2, 3]).unwrap(),
        Array::from_slice(&[1.5f32, 2.0], &[2]).unwrap(),
        Array::from_slice(&[0.1f32, -2.25, 1.0 / 3.0], &[3]).unwrap(),
        Array::from_slice(&[1i32, -20, 300, 4], &[2, 2]).unwrap(),
        Array::from_slice(&[true, false], &[2]).unwrap(),
        Array::scalar(7.0f32).unwrap(),
        Array::from_slice(&[1i32, 2, 3, 4], &[2, 1, 2]).unwrap(),
    ];
    for (a, want) in ours.iter().zip(&expected) {
        assert_eq!(&a.to_string(), want);
    }
}
