//! What the rule modules (jvp, transpose, batching) share: symbolic-zero
//! tangents, zeros built on the device from a literal, binding through the
//! current trace, unbroadcasting cotangents and moving batch dimensions.

use oxla_core::{Aval, DType, Primitive, Scalar};

use crate::array::{Array, Inner};
use crate::error::{Error, Result};
use crate::lax;

/// A tangent or cotangent; `None` is a symbolic zero (never materialized
/// unless a rule needs its values).
pub(crate) type Tangent = Option<Array>;

/// Applies `primitive` through the current trace (the location is the one
/// of the equation the rule is for), returning every output.
#[track_caller]
pub(crate) fn bind_all(primitive: Primitive, inputs: &[&Array]) -> Result<Vec<Array>> {
    let location = crate::ops::current_location(std::panic::Location::caller());
    crate::ops::bind_at(primitive, inputs, location)
}

/// The one output of binding `primitive` to `inputs`.
pub(crate) fn bind_one(primitive: &Primitive, inputs: &[&Array]) -> Result<Array> {
    bind_all(primitive.clone(), inputs)?
        .into_iter()
        .next()
        .ok_or_else(|| Error::Internal(format!("{} gave no output", primitive.name())))
}

/// A weakly typed-or-not scalar literal of `dtype` (no device transfer).
pub(crate) fn literal(value: f64, dtype: DType, weak_type: bool) -> Array {
    let value = match dtype {
        DType::Bool => Scalar::Bool(value != 0.0),
        d if d.is_inexact() => Scalar::Float(value),
        d if d.is_unsigned_int() => Scalar::UInt(value as u64),
        _ => Scalar::Int(value as i64),
    };
    let mut aval = Aval::new(dtype, &[]);
    aval.weak_type = weak_type;
    Array::from_inner(Inner::Scalar { value, aval })
}

/// An array of `aval` filled with `value`: `broadcast_in_dim` of a literal
/// (never host data, never `x * 0`).
#[track_caller]
pub(crate) fn full(aval: &Aval, value: f64) -> Array {
    let scalar = literal(value, aval.dtype, aval.weak_type);
    lax::broadcast_in_dim(&scalar, &aval.shape, &[])
}

/// Zeros of `aval`.
#[track_caller]
pub(crate) fn zeros(aval: &Aval) -> Array {
    full(aval, 0.0)
}

/// The tangent's values, zeros of `aval` if it is symbolic.
#[track_caller]
pub(crate) fn instantiate(t: &Tangent, aval: &Aval) -> Array {
    match t {
        Some(t) => t.clone(),
        None => zeros(aval),
    }
}

/// The sum of two tangents (a symbolic zero adds nothing).
#[track_caller]
pub(crate) fn add_tangents(a: Tangent, b: Tangent) -> Tangent {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(a), Some(b)) => Some(lax::add(&a, &b)),
    }
}

/// Whether values of `dtype` have tangents (floats and complex numbers;
/// integers and bools have JAX's float0 tangents, which are always zero).
pub(crate) fn has_tangent(dtype: DType) -> bool {
    dtype.is_inexact()
}

/// `ct` summed down to `aval`'s shape: the transpose of the implicit
/// broadcasting of a rank-0 or size-1 operand by an elementwise op.
#[track_caller]
pub(crate) fn unbroadcast(ct: &Array, aval: &Aval) -> Array {
    let shape = ct.shape_or_empty().to_vec();
    if shape.as_slice() == aval.shape.as_slice() {
        return ct.clone();
    }
    if aval.shape.is_empty() {
        let axes: Vec<i64> = (0..shape.len() as i64).collect();
        return lax::reduce_sum(ct, &axes);
    }
    let axes: Vec<i64> = aval
        .shape
        .iter()
        .zip(&shape)
        .enumerate()
        .filter(|(_, (a, c))| **a == 1 && **c != 1)
        .map(|(i, _)| i as i64)
        .collect();
    let summed = lax::reduce_sum(ct, &axes);
    lax::reshape(&summed, &aval.shape)
}

/// `x` with its batch dimension `from` moved to `to` (no equation if equal).
#[track_caller]
pub(crate) fn move_axis(x: &Array, from: usize, to: usize) -> Array {
    if from == to {
        return x.clone();
    }
    let rank = x.ndim_or_zero();
    let mut perm: Vec<i64> = (0..rank as i64).filter(|&d| d != from as i64).collect();
    perm.insert(to, from as i64);
    lax::transpose(x, &perm)
}

/// `x` with its batch dimension at `to`: moved there if batched at `bdim`,
/// broadcast to `size` there if unbatched.
#[track_caller]
pub(crate) fn batch_at(x: &Array, bdim: Option<usize>, size: i64, to: usize) -> Array {
    match bdim {
        Some(b) => move_axis(x, b, to),
        None => {
            let shape = x.shape_or_empty().to_vec();
            let mut out_shape = shape.clone();
            out_shape.insert(to, size);
            let dims: Vec<i64> = (0..out_shape.len() as i64)
                .filter(|&d| d != to as i64)
                .collect();
            lax::broadcast_in_dim(x, &out_shape, &dims)
        }
    }
}

/// An error of a transformation rule, naming the primitive.
pub(crate) fn rule_error(
    transform: &'static str,
    primitive: &Primitive,
    message: impl Into<String>,
) -> Error {
    Error::Transform {
        transform,
        primitive: primitive.name().to_string(),
        message: message.into(),
        location: crate::ops::rule_location(),
    }
}

/// A broken invariant inside `transform`'s rule of `primitive` (a bug in
/// oxla, not in the caller's program).
pub(crate) fn internal_error(
    transform: &'static str,
    primitive: &Primitive,
    message: impl std::fmt::Display,
) -> Error {
    Error::Internal(format!("{transform} of {}: {message}", primitive.name()))
}

/// JAX's `_reshape_axis_out_of`: dim `src` of `x` split into
/// `(size, rest)`, where a `size` of 0 (a batch of no examples, whose dim
/// is 0) gives `(0, 0)` instead of dividing by zero; the result and its
/// shape.
pub(crate) fn reshape_axis_out_of(src: usize, size: i64, x: &Array) -> (Array, Vec<i64>) {
    let mut shape = x.shape_or_empty().to_vec();
    let Some(&whole) = shape.get(src) else {
        // An error array (no shape) passes its error on.
        return (x.clone(), shape);
    };
    let rest = if size == 0 { 0 } else { whole / size };
    shape.splice(src..=src, [size, rest]);
    (lax::reshape(x, &shape), shape)
}

/// `x` with its dims permuted, or `x` itself when `permutation` is the
/// identity.
pub(crate) fn transpose_if_needed(x: &Array, permutation: &[i64]) -> Array {
    if permutation.iter().enumerate().all(|(i, &p)| p == i as i64) {
        x.clone()
    } else {
        lax::transpose(x, permutation)
    }
}

/// JAX's `_reshape_axis_into`: dim `src` of `x` merged into dim `dst` (an
/// index into the shape without `src`) as its major part.
pub(crate) fn reshape_axis_into(src: usize, dst: usize, x: &Array) -> Array {
    let shape = x.shape_or_empty();
    let mut perm: Vec<i64> = (0..shape.len() as i64)
        .filter(|&d| d != src as i64)
        .collect();
    perm.insert(dst, src as i64);
    let mut new_shape: Vec<i64> = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != src)
        .map(|(_, &s)| s)
        .collect();
    new_shape[dst] *= shape[src];
    lax::reshape(&transpose_if_needed(x, &perm), &new_shape)
}

pub(crate) fn location() -> oxla_core::Location {
    crate::ops::rule_location().unwrap_or(crate::transform::eval::UNKNOWN_LOCATION)
}

pub(crate) fn refs(xs: &[Array]) -> Vec<&Array> {
    xs.iter().collect()
}
