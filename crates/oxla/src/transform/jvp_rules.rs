//! The jvp dispatcher (each family's rule is in `rules/<family>.rs`) and
//! the helpers several families' jvp rules share: primal outputs and output
//! tangents from primal inputs and input tangents (`None` = symbolic zero).
//!
//! The rules follow JAX's (`jax/_src/lax/lax.py`, `slicing.py`,
//! `windowed_reductions.py`, `special.py`, `control_flow/loops.py`).
//! Coefficients are computed from primals first and only then multiplied
//! into a tangent, so that when linearizing, every equation that touches a
//! tangent is linear in it (and the primal-only work stays in the primal
//! trace).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::transform::rules::{
    call, collective, contract, control, elementwise, fft, host, index, linalg, marker, reduce,
    rng, shape, sharding,
};
use oxla_core::{DType, Primitive};

use super::jvp::JvpContext;

use super::support::{self, Tangent, has_tangent, refs};

use crate::array::Array;

use crate::error::Result;

use crate::lax;

/// Primal outputs and their tangents.
pub(crate) type Jvp = (Vec<Array>, Vec<Tangent>);

/// What a family's jvp rule gets: the equation's primitive, its primal
/// inputs and their tangents (`None`: a symbolic zero).
#[derive(Clone, Copy)]
pub(crate) struct JvpArgs<'a> {
    /// The primitive.
    pub(crate) primitive: &'a Primitive,
    /// The primal inputs.
    pub(crate) primals: &'a [Array],
    /// Their tangents.
    pub(crate) tangents: &'a [Tangent],
    /// The jvp trace's context (linearize or forward).
    pub(crate) ctx: &'a JvpContext,
}

/// Primal outputs and output tangents of `primitive`.
pub(crate) fn jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let input = JvpArgs {
        primitive,
        primals,
        tangents,
        ctx,
    };
    match primitive {
        Primitive::Elementwise(op) => elementwise::jvp(op, &input),
        Primitive::Shape(op) => shape::jvp(op, &input),
        Primitive::Index(op) => index::jvp(op, &input),
        Primitive::Reduce(op) => reduce::jvp(op, &input),
        Primitive::Contract(op) => contract::jvp(op, &input),
        Primitive::Call(op) => call::jvp(op, &input),
        Primitive::Control(op) => control::jvp(op, &input),
        Primitive::Collective(op) => collective::jvp(op, &input),
        Primitive::Sharding(op) => sharding::jvp(op, &input),
        Primitive::Host(op) => host::jvp(op, &input),
        Primitive::Marker(op) => marker::jvp(op, &input),
        Primitive::Fft(op) => fft::jvp(op, &input),
        Primitive::Linalg(op) => linalg::jvp(op, &input),
        Primitive::Rng(op) => rng::jvp(op, &input),
    }
}

// ---------------------------------------------------------------------------
// Shared helpers.

/// One output with its tangent.
pub(crate) fn single(out: Array, tangent: Tangent) -> Jvp {
    (vec![out], vec![tangent])
}

/// A weakly typed scalar literal of `like`'s dtype: it takes the other
/// operand's type (and weak flag) in an elementwise op.
pub(crate) fn lit(value: f64, like: &Array) -> Array {
    support::literal(value, like.dtype_or_bool(), true)
}

/// A weakly typed i32 literal.
pub(crate) fn lit_i32(value: i64) -> Array {
    support::literal(value as f64, DType::I32, true)
}

/// `on_true` where `pred` holds, else `on_false` (JAX's `select`).
pub(crate) fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    lax::select_n(pred, &[on_false, on_true])
}

/// A bool mask as 1 and 0 of `like`'s dtype and weak type.
pub(crate) fn indicator(mask: &Array, like: &Array) -> Array {
    lax::convert_element_type_weak(mask, like.dtype_or_bool(), like.weak_type())
}

/// `t` broadcast to `shape` (from rank 0 or from size-1 dims, as elementwise
/// ops broadcast), unchanged if it already has it.
pub(crate) fn fit(t: &Array, shape: &[i64]) -> Array {
    if t.shape_or_empty() == shape {
        return t.clone();
    }
    let dims: Vec<i64> = (0..t.ndim_or_zero() as i64).collect();
    lax::broadcast_in_dim(t, shape, &dims)
}

/// The tangent's values inside a jvp rule, zeros of `primal`'s type if it
/// is symbolic, written as a literal for a scalar (as JAX's jvp rules make
/// them). [`support::instantiate`] is the transpose and control-flow
/// counterpart, which takes a type and always broadcasts; the two differ
/// in the jaxprs they make, so they stay apart.
pub(crate) fn tangent_values(t: &Tangent, primal: &Array) -> Result<Array> {
    let aval = primal.aval()?;
    Ok(match t {
        Some(t) => t.clone(),
        None if aval.shape.is_empty() => support::literal(0.0, aval.dtype, aval.weak_type),
        None => support::zeros(aval),
    })
}

/// Whether an op with output `out` has a nonzero tangent: a float output
/// and at least one nonzero input tangent.
pub(crate) fn differentiable(out: &Array, tangents: &[Tangent]) -> bool {
    has_tangent(out.dtype_or_bool()) && tangents.iter().any(Option::is_some)
}

/// Checks the rule's results: no error arrays, one tangent per output, each
/// tangent of its output's dtype and shape, and no tangent for a non-float
/// output.
pub(crate) fn finish(primitive: &Primitive, (outs, tangents): Jvp) -> Result<Jvp> {
    if outs.len() != tangents.len() {
        return Err(support::internal_error(
            "jvp",
            primitive,
            format!("{} outputs but {} tangents", outs.len(), tangents.len()),
        ));
    }
    let mut checked = Vec::with_capacity(tangents.len());
    for (out, t) in outs.iter().zip(tangents) {
        let aval = out.aval()?;
        let t = match t {
            Some(t) if has_tangent(aval.dtype) => {
                let t_aval = t.aval()?;
                if t_aval.dtype != aval.dtype || t_aval.shape != aval.shape {
                    return Err(support::internal_error(
                        "jvp",
                        primitive,
                        format!("tangent {t_aval} for an output {aval}"),
                    ));
                }
                Some(t)
            }
            Some(_) | None => None,
        };
        checked.push(t);
    }
    Ok((outs, checked))
}

// ---------------------------------------------------------------------------
// Generic rule shapes.

/// The jvp of an op whose outputs have zero tangents (comparisons, integer
/// results, `stop_gradient`).
pub(crate) fn zero_jvp(primitive: &Primitive, primals: &[Array]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let n = outs.len();
    Ok((outs, vec![None; n]))
}

/// The jvp of an op linear in the operands `linear` picks (the others, e.g.
/// indices, are constants): `tangent_primitive` applied to their tangents
/// (zeros instantiated) and to the other operands' primals; one tangent per
/// output (split has several).
pub(crate) fn linear_jvp(
    primitive: &Primitive,
    tangent_primitive: Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    linear: impl Fn(usize) -> bool,
) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let nonzero = tangents
        .iter()
        .enumerate()
        .any(|(i, t)| linear(i) && t.is_some());
    if !nonzero || !outs.iter().any(|o| has_tangent(o.dtype_or_bool())) {
        let n = outs.len();
        return Ok((outs, vec![None; n]));
    }
    let args = primals
        .iter()
        .zip(tangents)
        .enumerate()
        .map(|(i, (p, t))| {
            if linear(i) {
                tangent_values(t, p)
            } else {
                Ok(p.clone())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let tangents = support::bind_all(tangent_primitive, &refs(&args))?;
    Ok((outs, tangents.into_iter().map(Some).collect()))
}

/// The jvp of a one-operand, one-output op: `rule(x, ans, t)` gives the
/// tangent when the operand's tangent is nonzero and the output is a float.
pub(crate) fn unary_rule(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    rule: impl FnOnce(&Array, &Array, &Array) -> Result<Tangent>,
) -> Result<Jvp> {
    let ans = support::bind_one(primitive, &refs(primals))?;
    let tangent = match (primals.first(), tangents.first()) {
        (Some(x), Some(Some(t))) if has_tangent(ans.dtype_or_bool()) => rule(x, &ans, t)?,
        (Some(_) | None, Some(_) | None) => None,
    };
    Ok(single(ans, tangent))
}

// ---------------------------------------------------------------------------
// Elementwise ops.

/// JAX's `_balanced_eq(x, z, y)`: 1 where `x == z` (½ where also
/// `y == z`), else 0 — max and min split ties evenly.
pub(crate) fn balanced_eq(x: &Array, z: &Array, y: &Array) -> Array {
    let hits = indicator(&lax::eq(x, z), z);
    let ties = lax::add(&lit(1.0, z), &indicator(&lax::eq(y, z), z));
    lax::div(&hits, &ties)
}

// ---------------------------------------------------------------------------
// Reductions.

// ---------------------------------------------------------------------------
// Cumulative reductions.

// ---------------------------------------------------------------------------
// Windowed reductions.

// ---------------------------------------------------------------------------
// Sorting.

// ---------------------------------------------------------------------------
// Scatter.

// ---------------------------------------------------------------------------
// Barriers.
