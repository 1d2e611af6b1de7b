//! `jax.numpy`'s orderings beyond `sort`/`argsort`: `sort_complex`,
//! `lexsort`, `partition` and `argpartition`, as JAX computes them.

use oxla_core::DType;

use super::{canonical_axis, usage};
use crate::array::Array;
use crate::lax;

/// `jnp.sort_complex(a)`: `a` sorted along its last axis by real part,
/// then imaginary part, as complex numbers.
#[track_caller]
pub fn sort_complex(a: &Array) -> Array {
    let rank = a.ndim_or_zero();
    if rank == 0 {
        return usage("sort_complex", "needs an array of rank 1 or more".into());
    }
    let sorted = lax::sort(&[a], -1, true, 1).remove(0);
    let dtype = sorted.dtype_or_bool();
    let complex = if dtype.is_complex() {
        dtype
    } else {
        dtype.complex_of().unwrap_or(DType::C64)
    };
    lax::convert_element_type(&sorted, complex)
}

/// `jnp.lexsort(keys, axis)`: the indices that sort by the last key, ties
/// broken by the one before, and so on (all keys of one shape).
#[track_caller]
pub fn lexsort(keys: &[&Array], axis: i64) -> Array {
    let Some(first) = keys.first() else {
        return usage("lexsort", "needs at least one key".into());
    };
    let shape = first.shape_or_empty().to_vec();
    if keys.iter().any(|k| k.shape_or_empty() != shape.as_slice()) {
        return usage("lexsort", "all keys need to be the same shape".into());
    }
    if shape.is_empty() {
        return super::zeros(
            &[],
            oxla_core::promotion::default_int(crate::config::x64_enabled()),
        );
    }
    let axis = match canonical_axis("lexsort", first, axis) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let iota = lax::broadcasted_iota(
        oxla_core::promotion::default_int(crate::config::x64_enabled()),
        &shape,
        axis,
    );
    let mut operands: Vec<&Array> = keys.iter().rev().copied().collect();
    operands.push(&iota);
    lax::sort(&operands, axis as i64, true, keys.len())
        .pop()
        .unwrap_or_else(|| usage("lexsort", "sort returned nothing".into()))
}

/// `x` with `axis` swapped with the last one, and the canonical axis.
#[track_caller]
fn last_axis(
    function: &'static str,
    x: &Array,
    axis: i64,
    kth: i64,
) -> Result<(Array, usize, i64), Array> {
    if x.dtype_or_bool().is_complex() {
        return Err(usage(
            function,
            "is not implemented for complex dtypes (as JAX)".into(),
        ));
    }
    let axis = canonical_axis(function, x, axis)?;
    let n = x.shape_or_empty()[axis];
    let kth = if kth < 0 { kth + n } else { kth };
    if !(0..n).contains(&kth) {
        return Err(usage(
            function,
            format!("kth {kth} is out of bounds for an axis of {n}"),
        ));
    }
    let rank = x.ndim_or_zero() as i64;
    Ok((super::swapaxes(x, axis as i64, rank - 1), axis, kth))
}

/// The order-reversing key `-x` (of unsigned integers, `-(x + 1)`, so that
/// zero stays the smallest), as JAX's partition takes the bottom values.
fn reversed(x: &Array) -> Array {
    if x.dtype_or_bool().is_unsigned_int() {
        lax::neg(&lax::add(x, &super::scalar_like(x, 1.0)))
    } else {
        lax::neg(x)
    }
}

/// `jnp.partition(a, kth, axis)`: `a` with the `kth` smallest value at
/// position `kth` along `axis`, the smaller ones before it (ascending, as
/// JAX gives them) and the larger ones after it (descending).
#[track_caller]
pub fn partition(a: &Array, kth: i64, axis: i64) -> Array {
    let (x, axis, kth) = match last_axis("partition", a, axis, kth) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let n = x.shape_or_empty().last().copied().unwrap_or(0);
    let (bottom_keys, _) = lax::top_k(&reversed(&x), kth + 1);
    let bottom = if x.dtype_or_bool().is_unsigned_int() {
        lax::sub(&lax::neg(&bottom_keys), &super::scalar_like(&x, 1.0))
    } else {
        lax::neg(&bottom_keys)
    };
    let (top, _) = lax::top_k(&x, n - kth - 1);
    let rank = x.ndim_or_zero();
    let out = lax::concatenate(&[&bottom, &top], rank - 1);
    super::swapaxes(&out, -1, axis as i64)
}

/// `jnp.argpartition(a, kth, axis)`: the indices that [`partition`] `a`.
#[track_caller]
pub fn argpartition(a: &Array, kth: i64, axis: i64) -> Array {
    let (x, axis, kth) = match last_axis("argpartition", a, axis, kth) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let shape = x.shape_or_empty().to_vec();
    let n = shape.last().copied().unwrap_or(0);
    let (_, bottom) = lax::top_k(&reversed(&x), kth + 1);
    // The other indices, through a proxy that is 0 where the bottom ones
    // are (so duplicates of the kth value are not taken twice).
    let rank = shape.len();
    let positions = lax::broadcasted_iota(
        DType::I32,
        &[&shape[..rank - 1], &[kth + 1, n]].concat(),
        rank,
    );
    let hits = lax::eq(
        &positions,
        &super::broadcast_to(&super::expand_dims(&bottom, -1), positions.shape_or_empty()),
    );
    let taken = super::any(&hits, Some(&[-2]), false);
    let proxy = lax::select(
        &taken,
        &super::zeros(&shape, DType::F32),
        &super::ones(&shape, DType::F32),
    );
    let (_, top) = lax::top_k(&proxy, n - kth - 1);
    let out = lax::concatenate(&[&bottom, &top], rank - 1);
    super::swapaxes(&out, -1, axis as i64)
}
