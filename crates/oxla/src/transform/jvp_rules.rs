//! The jvp rule of every primitive: primal outputs and output tangents from
//! primal inputs and input tangents (`None` = symbolic zero).
//!
//! The rules follow JAX's (`jax/_src/lax/lax.py`, `slicing.py`,
//! `windowed_reductions.py`, `special.py`, `control_flow/loops.py`).
//! Coefficients are computed from primals first and only then multiplied
//! into a tangent, so that when linearizing, every equation that touches a
//! tangent is linear in it (and the primal-only work stays in the primal
//! trace).
#![deny(clippy::wildcard_enum_match_arm)]

use oxla_core::{
    Aval, BinaryOp, CumulativeOp, DType, Dims, GatherDimensionNumbers, GatherMode, Primitive,
    ReduceOp, Scalar, ScalarKey, ScatterDimensionNumbers, ScatterOp, UnaryOp, WindowOp,
};

use super::jvp::JvpContext;
use super::support::{self, Tangent, add_tangents, has_tangent};
use crate::array::Array;
use crate::error::Result;
use crate::lax;

/// Primal outputs and their tangents.
type Jvp = (Vec<Array>, Vec<Tangent>);

/// A primal value with its (instantiated) tangent.
type Dual = (Array, Array);

/// Combines two scan elements (primal and tangent) into one.
type Combine = fn(&Dual, &Dual) -> Dual;

/// Windows of at most this many positions are reduced by unrolled strided
/// slices; larger ones by one gather of every window.
const MAX_UNROLLED_WINDOW: i64 = 16;

/// Primal outputs and output tangents of `primitive`.
pub(crate) fn jvp(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let result = match primitive {
        Primitive::Call { .. }
        | Primitive::Remat { .. }
        | Primitive::CustomJvpCall { .. }
        | Primitive::CustomVjpCall { .. }
        | Primitive::CustomLin { .. } => {
            return super::calls::jvp(primitive, primals, tangents, ctx);
        }
        Primitive::Cond { branches } => {
            return super::control::cond_jvp(branches, primals, tangents, ctx);
        }
        Primitive::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            check_vma,
        } => {
            let params = super::shard_map_rules::ShardMapParams {
                body: jaxpr.jaxpr(),
                ins: in_shardings,
                outs: out_shardings,
                check_vma: *check_vma,
            };
            return super::shard_map_rules::jvp(&params, primals, tangents, ctx);
        }
        Primitive::AllReduce { .. }
        | Primitive::AllGather { .. }
        | Primitive::ReduceScatter { .. }
        | Primitive::AllToAll { .. }
        | Primitive::Ppermute { .. }
        | Primitive::AxisIndex { .. } => {
            return super::collective_rules::jvp(primitive, primals, tangents);
        }
        Primitive::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            return super::control::while_jvp(
                primitive,
                cond_jaxpr,
                body_jaxpr,
                *cond_nconsts,
                *body_nconsts,
                primals,
                tangents,
                ctx,
            );
        }
        Primitive::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            let spec = super::control::ScanSpec {
                jaxpr,
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            };
            return super::control::scan_jvp(&spec, primals, tangents, ctx);
        }
        Primitive::Unary(op) => unary_rule(primitive, primals, tangents, |x, ans, t| {
            unary_tangent(*op, x, ans, t)
        })?,
        Primitive::Binary(op) => binary_jvp(primitive, *op, primals, tangents)?,
        Primitive::IntegerPow { y } => unary_rule(primitive, primals, tangents, |x, _, t| {
            Ok(integer_pow_tangent(*y, x, t))
        })?,
        Primitive::SelectN => select_n_jvp(primitive, primals, tangents)?,
        Primitive::Clamp => clamp_jvp(primitive, primals, tangents)?,
        Primitive::ConvertElementType { new_dtype, .. } => {
            convert_jvp(primitive, *new_dtype, primals, tangents)?
        }
        Primitive::Compare(_)
        | Primitive::Iota { .. }
        | Primitive::BitcastConvertType { .. }
        | Primitive::ArgMinMax { .. }
        | Primitive::StopGradient => zero_jvp(primitive, primals)?,
        Primitive::HostCallback { callback, results } => {
            // A callback without results (debug::print) runs on the primals;
            // one with results has no derivative unless the user gives it
            // one (JAX: "Pure callbacks do not support JVP").
            if !results.is_empty() && tangents.iter().any(Option::is_some) {
                return Err(support::rule_error(
                    "jvp",
                    primitive,
                    format!(
                        "the host callback {callback} has no derivative: give it one with \
                         custom_jvp or custom_vjp around the call"
                    ),
                ));
            }
            zero_jvp(primitive, primals)?
        }
        Primitive::CallExported { function } => {
            if tangents.iter().any(Option::is_some) {
                return Err(support::rule_error(
                    "jvp",
                    primitive,
                    format!(
                        "{} can only be differentiated in reverse mode (grad, vjp, jacrev), \
                         through the vjp it was exported with: an export carries no jvp",
                        function.name()
                    ),
                ));
            }
            zero_jvp(primitive, primals)?
        }
        Primitive::BroadcastInDim { .. }
        | Primitive::Reshape { .. }
        | Primitive::Transpose { .. }
        | Primitive::Squeeze { .. }
        | Primitive::Rev { .. }
        | Primitive::Slice { .. }
        | Primitive::Concatenate { .. }
        | Primitive::Split { .. }
        | Primitive::Pad { .. } => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true)?
        }
        Primitive::DynamicSlice { .. } | Primitive::SelectAndScatterAdd { .. } => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i == 0)?
        }
        Primitive::DynamicUpdateSlice => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i < 2)?
        }
        Primitive::Gather {
            dimension_numbers,
            slice_sizes,
            mode,
            ..
        } => {
            // Out-of-bounds slices of the tangent are zero.
            let tangent_primitive = Primitive::Gather {
                dimension_numbers: dimension_numbers.clone(),
                slice_sizes: slice_sizes.clone(),
                mode: *mode,
                fill_value: ScalarKey::of(Scalar::Float(0.0)),
            };
            linear_jvp(primitive, tangent_primitive, primals, tangents, |i| i == 0)?
        }
        Primitive::Reduce { op, axes } => reduce_jvp(primitive, *op, axes, primals, tangents)?,
        Primitive::Cumulative { op, axis, reverse } => {
            cumulative_jvp(primitive, *op, *axis, *reverse, primals, tangents)?
        }
        Primitive::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => {
            let window = Window {
                dims: window_dimensions,
                strides: window_strides,
                padding,
                base_dilation,
                window_dilation,
            };
            reduce_window_jvp(primitive, *op, &window, primals, tangents)?
        }
        Primitive::Sort {
            dimension,
            is_stable,
            num_keys,
        } => sort_jvp(
            primitive, *dimension, *is_stable, *num_keys, primals, tangents,
        )?,
        Primitive::TopK { .. } => top_k_jvp(primitive, primals, tangents)?,
        Primitive::ReduceWith { computation, axes } => {
            return super::reduce_with_rules::jvp(primitive, computation, axes, primals, tangents);
        }
        Primitive::DotGeneral { .. } | Primitive::ConvGeneralDilated { .. } => {
            bilinear_jvp(primitive, primals, tangents)?
        }
        Primitive::Scatter {
            op,
            dimension_numbers,
        } => scatter_jvp(primitive, *op, dimension_numbers, primals, tangents)?,
        Primitive::CheckpointName { .. } => {
            let out = bind1(primitive, &refs(primals))?;
            single(out, tangents.first().cloned().flatten())
        }
        // Linear: the tangent is laid out (or varies) as the value does.
        Primitive::ShardingConstraint { .. } | Primitive::Pvary { .. } => {
            let out = bind1(primitive, &refs(primals))?;
            let tangent = match tangents.first().cloned().flatten() {
                Some(t) => Some(bind1(primitive, &[&t])?),
                None => None,
            };
            single(out, tangent)
        }
        Primitive::OptimizationBarrier => barrier_jvp(primitive, primals, tangents)?,
    };
    finish(primitive, result)
}

// ---------------------------------------------------------------------------
// Shared helpers.

/// The inputs as the references `bind_all` takes.
fn refs(xs: &[Array]) -> Vec<&Array> {
    xs.iter().collect()
}

/// The single output of `primitive` applied through the current trace.
fn bind1(primitive: &Primitive, inputs: &[&Array]) -> Result<Array> {
    support::bind_all(primitive.clone(), inputs)?
        .into_iter()
        .next()
        .ok_or_else(|| support::rule_error("jvp", primitive, "internal: no output"))
}

/// One output with its tangent.
fn single(out: Array, tangent: Tangent) -> Jvp {
    (vec![out], vec![tangent])
}

/// A weakly typed scalar literal of `like`'s dtype: it takes the other
/// operand's type (and weak flag) in an elementwise op.
fn lit(value: f64, like: &Array) -> Array {
    support::literal(value, like.dtype_or_bool(), true)
}

/// A weakly typed i32 literal.
fn lit_i32(value: i64) -> Array {
    support::literal(value as f64, DType::I32, true)
}

/// `on_true` where `pred` holds, else `on_false` (JAX's `select`).
fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    lax::select_n(pred, &[on_false, on_true])
}

/// A bool mask as 1 and 0 of `like`'s dtype and weak type.
fn indicator(mask: &Array, like: &Array) -> Array {
    lax::convert_element_type_weak(mask, like.dtype_or_bool(), like.weak_type())
}

/// Size of dimension `axis` of `x` (0 if it has none, e.g. an error array).
fn dim(x: &Array, axis: usize) -> i64 {
    x.shape_or_empty().get(axis).copied().unwrap_or(0)
}

/// `t` broadcast to `shape` (from rank 0 or from size-1 dims, as elementwise
/// ops broadcast), unchanged if it already has it.
fn fit(t: &Array, shape: &[i64]) -> Array {
    if t.shape_or_empty() == shape {
        return t.clone();
    }
    let dims: Vec<i64> = (0..t.ndim_or_zero() as i64).collect();
    lax::broadcast_in_dim(t, shape, &dims)
}

/// The tangent's values, zeros of `primal`'s type if it is symbolic (a
/// literal for a scalar).
fn instantiate(t: &Tangent, primal: &Array) -> Result<Array> {
    let aval = primal.aval()?;
    Ok(match t {
        Some(t) => t.clone(),
        None if aval.shape.is_empty() => support::literal(0.0, aval.dtype, aval.weak_type),
        None => support::zeros(aval),
    })
}

/// Whether an op with output `out` has a nonzero tangent: a float output
/// and at least one nonzero input tangent.
fn differentiable(out: &Array, tangents: &[Tangent]) -> bool {
    has_tangent(out.dtype_or_bool()) && tangents.iter().any(Option::is_some)
}

/// `x` with its dimensions permuted (no equation for the identity).
fn permute(x: &Array, permutation: &[i64]) -> Array {
    if permutation.iter().enumerate().all(|(i, &p)| p == i as i64) {
        x.clone()
    } else {
        lax::transpose(x, permutation)
    }
}

/// `x[start:limit:stride]` along `axis`, whole along the other dims.
fn slice_axis(x: &Array, axis: usize, start: i64, limit: i64, stride: i64) -> Array {
    let rank = x.ndim_or_zero();
    let mut starts = vec![0; rank];
    let mut limits = x.shape_or_empty().to_vec();
    let mut strides = vec![1; rank];
    if axis < rank {
        starts[axis] = start;
        limits[axis] = limit;
        strides[axis] = stride;
    }
    lax::slice(x, &starts, &limits, Some(&strides))
}

/// `x` padded with `value` by `config` (no equation if it pads nothing).
fn pad_with(x: &Array, value: f64, config: &[(i64, i64, i64)]) -> Array {
    if config.iter().all(|&c| c == (0, 0, 0)) {
        x.clone()
    } else {
        lax::pad(x, &lit(value, x), config)
    }
}

/// `x` where `x != 0`, else 1 (JAX's `_replace_zero`).
fn replace_zero(x: &Array) -> Result<Array> {
    let ones = support::full(x.aval()?, 1.0);
    Ok(select(&lax::eq(x, &lit(0.0, x)), &ones, x))
}

/// `t * coef()`, the coefficient computed only for a nonzero tangent.
fn scaled(t: Option<&Array>, coef: impl FnOnce() -> Result<Array>) -> Result<Tangent> {
    t.map(|t| Ok(lax::mul(t, &coef()?))).transpose()
}

/// Checks the rule's results: no error arrays, one tangent per output, each
/// tangent of its output's dtype and shape, and no tangent for a non-float
/// output.
fn finish(primitive: &Primitive, (outs, tangents): Jvp) -> Result<Jvp> {
    if outs.len() != tangents.len() {
        return Err(support::rule_error(
            "jvp",
            primitive,
            format!(
                "internal: {} outputs but {} tangents",
                outs.len(),
                tangents.len()
            ),
        ));
    }
    let mut checked = Vec::with_capacity(tangents.len());
    for (out, t) in outs.iter().zip(tangents) {
        let aval = out.aval()?;
        let t = match t {
            Some(t) if has_tangent(aval.dtype) => {
                let t_aval = t.aval()?;
                if t_aval.dtype != aval.dtype || t_aval.shape != aval.shape {
                    return Err(support::rule_error(
                        "jvp",
                        primitive,
                        format!("internal: tangent {t_aval} for an output {aval}"),
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
fn zero_jvp(primitive: &Primitive, primals: &[Array]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let n = outs.len();
    Ok((outs, vec![None; n]))
}

/// The jvp of an op linear in the operands `linear` picks (the others, e.g.
/// indices, are constants): `tangent_primitive` applied to their tangents
/// (zeros instantiated) and to the other operands' primals; one tangent per
/// output (split has several).
fn linear_jvp(
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
                instantiate(t, p)
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
fn unary_rule(
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    rule: impl FnOnce(&Array, &Array, &Array) -> Result<Tangent>,
) -> Result<Jvp> {
    let ans = bind1(primitive, &refs(primals))?;
    let tangent = match (primals.first(), tangents.first()) {
        (Some(x), Some(Some(t))) if has_tangent(ans.dtype_or_bool()) => rule(x, &ans, t)?,
        (Some(_) | None, Some(_) | None) => None,
    };
    Ok(single(ans, tangent))
}

/// The jvp of a bilinear op (`dot_general`, convolution): the op applied
/// with each operand's tangent in its place, summed.
fn bilinear_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let ([x, y], [tx, ty]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, tangents) {
        return Ok(single(out, None));
    }
    let left = tx.as_ref().map(|t| bind1(primitive, &[t, y])).transpose()?;
    let right = ty.as_ref().map(|t| bind1(primitive, &[x, t])).transpose()?;
    Ok(single(out, add_tangents(left, right)))
}

// ---------------------------------------------------------------------------
// Elementwise ops.

/// The tangent of an elementwise function of one operand, from its operand
/// `x`, its result `ans` and the operand's tangent `t`.
fn unary_tangent(op: UnaryOp, x: &Array, ans: &Array, t: &Array) -> Result<Tangent> {
    use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, PI};
    let c = |v: f64| lit(v, x);
    let scale = |coef: Array| -> Result<Tangent> { Ok(Some(lax::mul(t, &coef))) };
    match op {
        UnaryOp::Sign
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::IsFinite
        | UnaryOp::Not
        | UnaryOp::PopulationCount
        | UnaryOp::CountLeadingZeros => Ok(None),
        UnaryOp::Neg => Ok(Some(lax::neg(t))),
        UnaryOp::Abs => Ok(Some(select(&lax::ge(x, &c(0.0)), t, &lax::neg(t)))),
        UnaryOp::Exp => scale(ans.clone()),
        UnaryOp::Exp2 => scale(lax::mul(ans, &c(LN_2))),
        UnaryOp::Expm1 => scale(lax::add(ans, &c(1.0))),
        UnaryOp::Log => Ok(Some(lax::div(t, x))),
        UnaryOp::Log1p => Ok(Some(lax::div(t, &lax::add(x, &c(1.0))))),
        UnaryOp::Sqrt => scale(lax::div(&c(0.5), ans)),
        UnaryOp::Rsqrt => scale(lax::mul(&c(-0.5), &lax::div(ans, x))),
        UnaryOp::Cbrt => scale(lax::mul(&c(1.0 / 3.0), &lax::integer_pow(ans, -2))),
        UnaryOp::Tanh => scale(lax::mul(&lax::add(&c(1.0), ans), &lax::sub(&c(1.0), ans))),
        UnaryOp::Logistic => scale(lax::mul(ans, &lax::sub(&c(1.0), ans))),
        UnaryOp::Sin => scale(lax::cos(x)),
        UnaryOp::Cos => scale(lax::neg(&lax::sin(x))),
        UnaryOp::Tan => scale(lax::add(&c(1.0), &lax::square(ans))),
        UnaryOp::Asin => scale(lax::rsqrt(&lax::sub(&c(1.0), &lax::square(x)))),
        UnaryOp::Acos => scale(lax::neg(&lax::rsqrt(&lax::sub(&c(1.0), &lax::square(x))))),
        UnaryOp::Atan => Ok(Some(lax::div(t, &lax::add(&c(1.0), &lax::square(x))))),
        UnaryOp::Sinh => scale(lax::cosh(x)),
        UnaryOp::Cosh => scale(lax::sinh(x)),
        UnaryOp::Asinh => scale(lax::rsqrt(&lax::add(&lax::square(x), &c(1.0)))),
        // As JAX: x² - 1 rather than (x - 1)(x + 1) (the domain is x >= 1).
        UnaryOp::Acosh => scale(lax::rsqrt(&lax::sub(&lax::square(x), &c(1.0)))),
        UnaryOp::Atanh => {
            let reciprocal = lax::div(&c(1.0), &lax::add(&c(1.0), x));
            Ok(Some(lax::mul(
                &lax::div(t, &lax::sub(&c(1.0), x)),
                &reciprocal,
            )))
        }
        UnaryOp::Erf | UnaryOp::Erfc => {
            let sign = if op == UnaryOp::Erf { 1.0 } else { -1.0 };
            let gauss = lax::exp(&lax::neg(&lax::square(x)));
            scale(lax::mul(&c(sign * FRAC_2_SQRT_PI), &gauss))
        }
        UnaryOp::ErfInv => scale(lax::mul(&c(PI.sqrt() / 2.0), &lax::exp(&lax::square(ans)))),
        UnaryOp::Lgamma => scale(lax::digamma(x)),
        UnaryOp::Digamma => scale(lax::polygamma(&support::full(x.aval()?, 1.0), x)),
        UnaryOp::Square => scale(lax::mul(&c(2.0), x)),
        UnaryOp::BesselI0e => scale(lax::sub(&lax::bessel_i1e(x), &lax::mul(&lax::sign(x), ans))),
        UnaryOp::BesselI1e => {
            // As JAX: d/dx at |x| <= eps is its limit 1/2.
            let eps = c(eps_value(x));
            let not_tiny = lax::gt(&lax::abs(x), &eps);
            let safe_x = select(&not_tiny, x, &support::full(x.aval()?, eps_value(x)));
            let slope = lax::sub(
                &lax::bessel_i0e(&safe_x),
                &lax::mul(
                    ans,
                    &lax::add(&lax::sign(&safe_x), &lax::integer_pow(&safe_x, -1)),
                ),
            );
            scale(select(&not_tiny, &slope, &support::full(x.aval()?, 0.5)))
        }
    }
}

/// The float epsilon of `x`'s dtype.
fn eps_value(x: &Array) -> f64 {
    x.dtype_or_bool().epsilon().unwrap_or(0.0)
}

/// The tangent of `x ^ y` for a constant integer `y`.
fn integer_pow_tangent(y: i32, x: &Array, t: &Array) -> Tangent {
    match y {
        0 => None,
        1 => Some(t.clone()),
        2 => Some(lax::mul(t, &lax::mul(&lit(2.0, x), x))),
        _ => Some(lax::mul(
            t,
            &lax::mul(&lit(f64::from(y), x), &lax::integer_pow(x, y - 1)),
        )),
    }
}

/// The jvp of an elementwise function of two operands (which may broadcast:
/// the tangent always has the output's shape).
fn binary_jvp(
    primitive: &Primitive,
    op: BinaryOp,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let ans = bind1(primitive, &refs(primals))?;
    let ([x, y], [tx, ty]) = (primals, tangents) else {
        return Ok(single(ans, None));
    };
    if !differentiable(&ans, tangents) {
        return Ok(single(ans, None));
    }
    let tangent = binary_tangent(op, x, y, &ans, tx.as_ref(), ty.as_ref())?;
    let shape = ans.shape_or_empty().to_vec();
    Ok(single(ans, tangent.map(|t| fit(&t, &shape))))
}

/// The tangent of `op(x, y) = ans` (possibly of a broadcastable shape).
fn binary_tangent(
    op: BinaryOp,
    x: &Array,
    y: &Array,
    ans: &Array,
    tx: Option<&Array>,
    ty: Option<&Array>,
) -> Result<Tangent> {
    Ok(match op {
        BinaryOp::Add => add_tangents(tx.cloned(), ty.cloned()),
        BinaryOp::Sub => add_tangents(tx.cloned(), ty.map(lax::neg)),
        BinaryOp::Mul => add_tangents(scaled(tx, || Ok(y.clone()))?, scaled(ty, || Ok(x.clone()))?),
        BinaryOp::Div => add_tangents(
            tx.map(|t| lax::div(t, y)),
            scaled(ty, || Ok(lax::mul(&lax::neg(x), &lax::integer_pow(y, -2))))?,
        ),
        BinaryOp::Rem => add_tangents(
            tx.cloned(),
            scaled(ty, || {
                // -trunc(x / y)
                let q = lax::div(x, y);
                Ok(lax::neg(&lax::mul(
                    &lax::sign(&q),
                    &lax::floor(&lax::abs(&q)),
                )))
            })?,
        ),
        BinaryOp::Pow => add_tangents(
            scaled(tx, || pow_base_coef(x, y))?,
            scaled(ty, || Ok(lax::mul(&lax::log(&replace_zero(x)?), ans)))?,
        ),
        BinaryOp::Max | BinaryOp::Min => add_tangents(
            scaled(tx, || Ok(balanced_eq(x, ans, y)))?,
            scaled(ty, || Ok(balanced_eq(y, ans, x)))?,
        ),
        BinaryOp::Atan2 => {
            let denominator = lax::add(&lax::square(x), &lax::square(y));
            add_tangents(
                scaled(tx, || Ok(lax::div(y, &denominator)))?,
                scaled(ty, || Ok(lax::div(&lax::neg(x), &denominator)))?,
            )
        }
        BinaryOp::Polygamma => {
            if tx.is_some() {
                return Err(support::rule_error(
                    "jvp",
                    &Primitive::Binary(op),
                    "polygamma is not differentiable in its order m (as in JAX)",
                ));
            }
            scaled(ty, || Ok(lax::polygamma(&lax::add(x, &lit(1.0, x)), y)))?
        }
        BinaryOp::NextAfter
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => None,
    })
}

/// d(x^y)/dx = y x^(y-1), as JAX's `_pow_jvp_lhs` for a float exponent
/// (`pow`'s operands share one dtype, so a differentiable one is float):
/// no special case at y == 0, so that d/dy of it is ln(x) x^(y-1) + ...
/// there (a symmetric hessian), and 0 · 0^-1 = NaN at x == y == 0, as in
/// JAX. Static integer exponents are `integer_pow`, with its own rule.
fn pow_base_coef(x: &Array, y: &Array) -> Result<Array> {
    Ok(lax::mul(y, &lax::pow(x, &lax::sub(y, &lit(1.0, y)))))
}

/// JAX's `_balanced_eq(x, z, y)`: 1 where `x == z` (½ where also
/// `y == z`), else 0 — max and min split ties evenly.
fn balanced_eq(x: &Array, z: &Array, y: &Array) -> Array {
    let hits = indicator(&lax::eq(x, z), z);
    let ties = lax::add(&lit(1.0, z), &indicator(&lax::eq(y, z), z));
    lax::div(&hits, &ties)
}

/// `select_n`: the same selection of the case tangents.
fn select_n_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let (Some((which, cases)), Some((_, case_tangents))) =
        (primals.split_first(), tangents.split_first())
    else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, case_tangents) {
        return Ok(single(out, None));
    }
    let case_tangents = cases
        .iter()
        .zip(case_tangents)
        .map(|(p, t)| instantiate(t, p))
        .collect::<Result<Vec<_>>>()?;
    let mut operands = vec![which];
    operands.extend(case_tangents.iter());
    let tangent = bind1(primitive, &operands)?;
    Ok(single(out, Some(tangent)))
}

/// `clamp(lo, x, hi)`: each operand's tangent where it is the result (as
/// JAX: strictly inside for `x`, none of them on a tie with `lo`).
fn clamp_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let ([lo, x, hi], [t_lo, t_x, t_hi]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, tangents) {
        return Ok(single(out, None));
    }
    let shape = out.shape_or_empty().to_vec();
    let keep = |t: &Tangent, pred: &dyn Fn() -> Array| -> Result<Tangent> {
        t.as_ref()
            .map(|t| {
                let t = fit(t, &shape);
                let zeros = support::zeros(t.aval()?);
                Ok(select(&pred(), &t, &zeros))
            })
            .transpose()
    };
    let from_lo = keep(t_lo, &|| lax::and(&lax::gt(lo, x), &lax::lt(lo, hi)))?;
    let from_x = keep(t_x, &|| lax::and(&lax::gt(x, lo), &lax::lt(x, hi)))?;
    let from_hi = keep(t_hi, &|| lax::lt(hi, x))?;
    Ok(single(
        out,
        add_tangents(add_tangents(from_lo, from_x), from_hi),
    ))
}

/// `convert_element_type`: the tangent converted between float types; no
/// tangent to or from integers and bools.
fn convert_jvp(
    primitive: &Primitive,
    new_dtype: DType,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let mut tangent = None;
    if let (Some(x), Some(Some(t))) = (primals.first(), tangents.first())
        && has_tangent(x.dtype_or_bool())
        && has_tangent(new_dtype)
    {
        tangent = Some(bind1(primitive, &[t])?);
    }
    Ok(single(out, tangent))
}

// ---------------------------------------------------------------------------
// Reductions.

/// Reductions over axes: sum is linear, max/min pick the extremes (ties
/// share evenly), prod multiplies the other factors.
fn reduce_jvp(
    primitive: &Primitive,
    op: ReduceOp,
    axes: &[i64],
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    match op {
        ReduceOp::Sum => linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true),
        ReduceOp::Prod => unary_rule(primitive, primals, tangents, |x, _, t| {
            Ok(reduce_prod_tangent(x, t, axes))
        }),
        ReduceOp::Max | ReduceOp::Min => unary_rule(primitive, primals, tangents, |x, ans, t| {
            Ok(Some(reduce_chooser_tangent(x, ans, t, axes)))
        }),
        ReduceOp::And | ReduceOp::Or => zero_jvp(primitive, primals),
    }
}

/// JAX's `_reduce_chooser_jvp_rule`: the mean of the tangents at the
/// positions equal to the result.
fn reduce_chooser_tangent(x: &Array, ans: &Array, t: &Array, axes: &[i64]) -> Array {
    let kept_shape: Vec<i64> = x
        .shape_or_empty()
        .iter()
        .enumerate()
        .map(|(d, &size)| if axes.contains(&(d as i64)) { 1 } else { size })
        .collect();
    let location = indicator(&lax::eq(x, &lax::reshape(ans, &kept_shape)), t);
    let counts = lax::reduce_sum(&location, axes);
    lax::div(&lax::reduce_sum(&lax::mul(t, &location), axes), &counts)
}

/// The tangent of a product over `axes`, exact also where factors are zero:
/// the reduced axes are flattened into one last axis, and each tangent is
/// multiplied by the product of the factors before it times those after it.
fn reduce_prod_tangent(x: &Array, t: &Array, axes: &[i64]) -> Tangent {
    let shape = x.shape_or_empty().to_vec();
    let size = |d: i64| shape.get(d as usize).copied().unwrap_or(0);
    let n: i64 = axes.iter().map(|&a| size(a)).product();
    if n == 0 {
        // The empty product is the constant 1.
        return None;
    }
    let kept: Vec<i64> = (0..shape.len() as i64)
        .filter(|d| !axes.contains(d))
        .collect();
    let mut permutation = kept.clone();
    permutation.extend_from_slice(axes);
    let mut flat: Vec<i64> = kept.iter().map(|&d| size(d)).collect();
    flat.push(n);
    let axis = kept.len();
    let flatten = |a: &Array| lax::reshape(&permute(a, &permutation), &flat);
    let xf = flatten(x);
    let others = lax::mul(
        &exclusive_cumprod(&xf, axis, n, false),
        &exclusive_cumprod(&xf, axis, n, true),
    );
    Some(lax::reduce_sum(
        &lax::mul(&flatten(t), &others),
        &[axis as i64],
    ))
}

/// Products of the elements strictly before (after, if `reverse`) each
/// position along `axis`, of size `n >= 1`.
fn exclusive_cumprod(x: &Array, axis: usize, n: i64, reverse: bool) -> Array {
    let inclusive = lax::cumprod(x, axis, reverse);
    let mut config = vec![(0, 0, 0); x.ndim_or_zero()];
    let shifted = if reverse {
        config[axis] = (0, 1, 0);
        slice_axis(&inclusive, axis, 1, n, 1)
    } else {
        config[axis] = (1, 0, 0);
        slice_axis(&inclusive, axis, 0, n - 1, 1)
    };
    pad_with(&shifted, 1.0, &config)
}

// ---------------------------------------------------------------------------
// Cumulative reductions.

/// Running reductions: cumsum is linear; cumprod, cummax and cummin are
/// differentiated through JAX's parallel prefix scan (`associative_scan`),
/// so ties in cummax/cummin split their tangents as `max`/`min` do.
fn cumulative_jvp(
    primitive: &Primitive,
    op: CumulativeOp,
    axis: usize,
    reverse: bool,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let combine: Combine = match op {
        CumulativeOp::Sum => {
            return linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true);
        }
        CumulativeOp::Prod => combine_mul,
        CumulativeOp::Max => |a, b| combine_chooser(a, b, lax::max),
        CumulativeOp::Min => |a, b| combine_chooser(a, b, lax::min),
    };
    unary_rule(primitive, primals, tangents, |x, _, t| {
        let flip = |a: &Array| {
            if reverse {
                lax::rev(a, &[axis as i64])
            } else {
                a.clone()
            }
        };
        let (_, tangent) = associative_scan(&(flip(x), flip(t)), axis, combine);
        Ok(Some(flip(&tangent)))
    })
}

/// The product of two scan elements with its tangent.
fn combine_mul((a, ta): &Dual, (b, tb): &Dual) -> Dual {
    let tangent = lax::add(&lax::mul(ta, b), &lax::mul(a, tb));
    (lax::mul(a, b), tangent)
}

/// `choose(a, b)` (max or min) of two scan elements with its tangent.
fn combine_chooser((a, ta): &Dual, (b, tb): &Dual, choose: fn(&Array, &Array) -> Array) -> Dual {
    let c = choose(a, b);
    let tangent = lax::add(
        &lax::mul(ta, &balanced_eq(a, &c, b)),
        &lax::mul(tb, &balanced_eq(b, &c, a)),
    );
    (c, tangent)
}

/// An inclusive scan of dual values along `axis` with an associative
/// `combine` (JAX's `associative_scan`: combine adjacent pairs, scan those
/// recursively for the odd positions, derive the even ones, interleave).
fn associative_scan(elems: &Dual, axis: usize, combine: Combine) -> Dual {
    let n = dim(&elems.0, axis);
    if n < 2 {
        return elems.clone();
    }
    let part = |(p, t): &Dual, start: i64, limit: i64, stride: i64| {
        (
            slice_axis(p, axis, start, limit, stride),
            slice_axis(t, axis, start, limit, stride),
        )
    };
    let reduced = combine(&part(elems, 0, n - 1, 2), &part(elems, 1, n, 2));
    let odd = associative_scan(&reduced, axis, combine);
    let rest = part(elems, 2, n, 2);
    let even = if n % 2 == 0 {
        let m = dim(&odd.0, axis);
        combine(&part(&odd, 0, m - 1, 1), &rest)
    } else {
        combine(&odd, &rest)
    };
    let first = part(elems, 0, 1, 1);
    let even = (
        lax::concatenate(&[&first.0, &even.0], axis),
        lax::concatenate(&[&first.1, &even.1], axis),
    );
    (
        interleave(&even.0, &odd.0, axis),
        interleave(&even.1, &odd.1, axis),
    )
}

/// `a[0], b[0], a[1], b[1], ...` along `axis` (`a` as long as `b` or one
/// longer), built with interior padding.
fn interleave(a: &Array, b: &Array, axis: usize) -> Array {
    let equal = dim(a, axis) == dim(b, axis);
    let rank = a.ndim_or_zero();
    let mut config_a = vec![(0, 0, 0); rank];
    let mut config_b = config_a.clone();
    if axis < rank {
        config_a[axis] = (0, i64::from(equal), 1);
        config_b[axis] = (1, i64::from(!equal), 1);
    }
    lax::add(&pad_with(a, 0.0, &config_a), &pad_with(b, 0.0, &config_b))
}

// ---------------------------------------------------------------------------
// Windowed reductions.

/// The parameters of a `reduce_window`.
struct Window<'a> {
    /// Window size per dimension.
    dims: &'a [i64],
    /// Step per dimension.
    strides: &'a [i64],
    /// (low, high) padding per dimension.
    padding: &'a [(i64, i64)],
    /// Operand dilation per dimension.
    base_dilation: &'a [i64],
    /// Window dilation per dimension.
    window_dilation: &'a [i64],
}

/// `reduce_window`: sum is linear; max/min take the tangent at the position
/// each window chose (the first one on ties), as JAX's
/// `_select_and_gather_add` does.
fn reduce_window_jvp(
    primitive: &Primitive,
    op: WindowOp,
    window: &Window<'_>,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let max = match op {
        WindowOp::Sum => {
            return linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true);
        }
        WindowOp::Max => true,
        WindowOp::Min => false,
    };
    unary_rule(primitive, primals, tangents, |x, ans, t| {
        Ok(window_chooser_tangent(x, ans, t, window, max))
    })
}

/// The tangent of a max (or min) over windows: the operand is dilated and
/// padded with the reduction's identity (the tangent with zeros), then each
/// window's extreme position picks its tangent.
fn window_chooser_tangent(
    x: &Array,
    ans: &Array,
    t: &Array,
    window: &Window<'_>,
    max: bool,
) -> Tangent {
    let out = ans.shape_or_empty().to_vec();
    if out.contains(&0) {
        return None;
    }
    let config: Vec<(i64, i64, i64)> = window
        .padding
        .iter()
        .zip(window.base_dilation)
        .map(|(&(lo, hi), &dilation)| (lo, hi, dilation - 1))
        .collect();
    let identity = if max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let xp = pad_with(x, identity, &config);
    let tp = pad_with(t, 0.0, &config);
    let positions: i64 = window.dims.iter().product();
    Some(if positions <= MAX_UNROLLED_WINDOW {
        window_select_unrolled(&xp, &tp, &out, window, max)
    } else {
        window_select_gathered(&xp, &tp, &out, window, max)
    })
}

/// Every offset in a window of `dims`, in row-major order.
fn window_offsets(dims: &[i64]) -> Vec<Vec<i64>> {
    let count: i64 = dims.iter().product();
    (0..count)
        .map(|mut p| {
            let mut offset = vec![0; dims.len()];
            for (o, &size) in offset.iter_mut().zip(dims).rev() {
                *o = p % size.max(1);
                p /= size.max(1);
            }
            offset
        })
        .collect()
}

/// The chosen tangent per window by strided slices, one per window offset:
/// a running extreme and its tangent (a later offset wins only if strictly
/// better, so the first extreme is chosen).
fn window_select_unrolled(
    xp: &Array,
    tp: &Array,
    out: &[i64],
    window: &Window<'_>,
    max: bool,
) -> Array {
    let mut best: Option<Dual> = None;
    for offset in window_offsets(window.dims) {
        let start: Vec<i64> = offset
            .iter()
            .zip(window.window_dilation)
            .map(|(&o, &d)| o * d)
            .collect();
        let limit: Vec<i64> = start
            .iter()
            .zip(out)
            .zip(window.strides)
            .map(|((&s, &n), &stride)| s + (n - 1) * stride + 1)
            .collect();
        let value = lax::slice(xp, &start, &limit, Some(window.strides));
        let tangent = lax::slice(tp, &start, &limit, Some(window.strides));
        best = Some(match best {
            None => (value, tangent),
            Some((best_value, best_tangent)) => {
                let better = if max {
                    lax::gt(&value, &best_value)
                } else {
                    lax::lt(&value, &best_value)
                };
                (
                    select(&better, &value, &best_value),
                    select(&better, &tangent, &best_tangent),
                )
            }
        });
    }
    best.map_or_else(|| tp.clone(), |(_, tangent)| tangent)
}

/// The chosen tangent per window by one gather of every (dilated) window,
/// flattened, an argmax/argmin over it (first on ties) and a gather of the
/// tangent's windows at that position.
fn window_select_gathered(
    xp: &Array,
    tp: &Array,
    out: &[i64],
    window: &Window<'_>,
    max: bool,
) -> Array {
    let rank = out.len();
    let mut index_shape = out.to_vec();
    index_shape.push(1);
    let starts: Vec<Array> = window
        .strides
        .iter()
        .enumerate()
        .map(|(d, &stride)| {
            let i = lax::iota(DType::I32, &index_shape, d);
            if stride == 1 {
                i
            } else {
                lax::mul(&i, &lit_i32(stride))
            }
        })
        .collect();
    let indices = lax::concatenate(&refs(&starts), rank);
    let dilated: Vec<i64> = window
        .dims
        .iter()
        .zip(window.window_dilation)
        .map(|(&w, &d)| (w - 1) * d + 1)
        .collect();
    let numbers = GatherDimensionNumbers {
        offset_dims: (rank as i64..2 * rank as i64).collect(),
        collapsed_slice_dims: Dims::new(),
        start_index_map: (0..rank as i64).collect(),
    };
    let mut flat = out.to_vec();
    flat.push(window.dims.iter().product());
    let windows = |a: &Array| {
        let patches = lax::gather(
            a,
            &indices,
            numbers.clone(),
            &dilated,
            GatherMode::Clip,
            Scalar::Int(0),
        );
        let patches = if window.window_dilation.iter().all(|&d| d == 1) {
            patches
        } else {
            let mut strides = vec![1; rank];
            strides.extend_from_slice(window.window_dilation);
            let limit = patches.shape_or_empty().to_vec();
            lax::slice(&patches, &vec![0; limit.len()], &limit, Some(&strides))
        };
        lax::reshape(&patches, &flat)
    };
    let values = windows(xp);
    let choice = if max {
        lax::argmax(&values, rank, DType::I32)
    } else {
        lax::argmin(&values, rank, DType::I32)
    };
    let picked = take_along(&windows(tp), &lax::reshape(&choice, &index_shape), rank);
    lax::reshape(&picked, out)
}

/// `x` at positions `idx` along `axis` (`idx` has `x`'s shape except along
/// `axis`; rank >= 1): `take_along_axis` as one gather.
fn take_along(x: &Array, idx: &Array, axis: usize) -> Array {
    let shape = idx.shape_or_empty().to_vec();
    let rank = shape.len();
    let mut full = shape;
    full.push(1);
    let components: Vec<Array> = (0..rank)
        .map(|d| {
            if d == axis {
                lax::reshape(&lax::convert_element_type(idx, DType::I32), &full)
            } else {
                lax::iota(DType::I32, &full, d)
            }
        })
        .collect();
    let indices = lax::concatenate(&refs(&components), rank);
    lax::gather(
        x,
        &indices,
        GatherDimensionNumbers {
            offset_dims: Dims::new(),
            collapsed_slice_dims: (0..rank as i64).collect(),
            start_index_map: (0..rank as i64).collect(),
        },
        &vec![1; rank],
        GatherMode::Clip,
        Scalar::Int(0),
    )
}

// ---------------------------------------------------------------------------
// Sorting.

/// `sort` (JAX's `_sort_jvp`): an iota sorted along with the operands gives
/// the permutation, which then permutes each tangent.
fn sort_jvp(
    primitive: &Primitive,
    dimension: usize,
    is_stable: bool,
    num_keys: usize,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    if tangents.iter().all(Option::is_none) {
        return zero_jvp(primitive, primals);
    }
    let shape = primals
        .first()
        .map(|p| p.shape_or_empty().to_vec())
        .unwrap_or_default();
    let iota = lax::iota(DType::I32, &shape, dimension);
    let mut operands = refs(primals);
    operands.push(&iota);
    let sort = Primitive::Sort {
        dimension,
        is_stable,
        num_keys,
    };
    let mut outs = support::bind_all(sort, &operands)?;
    let order = outs
        .pop()
        .ok_or_else(|| support::rule_error("jvp", primitive, "internal: no output"))?;
    let out_tangents = tangents
        .iter()
        .map(|t| t.as_ref().map(|t| take_along(t, &order, dimension)))
        .collect();
    Ok((outs, out_tangents))
}

/// `top_k`: the tangent at the returned indices (none for the indices).
fn top_k_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let mut tangent = None;
    if let (Some(Some(t)), Some(indices)) = (tangents.first(), outs.get(1)) {
        let axis = t.ndim_or_zero().saturating_sub(1);
        tangent = Some(take_along(t, indices, axis));
    }
    let mut out_tangents = vec![tangent];
    out_tangents.resize(outs.len(), None);
    Ok((outs, out_tangents))
}

// ---------------------------------------------------------------------------
// Scatter.

/// Scatter with `op`: add is linear in operand and updates; set, min and
/// max follow JAX's rules for possibly repeated indices; mul is
/// differentiable in the operand only (as in JAX without unique indices).
fn scatter_jvp(
    primitive: &Primitive,
    op: ScatterOp,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    match op {
        ScatterOp::Add => linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i != 1),
        ScatterOp::Set => scatter_set_jvp(primitive, numbers, primals, tangents),
        ScatterOp::Mul => scatter_mul_jvp(primitive, primals, tangents),
        ScatterOp::Min | ScatterOp::Max => {
            scatter_extremal_jvp(primitive, numbers, primals, tangents)
        }
    }
}

/// A scatter with `op` and `numbers` through the current trace.
fn scatter_with(
    op: ScatterOp,
    numbers: &ScatterDimensionNumbers,
    x: &Array,
    indices: &Array,
    updates: &Array,
) -> Result<Array> {
    let primitive = Primitive::Scatter {
        op,
        dimension_numbers: numbers.clone(),
    };
    bind1(&primitive, &[x, indices, updates])
}

/// The gather that reads back, for each update element, the element of `x`
/// a scatter with `numbers` writes it to (updates of `updates_shape`;
/// out-of-bounds windows, which scatter drops, read `fill`).
fn gather_scattered(
    x: &Array,
    indices: &Array,
    numbers: &ScatterDimensionNumbers,
    updates_shape: &[i64],
    fill: Scalar,
) -> Array {
    let mut window_dims = numbers.update_window_dims.iter();
    let slice_sizes: Vec<i64> = (0..x.ndim_or_zero() as i64)
        .map(|d| {
            if numbers.inserted_window_dims.contains(&d) {
                1
            } else {
                window_dims
                    .next()
                    .and_then(|&u| updates_shape.get(u as usize).copied())
                    .unwrap_or(1)
            }
        })
        .collect();
    let gather_numbers = GatherDimensionNumbers {
        offset_dims: numbers.update_window_dims.clone(),
        collapsed_slice_dims: numbers.inserted_window_dims.clone(),
        start_index_map: numbers.scatter_dims_to_operand_dims.clone(),
    };
    lax::gather(
        x,
        indices,
        gather_numbers,
        &slice_sizes,
        GatherMode::Fill,
        fill,
    )
}

/// JAX's `_scatter_jvp` for indices that may repeat: a scatter of update
/// ids decides which update wins each element; operand and updates (and
/// their tangents) are masked to the winners and combined by scatter-add,
/// so the primal and tangent agree on the winner.
fn scatter_set_jvp(
    primitive: &Primitive,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let ([x, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return zero_jvp(primitive, primals);
    };
    if !has_tangent(x.dtype_or_bool()) || (t_x.is_none() && t_updates.is_none()) {
        return zero_jvp(primitive, primals);
    }
    let updates_shape = updates.shape_or_empty().to_vec();
    let mut ids_shape = updates_shape.clone();
    for &d in &numbers.update_window_dims {
        if let Some(size) = ids_shape.get_mut(d as usize) {
            *size = 1;
        }
    }
    let num_ids: i64 = ids_shape.iter().product();
    let ids = lax::add(
        &lax::reshape(&lax::iota(DType::I32, &[num_ids], 0), &ids_shape),
        &lit_i32(1),
    );
    let ids = fit(&ids, &updates_shape);
    let no_ids = support::zeros(&Aval::new(DType::I32, x.shape_or_empty()));
    let scattered = scatter_with(ScatterOp::Set, numbers, &no_ids, indices, &ids)?;
    let gathered = gather_scattered(
        &scattered,
        indices,
        numbers,
        &updates_shape,
        Scalar::Int(-1),
    );
    let operand_kept = lax::eq(&scattered, &lit_i32(0));
    let update_won = lax::eq(&ids, &gathered);
    let masked = |keep: &Array, v: &Array| -> Result<Array> {
        Ok(select(keep, v, &support::zeros(v.aval()?)))
    };
    let masked_tangent = |keep: &Array, t: &Tangent, primal: &Array| match t {
        Some(t) => masked(keep, t),
        None => instantiate(&None, primal),
    };
    let out = scatter_with(
        ScatterOp::Add,
        numbers,
        &masked(&operand_kept, x)?,
        indices,
        &masked(&update_won, updates)?,
    )?;
    let tangent = scatter_with(
        ScatterOp::Add,
        numbers,
        &masked_tangent(&operand_kept, t_x, x)?,
        indices,
        &masked_tangent(&update_won, t_updates, updates)?,
    )?;
    Ok(single(out, Some(tangent)))
}

/// scatter-mul: linear in the operand (the same scatter-mul of its
/// tangent); like JAX without `unique_indices`, no rule for the updates.
fn scatter_mul_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let ([_, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !has_tangent(out.dtype_or_bool()) {
        return Ok(single(out, None));
    }
    if t_updates.is_some() {
        return Err(support::rule_error(
            "jvp",
            primitive,
            "the derivative with respect to the updates is only defined for unique indices \
             (as in JAX), which oxla's scatter does not promise",
        ));
    }
    let tangent = t_x
        .as_ref()
        .map(|t| bind1(primitive, &[t, indices, updates]))
        .transpose()?;
    Ok(single(out, tangent))
}

/// JAX's `_scatter_extremal_jvp` (scatter-min/max): each element's tangent
/// is the mean of the tangents of the values (operand and updates) equal to
/// the result there.
fn scatter_extremal_jvp(
    primitive: &Primitive,
    numbers: &ScatterDimensionNumbers,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let out = bind1(primitive, &refs(primals))?;
    let ([x, indices, updates], [t_x, _, t_updates]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, &[t_x.clone(), t_updates.clone()]) {
        return Ok(single(out, None));
    }
    let updates_shape = updates.shape_or_empty().to_vec();
    let back =
        |a: &Array| gather_scattered(a, indices, numbers, &updates_shape, Scalar::Float(0.0));
    let target = back(&out);
    let successful = lax::eq(updates, &target);
    let retained = lax::eq(&back(x), &target);
    let no_operand = support::zeros(x.aval()?);
    let count = |ones: &Array| -> Result<Array> {
        Ok(back(&scatter_with(
            ScatterOp::Add,
            numbers,
            &no_operand,
            indices,
            ones,
        )?))
    };
    let num_updates = count(&indicator(&successful, updates))?;
    let num_refs = count(&support::full(updates.aval()?, 1.0))?;
    let one = lit(1.0, updates);
    let shared = lax::div(&one, &lax::add(&num_updates, &one));
    let no_updates = support::zeros(updates.aval()?);
    let update_coef = select(
        &successful,
        &select(&retained, &shared, &lax::div(&one, &num_updates)),
        &no_updates,
    );
    let operand_coef = lax::div(
        &lax::sub(&select(&retained, &shared, &no_updates), &one),
        &num_refs,
    );
    let from_operand = t_x.as_ref().map(|t| lax::mul(&back(t), &operand_coef));
    let from_updates = t_updates.as_ref().map(|t| lax::mul(t, &update_coef));
    let tangent_updates = instantiate(&add_tangents(from_operand, from_updates), updates)?;
    let tangent = scatter_with(
        ScatterOp::Add,
        numbers,
        &instantiate(t_x, x)?,
        indices,
        &tangent_updates,
    )?;
    Ok(single(out, Some(tangent)))
}

// ---------------------------------------------------------------------------
// Barriers.

/// `optimization_barrier`: the primals go through one barrier and the
/// nonzero tangents through another, as JAX's `_optimization_barrier_jvp`.
/// Two binds, never one over both: partial evaluation (linearize, the jvp
/// of a call or remat body under linearize) splits the known primals from
/// the unknown tangents, and one barrier holding both would make the
/// primal outputs unknown too, cutting the primal computation's tie to the
/// inputs (reverse-over-reverse through `checkpoint` gave 0).
fn barrier_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let nonzero: Vec<&Array> = tangents.iter().flatten().collect();
    let tangent_outs = if nonzero.is_empty() {
        Vec::new()
    } else {
        support::bind_all(primitive.clone(), &nonzero)?
    };
    let mut tangent_outs = tangent_outs.into_iter();
    let out_tangents = tangents
        .iter()
        .map(|t| t.as_ref().and_then(|_| tangent_outs.next()))
        .collect();
    Ok((outs, out_tangents))
}
