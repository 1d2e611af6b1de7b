//! The lowering dispatcher and the helpers several families share; each
//! family's rules are in `rules/<family>.rs`, matching its ops exhaustively
//! (a new op does not compile until it has a lowering).

mod call;
mod collective;
mod contract;
mod control;
mod elementwise;
mod fft;
mod host;
mod index;
mod linalg;
mod marker;
mod reduce;
mod rng;
mod shape;
mod sharding;

use std::borrow::Cow;

use melior::ir::{Location, Value};

use oxla_core::{Aval, Comparison, DType, Primitive};

use crate::attrs;

use crate::emit::{Emitter, LowerError};

pub(crate) type Values<'c, 'a> = Vec<Value<'c, 'a>>;

pub(crate) fn direction(c: Comparison) -> &'static str {
    match c {
        Comparison::Eq => "EQ",
        Comparison::Ne => "NE",
        Comparison::Lt => "LT",
        Comparison::Le => "LE",
        Comparison::Gt => "GT",
        Comparison::Ge => "GE",
    }
}

/// What a family's lowering rule gets besides the emitter and its op: the
/// equation's operands' values and types, its results' types and its
/// source location.
#[derive(Clone, Copy)]
pub(crate) struct LowerArgs<'x, 'c, 'a> {
    /// The operands' values.
    pub(crate) inputs: &'x [Value<'c, 'a>],
    /// The operands' types.
    pub(crate) in_avals: &'x [&'x Aval],
    /// The results' types.
    pub(crate) out_avals: &'x [&'x Aval],
    /// The equation's source location.
    pub(crate) loc: Location<'c>,
}

/// Lowers one equation; returns the values of its outputs.
pub(crate) fn lower_equation<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    primitive: &Primitive,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let input = LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
    };
    let values = match primitive {
        Primitive::Elementwise(op) => elementwise::lower(op, e, &input),
        Primitive::Shape(op) => shape::lower(op, e, &input),
        Primitive::Index(op) => index::lower(op, e, &input),
        Primitive::Reduce(op) => reduce::lower(op, e, &input),
        Primitive::Contract(op) => contract::lower(op, e, &input),
        Primitive::Call(op) => call::lower(op, e, &input),
        Primitive::Control(op) => control::lower(op, e, &input),
        Primitive::Collective(op) => collective::lower(op, e, &input),
        Primitive::Sharding(op) => return sharding::lower(op, e, &input),
        Primitive::Host(op) => host::lower(op, e, &input),
        Primitive::Marker(op) => marker::lower(op, e, &input),
        Primitive::Fft(op) => fft::lower(op, e, &input),
        Primitive::Linalg(op) => linalg::lower(op, e, &input),
        Primitive::Rng(op) => rng::lower(op, e, &input),
    }?;
    pin_to_types(e, values, out_avals, loc)
}

/// The results, each pinned to its explicit sharding type where it has
/// one (as JAX's lowering does on meshes with explicit axes), so the
/// partitioner lays them out as the types say.
fn pin_to_types<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    values: Values<'c, 'a>,
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    values
        .into_iter()
        .zip(out_avals)
        .map(|(value, aval)| match &aval.sharding {
            Some(sharding) => {
                let pinned = sharding.type_constraint(aval.rank());
                sharding::constrain(e, value, aval, &pinned, loc)
            }
            None => Ok(value),
        })
        .collect()
}

/// The type of the first result, or a bool scalar for a primitive without
/// results (a split into no pieces, say), whose rule does not read it;
/// borrowed, so lowering an equation copies no type.
fn first_result<'x>(out_avals: &[&'x Aval]) -> Cow<'x, Aval> {
    match out_avals.first() {
        Some(out) => Cow::Borrowed(*out),
        None => Cow::Owned(Aval::new(DType::Bool, &[])),
    }
}

/// `compare(direction)` of two scalars of `aval`'s type, with StableHLO's
/// total order for floats when `total` (NaN last).
pub(crate) fn compare_scalars<'c, 'b>(
    e: &mut Emitter<'c, 'b>,
    a: Value<'c, 'b>,
    b: Value<'c, 'b>,
    aval: &Aval,
    direction: &str,
    total: bool,
    loc: Location<'c>,
) -> Result<Value<'c, 'b>, LowerError> {
    let kind = if total && aval.dtype.is_float() {
        "#stablehlo<comparison_type TOTALORDER>"
    } else {
        attrs::compare_type(aval.dtype)
    };
    let predicate = aval.with_dtype(DType::Bool);
    Ok(e.op(
        "stablehlo.compare",
        &[a, b],
        &[&predicate],
        &[
            (
                "comparison_direction",
                format!("#stablehlo<comparison_direction {direction}>"),
            ),
            ("compare_type", kind.to_string()),
        ],
        loc,
    )?[0])
}
