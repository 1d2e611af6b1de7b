//! The jvp, transpose and batching rules of the control family
//! (`oxla_core::primitive::control`).
//!
//! Rules of the control-flow primitives (`cond`, `while`, `scan`; the
//! implicit rules of `custom_linear_solve` are in `control/linear_solve.rs`): their
//! bodies are re-traced under the transformation. Forward mode finds which
//! loop carries have tangents by fixed point; under linearize the jvp
//! equation is split by partial evaluation (conds per branch with their
//! residuals joined, scans with per-iteration residuals); transposition
//! runs a scan backwards; batching turns a batched predicate into a select
//! (cond) or a masked body (while), and finds batched carries by fixed
//! point.
#![deny(clippy::wildcard_enum_match_arm)]

mod linear_solve;

use crate::array::Array;
use crate::control::join_branches;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::jvp::{JvpContext, bind_jvp, jvp_jaxpr};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::support;
use crate::transform::support::{
    Tangent, batch_at, bind_all, has_tangent, instantiate, location, refs, rule_error,
};
use crate::transform::transpose::Operand;
use crate::transform::transpose::{transpose_jaxpr, with_known_as_consts};
use crate::transform::transpose_rules::TransposeArgs;
use oxla_core::primitive::control;
use oxla_core::primitive::control::Op;
use oxla_core::primitive::control::{ScanParams, WhileParams};
use oxla_core::{Aval, Jaxpr, Primitive, SubJaxpr, Var};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ctx,
    } = *input;
    match op {
        Op::Cond { branches } => cond_jvp(branches, primals, tangents, ctx),
        Op::While(WhileParams {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        }) => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            while_jvp(
                primitive,
                cond_jaxpr,
                body_jaxpr,
                *cond_nconsts,
                *body_nconsts,
                primals,
                tangents,
                ctx,
            )
        }
        Op::Scan(spec) => {
            if tangents.iter().all(Option::is_none) {
                let outs = support::bind_all(primitive.clone(), &refs(primals))?;
                let n = outs.len();
                return Ok((outs, vec![None; n]));
            }
            scan_jvp(spec, primals, tangents, ctx)
        }
        Op::LinearSolve(params) => linear_solve::linear_solve_jvp(params, primals, tangents),
    }
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        cts,
        operands,
        out_avals,
        ..
    } = *input;
    match op {
        Op::Cond { branches } => cond_transpose(branches, cts, operands, out_avals),
        Op::While(_) => Err(while_reverse_error(primitive)),
        Op::Scan(spec) => scan_transpose(spec, cts, operands, out_avals),
        Op::LinearSolve(params) => linear_solve::linear_solve_transpose(params, cts, operands),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        args,
        bdims,
        axis_size,
        ..
    } = *input;
    match op {
        Op::Cond { branches } => cond_batch(branches, args, bdims, axis_size),
        Op::While(WhileParams {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        }) => while_batch(
            cond_jaxpr,
            body_jaxpr,
            *cond_nconsts,
            *body_nconsts,
            args,
            bdims,
            axis_size,
        ),
        Op::Scan(spec) => scan_batch(spec, args, bdims, axis_size),
        Op::LinearSolve(params) => linear_solve::linear_solve_batch(params, args, bdims, axis_size),
    }
}

/// The operands' avals.
fn avals(xs: &[Array]) -> Result<Vec<Aval>> {
    xs.iter().map(|x| x.aval().cloned()).collect()
}

/// `jaxpr` with its constvars, then the invars at `order` (positions into
/// its invars), as its invars; its outvars at `out_order`.
fn reorder(jaxpr: Jaxpr, order: &[usize], out_order: &[usize]) -> Jaxpr {
    let mut j = jaxpr;
    let invars: Vec<Var> = j
        .constvars
        .iter()
        .copied()
        .chain(order.iter().map(|&i| j.invars[i]))
        .collect();
    j.outvars = out_order.iter().map(|&i| j.outvars[i].clone()).collect();
    j.constvars.clear();
    j.invars = invars;
    j
}

/// Positions of a jvp jaxpr's inputs (primals, then the nonzero tangents)
/// regrouped per section: for each section of `sizes` primals, the primals
/// then their nonzero tangents.
fn interleave_sections(sizes: &[usize], nonzero: &[bool]) -> Vec<usize> {
    let n: usize = sizes.iter().sum();
    let mut tangent_pos = Vec::with_capacity(n);
    let mut next = n;
    for nz in nonzero {
        tangent_pos.push(if *nz {
            next += 1;
            Some(next - 1)
        } else {
            None
        });
    }
    let mut order = Vec::new();
    let mut start = 0;
    for &size in sizes {
        order.extend(start..start + size);
        order.extend((start..start + size).filter_map(|i| tangent_pos[i]));
        start += size;
    }
    order
}

/// Tangents where `nonzero` (zeros built for symbolic zeros).
fn nonzero_tangents(
    primals: &[Array],
    tangents: &[Tangent],
    nonzero: &[bool],
) -> Result<Vec<Array>> {
    primals
        .iter()
        .zip(tangents)
        .zip(nonzero)
        .filter(|(_, nz)| **nz)
        .map(|((p, t), _)| Ok(instantiate(t, p.aval()?)))
        .collect()
}

/// Which inputs have a (float) nonzero tangent.
fn nonzero_mask(primals: &[Array], tangents: &[Tangent]) -> Vec<bool> {
    primals
        .iter()
        .zip(tangents)
        .map(|(p, t)| t.is_some() && has_tangent(p.dtype_or_bool()))
        .collect()
}

fn or(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(x, y)| *x || *y).collect()
}

/// Interleaves primal outputs and tangent outputs per section (`sizes`
/// primals each) by the tangents' mask: the output masks of the new eqn.
fn section_mask(sizes: &[usize], nonzero: &[bool]) -> Vec<bool> {
    let mut mask = Vec::new();
    let mut start = 0;
    for &size in sizes {
        mask.extend(std::iter::repeat_n(false, size));
        mask.extend(
            nonzero[start..start + size]
                .iter()
                .filter(|nz| **nz)
                .map(|_| true),
        );
        start += size;
    }
    mask
}

/// Puts tangent outputs back per output: `None` where `nonzero` is false.
fn spread(tangents: Vec<Array>, nonzero: &[bool]) -> Vec<Tangent> {
    let mut it = tangents.into_iter();
    nonzero
        .iter()
        .map(|nz| if *nz { it.next() } else { None })
        .collect()
}

// ---------------------------------------------------------------------------
// cond

/// jvp of `cond`: every branch's jvp, with the output tangents that any
/// branch has built in all of them.
pub(crate) fn cond_jvp(
    branches: &[SubJaxpr],
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let (index, operands) = primals.split_first().expect("cond has an index");
    let nz = nonzero_mask(operands, &tangents[1..]);
    let n_out = branches[0].jaxpr().outvars.len();
    let mut out_nz = vec![false; n_out];
    for b in branches {
        let (_, _, o) = jvp_jaxpr(b.jaxpr(), &nz, &[], location())?;
        out_nz = or(&out_nz, &o);
    }
    let traced = branches
        .iter()
        .map(|b| {
            let (j, consts, _) = jvp_jaxpr(b.jaxpr(), &nz, &out_nz, location())?;
            Ok((j, consts))
        })
        .collect::<Result<Vec<_>>>()?;
    let (new_branches, consts) = join_branches(traced);
    let mut ops = vec![index.clone()];
    ops.extend(consts.iter().cloned());
    ops.extend_from_slice(operands);
    let tans = nonzero_tangents(operands, &tangents[1..], &nz)?;
    let mut is_tangent = vec![false; ops.len()];
    is_tangent.extend(std::iter::repeat_n(true, tans.len()));
    ops.extend(tans);
    let mut out_is_tangent = vec![false; n_out];
    out_is_tangent.extend(out_nz.iter().filter(|nz| **nz).map(|_| true));
    let (outs, touts) = bind_jvp(
        Primitive::Control(control::Op::Cond {
            branches: new_branches,
        }),
        &ops,
        &is_tangent,
        &out_is_tangent,
        ctx,
    )?;
    Ok((outs, spread(touts, &out_nz)))
}

/// Transpose of a linear `cond`: one cond of the branches' transposes.
pub(crate) fn cond_transpose(
    branches: &[SubJaxpr],
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    let (index, operands) = operands.split_first().expect("cond has an index");
    let Operand::Known(index) = index else {
        return Err(rule_error(
            "transpose",
            &Primitive::Control(control::Op::Cond {
                branches: branches.to_vec(),
            }),
            "the branch index must not be linear",
        ));
    };
    let known: Vec<Array> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Known(x) => Some(x.clone()),
            Operand::Linear(_) => None,
        })
        .collect();
    let known_avals = avals(&known)?;
    let traced = branches
        .iter()
        .map(|b| transpose_jaxpr(b.jaxpr(), operands, &known_avals, out_avals, false))
        .collect::<Result<Vec<_>>>()?;
    let (ct_branches, consts) = join_branches(traced);
    let mut ops = vec![index.clone()];
    ops.extend(consts);
    ops.extend(known);
    ops.extend(cts.iter().zip(out_avals).map(|(c, a)| instantiate(c, a)));
    let mut in_cts = bind_all(
        Primitive::Control(control::Op::Cond {
            branches: ct_branches,
        }),
        &refs(&ops),
    )?
    .into_iter();
    let mut result = vec![None];
    result.extend(operands.iter().map(|o| match o {
        Operand::Linear(_) => in_cts.next(),
        Operand::Known(_) => None,
    }));
    Ok(result)
}

/// Batching of `cond`: with a batched index, every branch runs and a select
/// picks per batch element; otherwise each branch is batched.
pub(crate) fn cond_batch(
    branches: &[SubJaxpr],
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let (index, operands) = args.split_first().expect("cond has an index");
    let operand_bdims = &bdims[1..];
    let traced = branches
        .iter()
        .map(|b| {
            crate::transform::batching::batch_jaxpr(b.jaxpr(), operand_bdims, axis_size, location())
        })
        .collect::<Result<Vec<_>>>()?;
    let n_out = branches[0].jaxpr().outvars.len();
    match bdims[0] {
        None => {
            let (batched, consts) = join_branches(traced);
            let mut ops = vec![index.clone()];
            ops.extend(consts);
            ops.extend_from_slice(operands);
            let outs = bind_all(
                Primitive::Control(control::Op::Cond { branches: batched }),
                &refs(&ops),
            )?;
            Ok((outs, vec![Some(0); n_out]))
        }
        Some(b) => {
            let index = batch_at(index, Some(b), axis_size, 0);
            let results = traced
                .iter()
                .map(|(j, consts)| crate::transform::eval::eval_jaxpr(j, consts, operands))
                .collect::<Result<Vec<_>>>()?;
            let outs = (0..n_out)
                .map(|k| {
                    let cases: Vec<&Array> = results.iter().map(|r| &r[k]).collect();
                    let shape = cases[0].shape_or_empty().to_vec();
                    let which = if cases.len() == 2 {
                        lax::ne(&index, &Array::weak_scalar(0i32))
                    } else {
                        index.clone()
                    };
                    let which = lax::broadcast_in_dim(&which, &shape, &[0]);
                    lax::select_n(&which, &cases)
                })
                .collect();
            Ok((outs, vec![Some(0); n_out]))
        }
    }
}

// ---------------------------------------------------------------------------
// while

/// The error of reverse-mode differentiation through a while loop.
pub(crate) fn while_reverse_error(primitive: &Primitive) -> crate::error::Error {
    rule_error(
        "reverse-mode differentiation",
        primitive,
        "does not work for lax::while_loop or fori_loop_dynamic: the trip count is not known \
         when tracing, so there is no fixed set of per-iteration values to save; use lax::scan \
         or lax::fori_loop with static bounds (forward mode, jvp/jacfwd, works)",
    )
}

/// jvp of `while`: the body's jvp with the carries that get tangents found
/// by fixed point; the condition ignores the tangents. Reverse mode is an
/// error (see [`while_reverse_error`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn while_jvp(
    primitive: &Primitive,
    cond_jaxpr: &SubJaxpr,
    body_jaxpr: &SubJaxpr,
    cond_nconsts: usize,
    body_nconsts: usize,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    if ctx.tangent_trace.is_some() {
        return Err(while_reverse_error(primitive));
    }
    let (cond_consts, rest) = primals.split_at(cond_nconsts);
    let (body_consts, carry) = rest.split_at(body_nconsts);
    let nz_consts = nonzero_mask(
        body_consts,
        &tangents[cond_nconsts..cond_nconsts + body_nconsts],
    );
    let carry_tangents = &tangents[cond_nconsts + body_nconsts..];
    let mut nz_carry = nonzero_mask(carry, carry_tangents);
    loop {
        let nz: Vec<bool> = nz_consts.iter().chain(&nz_carry).copied().collect();
        let (_, _, out) = jvp_jaxpr(body_jaxpr.jaxpr(), &nz, &[], location())?;
        let next = or(&nz_carry, &out);
        if next == nz_carry {
            break;
        }
        nz_carry = next;
    }
    let nz: Vec<bool> = nz_consts.iter().chain(&nz_carry).copied().collect();
    let (body, jconsts, _) = jvp_jaxpr(body_jaxpr.jaxpr(), &nz, &nz_carry, location())?;
    let order = interleave_sections(&[body_nconsts, carry.len()], &nz);
    let n_carry_tangents = nz_carry.iter().filter(|x| **x).count();
    let out_order: Vec<usize> = (0..carry.len() + n_carry_tangents).collect();
    let body = reorder(body, &order, &out_order);
    // The condition takes the tangent carries too, and ignores them.
    let mut cond = cond_jaxpr.jaxpr().clone();
    for (c, nzc) in carry.iter().zip(&nz_carry) {
        if *nzc {
            let v = Var(cond.avals.len() as u32);
            cond.avals.push(c.aval()?.clone());
            cond.invars.push(v);
        }
    }
    let mut ops: Vec<Array> = cond_consts.to_vec();
    ops.extend(jconsts.iter().cloned());
    ops.extend_from_slice(body_consts);
    ops.extend(nonzero_tangents(
        body_consts,
        &tangents[cond_nconsts..cond_nconsts + body_nconsts],
        &nz_consts,
    )?);
    ops.extend_from_slice(carry);
    ops.extend(nonzero_tangents(carry, carry_tangents, &nz_carry)?);
    let n_body_consts = jconsts.len() + body_nconsts + nz_consts.iter().filter(|x| **x).count();
    let new = Primitive::Control(control::Op::While(control::WhileParams {
        cond_jaxpr: SubJaxpr::new(cond),
        body_jaxpr: SubJaxpr::new(body),
        cond_nconsts,
        body_nconsts: n_body_consts,
    }));
    let mut outs = bind_all(new, &refs(&ops))?;
    let touts = outs.split_off(carry.len());
    Ok((outs, spread(touts, &nz_carry)))
}

/// Batching of `while`: batched carries found by fixed point; a batched
/// predicate makes every carry batched, the condition "any element still
/// running" and the body a select that keeps finished elements.
#[allow(clippy::too_many_arguments)]
pub(crate) fn while_batch(
    cond_jaxpr: &SubJaxpr,
    body_jaxpr: &SubJaxpr,
    cond_nconsts: usize,
    body_nconsts: usize,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let consts = cond_nconsts + body_nconsts;
    // Batched operands move their batch dim to 0.
    let args: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, b)| match b {
            Some(_) => batch_at(x, *b, axis_size, 0),
            None => x.clone(),
        })
        .collect();
    let batched: Vec<bool> = bdims.iter().map(Option::is_some).collect();
    let (cond_b, body_b) = (&batched[..cond_nconsts], &batched[cond_nconsts..consts]);
    let mut carry_b = batched[consts..].to_vec();
    let bd =
        |mask: &[bool]| -> Vec<Option<usize>> { mask.iter().map(|b| b.then_some(0)).collect() };
    let pred_batched = loop {
        let body_in: Vec<bool> = body_b.iter().chain(&carry_b).copied().collect();
        let (_, _, out) = crate::transform::batching::batch_jaxpr_partial(
            body_jaxpr.jaxpr(),
            &bd(&body_in),
            axis_size,
            &carry_b,
        )?;
        let cond_in: Vec<bool> = cond_b.iter().chain(&carry_b).copied().collect();
        let (_, _, pred) = crate::transform::batching::batch_jaxpr_partial(
            cond_jaxpr.jaxpr(),
            &bd(&cond_in),
            axis_size,
            &[false],
        )?;
        let mut next = or(&carry_b, &out);
        if pred[0] {
            next = vec![true; next.len()];
        }
        if next == carry_b {
            break pred[0];
        }
        carry_b = next;
    };
    let carry: Vec<Array> = args[consts..]
        .iter()
        .zip(&carry_b)
        .zip(&batched[consts..])
        .map(|((x, want), has)| {
            if *want && !*has {
                batch_at(x, None, axis_size, 0)
            } else {
                x.clone()
            }
        })
        .collect();
    let body_in: Vec<bool> = body_b.iter().chain(&carry_b).copied().collect();
    let cond_in: Vec<bool> = cond_b.iter().chain(&carry_b).copied().collect();
    let (cond, cond_consts, _) = crate::transform::batching::batch_jaxpr_partial(
        cond_jaxpr.jaxpr(),
        &bd(&cond_in),
        axis_size,
        &[false],
    )?;
    let (body, body_consts, _) = crate::transform::batching::batch_jaxpr_partial(
        body_jaxpr.jaxpr(),
        &bd(&body_in),
        axis_size,
        &carry_b,
    )?;
    // Each jaxpr with the const operands it takes (captured values first).
    let ((cond, cond_ops), (body, body_ops)) = if pred_batched {
        masked_while(
            &cond,
            &cond_consts,
            &body,
            &body_consts,
            &args[..consts],
            cond_nconsts,
            &carry,
        )?
    } else {
        let mut cond_ops = cond_consts;
        cond_ops.extend_from_slice(&args[..cond_nconsts]);
        let mut body_ops = body_consts;
        body_ops.extend_from_slice(&args[cond_nconsts..consts]);
        ((cond, cond_ops), (body, body_ops))
    };
    let new = Primitive::Control(control::Op::While(control::WhileParams {
        cond_nconsts: cond_ops.len(),
        body_nconsts: body_ops.len(),
        cond_jaxpr: SubJaxpr::new(cond),
        body_jaxpr: SubJaxpr::new(body),
    }));
    let mut ops = cond_ops;
    ops.extend(body_ops);
    ops.extend(carry);
    let outs = bind_all(new, &refs(&ops))?;
    Ok((outs, bd(&carry_b)))
}

type Traced = (Jaxpr, Vec<Array>);

/// A batched-predicate while loop: condition `any(pred)`, body
/// `select(pred, body(carry), carry)` per element (every carry batched at
/// 0). Returns each jaxpr with the const operands it takes: the cond's
/// captured values and its consts; the body's captured values and every
/// const (it evaluates the predicate too).
fn masked_while(
    cond: &Jaxpr,
    cond_consts: &[Array],
    body: &Jaxpr,
    body_consts: &[Array],
    consts: &[Array],
    cond_nconsts: usize,
    carry: &[Array],
) -> Result<(Traced, Traced)> {
    let const_avals = avals(consts)?;
    let carry_avals = avals(carry)?;
    let mut in_avals = const_avals.clone();
    in_avals.extend(carry_avals.iter().cloned());
    let n_consts = consts.len();
    let pred_of = |args: &[Array]| -> Result<Array> {
        let mut cond_args = args[..cond_nconsts].to_vec();
        cond_args.extend_from_slice(&args[n_consts..]);
        Ok(crate::transform::eval::eval_jaxpr(cond, cond_consts, &cond_args)?.remove(0))
    };
    let (any_cond, any_consts) =
        crate::transform::eval::trace_flat(&in_avals, true, location(), |args| {
            let pred = pred_of(args)?;
            let all: Vec<i64> = (0..pred.ndim_or_zero() as i64).collect();
            Ok(vec![lax::reduce_or(&pred, &all)])
        })?;
    let (step, step_consts) =
        crate::transform::eval::trace_flat(&in_avals, true, location(), |args| {
            let pred = pred_of(args)?;
            let next =
                crate::transform::eval::eval_jaxpr(body, body_consts, &args[cond_nconsts..])?;
            Ok(next
                .iter()
                .zip(&args[n_consts..])
                .map(|(new, old)| {
                    let shape = new.shape_or_empty().to_vec();
                    let which = lax::broadcast_in_dim(&pred, &shape, &[0]);
                    lax::select_n(&which, &[old, new])
                })
                .collect())
        })?;
    let cond_j = drop_leading(any_cond, cond_nconsts, n_consts);
    let mut cond_ops = any_consts;
    cond_ops.extend_from_slice(&consts[..cond_nconsts]);
    let mut body_ops = step_consts;
    body_ops.extend_from_slice(consts);
    Ok(((cond_j, cond_ops), (step, body_ops)))
}

/// A jaxpr over (consts, carry) made to take (its first `keep` consts,
/// carry): the other consts (unused by it) are dropped from its invars.
fn drop_leading(mut jaxpr: Jaxpr, keep: usize, n_consts: usize) -> Jaxpr {
    let invars: Vec<Var> = jaxpr
        .invars
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < keep || *i >= n_consts)
        .map(|(_, v)| *v)
        .collect();
    jaxpr.invars = invars;
    jaxpr
}

// ---------------------------------------------------------------------------
// scan

/// A scan of `jaxpr` with `spec`'s length and unrolling.
fn scan_primitive(
    spec: &ScanParams,
    jaxpr: SubJaxpr,
    num_consts: usize,
    num_carry: usize,
    reverse: bool,
) -> Primitive {
    Primitive::Control(control::Op::Scan(control::ScanParams {
        jaxpr,
        num_consts,
        num_carry,
        length: spec.length,
        reverse,
        unroll: spec.unroll,
    }))
}

/// jvp of `scan`: the body's jvp, the carries with tangents found by fixed
/// point. Under linearize the jvp scan is split into a known scan (saving
/// per-iteration residuals) and a tangent scan.
pub(crate) fn scan_jvp(
    spec: &ScanParams,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let (nc, nk) = (spec.num_consts, spec.num_carry);
    let nx = primals.len() - nc - nk;
    let nz_in = nonzero_mask(primals, tangents);
    let body = spec.jaxpr.jaxpr();
    let n_y = body.outvars.len() - nk;
    let mut nz_carry = nz_in[nc..nc + nk].to_vec();
    loop {
        let nz: Vec<bool> = nz_in[..nc]
            .iter()
            .chain(&nz_carry)
            .chain(&nz_in[nc + nk..])
            .copied()
            .collect();
        let (_, _, out) = jvp_jaxpr(body, &nz, &[], location())?;
        let next = or(&nz_carry, &out[..nk]);
        if next == nz_carry {
            break;
        }
        nz_carry = next;
    }
    let nz: Vec<bool> = nz_in[..nc]
        .iter()
        .chain(&nz_carry)
        .chain(&nz_in[nc + nk..])
        .copied()
        .collect();
    let mut instantiate_out = nz_carry.clone();
    instantiate_out.extend(std::iter::repeat_n(false, n_y));
    let (jbody, jconsts, out_nz) = jvp_jaxpr(body, &nz, &instantiate_out, location())?;
    let order = interleave_sections(&[nc, nk, nx], &nz);
    // Outputs: carry, ys, carry tangents, ys tangents → carry, carry
    // tangents, ys, ys tangents.
    let nkt = nz_carry.iter().filter(|x| **x).count();
    let nyt = out_nz[nk..].iter().filter(|x| **x).count();
    let n_out = nk + n_y;
    let out_order: Vec<usize> = (0..nk)
        .chain(n_out..n_out + nkt)
        .chain(nk..n_out)
        .chain(n_out + nkt..n_out + nkt + nyt)
        .collect();
    let jbody = reorder(jbody, &order, &out_order);
    let nct = nz[..nc].iter().filter(|x| **x).count();
    let mut ops: Vec<Array> = jconsts.clone();
    let mut is_tangent = vec![false; jconsts.len()];
    let sections = [(0, nc), (nc, nc + nk), (nc + nk, primals.len())];
    for (start, end) in sections {
        ops.extend_from_slice(&primals[start..end]);
        is_tangent.extend(std::iter::repeat_n(false, end - start));
        let t = nonzero_tangents(&primals[start..end], &tangents[start..end], &nz[start..end])?;
        is_tangent.extend(std::iter::repeat_n(true, t.len()));
        ops.extend(t);
    }
    let new = scan_primitive(
        spec,
        SubJaxpr::new(jbody),
        jconsts.len() + nc + nct,
        nk + nkt,
        spec.reverse,
    );
    let out_is_tangent = section_mask(&[nk, n_y], &{
        let mut m = nz_carry.clone();
        m.extend_from_slice(&out_nz[nk..]);
        m
    });
    let (outs, touts) = bind_jvp(new, &ops, &is_tangent, &out_is_tangent, ctx)?;
    let mut out_nz_all = nz_carry;
    out_nz_all.extend_from_slice(&out_nz[nk..]);
    Ok((outs, spread(touts, &out_nz_all)))
}

/// Transpose of a linear `scan` (carries linear; consts and xs each known
/// or linear): a scan in the other direction carrying the cotangents of
/// the linear consts (summed) and of the carry, its xs the output
/// cotangents and the known xs, its ys the cotangents of the linear xs.
pub(crate) fn scan_transpose(
    spec: &ScanParams,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    let (nc, nk) = (spec.num_consts, spec.num_carry);
    // The carries are tangents: linear even when one starts as a known
    // constant (a zero tangent built in forward mode); its cotangent is
    // then dropped.
    let operands: Vec<Operand> = operands
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Operand::Known(x) if (nc..nc + nk).contains(&i) => {
                x.aval().map(|a| Operand::Linear(a.clone()))
            }
            Operand::Known(x) => Ok(Operand::Known(x.clone())),
            Operand::Linear(a) => Ok(Operand::Linear(a.clone())),
        })
        .collect::<Result<_>>()?;
    let operands = &operands[..];
    let linear: Vec<bool> = operands
        .iter()
        .map(|o| matches!(o, Operand::Linear(_)))
        .collect();
    let body = spec.jaxpr.jaxpr();
    let known_of = |range: std::ops::Range<usize>| -> Vec<Array> {
        operands[range]
            .iter()
            .filter_map(|o| match o {
                Operand::Known(x) => Some(x.clone()),
                Operand::Linear(_) => None,
            })
            .collect()
    };
    let linear_avals = |range: std::ops::Range<usize>| -> Vec<Aval> {
        operands[range]
            .iter()
            .filter_map(|o| match o {
                Operand::Linear(a) => Some(a.clone()),
                Operand::Known(_) => None,
            })
            .collect()
    };
    let known_consts = known_of(0..nc);
    let known_xs = known_of(nc + nk..operands.len());
    let lin_const_avals = linear_avals(0..nc);
    let carry_avals = linear_avals(nc..nc + nk);
    let lin_x_avals: Vec<Aval> = linear_avals(nc + nk..operands.len())
        .iter()
        .map(|a| a.leading_slice())
        .collect();
    let ct_carry: Vec<Array> = cts[..nk]
        .iter()
        .zip(&out_avals[..nk])
        .map(|(c, a)| instantiate(c, a))
        .collect();
    let ct_ys: Vec<Array> = cts[nk..]
        .iter()
        .zip(&out_avals[nk..])
        .map(|(c, a)| instantiate(c, a))
        .collect();
    let y_slice_avals: Vec<Aval> = out_avals[nk..].iter().map(|a| a.leading_slice()).collect();
    let known_x_slice_avals: Vec<Aval> = avals(&known_xs)?
        .iter()
        .map(|a| a.leading_slice())
        .collect();
    // The body with its known inputs (known consts, known x slices) as
    // constants and the rest (linear consts, carry, linear xs) linear.
    let body_t = with_known_as_consts(body, &linear);
    // Transposed body: (known consts | const-ct acc, carry ct | y ct, known x)
    //   → (acc + const cts, carry cts | linear x cts).
    let mut in_avals = avals(&known_consts)?;
    in_avals.extend(lin_const_avals.iter().cloned());
    in_avals.extend(carry_avals.iter().cloned());
    in_avals.extend(y_slice_avals.iter().cloned());
    in_avals.extend(known_x_slice_avals.iter().cloned());
    let (n_kc, n_lc, n_y) = (
        known_consts.len(),
        lin_const_avals.len(),
        y_slice_avals.len(),
    );
    let (tbody, tconsts) =
        crate::transform::eval::trace_flat(&in_avals, true, location(), |args| {
            let (kc, rest) = args.split_at(n_kc);
            let (acc, rest) = rest.split_at(n_lc);
            let (ct_c, rest) = rest.split_at(nk);
            let (ct_y, kx) = rest.split_at(n_y);
            let mut known_args = kc.to_vec();
            known_args.extend_from_slice(kx);
            let out_cts: Vec<Tangent> = ct_c.iter().chain(ct_y).cloned().map(Some).collect();
            let in_cts =
                crate::transform::transpose::backward_pass(&body_t, &known_args, &out_cts)?;
            let lin_avals: Vec<&Aval> = lin_const_avals
                .iter()
                .chain(&carry_avals)
                .chain(&lin_x_avals)
                .collect();
            let in_cts: Vec<Array> = in_cts
                .iter()
                .zip(lin_avals)
                .map(|(c, a)| instantiate(c, a))
                .collect();
            let (c_cts, rest) = in_cts.split_at(n_lc);
            let mut outs: Vec<Array> = acc.iter().zip(c_cts).map(|(a, c)| lax::add(a, c)).collect();
            outs.extend_from_slice(rest);
            Ok(outs)
        })?;
    let mut ops = tconsts.clone();
    ops.extend(known_consts);
    ops.extend(lin_const_avals.iter().map(crate::transform::support::zeros));
    ops.extend(ct_carry);
    ops.extend(ct_ys);
    ops.extend(known_xs);
    let new = scan_primitive(
        spec,
        SubJaxpr::new(tbody),
        tconsts.len() + n_kc,
        n_lc + nk,
        !spec.reverse,
    );
    let outs = bind_all(new, &refs(&ops))?;
    let (mut const_cts, mut rest) = (outs[..n_lc].iter().cloned(), outs[n_lc..].iter().cloned());
    Ok(operands
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Operand::Known(_) => None,
            Operand::Linear(_) if i < nc => const_cts.next(),
            Operand::Linear(_) => rest.next(),
        })
        .collect())
}

/// Batching of `scan`: consts batched at 0, xs at 1 (the scanned axis
/// stays first), carries batched where the fixed point says; ys batched
/// at 1.
pub(crate) fn scan_batch(
    spec: &ScanParams,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let (nc, nk) = (spec.num_consts, spec.num_carry);
    let body = spec.jaxpr.jaxpr();
    let n_y = body.outvars.len() - nk;
    let batched: Vec<bool> = bdims.iter().map(Option::is_some).collect();
    let mut carry_b = batched[nc..nc + nk].to_vec();
    let bd =
        |mask: &[bool]| -> Vec<Option<usize>> { mask.iter().map(|b| b.then_some(0)).collect() };
    let mask_of = |carry_b: &[bool]| -> Vec<bool> {
        batched[..nc]
            .iter()
            .chain(carry_b)
            .chain(&batched[nc + nk..])
            .copied()
            .collect()
    };
    loop {
        let mut force = carry_b.clone();
        force.extend(std::iter::repeat_n(false, n_y));
        let (_, _, out) = crate::transform::batching::batch_jaxpr_partial(
            body,
            &bd(&mask_of(&carry_b)),
            axis_size,
            &force,
        )?;
        let next = or(&carry_b, &out[..nk]);
        if next == carry_b {
            break;
        }
        carry_b = next;
    }
    let mut force = carry_b.clone();
    force.extend(std::iter::repeat_n(true, n_y));
    let (jbody, jconsts, _) = crate::transform::batching::batch_jaxpr_partial(
        body,
        &bd(&mask_of(&carry_b)),
        axis_size,
        &force,
    )?;
    let mut ops = jconsts.clone();
    for (i, (x, b)) in args.iter().zip(bdims).enumerate() {
        let is_carry = (nc..nc + nk).contains(&i);
        let want = if is_carry {
            carry_b[i - nc]
        } else {
            b.is_some()
        };
        let to = if i >= nc + nk { 1 } else { 0 };
        ops.push(if want {
            batch_at(x, *b, axis_size, to)
        } else {
            x.clone()
        });
    }
    let new = scan_primitive(
        spec,
        SubJaxpr::new(jbody),
        jconsts.len() + nc,
        nk,
        spec.reverse,
    );
    let outs = bind_all(new, &refs(&ops))?;
    let mut out_bdims: Vec<Option<usize>> = carry_b.iter().map(|b| b.then_some(0)).collect();
    out_bdims.extend(std::iter::repeat_n(Some(1), n_y));
    Ok((outs, out_bdims))
}
