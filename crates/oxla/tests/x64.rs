//! The x64 switch, in its own process (it is global): 64-bit inputs stay
//! 64-bit, Rust scalars default to f64/i64, and the flag is part of every
//! jit cache key.

use oxla::{Array, DType, jit, numpy as jnp};

#[test]
fn x64_keeps_64_bit_types_and_is_part_of_the_cache_key() {
    let third = 1.0f64 / 3.0;
    let f = jit(|x: Array| &x * 2.0 + 1);

    oxla::enable_x64(false);
    let narrow = Array::from_slice(&[third], &[1]).unwrap();
    assert_eq!(
        narrow.dtype(),
        DType::F32,
        "f64 data becomes f32 without x64"
    );
    assert_eq!(f.call(narrow).unwrap().dtype(), DType::F32);
    let ints = Array::from_slice(&[1i64 << 40], &[1]).unwrap();
    assert_eq!(ints.dtype(), DType::I32);

    oxla::enable_x64(true);
    let wide = Array::from_slice(&[third], &[1]).unwrap();
    assert_eq!(wide.dtype(), DType::F64);
    assert_eq!(
        wide.to_vec::<f64>().unwrap(),
        vec![third],
        "full precision kept"
    );
    let why = f
        .explain_miss(&Array::from_slice(&[third as f32], &[1]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(why, "config flag x64 changed from false to true");
    let out = f.call(wide).unwrap();
    assert_eq!(out.dtype(), DType::F64);
    assert_eq!(out.to_vec::<f64>().unwrap(), vec![third * 2.0 + 1.0]);
    assert_eq!(Array::weak_scalar(1.5f64).dtype(), DType::F64);
    let count = jnp::sum(
        &Array::from_slice(&[true, true, false], &[3]).unwrap(),
        None,
        false,
    );
    assert_eq!(
        count.dtype(),
        DType::I64,
        "sums of bools are the default int"
    );
    let big = Array::from_slice(&[1i64 << 40], &[1]).unwrap();
    assert_eq!((&big + 1).to_vec::<i64>().unwrap(), vec![(1i64 << 40) + 1]);
    oxla::enable_x64(false);
}
