//! The lowering rules of the control family (`oxla_core::primitive::control`)
//! to StableHLO.
//!
//! Lowering of control flow: `cond` to `stablehlo.case`, `while` to
//! `stablehlo.while`, and `scan` to a `stablehlo.while` over an iteration
//! counter that slices the xs and writes the ys; `custom_linear_solve` to
//! its solver's body. Every body becomes a
//! region through `body::lower_body`, the one function that lowers a jaxpr.
//! A body with effects (io callbacks, debug prints) takes the enclosing
//! block's effect order value and gives back its own, so effects before,
//! inside and after a loop or branch keep their program order.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values};
use crate::attrs;
use crate::body::lower_body;
use crate::emit::{Emitter, LowerError, effect_order_aval};
use crate::rules::compare_scalars;
use melior::ir::{Location, Value, ValueLike};
use oxla_core::primitive::control::Op;
use oxla_core::primitive::control::{ScanParams, WhileParams};
use oxla_core::{Aval, DType, Jaxpr, Scalar, SubJaxpr};

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
        ..
    } = *input;
    match op {
        Op::Cond { branches } => cond(e, branches, inputs, out_avals, loc),
        Op::While(WhileParams {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        }) => while_loop(
            e,
            cond_jaxpr.jaxpr(),
            body_jaxpr.jaxpr(),
            *cond_nconsts,
            *body_nconsts,
            inputs,
            in_avals,
            loc,
        ),
        Op::Scan(params) => scan(e, params, inputs, in_avals, out_avals, loc),
        Op::LinearSolve(params) => {
            // The value is the solver's (JAX lowers the primitive's impl):
            // its captured values, then the right-hand side.
            let n = params.consts.total();
            let [_, _, solve_consts, _] = params.consts.ranges();
            let mut operands = inputs[solve_consts].to_vec();
            operands.extend_from_slice(&inputs[n..]);
            lower_body(e, params.solve.jaxpr(), &operands)
        }
    }
}

/// `stablehlo.case` on `index` (inputs[0]) with one region per branch; the
/// regions use the operands from the enclosing block (StableHLO's implicit
/// capture), as JAX's lowering does. When a branch has effects, every
/// branch takes the block's effect order value and returns its own first.
pub(crate) fn cond<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    branches: &[SubJaxpr],
    inputs: &[Value<'c, 'a>],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let (index, operands) = inputs
        .split_first()
        .ok_or_else(|| LowerError::Mlir("cond without a branch index".into()))?;
    let order_aval = effect_order_aval();
    let order_in = match branches.iter().any(|b| b.jaxpr().is_effectful()) {
        true => Some(e.effect_order(loc)?.to_raw()),
        false => None,
    };
    let raw: Vec<_> = operands.iter().map(|v| v.to_raw()).collect();
    let regions = branches
        .iter()
        .map(|branch| {
            e.region(&[], loc, |inner, _| {
                // SAFETY: the operands (and the order value) are values of
                // the enclosing block, which outlives this region (it is
                // built into an op of that block); only their borrow
                // lifetime changes.
                let args: Vec<Value> = raw.iter().map(|r| unsafe { Value::from_raw(*r) }).collect();
                let Some(order) = order_in else {
                    return lower_body(inner, branch.jaxpr(), &args);
                };
                inner.set_effect_chain(unsafe { Value::from_raw(order) });
                let outs = lower_body(inner, branch.jaxpr(), &args)?;
                Ok(std::iter::once(inner.effect_order(loc)?)
                    .chain(outs)
                    .collect())
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if order_in.is_none() {
        return e.op_with_regions("stablehlo.case", &[*index], out_avals, &[], regions, loc);
    }
    let avals: Vec<&Aval> = std::iter::once(&order_aval)
        .chain(out_avals.iter().copied())
        .collect();
    let outs = e.op_with_regions("stablehlo.case", &[*index], &avals, &[], regions, loc)?;
    e.set_effect_chain(outs[0]);
    Ok(outs[1..].to_vec())
}

/// `stablehlo.while` carrying every operand (the captured values stay
/// unchanged); returns the final carry. When the loop has effects, the
/// block's effect order value is carried first: the body takes and returns
/// it, the condition takes it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn while_loop<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    cond: &Jaxpr,
    body: &Jaxpr,
    cond_nconsts: usize,
    body_nconsts: usize,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let consts = cond_nconsts + body_nconsts;
    let ordered = cond.is_effectful() || body.is_effectful();
    let order_aval = effect_order_aval();
    // The loop's operands: [order value,] consts, carry.
    let skip = usize::from(ordered);
    let mut operands = Vec::with_capacity(inputs.len() + skip);
    let mut avals: Vec<&Aval> = Vec::with_capacity(inputs.len() + skip);
    if ordered {
        operands.push(e.effect_order(loc)?);
        avals.push(&order_aval);
    }
    operands.extend_from_slice(inputs);
    avals.extend_from_slice(in_avals);
    let cond_region = e.region(&avals, loc, |inner, args| {
        if ordered {
            inner.set_effect_chain(args[0]);
        }
        let args = &args[skip..];
        let cond_args: Vec<Value> = args[..cond_nconsts]
            .iter()
            .chain(&args[consts..])
            .copied()
            .collect();
        lower_body(inner, cond, &cond_args)
    })?;
    let body_region = e.region(&avals, loc, |inner, args| {
        if ordered {
            inner.set_effect_chain(args[0]);
        }
        let args = &args[skip..];
        let carry = lower_body(inner, body, &args[cond_nconsts..])?;
        let order = match ordered {
            true => Some(inner.effect_order(loc)?),
            false => None,
        };
        Ok(order
            .into_iter()
            .chain(args[..consts].iter().copied())
            .chain(carry)
            .collect())
    })?;
    let outs = e.op_with_regions(
        "stablehlo.while",
        &operands,
        &avals,
        &[],
        vec![cond_region, body_region],
        loc,
    )?;
    if ordered {
        e.set_effect_chain(outs[0]);
    }
    Ok(outs[skip + consts..].to_vec())
}

/// A scan as `stablehlo.while` over (counter, consts, carry, xs, ys): each
/// iteration slices every x at the counter, runs the body and writes every
/// y slice at the counter.
pub(crate) fn scan<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    p: &ScanParams,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let counter = Aval::new(DType::I32, &[]);
    let ys_avals = &out_avals[p.num_carry..];
    if p.length == 0 {
        // No iteration: the initial carry and empty ys, as JAX. (A loop
        // would still have to type its body, whose slice of one row out
        // of zero StableHLO rejects.)
        let mut outs = inputs[p.num_consts..p.num_consts + p.num_carry].to_vec();
        for y in ys_avals {
            outs.push(e.constant(y, Scalar::Int(0), loc)?);
        }
        return Ok(outs);
    }
    let unroll = if p.unroll > 1 && p.length % p.unroll == 0 {
        p.unroll
    } else {
        1
    };
    let mut init = vec![e.constant(&counter, Scalar::Int(0), loc)?];
    init.extend_from_slice(inputs);
    for y in ys_avals {
        init.push(e.constant(y, Scalar::Int(0), loc)?);
    }
    let mut loop_avals: Vec<&Aval> = vec![&counter];
    loop_avals.extend_from_slice(in_avals);
    loop_avals.extend_from_slice(ys_avals);
    let n_in = inputs.len();
    // An effectful body carries the block's effect order value last.
    let ordered = p.jaxpr.jaxpr().is_effectful();
    let order_aval = effect_order_aval();
    if ordered {
        init.push(e.effect_order(loc)?);
        loop_avals.push(&order_aval);
    }
    let cond_region = e.region(&loop_avals, loc, |inner, args| {
        let limit = inner.constant(&counter, Scalar::Int(p.length), loc)?;
        Ok(vec![compare_scalars(
            inner, args[0], limit, &counter, "LT", false, loc,
        )?])
    })?;
    let body_region = e.region(&loop_avals, loc, |inner, args| {
        let mut state: Vec<Value> = args.to_vec();
        if ordered {
            let order = state
                .pop()
                .expect("the loop state ends with the order value");
            inner.set_effect_chain(order);
        }
        for _ in 0..unroll {
            state = scan_step(
                inner,
                p,
                &state,
                &in_avals[p.num_consts + p.num_carry..],
                ys_avals,
                loc,
            )?;
        }
        debug_assert_eq!(state.len(), 1 + n_in + ys_avals.len());
        if ordered {
            state.push(inner.effect_order(loc)?);
        }
        Ok(state)
    })?;
    let outs = e.op_with_regions(
        "stablehlo.while",
        &init,
        &loop_avals,
        &[],
        vec![cond_region, body_region],
        loc,
    )?;
    if ordered {
        e.set_effect_chain(outs[outs.len() - 1]);
    }
    let carry = &outs[1 + p.num_consts..1 + p.num_consts + p.num_carry];
    let ys = &outs[1 + n_in..1 + n_in + ys_avals.len()];
    Ok(carry.iter().chain(ys).copied().collect())
}

/// One scan iteration on the loop state (counter, consts, carry, xs, ys):
/// the next state.
fn scan_step<'c, 'b>(
    e: &mut Emitter<'c, 'b>,
    p: &ScanParams,
    state: &[Value<'c, 'b>],
    xs_avals: &[&Aval],
    ys_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'b>>, LowerError> {
    let counter = Aval::new(DType::I32, &[]);
    let i = state[0];
    let index = if p.reverse {
        let last = e.constant(&counter, Scalar::Int(p.length - 1), loc)?;
        e.op("stablehlo.subtract", &[last, i], &[&counter], &[], loc)?[0]
    } else {
        i
    };
    let zero = e.constant(&counter, Scalar::Int(0), loc)?;
    let (consts_carry, rest) = state[1..].split_at(p.num_consts + p.num_carry);
    let (xs, ys) = rest.split_at(xs_avals.len());
    let mut body_args: Vec<Value> = consts_carry.to_vec();
    for (x, aval) in xs.iter().zip(xs_avals) {
        body_args.push(slice_at(e, *x, aval, index, zero, loc)?);
    }
    let outs = lower_body(e, p.jaxpr.jaxpr(), &body_args)?;
    let (carry, y_slices) = outs.split_at(p.num_carry);
    let one = e.constant(&counter, Scalar::Int(1), loc)?;
    let mut next = vec![e.op("stablehlo.add", &[i, one], &[&counter], &[], loc)?[0]];
    next.extend_from_slice(&consts_carry[..p.num_consts]);
    next.extend_from_slice(carry);
    next.extend_from_slice(xs);
    for ((ys, y), aval) in ys.iter().zip(y_slices).zip(ys_avals) {
        let mut one_shape = vec![1];
        one_shape.extend_from_slice(&aval.shape[1..]);
        let row = aval.with_shape(&one_shape);
        let y = e.op("stablehlo.reshape", &[*y], &[&row], &[], loc)?[0];
        let mut starts = vec![index];
        starts.extend(std::iter::repeat_n(zero, aval.rank() - 1));
        let mut operands = vec![*ys, y];
        operands.extend(starts);
        next.push(
            e.op(
                "stablehlo.dynamic_update_slice",
                &operands,
                &[aval],
                &[],
                loc,
            )?[0],
        );
    }
    Ok(next)
}

/// Slice `index` of `x` along its leading axis, without that axis.
fn slice_at<'c, 'b>(
    e: &mut Emitter<'c, 'b>,
    x: Value<'c, 'b>,
    aval: &Aval,
    index: Value<'c, 'b>,
    zero: Value<'c, 'b>,
    loc: Location<'c>,
) -> Result<Value<'c, 'b>, LowerError> {
    let mut sizes = vec![1];
    sizes.extend_from_slice(&aval.shape[1..]);
    let mut operands = vec![x, index];
    operands.extend(std::iter::repeat_n(zero, aval.rank() - 1));
    let row = aval.with_shape(&sizes);
    let sliced = e.op(
        "stablehlo.dynamic_slice",
        &operands,
        &[&row],
        &[("slice_sizes", attrs::i64_array(&sizes))],
        loc,
    )?[0];
    let slice = aval.leading_slice();
    Ok(e.op("stablehlo.reshape", &[sliced], &[&slice], &[], loc)?[0])
}
