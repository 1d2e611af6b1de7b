//! oxla-npy against NumPy: files NumPy wrote read back to the right bytes,
//! files oxla wrote load in NumPy, and malformed files are errors.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "oxla-npy") };
}

use std::path::{Path, PathBuf};

use oxla_dtype::ElementType;
use oxla_npy::{HostArray, NpyError, NpyType};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/numpy_files.py")
}

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn numpy_files_round_trip_through_oxla() {
    let dir = tempfile::tempdir().unwrap();
    let listing = oxla_testing::run_python(&script(), &[dir.path()]);
    let cases: serde_json::Value = serde_json::from_slice(&listing).unwrap();
    let mut written = Vec::new();
    for case in cases.as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let array = HostArray::read_file(&PathBuf::from(case["path"].as_str().unwrap())).unwrap();
        let shape: Vec<i64> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect();
        assert_eq!(array.dims, shape, "{name}");
        assert_eq!(
            array.bytes,
            from_hex(case["hex"].as_str().unwrap()),
            "{name}"
        );
        let expected_type = match name {
            "bf16" => NpyType::Void2,
            "f32" | "empty" => NpyType::Element(ElementType::F32),
            "f64_be" => NpyType::Element(ElementType::F64),
            "i64_fortran" => NpyType::Element(ElementType::S64),
            "bool" => NpyType::Element(ElementType::Pred),
            "u16" => NpyType::Element(ElementType::U16),
            "i8_scalar" => NpyType::Element(ElementType::S8),
            "f16" => NpyType::Element(ElementType::F16),
            "c64_be" => NpyType::Element(ElementType::C64),
            "c128" => NpyType::Element(ElementType::C128),
            other => panic!("unexpected case {other}"),
        };
        assert_eq!(array.npy_type, expected_type, "{name}");
        array
            .write_file(&dir.path().join(format!("{name}.out.npy")))
            .unwrap();
        written.push(name.to_string());
    }
    std::fs::write(
        dir.path().join("written.json"),
        serde_json::to_string(&written).unwrap(),
    )
    .unwrap();
    // NumPy loads what oxla wrote and compares it with the originals.
    oxla_testing::run_python(&script(), &[Path::new("--check"), dir.path()]);
}

#[test]
fn bf16_feeds_only_bf16_parameters() {
    assert!(NpyType::Void2.feeds(ElementType::Bf16));
    assert!(!NpyType::Void2.feeds(ElementType::F16));
    assert!(NpyType::Element(ElementType::F32).feeds(ElementType::F32));
    assert!(!NpyType::Element(ElementType::F32).feeds(ElementType::F64));
    let a = HostArray::new(ElementType::Bf16, vec![1], vec![0, 0x3f]);
    assert_eq!(a.npy_type, NpyType::Void2);
}

#[test]
fn malformed_files_are_errors() {
    let good = HostArray::new(ElementType::F32, vec![2, 2], vec![0; 16]).to_npy_bytes();
    assert!(matches!(
        HostArray::from_npy_bytes(b"").unwrap_err(),
        NpyError::Format(_)
    ));
    assert!(matches!(
        HostArray::from_npy_bytes(b"PK\x03\x04 a zip file").unwrap_err(),
        NpyError::Format(_)
    ));
    let err = HostArray::from_npy_bytes(&good[..good.len() - 1]).unwrap_err();
    assert!(err.to_string().contains("data has 15 bytes"), "{err}");
    let err = HostArray::from_npy_bytes(&good[..20]).unwrap_err();
    assert!(err.to_string().contains("truncated header"), "{err}");
    let mut version9 = good.clone();
    version9[6] = 9;
    assert!(
        HostArray::from_npy_bytes(&version9)
            .unwrap_err()
            .to_string()
            .contains("version 9")
    );
    let mut unicode = good.clone();
    let at = unicode.windows(5).position(|w| w == b"'<f4'").unwrap();
    unicode[at + 1..at + 4].copy_from_slice(b"<U3");
    let err = HostArray::from_npy_bytes(&unicode).unwrap_err();
    assert!(
        matches!(err, NpyError::UnsupportedDtype(ref d) if d == "<U3"),
        "{err}"
    );
    let err = HostArray::read_file(std::path::Path::new("/nonexistent/x.npy")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.npy"), "{err}");
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    // A small deterministic fuzz: random files, and a valid file with each
    // byte of its header replaced, must give Ok or Err within a second,
    // never a panic or a hang.
    let parse = |bytes: Vec<u8>| {
        let size = bytes.len();
        oxla_testing::within(
            std::time::Duration::from_secs(1),
            &format!("parsing {size} bytes as .npy"),
            move || {
                let _ = HostArray::from_npy_bytes(&bytes);
            },
        );
    };
    let good = HostArray::new(ElementType::S32, vec![3, 2], (0..24).collect()).to_npy_bytes();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2000 {
        let len = (next() % 200) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if next() % 2 == 0 && bytes.len() > 8 {
            bytes[..6].copy_from_slice(b"\x93NUMPY");
        }
        parse(bytes);
    }
    for i in 0..good.len().min(128) {
        for value in [0u8, b'(', b')', b',', b'\'', b'9', 0xff] {
            let mut mutated = good.clone();
            mutated[i] = value;
            parse(mutated);
        }
    }
    assert_eq!(
        HostArray::from_npy_bytes(&good).unwrap().bytes,
        (0..24).collect::<Vec<u8>>()
    );
}
