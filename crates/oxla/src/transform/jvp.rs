//! Forward mode: the jvp trace's handling of each primitive (split its
//! tracers into primals and tangents, apply the primitive's jvp rule, wrap
//! the results), and `jvp` of a jaxpr.

use oxla_core::partial_eval::partial_eval;
use oxla_core::{Atom, Aval, Jaxpr, Location, Primitive};

use super::jvp_rules;
use super::support::{Tangent, has_tangent};
use crate::array::{Array, Inner};
use crate::error::Result;
use crate::trace::{TraceGuard, TraceKind};

/// What a jvp rule may need to know about its trace.
pub(crate) struct JvpContext {
    /// The trace tangents are staged into when linearizing (then call-like
    /// primitives split into a primal and a tangent call).
    pub(crate) tangent_trace: Option<u64>,
}

/// A jvp tracer of trace `trace`, or the primal itself for a zero tangent
/// (also for every non-float value: those have no tangent).
pub(crate) fn tracer(trace: u64, primal: Array, tangent: Tangent) -> Array {
    match tangent {
        Some(tangent) if has_tangent(primal.dtype_or_bool()) => Array::from_inner(Inner::Jvp {
            trace,
            primal,
            tangent,
        }),
        Some(_) | None => primal,
    }
}

/// The primal and tangent of `x` as seen by jvp trace `trace` (a value of
/// another trace is a constant: zero tangent).
pub(crate) fn split(trace: u64, x: &Array) -> (Array, Tangent) {
    match &*x.inner {
        Inner::Jvp {
            trace: t,
            primal,
            tangent,
        } if *t == trace => (primal.clone(), Some(tangent.clone())),
        Inner::Jvp { .. }
        | Inner::Concrete { .. }
        | Inner::Traced { .. }
        | Inner::Batched { .. }
        | Inner::Scalar { .. }
        | Inner::Error(_) => (x.clone(), None),
    }
}

/// Applies `primitive` to `inputs` under jvp trace `trace`.
pub(crate) fn process(
    trace: u64,
    tangent_trace: Option<u64>,
    primitive: &Primitive,
    inputs: &[&Array],
) -> Result<Vec<Array>> {
    let (primals, tangents): (Vec<Array>, Vec<Tangent>) =
        inputs.iter().map(|x| split(trace, x)).unzip();
    let ctx = JvpContext { tangent_trace };
    let (outs, out_tangents) = jvp_rules::jvp(primitive, &primals, &tangents, &ctx)?;
    Ok(outs
        .into_iter()
        .zip(out_tangents)
        .map(|(p, t)| tracer(trace, p, t))
        .collect())
}

/// The jaxpr of the jvp of `jaxpr`, whose tangent inputs are nonzero where
/// `nonzeros` says: it takes the primals, then the nonzero tangents, and
/// returns the primal outputs, then the nonzero output tangents (zeros
/// built for outputs in `instantiate` whose tangent is zero). Also returns
/// which output tangents it returns.
pub(crate) fn jvp_jaxpr(
    jaxpr: &Jaxpr,
    nonzeros: &[bool],
    instantiate: &[bool],
    location: Location,
) -> Result<(Jaxpr, Vec<Array>, Vec<bool>)> {
    let primal_avals: Vec<Aval> = jaxpr
        .invars
        .iter()
        .map(|v| jaxpr.aval(*v).clone())
        .collect();
    let tangent_avals: Vec<Aval> = primal_avals
        .iter()
        .zip(nonzeros)
        .filter(|(_, nz)| **nz)
        .map(|(a, _)| a.clone())
        .collect();
    let n = primal_avals.len();
    let mut out_nonzeros = Vec::new();
    let in_avals: Vec<Aval> = primal_avals.iter().chain(&tangent_avals).cloned().collect();
    let (traced, consts) = super::eval::trace_flat(&in_avals, true, location, |args| {
        let (primals, tangents) = args.split_at(n);
        let guard = TraceGuard::open(TraceKind::Jvp {
            tangent_trace: None,
        });
        let id = guard.id();
        let mut tangents = tangents.iter();
        let inputs: Vec<Array> = primals
            .iter()
            .zip(nonzeros)
            .map(|(p, nz)| {
                let t = if *nz { tangents.next().cloned() } else { None };
                tracer(id, p.clone(), t)
            })
            .collect();
        let outs = super::eval::eval_jaxpr(jaxpr, &[], &inputs)?;
        guard.finish()?;
        let (primal_outs, tangent_outs): (Vec<Array>, Vec<Tangent>) =
            outs.iter().map(|x| split(id, x)).unzip();
        let mut results = primal_outs;
        for (i, (t, o)) in tangent_outs.into_iter().zip(&jaxpr.outvars).enumerate() {
            match t {
                Some(t) => {
                    out_nonzeros.push(true);
                    results.push(t);
                }
                None if instantiate.get(i).copied().unwrap_or(false) => {
                    out_nonzeros.push(true);
                    results.push(super::support::zeros(jaxpr.atom_aval(o)));
                }
                None => out_nonzeros.push(false),
            }
        }
        Ok(results)
    })?;
    Ok((traced, consts, out_nonzeros))
}

/// Binds `primitive`, the jvp of an equation, on `operands` (those in
/// `is_tangent` are tangents): its primal outputs and its tangent outputs
/// (the outputs in `out_is_tangent`). Under linearize, the equation is
/// split by partial evaluation (which splits calls, conds and scans
/// recursively): the known part runs now on the primals, the tangent part
/// is staged with the residuals it needs.
pub(crate) fn bind_jvp(
    primitive: Primitive,
    operands: &[Array],
    is_tangent: &[bool],
    out_is_tangent: &[bool],
    ctx: &JvpContext,
) -> Result<(Vec<Array>, Vec<Array>)> {
    let refs: Vec<&Array> = operands.iter().collect();
    let outs = match ctx.tangent_trace {
        None => super::support::bind_all(primitive, &refs)?,
        Some(_) => {
            let name = primitive.name();
            let mut builder = oxla_core::JaxprBuilder::new();
            let vars = operands
                .iter()
                .map(|x| Ok(Atom::Var(builder.add_invar(x.aval()?.clone()))))
                .collect::<Result<Vec<_>>>()?;
            let location = crate::ops::rule_location();
            let outs = builder.add_equation(primitive, vars, location)?;
            let jaxpr = builder.finish(outs.into_iter().map(Atom::Var).collect());
            let split = partial_eval(&jaxpr, is_tangent, out_is_tangent, &|_| true);
            if split.out_unknowns != out_is_tangent {
                return Err(crate::error::Error::Transform {
                    transform: "linearize",
                    primitive: name.to_string(),
                    message: "a primal output depends on a tangent: this primitive cannot be \
                              split into a primal and a tangent part"
                        .into(),
                    location,
                });
            }
            let pick = |want: bool| -> Vec<Array> {
                operands
                    .iter()
                    .zip(is_tangent)
                    .filter(|(_, t)| **t == want)
                    .map(|(x, _)| x.clone())
                    .collect()
            };
            let mut known = super::eval::eval_jaxpr(&split.known, &[], &pick(false))?;
            let mut staged_args = known.split_off(known.len() - split.num_residuals);
            staged_args.extend(pick(true));
            let staged = super::eval::eval_jaxpr(&split.unknown, &[], &staged_args)?;
            let (mut known, mut staged) = (known.into_iter(), staged.into_iter());
            out_is_tangent
                .iter()
                .map(|t| if *t { staged.next() } else { known.next() })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| crate::error::Error::Internal("split outputs".into()))?
        }
    };
    let (mut primal, mut tangent) = (Vec::new(), Vec::new());
    for (x, t) in outs.into_iter().zip(out_is_tangent) {
        if *t {
            tangent.push(x);
        } else {
            primal.push(x);
        }
    }
    Ok((primal, tangent))
}
