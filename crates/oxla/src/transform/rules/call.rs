//! The jvp, transpose and batching rules of the call family
//! (`oxla_core::primitive::call`).
#![deny(clippy::wildcard_enum_match_arm)]
//!
//! Rules of the primitives that carry a jaxpr: calls (`jit` inside a
//! trace), checkpoint (remat) and custom derivative rules. Their bodies are
//! re-traced under the transformation; under linearize, the jvp of a body
//! is split by partial evaluation into a primal call (run now) and a
//! tangent call (staged), and remat recomputes what its policy does not
//! save.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::per_example;
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{finish, zero_jvp};
use crate::transform::support;
use crate::transform::support::{Tangent, bind_all, instantiate, internal_error, rule_error};
use crate::transform::support::{location, refs};
use crate::transform::transpose::Operand;
use crate::transform::transpose::transpose_jaxpr;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::nonlinear;
use oxla_core::partial_eval::partial_eval;
use oxla_core::primitive::call;
use oxla_core::primitive::call::Op;
use oxla_core::{Aval, Equation, Primitive, SubJaxpr};
use std::sync::Arc;

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ctx,
    } = *input;
    let result = match op {
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => {
            return call_jvp(op, primitive, primals, tangents, ctx);
        }
        Op::CallExported { function } => {
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
    };
    finish(primitive, result)
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
        Op::CallExported { .. } => nonlinear(primitive, operands),
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => call_transpose(op, primitive, cts, operands, out_avals),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size,
    } = *input;
    match op {
        Op::Call { .. }
        | Op::Remat { .. }
        | Op::CustomJvpCall { .. }
        | Op::CustomVjpCall { .. }
        | Op::CustomLin { .. } => call_batch(op, primitive, args, bdims, axis_size),
        Op::CallExported { .. } => per_example(primitive, args, bdims),
    }
}

/// A user's jvp rule over flat leaves: (primals, tangents) → (outputs,
/// output tangents), `None` being a symbolic zero tangent both ways.
pub(crate) type JvpRuleFn =
    dyn Fn(&[Array], &[Tangent]) -> Result<(Vec<Array>, Vec<Tangent>)> + Send + Sync;
/// A user's fwd rule over flat leaves: inputs → (outputs, residuals).
pub(crate) type FwdFn = dyn Fn(&[Array]) -> Result<(Vec<Array>, Vec<Array>)> + Send + Sync;
/// A user's bwd rule over flat leaves: (residuals, output cotangents) →
/// input cotangents.
pub(crate) type BwdFn = dyn Fn(&[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync;

/// What a `custom_jvp_call` carries.
pub(crate) struct CustomJvpRule {
    /// How many leading operands are captured values (not the user's inputs).
    pub(crate) num_consts: usize,
    /// The user's rule.
    pub(crate) rule: Arc<JvpRuleFn>,
}

/// What a `custom_vjp_call` (and its `custom_lin`) carries.
pub(crate) struct CustomVjpRule {
    /// How many leading operands are captured values.
    pub(crate) num_consts: usize,
    /// The user's fwd rule.
    pub(crate) fwd: Arc<FwdFn>,
    /// The user's bwd rule.
    pub(crate) bwd: Arc<BwdFn>,
    /// The user's input types (their cotangents' types).
    pub(crate) in_avals: Vec<Aval>,
    /// The output types.
    pub(crate) out_avals: Vec<Aval>,
}

fn custom_jvp_rule(
    primitive: &Primitive,
    rule: &oxla_core::OpaqueRule,
) -> Result<Arc<CustomJvpRule>> {
    rule.rule()
        .clone()
        .downcast::<CustomJvpRule>()
        .map_err(|_| internal_error("jvp", primitive, "not a custom_jvp rule"))
}

fn custom_vjp_rule(
    primitive: &Primitive,
    rule: &oxla_core::OpaqueRule,
) -> Result<Arc<CustomVjpRule>> {
    rule.rule()
        .clone()
        .downcast::<CustomVjpRule>()
        .map_err(|_| internal_error("vjp", primitive, "not a custom_vjp rule"))
}

/// The jvp rule of the call-like primitives.
fn call_jvp(
    op: &Op,
    primitive: &Primitive,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    if tangents.iter().all(Option::is_none) {
        let outs = bind_all(primitive.clone(), &refs(primals))?;
        let n = outs.len();
        return Ok((outs, vec![None; n]));
    }
    match op {
        Op::CallExported { .. } => Err(Error::Internal(format!(
            "{} reached the jvp rule of calls with a body",
            primitive.name()
        ))),
        Op::Call { jaxpr, name } => {
            let name = name.clone();
            jvp_body(jaxpr, primals, tangents, ctx, &|_| true, &|j| {
                Primitive::Call(call::Op::Call {
                    jaxpr: j,
                    name: name.clone(),
                })
            })
        }
        Op::Remat {
            jaxpr,
            policy,
            prevent_cse,
        } => jvp_body(
            jaxpr,
            primals,
            tangents,
            ctx,
            &|e| policy.saveable(e),
            &|j| {
                Primitive::Call(call::Op::Remat {
                    jaxpr: j,
                    policy: policy.clone(),
                    prevent_cse: *prevent_cse,
                })
            },
        ),
        Op::CustomJvpCall { rule, .. } => custom_jvp(primitive, rule, primals, tangents),
        Op::CustomVjpCall { rule, .. } => custom_vjp_linearize(primitive, rule, primals, tangents),
        Op::CustomLin { .. } => Err(rule_error(
            "jvp",
            primitive,
            "the linear part of a custom_vjp function cannot be differentiated again in forward \
             mode (use custom_jvp for forward mode)",
        )),
    }
}

/// jvp of a body: one call of the jvp jaxpr, or under linearize a primal
/// call and a tangent call split by partial evaluation (`saveable` decides
/// which primal values the tangent call gets as residuals; the rest it
/// recomputes).
fn jvp_body(
    body: &SubJaxpr,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
    saveable: &dyn Fn(&Equation) -> bool,
    make: &dyn Fn(SubJaxpr) -> Primitive,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let nonzeros: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    let (jj, consts, out_nonzeros) =
        crate::transform::jvp::jvp_jaxpr(body.jaxpr(), &nonzeros, &[], location())?;
    let jj = SubJaxpr::new(jj);
    let nonzero_tangents: Vec<Array> = tangents.iter().flatten().cloned().collect();
    let n_out = body.jaxpr().outvars.len();
    let mut operands: Vec<Array> = consts.clone();
    operands.extend_from_slice(primals);
    let (primal_outs, tangent_outs) = match ctx.tangent_trace {
        None => {
            operands.extend(nonzero_tangents);
            let mut outs = bind_all(make(jj), &refs(&operands))?;
            let touts = outs.split_off(n_out);
            (outs, touts)
        }
        Some(_) => {
            let known_inputs = consts.len() + primals.len();
            let in_unknowns: Vec<bool> = (0..known_inputs + nonzero_tangents.len())
                .map(|i| i >= known_inputs)
                .collect();
            let n_tangent_out = out_nonzeros.iter().filter(|nz| **nz).count();
            let force: Vec<bool> = (0..n_out + n_tangent_out).map(|i| i >= n_out).collect();
            let split = partial_eval(jj.jaxpr(), &in_unknowns, &force, saveable);
            let mut known = bind_all(make(SubJaxpr::new(split.known)), &refs(&operands))?;
            let residuals = known.split_off(known.len() - split.num_residuals);
            let mut tangent_operands = residuals;
            tangent_operands.extend(nonzero_tangents);
            let touts = bind_all(make(SubJaxpr::new(split.unknown)), &refs(&tangent_operands))?;
            (known, touts)
        }
    };
    let mut touts = tangent_outs.into_iter();
    let tangents = out_nonzeros
        .iter()
        .map(|nz| if *nz { touts.next() } else { None })
        .collect();
    Ok((primal_outs, tangents))
}

/// Checks a user rule's outputs against the types it must have.
fn check_outputs(what: &str, got: &[Array], want: &[Aval]) -> Result<()> {
    let location = location();
    if got.len() != want.len() {
        return Err(Error::Usage {
            function: "custom rule",
            message: format!(
                "{what} returned {} leaves, but the function has {}",
                got.len(),
                want.len()
            ),
            location,
        });
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.aval()?;
        if g.dtype != w.dtype || g.shape != w.shape {
            return Err(Error::Usage {
                function: "custom rule",
                message: format!("{what} returned {g} for leaf {i}, which must be {w}"),
                location,
            });
        }
    }
    Ok(())
}

fn no_closed_over_tangents(primitive: &Primitive, tangents: &[Tangent]) -> Result<()> {
    if tangents.iter().any(Option::is_some) {
        return Err(rule_error(
            "jvp",
            primitive,
            "the custom-derivative function closes over a value that is being differentiated; \
             pass it as an argument instead",
        ));
    }
    Ok(())
}

/// jvp of a `custom_jvp` call: the user's rule.
fn custom_jvp(
    primitive: &Primitive,
    rule: &oxla_core::OpaqueRule,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let rule = custom_jvp_rule(primitive, rule)?;
    no_closed_over_tangents(primitive, &tangents[..rule.num_consts])?;
    let args = &primals[rule.num_consts..];
    let arg_tangents = &tangents[rule.num_consts..];
    let out_avals: Vec<Aval> = primitive
        .sub_jaxpr()
        .map(|j| {
            j.jaxpr()
                .outvars
                .iter()
                .map(|o| j.jaxpr().atom_aval(o).clone())
                .collect()
        })
        .unwrap_or_default();
    let (outs, touts) = (rule.rule)(args, arg_tangents)?;
    check_outputs("the custom_jvp rule's primal output", &outs, &out_avals)?;
    if touts.len() != out_avals.len() {
        return Err(Error::Usage {
            function: "custom rule",
            message: format!(
                "the custom_jvp rule's tangent output returned {} leaves, but the function has {}",
                touts.len(),
                out_avals.len()
            ),
            location: location(),
        });
    }
    for (i, (t, want)) in touts.iter().zip(&out_avals).enumerate() {
        if let Some(t) = t {
            check_outputs(
                &format!("the custom_jvp rule's tangent output (leaf {i})"),
                std::slice::from_ref(t),
                std::slice::from_ref(want),
            )?;
        }
    }
    Ok((outs, touts))
}

/// Reverse mode of a `custom_vjp` call: the fwd rule now, and a
/// `custom_lin` on the tangents that transposes through bwd.
fn custom_vjp_linearize(
    primitive: &Primitive,
    rule_handle: &oxla_core::OpaqueRule,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    // The tangents go through a `custom_lin`, which only transposition
    // (reverse mode) can evaluate; under plain forward mode it is staged
    // (inside a call being differentiated) or fails when run.
    let rule = custom_vjp_rule(primitive, rule_handle)?;
    no_closed_over_tangents(primitive, &tangents[..rule.num_consts])?;
    let args = &primals[rule.num_consts..];
    let (outs, residuals) = (rule.fwd)(args)?;
    check_outputs("the custom_vjp fwd rule's output", &outs, &rule.out_avals)?;
    let mut operands = residuals.clone();
    for (t, p) in tangents[rule.num_consts..].iter().zip(args) {
        operands.push(instantiate(t, p.aval()?));
    }
    let lin = Primitive::Call(call::Op::CustomLin {
        rule: rule_handle.clone(),
        num_residuals: residuals.len(),
        out_avals: rule.out_avals.clone(),
    });
    let touts = bind_all(lin, &refs(&operands))?;
    Ok((outs, touts.into_iter().map(Some).collect()))
}

/// The transpose rule of the call-like primitives.
fn call_transpose(
    op: &Op,
    primitive: &Primitive,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    match op {
        Op::CallExported { .. } => Err(Error::Internal(format!(
            "{} reached the transpose rule of calls with a body",
            primitive.name()
        ))),
        Op::Call { jaxpr, name } => transpose_body(
            jaxpr,
            cts,
            operands,
            out_avals,
            false,
            &format!("{name}_transpose"),
        ),
        Op::Remat {
            jaxpr, prevent_cse, ..
        } => transpose_body(
            jaxpr,
            cts,
            operands,
            out_avals,
            *prevent_cse,
            "checkpoint_bwd",
        ),
        Op::CustomLin {
            rule,
            num_residuals,
            ..
        } => custom_lin_transpose(primitive, rule, *num_residuals, cts, operands, out_avals),
        Op::CustomJvpCall { .. } | Op::CustomVjpCall { .. } => Err(rule_error(
            "transpose",
            primitive,
            "is not linear, so it cannot be transposed",
        )),
    }
}

/// Transposes a call of `body`: one call of the body's backward pass (with
/// its known operands fenced by an optimization barrier under remat, so
/// XLA does not merge the recomputation with the forward pass).
fn transpose_body(
    body: &SubJaxpr,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
    prevent_cse: bool,
    name: &str,
) -> Result<Vec<Tangent>> {
    let linear: Vec<bool> = operands
        .iter()
        .map(|o| matches!(o, Operand::Linear(_)))
        .collect();
    let known: Vec<Array> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Known(x) => Some(x.clone()),
            Operand::Linear(_) => None,
        })
        .collect();
    let known_avals: Vec<Aval> = known
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let (jaxpr, consts) =
        transpose_jaxpr(body.jaxpr(), operands, &known_avals, out_avals, prevent_cse)?;
    let mut call_operands = consts;
    call_operands.extend(known);
    call_operands.extend(cts.iter().zip(out_avals).map(|(c, a)| instantiate(c, a)));
    let call = Primitive::Call(call::Op::Call {
        jaxpr: SubJaxpr::new(jaxpr),
        name: name.into(),
    });
    let mut in_cts = bind_all(call, &refs(&call_operands))?.into_iter();
    Ok(linear
        .iter()
        .map(|l| if *l { in_cts.next() } else { None })
        .collect())
}

/// Transposes a `custom_lin`: the user's bwd rule.
fn custom_lin_transpose(
    primitive: &Primitive,
    rule: &oxla_core::OpaqueRule,
    num_residuals: usize,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[Aval],
) -> Result<Vec<Tangent>> {
    let rule = custom_vjp_rule(primitive, rule)?;
    let residuals: Vec<Array> = operands[..num_residuals]
        .iter()
        .map(|o| match o {
            Operand::Known(x) => Ok(x.clone()),
            Operand::Linear(_) => Err(internal_error(
                "transpose",
                primitive,
                "a custom_vjp residual is linear",
            )),
        })
        .collect::<Result<_>>()?;
    let ct_values: Vec<Array> = cts
        .iter()
        .zip(out_avals)
        .map(|(c, a)| instantiate(c, a))
        .collect();
    let in_cts = (rule.bwd)(&residuals, &ct_values)?;
    check_outputs("the custom_vjp bwd rule's output", &in_cts, &rule.in_avals)?;
    let mut out: Vec<Tangent> = vec![None; num_residuals];
    out.extend(in_cts.into_iter().map(Some));
    Ok(out)
}

/// Flat results of a vmapped function, all batched at their out axis.
fn batched_results(outs: Vec<Result<Array, usize>>) -> Result<Vec<Array>> {
    outs.into_iter()
        .map(|r| r.map_err(|_| Error::Internal("an unbatched result".into())))
        .collect()
}

/// The rules of a `custom_vjp` call batched over arguments with batch dims
/// `arg_bdims` (`body` is the batched body): fwd and bwd vmapped, residuals
/// and cotangents batched at 0, each input cotangent where its input's
/// batch dim is (summed over the batch for an unbatched input).
fn batch_custom_vjp(
    rule: &CustomVjpRule,
    arg_bdims: Vec<Option<usize>>,
    args: &[Array],
    body: &SubJaxpr,
    axis_size: i64,
) -> Result<CustomVjpRule> {
    let n_out = rule.out_avals.len();
    let axis = crate::transform::batching::rule_axis(axis_size);
    let bwd_axis = axis.clone();
    let fwd = rule.fwd.clone();
    let fwd_bdims = arg_bdims.clone();
    let batched_fwd = move |xs: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let outs = crate::transform::batching::vmap_flat(
            |xs| {
                let (o, r) = fwd(xs)?;
                Ok(o.into_iter().chain(r).collect())
            },
            xs,
            &fwd_bdims,
            axis.clone(),
            &|_| Some(0),
        )?;
        let mut outs = batched_results(outs)?;
        let residuals = outs.split_off(n_out);
        Ok((outs, residuals))
    };
    let bwd = rule.bwd.clone();
    let batched_bwd = move |res: &[Array], cts: &[Array]| -> Result<Vec<Array>> {
        let n_res = res.len();
        let mut xs = res.to_vec();
        xs.extend_from_slice(cts);
        let axes = vec![Some(0); xs.len()];
        let outs = crate::transform::batching::vmap_flat(
            |xs| bwd(&xs[..n_res], &xs[n_res..]),
            &xs,
            &axes,
            bwd_axis.clone(),
            &|i| Some(arg_bdims.get(i).copied().flatten().unwrap_or(0) as i64),
        )?;
        batched_results(outs)?
            .into_iter()
            .zip(&arg_bdims)
            .map(|(ct, b)| match b {
                Some(_) => Ok(ct),
                None => Ok(crate::lax::reduce_sum(&ct, &[0])),
            })
            .collect()
    };
    let body = body.jaxpr();
    Ok(CustomVjpRule {
        num_consts: 0,
        fwd: Arc::new(batched_fwd),
        bwd: Arc::new(batched_bwd),
        in_avals: args
            .iter()
            .map(|x| x.aval().cloned())
            .collect::<Result<_>>()?,
        out_avals: body
            .outvars
            .iter()
            .map(|o| body.atom_aval(o).clone())
            .collect(),
    })
}

/// The batching rule of the call-like primitives.
fn call_batch(
    op: &Op,
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let batched = |body: &SubJaxpr| -> Result<(SubJaxpr, Vec<Array>)> {
        let (j, consts) =
            crate::transform::batching::batch_jaxpr(body.jaxpr(), bdims, axis_size, location())?;
        let mut operands = consts;
        operands.extend_from_slice(args);
        Ok((SubJaxpr::new(j), operands))
    };
    let outs = match op {
        Op::CallExported { .. } => {
            return Err(Error::Internal(format!(
                "{} reached the vmap rule of calls with a body",
                primitive.name()
            )));
        }
        Op::Call { jaxpr, name } => {
            let (j, operands) = batched(jaxpr)?;
            bind_all(
                Primitive::Call(call::Op::Call {
                    jaxpr: j,
                    name: name.clone(),
                }),
                &refs(&operands),
            )?
        }
        Op::Remat {
            jaxpr,
            policy,
            prevent_cse,
        } => {
            let (j, operands) = batched(jaxpr)?;
            bind_all(
                Primitive::Call(call::Op::Remat {
                    jaxpr: j,
                    policy: policy.clone(),
                    prevent_cse: *prevent_cse,
                }),
                &refs(&operands),
            )?
        }
        Op::CustomJvpCall { jaxpr, rule } => {
            let rule = custom_jvp_rule(primitive, rule)?;
            let (j, operands) = batched(jaxpr)?;
            let new_consts = operands.len() - args.len();
            let arg_bdims: Vec<Option<usize>> = bdims[rule.num_consts..].to_vec();
            let user = rule.rule.clone();
            let axis = crate::transform::batching::rule_axis(axis_size);
            let batched_rule = move |p: &[Array], t: &[Tangent]| {
                // Symbolic zeros stay symbolic: only the tangents that are
                // values are mapped, and the rule's zero outputs recorded.
                let n = p.len();
                let mut xs = p.to_vec();
                xs.extend(t.iter().flatten().cloned());
                let mut axes = arg_bdims.clone();
                axes.extend(
                    arg_bdims
                        .iter()
                        .zip(t)
                        .filter(|(_, t)| t.is_some())
                        .map(|(b, _)| *b),
                );
                let zero_outputs: std::cell::RefCell<Vec<bool>> = Default::default();
                let outs = crate::transform::batching::vmap_flat(
                    |xs| {
                        let mut given = xs[n..].iter();
                        let tangents: Vec<Tangent> = t
                            .iter()
                            .map(|t| t.as_ref().and(given.next().cloned()))
                            .collect();
                        let (o, touts) = user(&xs[..n], &tangents)?;
                        *zero_outputs.borrow_mut() = touts.iter().map(Option::is_none).collect();
                        Ok(o.into_iter().chain(touts.into_iter().flatten()).collect())
                    },
                    &xs,
                    &axes,
                    axis.clone(),
                    &|_| Some(0),
                )?;
                let mut outs = outs
                    .into_iter()
                    .map(|r| r.map_err(|_| Error::Internal("unbatched".into())))
                    .collect::<Result<Vec<_>>>()?;
                let zero_outputs = zero_outputs.into_inner();
                let mut given = outs.split_off(zero_outputs.len()).into_iter();
                let touts = zero_outputs
                    .iter()
                    .map(|&zero| if zero { None } else { given.next() })
                    .collect();
                Ok((outs, touts))
            };
            let new_rule = CustomJvpRule {
                num_consts: new_consts + rule.num_consts,
                rule: Arc::new(batched_rule),
            };
            bind_all(
                Primitive::Call(call::Op::CustomJvpCall {
                    jaxpr: j,
                    rule: oxla_core::OpaqueRule::new("custom_jvp_batched", Arc::new(new_rule)),
                }),
                &refs(&operands),
            )?
        }
        Op::CustomVjpCall { jaxpr, rule } => {
            let rule = custom_vjp_rule(primitive, rule)?;
            let (j, operands) = batched(jaxpr)?;
            let new_consts = operands.len() - args.len();
            let arg_bdims = bdims[rule.num_consts..].to_vec();
            let batched_rule =
                batch_custom_vjp(&rule, arg_bdims, &args[rule.num_consts..], &j, axis_size)?;
            let batched_rule = CustomVjpRule {
                num_consts: new_consts + rule.num_consts,
                ..batched_rule
            };
            bind_all(
                Primitive::Call(call::Op::CustomVjpCall {
                    jaxpr: j,
                    rule: oxla_core::OpaqueRule::new("custom_vjp_batched", Arc::new(batched_rule)),
                }),
                &refs(&operands),
            )?
        }
        Op::CustomLin { .. } => {
            return Err(rule_error(
                "vmap",
                primitive,
                "the linear part of a custom_vjp function is only ever transposed, never batched",
            ));
        }
    };
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}
