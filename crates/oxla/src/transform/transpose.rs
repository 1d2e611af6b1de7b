//! Reverse mode's backward pass: transposes a linear jaxpr by walking its
//! equations in reverse and applying each primitive's transpose rule,
//! binding through the current trace (so it composes with jit and vmap).
//! Equations that do not touch a linear value (recomputation under
//! checkpoint) are evaluated forward first.

use oxla_core::VarMap;
use std::collections::HashMap;

use oxla_core::primitive::marker;
use oxla_core::{Atom, Aval, Jaxpr, Primitive, Var};

use super::support::{Tangent, add_tangents, bind_all, instantiate, location, refs};
use super::transpose_rules;
use crate::array::{Array, Inner};
use crate::error::{Error, Result};

/// An operand of a linear equation being transposed.
pub(crate) enum Operand {
    /// A linear value (only its type is known).
    Linear(Aval),
    /// A known value (a residual).
    Known(Array),
}

/// Cotangents of `jaxpr`'s invars (which are linear; its constvars are the
/// known `consts`) from cotangents of its outvars.
pub(crate) fn backward_pass(
    jaxpr: &Jaxpr,
    consts: &[Array],
    cts: &[Tangent],
) -> Result<Vec<Tangent>> {
    let n = jaxpr.avals.len();
    let mut linear = VarMap::with_capacity(n, false);
    for v in &jaxpr.invars {
        linear[v] = true;
    }
    let is_linear = |a: &Atom, linear: &VarMap<bool>| matches!(a, Atom::Var(v) if linear[v]);
    let mut known: HashMap<Var, Array> = HashMap::new();
    for (v, x) in jaxpr.constvars.iter().zip(consts) {
        known.insert(*v, x.clone());
    }
    let read_known = |a: &Atom, known: &HashMap<Var, Array>| -> Result<Array> {
        match a {
            Atom::Var(v) => known
                .get(v)
                .cloned()
                .ok_or_else(|| Error::Internal(format!("residual {} missing in transpose", v.0))),
            Atom::Literal(l) => Ok(Array::from_inner(Inner::Scalar {
                value: l.value,
                aval: l.aval.clone(),
            })),
        }
    };
    // Forward: evaluate what does not depend on linear inputs; mark the rest.
    let mut linear_eqns = Vec::new();
    for (i, eqn) in jaxpr.eqns.iter().enumerate() {
        if eqn.inputs.iter().any(|a| is_linear(a, &linear)) {
            for o in &eqn.outputs {
                linear[o] = true;
            }
            linear_eqns.push(i);
        } else {
            let inputs = eqn
                .inputs
                .iter()
                .map(|a| read_known(a, &known))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&Array> = inputs.iter().collect();
            let location = eqn.location.unwrap_or(super::eval::UNKNOWN_LOCATION);
            let outs = crate::ops::bind_at(eqn.primitive.clone(), &refs, location)?;
            for (v, x) in eqn.outputs.iter().zip(outs) {
                known.insert(*v, x);
            }
        }
    }
    // Backward: accumulate cotangents of linear variables.
    let mut ct_env: HashMap<Var, Array> = HashMap::new();
    let accumulate = |env: &mut HashMap<Var, Array>, v: Var, ct: Tangent| {
        if let Some(ct) = add_tangents(env.remove(&v), ct) {
            env.insert(v, ct);
        }
    };
    for (a, ct) in jaxpr.outvars.iter().zip(cts) {
        if let Atom::Var(v) = a
            && linear[v]
        {
            accumulate(&mut ct_env, *v, ct.clone());
        }
    }
    for &i in linear_eqns.iter().rev() {
        let eqn = &jaxpr.eqns[i];
        let out_cts: Vec<Tangent> = eqn.outputs.iter().map(|o| ct_env.remove(o)).collect();
        if out_cts.iter().all(Option::is_none) {
            continue;
        }
        let operands = eqn
            .inputs
            .iter()
            .map(|a| {
                if is_linear(a, &linear) {
                    Ok(Operand::Linear(jaxpr.atom_aval(a).clone()))
                } else {
                    read_known(a, &known).map(Operand::Known)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let out_avals: Vec<Aval> = eqn.outputs.iter().map(|o| jaxpr.aval(*o).clone()).collect();
        let location = eqn.location.unwrap_or(super::eval::UNKNOWN_LOCATION);
        let in_cts = crate::ops::with_rule_location(location, || {
            transpose_rules::transpose(&eqn.primitive, &out_cts, &operands, &out_avals)
        })?;
        for (a, ct) in eqn.inputs.iter().zip(in_cts) {
            if let Atom::Var(v) = a
                && linear[v]
            {
                accumulate(&mut ct_env, *v, ct);
            }
        }
    }
    Ok(jaxpr.invars.iter().map(|v| ct_env.remove(v)).collect())
}

/// A body with its known inputs turned into constvars (for the backward pass).
pub(crate) fn with_known_as_consts(body: &Jaxpr, linear: &[bool]) -> Jaxpr {
    let mut j = body.clone();
    j.constvars = body
        .invars
        .iter()
        .zip(linear)
        .filter(|(_, l)| !**l)
        .map(|(v, _)| *v)
        .collect();
    j.invars = body
        .invars
        .iter()
        .zip(linear)
        .filter(|(_, l)| **l)
        .map(|(v, _)| *v)
        .collect();
    j
}

/// The jaxpr of the transpose of `body` for `operands` (their kinds say
/// which inputs are linear): it takes the known operands (of
/// `known_avals`), then one cotangent per output, and returns the
/// cotangent of every linear operand (zeros built where there is none).
/// With `prevent_cse`, the known operands pass an optimization barrier
/// first (recomputation under checkpoint stays apart from the forward pass).
pub(crate) fn transpose_jaxpr(
    body: &Jaxpr,
    operands: &[Operand],
    known_avals: &[Aval],
    out_avals: &[Aval],
    prevent_cse: bool,
) -> Result<(Jaxpr, Vec<Array>)> {
    let linear: Vec<bool> = operands
        .iter()
        .map(|o| matches!(o, Operand::Linear(_)))
        .collect();
    let linear_avals: Vec<Aval> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Linear(a) => Some(a.clone()),
            Operand::Known(_) => None,
        })
        .collect();
    let body_t = with_known_as_consts(body, &linear);
    let mut in_avals = known_avals.to_vec();
    in_avals.extend(out_avals.iter().cloned());
    let n_known = known_avals.len();
    crate::transform::eval::trace_flat(&in_avals, true, location(), |args| {
        let (known_args, ct_args) = args.split_at(n_known);
        let known_args = if prevent_cse && !known_args.is_empty() {
            bind_all(
                Primitive::Marker(marker::Op::OptimizationBarrier),
                &refs(known_args),
            )?
        } else {
            known_args.to_vec()
        };
        let cts: Vec<Tangent> = ct_args.iter().cloned().map(Some).collect();
        let in_cts = crate::transform::transpose::backward_pass(&body_t, &known_args, &cts)?;
        Ok(in_cts
            .iter()
            .zip(&linear_avals)
            .map(|(c, a)| instantiate(c, a))
            .collect())
    })
}
