//! The few StableHLO ops both linear-algebra lowerings build by hand
//! (LAPACK's masks and slices, the portable forms' loops): one typed
//! result each, attributes written as StableHLO prints them.

use melior::ir::{Location, Value};
use oxla_core::{Aval, DType};

use crate::attrs;
use crate::emit::{Emitter, LowerError};

/// `stablehlo.compare` of two values of type `operand`.
pub(super) fn compare<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    lhs: Value<'c, 'a>,
    rhs: Value<'c, 'a>,
    operand: &Aval,
    direction: &str,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(e.op(
        "stablehlo.compare",
        &[lhs, rhs],
        &[&operand.with_dtype(DType::Bool)],
        &[
            (
                "comparison_direction",
                format!("#stablehlo<comparison_direction {direction}>"),
            ),
            ("compare_type", attrs::compare_type(operand.dtype).into()),
        ],
        loc,
    )?[0])
}

/// An elementwise op of `operands`, all of type `aval` (`out` for the result).
pub(super) fn elementwise<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    name: &str,
    operands: &[Value<'c, 'a>],
    out: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(e.op(name, operands, &[out], &[], loc)?[0])
}

/// `stablehlo.iota` of i32 with `shape`, counting along `dimension`.
pub(super) fn iota<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    shape: &[i64],
    dimension: usize,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(e.op(
        "stablehlo.iota",
        &[],
        &[&Aval::new(DType::I32, shape)],
        &[("iota_dimension", attrs::i64_attr(dimension as i64))],
        loc,
    )?[0])
}

/// `stablehlo.broadcast_in_dim` of `x` to `out`, `x`'s dimensions landing
/// on `dimensions`.
pub(super) fn broadcast<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    out: &Aval,
    dimensions: &[i64],
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(e.op(
        "stablehlo.broadcast_in_dim",
        &[x],
        &[out],
        &[("broadcast_dimensions", attrs::i64_array(dimensions))],
        loc,
    )?[0])
}

/// `x` (of `aval`) sliced to `[starts, limits)` (unit strides), and its type.
pub(super) fn slice<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    starts: &[i64],
    limits: &[i64],
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Aval), LowerError> {
    let shape: Vec<i64> = limits.iter().zip(starts).map(|(l, s)| l - s).collect();
    let out = aval.with_shape(&shape);
    let value = e.op(
        "stablehlo.slice",
        &[x],
        &[&out],
        &[
            ("start_indices", attrs::i64_array(starts)),
            ("limit_indices", attrs::i64_array(limits)),
            ("strides", attrs::i64_array(&vec![1; starts.len()])),
        ],
        loc,
    )?[0];
    Ok((value, out))
}
