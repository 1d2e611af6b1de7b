//! `jnp.packbits` and `jnp.unpackbits`: booleans (nonzero values) packed
//! eight to a `uint8`, and back, as JAX computes them.

use oxla_core::DType;

use super::usage;
use crate::array::Array;
use crate::lax;

/// Bit order within a byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BitOrder {
    /// The first element is the most significant bit (numpy's default).
    #[default]
    Big,
    /// The first element is the least significant bit.
    Little,
}

/// The eight bit positions of a byte in `order`, as `uint8` shifts.
fn shifts(order: BitOrder) -> Array {
    let values: Vec<u8> = match order {
        BitOrder::Big => (0..8).rev().collect(),
        BitOrder::Little => (0..8).collect(),
    };
    Array::from_slice(&values, &[8]).unwrap_or_else(Array::error)
}

/// `x` flattened (`axis` `None`) or with `axis` moved last, and that axis.
#[track_caller]
fn along(function: &'static str, x: &Array, axis: Option<i64>) -> Result<(Array, i64), Array> {
    match axis {
        None => Ok((super::ravel(x), 0)),
        Some(axis) => {
            let axis = super::canonical_axis(function, x, axis)? as i64;
            Ok((super::swapaxes(x, axis, -1), axis))
        }
    }
}

/// `jnp.packbits(a, axis, bitorder)`: the nonzero-ness of `a`'s elements
/// along `axis` (flattened when `None`), eight to a `uint8`, the last
/// byte padded with zeros.
#[track_caller]
pub fn packbits(a: &Array, axis: Option<i64>, bitorder: BitOrder) -> Array {
    let dtype = a.dtype_or_bool();
    if !(dtype.is_int() || dtype == DType::Bool) {
        return usage(
            "packbits",
            format!("expects integers or booleans, got {dtype}"),
        );
    }
    let bits = lax::convert_element_type(&lax::ne(a, &super::scalar_like(a, 0.0)), DType::U8);
    let (x, axis) = match along("packbits", &bits, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let shape = x.shape_or_empty().to_vec();
    let rank = shape.len();
    let n = shape[rank - 1];
    let x = if n % 8 != 0 {
        let mut config = vec![(0, 0, 0); rank];
        config[rank - 1] = (0, 8 - n % 8, 0);
        lax::pad(&x, &super::scalar_like(&x, 0.0), &config)
    } else {
        x
    };
    let mut grouped = shape[..rank - 1].to_vec();
    grouped.extend([(n + 7) / 8, 8]);
    let x = lax::reshape(&x, &grouped);
    let shifted = super::left_shift(&x, &shifts(bitorder));
    let packed = lax::convert_element_type(&super::sum(&shifted, Some(&[-1]), false), DType::U8);
    super::swapaxes(&packed, axis, -1)
}

/// `jnp.unpackbits(a, axis, count, bitorder)`: each `uint8` of `a` as
/// eight 0/1 `uint8`s along `axis` (flattened when `None`), cut or
/// zero-padded to `count`.
#[track_caller]
pub fn unpackbits(a: &Array, axis: Option<i64>, count: Option<i64>, bitorder: BitOrder) -> Array {
    if a.dtype_or_bool() != DType::U8 {
        return usage(
            "unpackbits",
            format!("expects uint8, got {}", a.dtype_or_bool()),
        );
    }
    let (x, axis) = match along("unpackbits", a, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let masks = super::left_shift(&super::ones(&[8], DType::U8), &shifts(bitorder));
    let set = lax::gt(
        &super::bitwise_and(&super::expand_dims(&x, -1), &masks),
        &super::zeros(&[], DType::U8),
    );
    let bits = lax::convert_element_type(&set, DType::U8);
    let shape = bits.shape_or_empty().to_vec();
    let rank = shape.len();
    let mut flat = shape[..rank - 2].to_vec();
    flat.push(shape[rank - 2] * 8);
    let mut bits = lax::reshape(&bits, &flat);
    if let Some(count) = count {
        let have = flat[flat.len() - 1];
        bits = if count > have {
            let mut config = vec![(0, 0, 0); flat.len()];
            config[flat.len() - 1] = (0, count - have, 0);
            lax::pad(&bits, &super::zeros(&[], DType::U8), &config)
        } else {
            lax::slice_in_dim(&bits, 0, Some(count.max(0)), 1, -1)
        };
    }
    super::swapaxes(&bits, -1, axis)
}
