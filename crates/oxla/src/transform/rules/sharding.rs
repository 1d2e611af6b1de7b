//! The jvp, transpose and batching rules of the sharding family
//! (`oxla_core::primitive::sharding`).
//!
//! jvp, transpose and batching of `shard_map`: the rule is applied to the
//! per-device body, and the result is a `shard_map` again (JAX's
//! `_shard_map_jvp`, `_shard_map_transpose`, `_shard_map_batch`).
//!
//! - jvp: the body's jvp; tangents are cut as their primals are. When
//!   linearizing, partial evaluation splits it into a primal `shard_map`
//!   and a tangent `shard_map` that recomputes what it needs from the
//!   primal inputs (nothing intermediate is saved, so every residual is an
//!   input, passed with the input's spec).
//! - transpose: the body's transpose, taking the known inputs and the
//!   output cotangents (cut as the outputs were) and returning the linear
//!   inputs' cotangents (put together as the inputs were cut). As in JAX's
//!   shard_map without replication types: a result's cotangent is divided
//!   by the number of copies its out spec leaves (the mesh axes it does
//!   not name), and an operand's cotangent is summed over the mesh axes its
//!   in spec does not name (each copy contributed to it).
//! - vmap: the batch dimension goes in front of every batched operand and
//!   of every result, unsplit, or, under a vmap with `spmd_axis_name`,
//!   split over those mesh axes: the body then maps over each device's
//!   share of the examples, and (checking varying axes) its batched
//!   values vary over those axes.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::{Error, Result};
use crate::sharding::shard_map::with_consts_as_inputs;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{Batched, done, operand};
use crate::transform::jvp::JvpContext;
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{finish, single};
use crate::transform::support;
use crate::transform::support::{
    Tangent, bind_all, instantiate, location, move_axis, refs, rule_error,
};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::for_linear;
use oxla_core::partial_eval::partial_eval;
use oxla_core::primitive::sharding::Op;
use oxla_core::primitive::sharding::ShardMapParams;
use oxla_core::primitive::{collective, sharding};
use oxla_core::{Atom, Jaxpr, Primitive, ShardingDesc, SubJaxpr};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ctx,
    } = *input;
    let result = match op {
        Op::ShardMap(params) => return shard_map_jvp(params, primals, tangents, ctx),
        // Linear: the tangent is laid out (or varies) as the value does.
        Op::ShardingConstraint { .. } | Op::Reshard { .. } => {
            let out = support::bind_one(primitive, &refs(primals))?;
            let tangent = match tangents.first().cloned().flatten() {
                Some(t) => Some(support::bind_one(primitive, &[&t])?),
                None => None,
            };
            single(out, tangent)
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
        ct,
        ..
    } = *input;
    match op {
        // The cotangent is laid out as the value was (as JAX transposes it).
        Op::ShardingConstraint { .. } => for_linear(operands, |_, _| {
            Ok(Some(crate::ops::bind(primitive.clone(), &[ct])))
        }),
        Op::ShardMap(params) => shard_map_transpose(params, cts, operands, out_avals),
        // The cotangent goes back to the operand's sharding (JAX's rule).
        Op::Reshard { .. } => for_linear(operands, |_, aval| {
            let back = Primitive::Sharding(Op::Reshard {
                sharding: aval.sharding.clone(),
            });
            Ok(Some(crate::ops::bind(back, &[ct])))
        }),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        args,
        bdims,
        axis_size: size,
        ..
    } = *input;
    match op {
        Op::ShardingConstraint { sharding } => sharding_constraint(sharding, args, bdims, size),
        Op::ShardMap(params) => shard_map_batch(params, args, bdims, size),
        Op::Reshard { sharding } => reshard(sharding.as_ref(), args, bdims, size),
    }
}

/// A reshard of a batched operand: the batch dimension is split over the
/// vmap's `spmd_axis_name` axes, or, without one, stays split as the
/// operand's is (JAX's rule).
fn reshard(
    sharding: Option<&oxla_core::ShardingDesc>,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (x, b) = operand(&args[0], bdims[0], size);
    let batch_axes = match crate::transform::batching::rule_axis(size).spmd_axis_name {
        Some(axes) => axes,
        None => x.aval()?.dim_axes().get(b).cloned().unwrap_or_default(),
    };
    let batched = Primitive::Sharding(Op::Reshard {
        sharding: sharding.map(|s| s.with_dim_inserted(b, batch_axes)),
    });
    done(vec![support::bind_one(&batched, &[&x])?], vec![Some(b)])
}

/// A sharding constraint on a batched operand: the batch dimension is
/// split over the vmap's `spmd_axis_name` mesh axes, or not at all (JAX
/// inserts `None` for it too).
fn sharding_constraint(
    sharding: &oxla_core::ShardingDesc,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (x, b) = operand(&args[0], bdims[0], size);
    let spmd_axes = crate::transform::batching::rule_axis(size)
        .spmd_axis_name
        .unwrap_or_else(|| std::sync::Arc::from(Vec::new()));
    if let Some(missing) = spmd_axes
        .iter()
        .find(|a| sharding.mesh.axis_size(a).is_none())
    {
        return Err(rule_error(
            "vmap",
            &Primitive::Sharding(sharding::Op::ShardingConstraint {
                sharding: sharding.clone(),
            }),
            format!(
                "spmd_axis_name names '{missing}', which {} lacks",
                sharding.mesh
            ),
        ));
    }
    let batched = Primitive::Sharding(sharding::Op::ShardingConstraint {
        sharding: sharding.with_dim_inserted(b, spmd_axes),
    });
    done(vec![support::bind_one(&batched, &[&x])?], vec![Some(b)])
}

/// A sharding replicated over the mesh of a `shard_map` (the layout of
/// the constants and residuals it gets as extra operands).
fn replicated(p: &ShardMapParams) -> Result<ShardingDesc> {
    let mesh = p
        .in_shardings
        .first()
        .or(p.out_shardings.first())
        .map(|s| s.mesh.clone())
        .ok_or_else(|| Error::Internal("a shard_map without a mesh".into()))?;
    Ok(ShardingDesc::replicated(mesh))
}

fn bind(
    body: Jaxpr,
    in_shardings: Vec<ShardingDesc>,
    out_shardings: Vec<ShardingDesc>,
    check_vma: bool,
    operands: &[Array],
) -> Result<Vec<Array>> {
    let refs: Vec<&Array> = operands.iter().collect();
    bind_all(
        Primitive::Sharding(sharding::Op::ShardMap(sharding::ShardMapParams {
            jaxpr: SubJaxpr::new(body),
            in_shardings,
            out_shardings,
            check_vma,
        })),
        &refs,
    )
}

/// A sharding with an unsplit dimension in front.
fn with_leading_dim(s: &ShardingDesc) -> ShardingDesc {
    s.with_dim_inserted(0, std::sync::Arc::from([]))
}

/// Primal outputs and output tangents of a `shard_map`.
pub(crate) fn shard_map_jvp(
    p: &ShardMapParams,
    primals: &[Array],
    tangents: &[Tangent],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let n_out = p.jaxpr.jaxpr().outvars.len();
    if tangents.iter().all(Option::is_none) {
        let outs = bind(
            p.jaxpr.jaxpr().clone(),
            p.in_shardings.to_vec(),
            p.out_shardings.to_vec(),
            p.check_vma,
            primals,
        )?;
        return Ok((outs, vec![None; n_out]));
    }
    let nonzeros: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    let (jj, consts, out_nonzeros) =
        crate::transform::jvp::jvp_jaxpr(p.jaxpr.jaxpr(), &nonzeros, &[], location())?;
    let jj = with_consts_as_inputs(jj);
    let replicated = replicated(p)?;
    let mut known_ins: Vec<ShardingDesc> = vec![replicated.clone(); consts.len()];
    known_ins.extend(p.in_shardings.iter().cloned());
    let tangent_ins: Vec<ShardingDesc> = p
        .in_shardings
        .iter()
        .zip(&nonzeros)
        .filter(|(_, nz)| **nz)
        .map(|(s, _)| s.clone())
        .collect();
    let tangent_outs: Vec<ShardingDesc> = p
        .out_shardings
        .iter()
        .zip(&out_nonzeros)
        .filter(|(_, nz)| **nz)
        .map(|(s, _)| s.clone())
        .collect();
    let nonzero_tangents: Vec<Array> = tangents.iter().flatten().cloned().collect();
    let mut operands: Vec<Array> = consts;
    operands.extend_from_slice(primals);
    let (primal_outs, tangent_values) = match ctx.tangent_trace {
        None => {
            operands.extend(nonzero_tangents);
            let mut ins = known_ins;
            ins.extend(tangent_ins);
            let mut outs_specs = p.out_shardings.to_vec();
            outs_specs.extend(tangent_outs);
            let mut outs = bind(jj, ins, outs_specs, p.check_vma, &operands)?;
            let touts = outs.split_off(n_out);
            (outs, touts)
        }
        Some(_) => {
            let known_count = operands.len();
            let in_unknowns: Vec<bool> = (0..known_count + nonzero_tangents.len())
                .map(|i| i >= known_count)
                .collect();
            let force: Vec<bool> = (0..jj.outvars.len()).map(|i| i >= n_out).collect();
            let split = partial_eval(&jj, &in_unknowns, &force, &|_| false);
            let residual_specs = split.known.outvars
                [split.known.outvars.len() - split.num_residuals..]
                .iter()
                .map(|atom| match atom {
                    Atom::Var(v) => split
                        .known
                        .invars
                        .iter()
                        .position(|i| i == v)
                        .map(|k| known_ins[k].clone())
                        .ok_or_else(|| {
                            Error::Internal("a shard_map residual that is not an input".into())
                        }),
                    Atom::Literal(_) => Ok(replicated.clone()),
                })
                .collect::<Result<Vec<_>>>()?;
            let mut known_outs = p.out_shardings.to_vec();
            known_outs.extend(residual_specs.iter().cloned());
            let mut known = bind(split.known, known_ins, known_outs, p.check_vma, &operands)?;
            let residuals = known.split_off(known.len() - split.num_residuals);
            let mut unknown_ins = residual_specs;
            unknown_ins.extend(tangent_ins);
            let mut unknown_operands = residuals;
            unknown_operands.extend(nonzero_tangents);
            let touts = bind(
                split.unknown,
                unknown_ins,
                tangent_outs,
                p.check_vma,
                &unknown_operands,
            )?;
            (known, touts)
        }
    };
    let mut touts = tangent_values.into_iter();
    let tangents = out_nonzeros
        .iter()
        .map(|nz| if *nz { touts.next() } else { None })
        .collect();
    Ok((primal_outs, tangents))
}

/// Cotangents of a `shard_map`'s linear operands.
pub(crate) fn shard_map_transpose(
    p: &ShardMapParams,
    cts: &[Tangent],
    operands: &[Operand],
    out_avals: &[oxla_core::Aval],
) -> Result<Vec<Tangent>> {
    let block_operands: Vec<Operand> = operands
        .iter()
        .zip(&p.jaxpr.jaxpr().invars)
        .map(|(o, v)| match o {
            Operand::Linear(_) => Operand::Linear(p.jaxpr.jaxpr().aval(*v).clone()),
            Operand::Known(x) => Operand::Known(x.clone()),
        })
        .collect();
    let known: Vec<(Array, ShardingDesc, oxla_core::Aval)> = operands
        .iter()
        .zip(&p.in_shardings)
        .zip(&p.jaxpr.jaxpr().invars)
        .filter_map(|((o, s), v)| match o {
            Operand::Known(x) => Some((x.clone(), s.clone(), p.jaxpr.jaxpr().aval(*v).clone())),
            Operand::Linear(_) => None,
        })
        .collect();
    let known_block_avals: Vec<oxla_core::Aval> = known.iter().map(|(_, _, a)| a.clone()).collect();
    let out_block_avals: Vec<oxla_core::Aval> = p
        .jaxpr
        .jaxpr()
        .outvars
        .iter()
        .map(|o| p.jaxpr.jaxpr().atom_aval(o).clone())
        .collect();
    let (t, consts) = crate::transform::transpose::transpose_jaxpr(
        p.jaxpr.jaxpr(),
        &block_operands,
        &known_block_avals,
        &out_block_avals,
        false,
    )?;
    let linear_specs: Vec<&ShardingDesc> = operands
        .iter()
        .zip(&p.in_shardings)
        .filter(|(o, _)| matches!(o, Operand::Linear(_)))
        .map(|(_, s)| s)
        .collect();
    // With varying axes the body's own transpose sums what was replicated
    // (each pvary transposes to a psum); without, the copies are summed
    // (and result cotangents divided) here, as JAX's check_vma=False.
    let t = if p.check_vma {
        with_consts_as_inputs(t)
    } else {
        sum_over_copies(with_consts_as_inputs(t), &linear_specs)?
    };
    let mut ins: Vec<ShardingDesc> = vec![replicated(p)?; consts.len()];
    ins.extend(known.iter().map(|(_, s, _)| s.clone()));
    ins.extend(p.out_shardings.iter().cloned());
    let outs: Vec<ShardingDesc> = operands
        .iter()
        .zip(&p.in_shardings)
        .filter(|(o, _)| matches!(o, Operand::Linear(_)))
        .map(|(_, s)| s.clone())
        .collect();
    let mut call_operands = consts;
    call_operands.extend(known.into_iter().map(|(x, _, _)| x));
    call_operands.extend(
        cts.iter()
            .zip(out_avals)
            .zip(&p.out_shardings)
            .map(|((c, a), s)| {
                let ct = instantiate(c, a);
                match copies(s) {
                    _ if p.check_vma => ct,
                    1 => ct,
                    n => ct / n as f64,
                }
            }),
    );
    let mut in_cts = bind(t, ins, outs, p.check_vma, &call_operands)?.into_iter();
    Ok(operands
        .iter()
        .map(|o| match o {
            Operand::Linear(_) => in_cts.next(),
            Operand::Known(_) => None,
        })
        .collect())
}

/// The mesh axes a sharding does not name (its value is copied along them).
fn unnamed_axes(s: &ShardingDesc) -> Vec<std::sync::Arc<str>> {
    s.mesh
        .axes
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !s.dims.iter().any(|axes| axes.contains(n)))
        .collect()
}

/// How many copies of each block a sharding leaves.
fn copies(s: &ShardingDesc) -> usize {
    unnamed_axes(s)
        .iter()
        .map(|a| s.mesh.axis_size(a).unwrap_or(1))
        .product()
}

/// `t` (cotangents of the linear operands as its results) with each
/// result summed over the mesh axes its operand's spec does not name.
fn sum_over_copies(t: Jaxpr, specs: &[&ShardingDesc]) -> Result<Jaxpr> {
    if specs.iter().all(|s| unnamed_axes(s).is_empty()) {
        return Ok(t);
    }
    let avals: Vec<oxla_core::Aval> = t.invars.iter().map(|v| t.aval(*v).clone()).collect();
    let (summed, consts) = crate::transform::eval::trace_flat(&avals, true, location(), |args| {
        let outs = crate::transform::eval::eval_jaxpr(&t, &[], args)?;
        outs.iter()
            .zip(specs)
            .map(|(ct, s)| {
                let axes = unnamed_axes(s);
                if axes.is_empty() {
                    return Ok(ct.clone());
                }
                let group = oxla_core::AxisGroup::devices(s.mesh.clone(), axes.into());
                let sum = Primitive::Collective(collective::Op::AllReduce {
                    op: oxla_core::ReduceOp::Sum,
                    group,
                });
                Ok(bind_all(sum, &[ct])?.remove(0))
            })
            .collect()
    })?;
    if !consts.is_empty() {
        return Err(Error::Internal(
            "summing shard_map cotangents captured values".into(),
        ));
    }
    Ok(summed)
}

/// A `shard_map` of batched operands: every result batched at 0.
pub(crate) fn shard_map_batch(
    p: &ShardMapParams,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let axis = crate::transform::batching::rule_axis(axis_size);
    if let Some(spmd) = axis.spmd_axis_name.clone().filter(|a| !a.is_empty()) {
        return batch_over_mesh_axes(p, args, bdims, axis, &spmd);
    }
    let (moved, body_bdims) = batch_in_front(args, bdims);
    let (batched, consts) = crate::transform::batching::batch_jaxpr(
        p.jaxpr.jaxpr(),
        &body_bdims,
        axis_size,
        location(),
    )?;
    bind_batched(p, batched, consts, moved, bdims, &with_leading_dim)
}

/// The operands with their batch dimensions in front, and the body's
/// batch dims (0 for each batched operand).
fn batch_in_front(args: &[Array], bdims: &[Option<usize>]) -> (Vec<Array>, Vec<Option<usize>>) {
    let moved = args
        .iter()
        .zip(bdims)
        .map(|(x, b)| match b {
            Some(b) => move_axis(x, *b, 0),
            None => x.clone(),
        })
        .collect();
    (moved, bdims.iter().map(|b| b.map(|_| 0)).collect())
}

/// The `shard_map` of the batched body on the moved operands (after the
/// batched body's captured values): batched operands and every result
/// laid out as `batched_spec` makes their spec.
fn bind_batched(
    p: &ShardMapParams,
    batched: Jaxpr,
    consts: Vec<Array>,
    moved: Vec<Array>,
    bdims: &[Option<usize>],
    batched_spec: &dyn Fn(&ShardingDesc) -> ShardingDesc,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let batched = with_consts_as_inputs(batched);
    let mut ins: Vec<ShardingDesc> = vec![replicated(p)?; consts.len()];
    ins.extend(p.in_shardings.iter().zip(bdims).map(|(s, b)| match b {
        Some(_) => batched_spec(s),
        None => s.clone(),
    }));
    let outs: Vec<ShardingDesc> = p.out_shardings.iter().map(batched_spec).collect();
    let mut operands = consts;
    operands.extend(moved);
    let results = bind(batched, ins, outs, p.check_vma, &operands)?;
    let n = results.len();
    Ok((results, vec![Some(0); n]))
}

/// [`batch`] under a vmap whose batch dimension is split over the mesh
/// axes `spmd` (JAX's `spmd_axis_name`): each device's body maps over its
/// share of the examples.
fn batch_over_mesh_axes(
    p: &ShardMapParams,
    args: &[Array],
    bdims: &[Option<usize>],
    axis: crate::trace::BatchAxis,
    spmd: &std::sync::Arc<[std::sync::Arc<str>]>,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let mesh = replicated(p)?.mesh;
    let fail = |message: String| Error::Sharding {
        message,
        location: Some(location()),
    };
    let mut devices: i64 = 1;
    for name in spmd.iter() {
        let size = mesh.axis_size(name).ok_or_else(|| {
            fail(format!(
                "vmap spmd_axis_name names '{name}', which {mesh} lacks"
            ))
        })?;
        devices *= size as i64;
    }
    let used = p
        .in_shardings
        .iter()
        .chain(&p.out_shardings)
        .flat_map(|s| s.dims.iter().flat_map(|d| d.iter()));
    if let Some(name) = used.into_iter().find(|a| spmd.contains(a)) {
        return Err(fail(format!(
            "vmap spmd_axis_name '{name}' cannot appear in shard_map in_specs or out_specs (as in \
             JAX)"
        )));
    }
    if axis.size % devices != 0 {
        return Err(fail(format!(
            "the vmap's {} examples do not split evenly over the {devices} devices of its \
             spmd_axis_name",
            axis.size
        )));
    }
    if let Some(name) = &axis.name
        && uses_vmap_axis(p.jaxpr.jaxpr(), name)
    {
        return Err(fail(format!(
            "a collective over the vmap axis '{name}' inside a shard_map batched with \
             spmd_axis_name: each device sees only its share of the examples; name the mesh axes \
             too, or drop spmd_axis_name"
        )));
    }
    let local = crate::trace::BatchAxis {
        size: axis.size / devices,
        ..axis
    };
    let (moved, body_bdims) = batch_in_front(args, bdims);
    let vary = |aval: &oxla_core::Aval| aval.with_vma(aval.vma.iter().chain(spmd.iter()).cloned());
    let in_avals: Vec<oxla_core::Aval> =
        crate::transform::batching::batched_invar_avals(p.jaxpr.jaxpr(), &body_bdims, local.size)
            .into_iter()
            .zip(&body_bdims)
            .map(|(aval, b)| match (b, p.check_vma) {
                (Some(_), true) => vary(&aval),
                _ => aval,
            })
            .collect();
    let group = oxla_core::AxisGroup::devices(mesh.clone(), spmd.clone());
    let check_vma = p.check_vma;
    let finish = |outs: Vec<Array>| -> Result<Vec<Array>> {
        if !check_vma {
            return Ok(outs);
        }
        outs.into_iter()
            .map(|y| {
                let missing: Vec<std::sync::Arc<str>> = spmd
                    .iter()
                    .filter(|a| !y.aval().is_ok_and(|v| v.vma.contains(a)))
                    .cloned()
                    .collect();
                if missing.is_empty() {
                    return Ok(y);
                }
                let group = oxla_core::AxisGroup {
                    axes: missing.into(),
                    ..group.clone()
                };
                Ok(bind_all(
                    Primitive::Collective(collective::Op::Pvary { group }),
                    &[&y],
                )?
                .remove(0))
            })
            .collect()
    };
    let scope = crate::sharding::axis_env::bind_mesh(mesh, check_vma);
    let batched = crate::transform::batching::batch_jaxpr_typed(
        p.jaxpr.jaxpr(),
        in_avals,
        &body_bdims,
        local,
        location(),
        finish,
    );
    drop(scope);
    let (batched, consts) = batched?;
    let split = |s: &ShardingDesc| s.with_dim_inserted(0, spmd.clone());
    bind_batched(p, batched, consts, moved, bdims, &split)
}

/// Whether `jaxpr` (or a jaxpr it nests) has a collective over the vmap
/// axis `name`.
fn uses_vmap_axis(jaxpr: &Jaxpr, name: &str) -> bool {
    jaxpr.eqns.iter().any(|eqn| {
        eqn.primitive
            .nested_jaxprs()
            .iter()
            .any(|inner| uses_vmap_axis(inner.jaxpr(), name))
            || eqn
                .primitive
                .axis_group()
                .and_then(oxla_core::AxisGroup::vmap_axis)
                .is_some_and(|axis| &**axis == name)
    })
}
