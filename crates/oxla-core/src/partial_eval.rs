//! Partial evaluation of jaxprs: splitting a jaxpr whose inputs are partly
//! known into a known part (run now) and an unknown part (run later, on
//! residuals the known part saves), with a policy that may recompute known
//! values in the unknown part instead of saving them (rematerialization).
//! Also dead-code elimination.

use crate::aval::Aval;
use crate::jaxpr::{Atom, Equation, Jaxpr, Literal, Scalar, Var};
use crate::primitive::Primitive;
use crate::primitive::{call, control, shape};
use crate::subjaxpr::SubJaxpr;
use crate::varmap::VarMap;

/// The two halves of a partially evaluated jaxpr.
#[derive(Debug, Clone)]
pub struct Split {
    /// Known inputs → known outputs, then the residuals.
    pub known: Jaxpr,
    /// Residuals, then unknown inputs → unknown outputs.
    pub unknown: Jaxpr,
    /// Which outputs of the original jaxpr the unknown half computes.
    pub out_unknowns: Vec<bool>,
    /// How many residuals pass from the known half to the unknown one.
    pub num_residuals: usize,
}

/// Splits `jaxpr` (without constvars) whose inputs are unknown where
/// `in_unknowns` says. An equation is unknown if any of its inputs is.
/// Outputs in `force_out_unknown` come out of the unknown half even when
/// known. A known equation whose results the unknown half needs is saved
/// as a residual if `saveable` says so, and otherwise recomputed in the
/// unknown half (from residuals further up).
pub fn partial_eval(
    jaxpr: &Jaxpr,
    in_unknowns: &[bool],
    force_out_unknown: &[bool],
    saveable: &dyn Fn(&Equation) -> bool,
) -> Split {
    assert!(
        jaxpr.constvars.is_empty(),
        "partial_eval takes closed jaxprs"
    );
    let (jaxpr, unknown, eqn_unknown) = split_mixed_calls(jaxpr, in_unknowns, saveable);
    let jaxpr = &jaxpr;
    let n = jaxpr.avals.len();
    let is_unknown = |a: &Atom, unknown: &VarMap<bool>| match a {
        Atom::Var(v) => unknown[v],
        Atom::Literal(_) => false,
    };
    let out_unknowns: Vec<bool> = jaxpr
        .outvars
        .iter()
        .enumerate()
        .map(|(i, a)| is_unknown(a, &unknown) || force_out_unknown.get(i).copied().unwrap_or(false))
        .collect();

    // Known values the unknown half needs, and known equations it recomputes.
    let mut needed = VarMap::with_capacity(n, false);
    let need = |a: &Atom, needed: &mut VarMap<bool>, unknown: &VarMap<bool>| {
        if let Atom::Var(v) = a
            && !unknown[v]
        {
            needed[v] = true;
        }
    };
    for (e, &u) in jaxpr.eqns.iter().zip(&eqn_unknown) {
        if u {
            for a in &e.inputs {
                need(a, &mut needed, &unknown);
            }
        }
    }
    for (a, &u) in jaxpr.outvars.iter().zip(&out_unknowns) {
        if u {
            need(a, &mut needed, &unknown);
        }
    }
    let mut recompute = vec![false; jaxpr.eqns.len()];
    let mut produced_by_recompute = VarMap::with_capacity(n, false);
    for (i, e) in jaxpr.eqns.iter().enumerate().rev() {
        if eqn_unknown[i] || !e.outputs.iter().any(|o| needed[o]) || saveable(e) {
            continue;
        }
        recompute[i] = true;
        for o in &e.outputs {
            produced_by_recompute[o] = true;
        }
        for a in &e.inputs {
            need(a, &mut needed, &unknown);
        }
    }
    let residuals: Vec<Var> = (0..n as u32)
        .map(Var)
        .filter(|&v| needed[v] && !produced_by_recompute[v])
        .collect();

    let known_invars: Vec<Var> = jaxpr
        .invars
        .iter()
        .zip(in_unknowns)
        .filter(|(_, u)| !**u)
        .map(|(v, _)| *v)
        .collect();
    let unknown_invars: Vec<Var> = jaxpr
        .invars
        .iter()
        .zip(in_unknowns)
        .filter(|(_, u)| **u)
        .map(|(v, _)| *v)
        .collect();
    let mut known = Jaxpr {
        avals: jaxpr.avals.clone(),
        constvars: Vec::new(),
        invars: known_invars,
        eqns: jaxpr
            .eqns
            .iter()
            .zip(&eqn_unknown)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| e.clone())
            .collect(),
        outvars: jaxpr
            .outvars
            .iter()
            .zip(&out_unknowns)
            .filter(|(_, u)| !**u)
            .map(|(a, _)| a.clone())
            .chain(residuals.iter().map(|v| Atom::Var(*v)))
            .collect(),
    };
    let mut staged = Jaxpr {
        avals: jaxpr.avals.clone(),
        constvars: Vec::new(),
        invars: residuals.iter().copied().chain(unknown_invars).collect(),
        eqns: jaxpr
            .eqns
            .iter()
            .enumerate()
            .filter(|(i, _)| eqn_unknown[*i] || recompute[*i])
            .map(|(_, e)| e.clone())
            .collect(),
        outvars: jaxpr
            .outvars
            .iter()
            .zip(&out_unknowns)
            .filter(|(_, u)| **u)
            .map(|(a, _)| a.clone())
            .collect(),
    };
    dce(&mut known);
    dce(&mut staged);
    Split {
        known,
        unknown: staged,
        out_unknowns,
        num_residuals: residuals.len(),
    }
}

/// Which variables of `jaxpr` are unknown, and which equations, after
/// splitting every call-like equation (`pjit`, `checkpoint`) whose inputs
/// are partly known into a known call (giving its known outputs and the
/// residuals) and an unknown call, recursively, so known work inside a
/// call still runs in the known half. Returns the rewritten jaxpr.
fn split_mixed_calls(
    jaxpr: &Jaxpr,
    in_unknowns: &[bool],
    saveable: &dyn Fn(&Equation) -> bool,
) -> (Jaxpr, VarMap<bool>, Vec<bool>) {
    let mut out = Jaxpr {
        avals: jaxpr.avals.clone(),
        constvars: Vec::new(),
        invars: jaxpr.invars.clone(),
        eqns: Vec::with_capacity(jaxpr.eqns.len()),
        outvars: jaxpr.outvars.clone(),
    };
    let mut unknown = VarMap::with_capacity(jaxpr.avals.len(), false);
    for (v, &u) in jaxpr.invars.iter().zip(in_unknowns) {
        unknown[v] = u;
    }
    let mut eqn_unknown = Vec::with_capacity(jaxpr.eqns.len());
    for e in &jaxpr.eqns {
        let ins: Vec<bool> = e
            .inputs
            .iter()
            .map(|a| matches!(a, Atom::Var(v) if unknown[v]))
            .collect();
        let any = ins.iter().any(|u| *u);
        let all = ins.iter().all(|u| *u);
        if any
            && !all
            && let Some((known, staged)) = split_call(e, &ins, &mut out.avals, saveable)
        {
            for o in &staged.outputs {
                unknown[o] = true;
            }
            out.eqns.push(known);
            eqn_unknown.push(false);
            out.eqns.push(staged);
            eqn_unknown.push(true);
            continue;
        }
        for o in &e.outputs {
            unknown[o] = any;
        }
        out.eqns.push(e.clone());
        eqn_unknown.push(any);
    }
    (out, unknown, eqn_unknown)
}

/// A new variable of `aval`.
fn fresh(avals: &mut Vec<Aval>, aval: Aval) -> Var {
    avals.push(aval);
    Var(avals.len() as u32 - 1)
}

/// Zeros of `aval` as an atom of `jaxpr` (a literal for a scalar, else a
/// broadcast of one appended to its equations).
fn zeros_atom(jaxpr: &mut Jaxpr, aval: &Aval) -> Atom {
    let value = match aval.dtype {
        crate::dtype::DType::Bool => Scalar::Bool(false),
        d if d.is_float() => Scalar::Float(0.0),
        d if d.is_unsigned_int() => Scalar::UInt(0),
        _ => Scalar::Int(0),
    };
    let literal = Atom::Literal(Literal {
        value,
        aval: Aval::new(aval.dtype, &[]),
    });
    if aval.shape.is_empty() {
        return literal;
    }
    let v = fresh(&mut jaxpr.avals, aval.clone());
    jaxpr.eqns.push(Equation {
        primitive: Primitive::Shape(shape::Op::BroadcastInDim {
            shape: aval.shape.clone(),
            broadcast_dimensions: Default::default(),
        }),
        inputs: vec![literal],
        outputs: vec![v],
        location: None,
    });
    Atom::Var(v)
}

/// Picks the items where `mask` is `want`.
fn pick<T: Clone>(items: &[T], mask: &[bool], want: bool) -> Vec<T> {
    items
        .iter()
        .zip(mask)
        .filter(|(_, m)| **m == want)
        .map(|(x, _)| x.clone())
        .collect()
}

/// A `cond` with partly unknown operands (a known index) as a known cond
/// (its known outputs, and every branch's residuals, zeros for the other
/// branches') and an unknown cond taking all residuals.
fn split_cond(
    e: &Equation,
    branches: &[SubJaxpr],
    in_unknowns: &[bool],
    avals: &mut Vec<Aval>,
    saveable: &dyn Fn(&Equation) -> bool,
) -> Option<(Equation, Equation)> {
    let (index_unknown, ops_unknown) = in_unknowns.split_first()?;
    if *index_unknown {
        return None;
    }
    let n_out = e.outputs.len();
    let mut out_unknowns = vec![false; n_out];
    for b in branches {
        let s = partial_eval(b.jaxpr(), ops_unknown, &[], saveable);
        for (u, o) in out_unknowns.iter_mut().zip(&s.out_unknowns) {
            *u |= *o;
        }
    }
    let splits: Vec<Split> = branches
        .iter()
        .map(|b| partial_eval(b.jaxpr(), ops_unknown, &out_unknowns, saveable))
        .collect();
    let res_avals: Vec<Vec<Aval>> = splits
        .iter()
        .map(|s| {
            let k = &s.known;
            k.outvars[k.outvars.len() - s.num_residuals..]
                .iter()
                .map(|a| k.atom_aval(a).clone())
                .collect()
        })
        .collect();
    let mut known_branches = Vec::new();
    let mut unknown_branches = Vec::new();
    for (i, s) in splits.into_iter().enumerate() {
        let mut known = s.known;
        let n_known_out = known.outvars.len() - s.num_residuals;
        let own: Vec<Atom> = known.outvars[n_known_out..].to_vec();
        known.outvars.truncate(n_known_out);
        let mut unknown = s.unknown;
        let own_invars: Vec<Var> = unknown.invars[..s.num_residuals].to_vec();
        let rest: Vec<Var> = unknown.invars[s.num_residuals..].to_vec();
        let mut res_invars = Vec::new();
        for (j, res) in res_avals.iter().enumerate() {
            if j == i {
                known.outvars.extend(own.iter().cloned());
                res_invars.extend(own_invars.iter().copied());
            } else {
                for aval in res {
                    let zero = zeros_atom(&mut known, aval);
                    known.outvars.push(zero);
                    res_invars.push(fresh(&mut unknown.avals, aval.clone()));
                }
            }
        }
        res_invars.extend(rest);
        unknown.invars = res_invars;
        known_branches.push(SubJaxpr::new(known));
        unknown_branches.push(SubJaxpr::new(unknown));
    }
    let residuals: Vec<Var> = res_avals
        .iter()
        .flatten()
        .map(|a| fresh(avals, a.clone()))
        .collect();
    let ops = &e.inputs[1..];
    let mut known_inputs = vec![e.inputs[0].clone()];
    known_inputs.extend(pick(ops, ops_unknown, false));
    let known = Equation {
        primitive: Primitive::Control(control::Op::Cond {
            branches: known_branches,
        }),
        inputs: known_inputs,
        outputs: pick(&e.outputs, &out_unknowns, false)
            .into_iter()
            .chain(residuals.iter().copied())
            .collect(),
        location: e.location,
    };
    let mut unknown_inputs = vec![e.inputs[0].clone()];
    unknown_inputs.extend(residuals.iter().map(|v| Atom::Var(*v)));
    unknown_inputs.extend(pick(ops, ops_unknown, true));
    let unknown = Equation {
        primitive: Primitive::Control(control::Op::Cond {
            branches: unknown_branches,
        }),
        inputs: unknown_inputs,
        outputs: pick(&e.outputs, &out_unknowns, true),
        location: e.location,
    };
    Some((known, unknown))
}

/// A scan's parameters, for splitting it.
struct ScanParts<'a> {
    body: &'a Jaxpr,
    num_consts: usize,
    num_carry: usize,
    length: i64,
    reverse: bool,
    unroll: i64,
}

// Long by design: JAX's _scan_partial_eval in one piece (the fixed point
// over carries, then the known and unknown scans that share its masks).
/// A `scan` with partly unknown operands as a known scan (its known
/// outputs, and the residuals the unknown part needs, stacked per
/// iteration) and an unknown scan. Which carries are unknown is found by
/// fixed point; residuals that are known consts or known xs of the scan are
/// passed to the unknown scan directly instead of being stacked.
fn split_scan(
    e: &Equation,
    p: &ScanParts<'_>,
    in_unknowns: &[bool],
    avals: &mut Vec<Aval>,
    saveable: &dyn Fn(&Equation) -> bool,
) -> Option<(Equation, Equation)> {
    let (nc, nk) = (p.num_consts, p.num_carry);
    let n_y = p.body.outvars.len() - nk;
    let mut carry_uk = in_unknowns[nc..nc + nk].to_vec();
    let mask = |carry_uk: &[bool]| -> Vec<bool> {
        in_unknowns[..nc]
            .iter()
            .chain(carry_uk)
            .chain(&in_unknowns[nc + nk..])
            .copied()
            .collect()
    };
    loop {
        let s = partial_eval(p.body, &mask(&carry_uk), &[], saveable);
        let next: Vec<bool> = carry_uk
            .iter()
            .zip(&s.out_unknowns)
            .map(|(a, b)| *a || *b)
            .collect();
        if next == carry_uk {
            break;
        }
        carry_uk = next;
    }
    let uk = mask(&carry_uk);
    let mut force = carry_uk.clone();
    force.extend(std::iter::repeat_n(false, n_y));
    let s = partial_eval(p.body, &uk, &force, saveable);
    let n_known_out = s.known.outvars.len() - s.num_residuals;
    let res_atoms: Vec<Atom> = s.known.outvars[n_known_out..].to_vec();
    // Where each residual comes from: a known const or x of the scan (its
    // position in the body's invars), or computed per iteration.
    let source: Vec<Option<usize>> = res_atoms
        .iter()
        .map(|a| match a {
            Atom::Var(v) => p
                .body
                .invars
                .iter()
                .position(|w| w == v)
                .filter(|&i| !uk[i] && (i < nc || i >= nc + nk)),
            Atom::Literal(_) => None,
        })
        .collect();
    let mut known = s.known;
    known.outvars.truncate(n_known_out);
    let mut stacked = Vec::new();
    for (a, src) in res_atoms.iter().zip(&source) {
        if src.is_none() {
            known.outvars.push(a.clone());
            let aval = known.atom_aval(a);
            let mut shape = vec![p.length];
            shape.extend_from_slice(&aval.shape);
            let stacked_aval = aval.with_shape(&shape);
            stacked.push(fresh(avals, stacked_aval));
        }
    }
    let nc_k = in_unknowns[..nc].iter().filter(|u| !**u).count();
    let nk_k = carry_uk.iter().filter(|u| !**u).count();
    let known_eqn = Equation {
        primitive: Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr: SubJaxpr::new(known),
            num_consts: nc_k,
            num_carry: nk_k,
            length: p.length,
            reverse: p.reverse,
            unroll: p.unroll,
        })),
        inputs: pick(&e.inputs, &uk, false),
        outputs: pick(
            &e.outputs,
            &{
                let mut m = carry_uk.clone();
                m.extend_from_slice(&s.out_unknowns[nk..]);
                m
            },
            false,
        )
        .into_iter()
        .chain(stacked.iter().copied())
        .collect(),
        location: e.location,
    };
    // The unknown body: (const residuals, unknown consts | unknown carry |
    // stacked residuals, x residuals, unknown xs).
    let mut unknown = s.unknown;
    let res_invars: Vec<Var> = unknown.invars[..s.num_residuals].to_vec();
    let rest: Vec<Var> = unknown.invars[s.num_residuals..].to_vec();
    let nc_u = nc - nc_k;
    let nk_u = nk - nk_k;
    let (rest_consts, rest) = rest.split_at(nc_u);
    let (rest_carry, rest_xs) = rest.split_at(nk_u);
    let by_kind = |want: &dyn Fn(Option<usize>) -> bool| -> (Vec<Var>, Vec<Atom>) {
        let mut vars = Vec::new();
        let mut outer = Vec::new();
        let mut k = 0;
        for (v, src) in res_invars.iter().zip(&source) {
            if want(*src) {
                vars.push(*v);
                outer.push(match src {
                    Some(i) => e.inputs[*i].clone(),
                    None => Atom::Var(stacked[k]),
                });
            }
            if src.is_none() {
                k += 1;
            }
        }
        (vars, outer)
    };
    let (const_res, const_outer) = by_kind(&|s| matches!(s, Some(i) if i < nc));
    let (iter_res, iter_outer) = by_kind(&|s| s.is_none());
    let (x_res, x_outer) = by_kind(&|s| matches!(s, Some(i) if i >= nc));
    unknown.invars = const_res
        .iter()
        .chain(rest_consts)
        .chain(rest_carry)
        .chain(&iter_res)
        .chain(&x_res)
        .chain(rest_xs)
        .copied()
        .collect();
    let unknown_ops: Vec<Atom> = pick(&e.inputs, &uk, true);
    let (u_consts, u_rest) = unknown_ops.split_at(nc_u);
    let (u_carry, u_xs) = u_rest.split_at(nk_u);
    let inputs: Vec<Atom> = const_outer
        .iter()
        .chain(u_consts)
        .chain(u_carry)
        .chain(&iter_outer)
        .chain(&x_outer)
        .chain(u_xs)
        .cloned()
        .collect();
    let mut out_uk = carry_uk;
    out_uk.extend_from_slice(&s.out_unknowns[nk..]);
    let unknown_eqn = Equation {
        primitive: Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr: SubJaxpr::new(unknown),
            num_consts: const_res.len() + nc_u,
            num_carry: nk_u,
            length: p.length,
            reverse: p.reverse,
            unroll: p.unroll,
        })),
        inputs,
        outputs: pick(&e.outputs, &out_uk, true),
        location: e.location,
    };
    Some((known_eqn, unknown_eqn))
}

/// A call-like equation with partly unknown inputs as a known and an
/// unknown equation (new residual variables appended to `avals`); `None`
/// for other primitives.
fn split_call(
    e: &Equation,
    in_unknowns: &[bool],
    avals: &mut Vec<crate::aval::Aval>,
    saveable: &dyn Fn(&Equation) -> bool,
) -> Option<(Equation, Equation)> {
    let (body, make): (&SubJaxpr, Box<dyn Fn(SubJaxpr) -> Primitive>) = match &e.primitive {
        Primitive::Control(control::Op::Cond { branches }) => {
            return split_cond(e, branches, in_unknowns, avals, saveable);
        }
        Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        })) => {
            let parts = ScanParts {
                body: jaxpr.jaxpr(),
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            };
            return split_scan(e, &parts, in_unknowns, avals, saveable);
        }
        Primitive::Call(call::Op::Call { jaxpr, name }) => {
            let name = name.clone();
            (
                jaxpr,
                Box::new(move |j| {
                    Primitive::Call(call::Op::Call {
                        jaxpr: j,
                        name: name.clone(),
                    })
                }),
            )
        }
        Primitive::Call(call::Op::Remat {
            jaxpr,
            policy,
            prevent_cse,
        }) => {
            let (policy, prevent_cse) = (policy.clone(), *prevent_cse);
            (
                jaxpr,
                Box::new(move |j| {
                    Primitive::Call(call::Op::Remat {
                        jaxpr: j,
                        policy: policy.clone(),
                        prevent_cse,
                    })
                }),
            )
        }
        _ => return None,
    };
    let split = match &e.primitive {
        Primitive::Call(call::Op::Remat { policy, .. }) => {
            partial_eval(body.jaxpr(), in_unknowns, &[], &|q| policy.saveable(q))
        }
        _ => partial_eval(body.jaxpr(), in_unknowns, &[], saveable),
    };
    let known_inputs = pick(&e.inputs, in_unknowns, false);
    let mut known_body = split.known;
    let n_known_out = known_body.outvars.len() - split.num_residuals;
    let residual_atoms = known_body.outvars.split_off(n_known_out);
    // A residual that is a known input of the body is the caller's operand:
    // it is passed to the unknown call directly instead of coming out of the
    // known one (JAX's forwarding), so an enclosing scan sees it as the
    // const or x it is and does not stack a copy per iteration.
    let mut new_residuals = Vec::new();
    let residuals: Vec<Atom> = residual_atoms
        .iter()
        .map(|a| {
            let forwarded = match a {
                Atom::Var(v) => known_body.invars.iter().position(|w| w == v),
                Atom::Literal(_) => None,
            };
            match forwarded {
                Some(i) => known_inputs[i].clone(),
                None => {
                    known_body.outvars.push(a.clone());
                    let v = fresh(avals, known_body.atom_aval(a).clone());
                    new_residuals.push(v);
                    Atom::Var(v)
                }
            }
        })
        .collect();
    let out_atoms: Vec<Atom> = e.outputs.iter().map(|v| Atom::Var(*v)).collect();
    let var_of = |a: Atom| match a {
        Atom::Var(v) => v,
        Atom::Literal(_) => unreachable!("equation outputs are variables"),
    };
    let known = Equation {
        primitive: make(SubJaxpr::new(known_body)),
        inputs: known_inputs,
        outputs: pick(&out_atoms, &split.out_unknowns, false)
            .into_iter()
            .map(var_of)
            .chain(new_residuals)
            .collect(),
        location: e.location,
    };
    let staged = Equation {
        primitive: make(SubJaxpr::new(split.unknown)),
        inputs: residuals
            .into_iter()
            .chain(pick(&e.inputs, in_unknowns, true))
            .collect(),
        outputs: pick(&out_atoms, &split.out_unknowns, true)
            .into_iter()
            .map(var_of)
            .collect(),
        location: e.location,
    };
    Some((known, staged))
}

/// Removes equations none of whose results is used (except effects: host
/// callbacks marked effectful stay), and prunes the unused outputs of scans and conds: a scan keeps
/// only the ys used and the carries that they or a kept carry need (found
/// by fixed point), each cond branch only the outputs used; both then drop
/// the operands nothing reads. Nested bodies are pruned too.
pub fn dce(jaxpr: &mut Jaxpr) {
    let mut used = VarMap::with_capacity(jaxpr.avals.len(), false);
    let mark = |a: &Atom, used: &mut VarMap<bool>| {
        if let Atom::Var(v) = a {
            used[v] = true;
        }
    };
    for a in &jaxpr.outvars {
        mark(a, &mut used);
    }
    let mut kept = Vec::with_capacity(jaxpr.eqns.len());
    for e in jaxpr.eqns.iter().rev() {
        let out_used: Vec<bool> = e.outputs.iter().map(|o| used[o]).collect();
        let any_used = out_used.iter().any(|u| *u);
        // Only equations that could go are asked whether they are effects
        // (a pruned scan or cond keeps the effects of its bodies).
        if !any_used && !e.primitive.is_effectful() {
            continue;
        }
        let e = if !any_used || out_used.iter().all(|u| *u) {
            e.clone()
        } else {
            prune(e, &out_used).unwrap_or_else(|| e.clone())
        };
        for a in &e.inputs {
            mark(a, &mut used);
        }
        kept.push(e);
    }
    kept.reverse();
    jaxpr.eqns = kept;
}

/// Which of `jaxpr`'s invars its equations or outputs read.
fn used_invars(jaxpr: &Jaxpr) -> Vec<bool> {
    let mut read = VarMap::with_capacity(jaxpr.avals.len(), false);
    for a in jaxpr
        .eqns
        .iter()
        .flat_map(|e| &e.inputs)
        .chain(&jaxpr.outvars)
    {
        if let Atom::Var(v) = a {
            read[v] = true;
        }
    }
    jaxpr.invars.iter().map(|v| read[v]).collect()
}

/// `jaxpr` returning only the outputs in `keep`, dead code removed.
fn keep_outputs(jaxpr: &Jaxpr, keep: &[bool]) -> Jaxpr {
    let mut j = jaxpr.clone();
    j.outvars = pick(&jaxpr.outvars, keep, true);
    dce(&mut j);
    j
}

/// A scan or cond equation with only the outputs in `out_used` (and the
/// operands they need); `None` for other primitives.
fn prune(e: &Equation, out_used: &[bool]) -> Option<Equation> {
    match &e.primitive {
        Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        })) => {
            let (nc, nk) = (*num_consts, *num_carry);
            let body = jaxpr.jaxpr();
            let mut carry = out_used[..nk].to_vec();
            let ys = &out_used[nk..];
            let pruned = loop {
                let keep: Vec<bool> = carry.iter().chain(ys).copied().collect();
                let b = keep_outputs(body, &keep);
                let read = used_invars(&b);
                let next: Vec<bool> = carry
                    .iter()
                    .zip(&read[nc..nc + nk])
                    .map(|(c, r)| *c || *r)
                    .collect();
                if next == carry {
                    break b;
                }
                carry = next;
            };
            let read = used_invars(&pruned);
            let keep_in: Vec<bool> = (0..e.inputs.len())
                .map(|i| {
                    if (nc..nc + nk).contains(&i) {
                        carry[i - nc]
                    } else {
                        read[i]
                    }
                })
                .collect();
            let mut body = pruned;
            body.invars = pick(&body.invars, &keep_in, true);
            let keep_out: Vec<bool> = carry.iter().chain(ys).copied().collect();
            Some(Equation {
                primitive: Primitive::Control(control::Op::Scan(control::ScanParams {
                    jaxpr: SubJaxpr::new(body),
                    num_consts: keep_in[..nc].iter().filter(|k| **k).count(),
                    num_carry: carry.iter().filter(|k| **k).count(),
                    length: *length,
                    reverse: *reverse,
                    unroll: *unroll,
                })),
                inputs: pick(&e.inputs, &keep_in, true),
                outputs: pick(&e.outputs, &keep_out, true),
                location: e.location,
            })
        }
        Primitive::Control(control::Op::Cond { branches }) => {
            let pruned: Vec<Jaxpr> = branches
                .iter()
                .map(|b| keep_outputs(b.jaxpr(), out_used))
                .collect();
            let mut read = vec![false; e.inputs.len() - 1];
            for b in &pruned {
                for (r, u) in read.iter_mut().zip(used_invars(b)) {
                    *r |= u;
                }
            }
            let branches = pruned
                .into_iter()
                .map(|mut b| {
                    b.invars = pick(&b.invars, &read, true);
                    SubJaxpr::new(b)
                })
                .collect();
            let mut inputs = vec![e.inputs[0].clone()];
            inputs.extend(pick(&e.inputs[1..], &read, true));
            Some(Equation {
                primitive: Primitive::Control(control::Op::Cond { branches }),
                inputs,
                outputs: pick(&e.outputs, out_used, true),
                location: e.location,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitive::{elementwise, host};
    use crate::{Aval, BinaryOp, DType, JaxprBuilder, Primitive, UnaryOp};

    /// f(x, t) = (sin x, cos(x) * t): x known, t unknown.
    fn jvp_like() -> Jaxpr {
        let mut b = JaxprBuilder::new();
        let x = b.add_invar(Aval::new(DType::F32, &[3]));
        let t = b.add_invar(Aval::new(DType::F32, &[3]));
        let s = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Sin)),
                vec![Atom::Var(x)],
                None,
            )
            .unwrap()[0];
        let c = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Cos)),
                vec![Atom::Var(x)],
                None,
            )
            .unwrap()[0];
        let ct = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Mul)),
                vec![Atom::Var(c), Atom::Var(t)],
                None,
            )
            .unwrap()[0];
        b.finish(vec![Atom::Var(s), Atom::Var(ct)])
    }

    #[test]
    fn saving_everything_keeps_the_known_work_in_the_known_half() {
        let split = partial_eval(&jvp_like(), &[false, true], &[], &|_| true);
        assert_eq!(split.out_unknowns, vec![false, true]);
        assert_eq!(split.num_residuals, 1);
        assert_eq!(split.known.eqns.len(), 2);
        assert_eq!(split.unknown.eqns.len(), 1);
        assert_eq!(split.known.outvars.len(), 2);
        assert_eq!(split.unknown.invars.len(), 2);
    }

    #[test]
    fn saving_nothing_recomputes_from_the_inputs() {
        let split = partial_eval(&jvp_like(), &[false, true], &[], &|_| false);
        // The residual is x itself; cos is recomputed in the unknown half.
        assert_eq!(split.num_residuals, 1);
        assert_eq!(split.unknown.eqns.len(), 2);
        assert_eq!(split.known.eqns.len(), 1);
    }

    #[test]
    fn a_call_with_mixed_inputs_is_split_into_a_known_and_an_unknown_call() {
        let body = SubJaxpr::new(jvp_like());
        let mut b = JaxprBuilder::new();
        let x = b.add_invar(Aval::new(DType::F32, &[3]));
        let t = b.add_invar(Aval::new(DType::F32, &[3]));
        let outs = b
            .add_equation(
                Primitive::Call(call::Op::Call {
                    jaxpr: body,
                    name: "f".into(),
                }),
                vec![Atom::Var(x), Atom::Var(t)],
                None,
            )
            .unwrap();
        let outer = b.finish(outs.into_iter().map(Atom::Var).collect());
        let split = partial_eval(&outer, &[false, true], &[], &|_| true);
        assert_eq!(split.out_unknowns, vec![false, true]);
        // Known: one call computing sin x and the residual cos x.
        assert_eq!(split.known.eqns.len(), 1);
        let known_body = split.known.eqns[0].primitive.sub_jaxpr().unwrap().jaxpr();
        assert_eq!(known_body.eqns.len(), 2);
        // Unknown: one call multiplying the residual by t.
        assert_eq!(split.unknown.eqns.len(), 1);
        let unknown_body = split.unknown.eqns[0].primitive.sub_jaxpr().unwrap().jaxpr();
        assert_eq!(unknown_body.eqns.len(), 1);
        assert_eq!(split.num_residuals, 1);
    }

    #[test]
    fn dce_prunes_unused_scan_outputs_and_the_carries_only_they_need() {
        // body(c1, c2, x) = (c1 + x, c2 * c2, sin x, cos x); keep only c1 and
        // the first y: c2 and the second y go, with their equations.
        let f = Aval::new(DType::F32, &[]);
        let mut b = JaxprBuilder::new();
        let (c1, c2, x) = (
            b.add_invar(f.clone()),
            b.add_invar(f.clone()),
            b.add_invar(f.clone()),
        );
        let add = Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Add));
        let mul = Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Mul));
        let n1 = b
            .add_equation(add, vec![Atom::Var(c1), Atom::Var(x)], None)
            .unwrap()[0];
        let n2 = b
            .add_equation(mul, vec![Atom::Var(c2), Atom::Var(c2)], None)
            .unwrap()[0];
        let s = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Sin)),
                vec![Atom::Var(x)],
                None,
            )
            .unwrap()[0];
        let c = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Cos)),
                vec![Atom::Var(x)],
                None,
            )
            .unwrap()[0];
        let body = b.finish([n1, n2, s, c].into_iter().map(Atom::Var).collect());
        let mut outer = JaxprBuilder::new();
        let i1 = outer.add_invar(f.clone());
        let i2 = outer.add_invar(f.clone());
        let xs = outer.add_invar(Aval::new(DType::F32, &[5]));
        let outs = outer
            .add_equation(
                Primitive::Control(control::Op::Scan(control::ScanParams {
                    jaxpr: SubJaxpr::new(body),
                    num_consts: 0,
                    num_carry: 2,
                    length: 5,
                    reverse: false,
                    unroll: 1,
                })),
                vec![Atom::Var(i1), Atom::Var(i2), Atom::Var(xs)],
                None,
            )
            .unwrap();
        let mut j = outer.finish(vec![Atom::Var(outs[0]), Atom::Var(outs[2])]);
        dce(&mut j);
        let Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr, num_carry, ..
        })) = &j.eqns[0].primitive
        else {
            panic!("a scan")
        };
        assert_eq!(*num_carry, 1);
        assert_eq!(j.eqns[0].inputs.len(), 2);
        assert_eq!(j.eqns[0].outputs.len(), 2);
        assert_eq!(jaxpr.jaxpr().eqns.len(), 2);
    }

    #[test]
    fn dce_drops_unused_equations() {
        let mut j = jvp_like();
        j.outvars.truncate(1);
        dce(&mut j);
        assert_eq!(j.eqns.len(), 1);
    }

    #[test]
    fn dce_keeps_effects_and_the_loops_that_hold_them() {
        let callback = |effectful| {
            Primitive::Host(host::Op::HostCallback {
                callback: crate::callback::HostCallback {
                    id: 1,
                    name: "print".into(),
                    effectful,
                    vmap_method: crate::callback::VmapMethod::Sequential,
                },
                results: Vec::new(),
            })
        };
        let mut b = JaxprBuilder::new();
        let x = b.add_invar(Aval::new(DType::F32, &[3]));
        b.add_equation(callback(true), vec![Atom::Var(x)], None)
            .unwrap();
        b.add_equation(callback(false), vec![Atom::Var(x)], None)
            .unwrap();
        let mut j = b.finish(vec![Atom::Var(x)]);
        let body = j.clone();
        dce(&mut j);
        // The effect stays, the pure call nothing reads goes.
        assert_eq!(j.eqns.len(), 1);
        assert!(j.eqns[0].primitive.is_effectful());
        // A scan whose body prints is an effect though nothing reads it.
        let scan = Primitive::Control(control::Op::Scan(control::ScanParams {
            jaxpr: SubJaxpr::new(body),
            num_consts: 0,
            num_carry: 1,
            length: 2,
            reverse: false,
            unroll: 1,
        }));
        assert!(scan.is_effectful());
        let mut outer = JaxprBuilder::new();
        let y = outer.add_invar(Aval::new(DType::F32, &[3]));
        outer.add_equation(scan, vec![Atom::Var(y)], None).unwrap();
        let mut j = outer.finish(vec![Atom::Var(y)]);
        dce(&mut j);
        assert_eq!(j.eqns.len(), 1);
    }
}
