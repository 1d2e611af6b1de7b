//! Forward mode: the jvp trace's handling of each primitive (split its
//! tracers into primals and tangents, apply the primitive's jvp rule, wrap
//! the results), and `jvp` of a jaxpr.

use oxla_core::{Aval, Jaxpr, Location, Primitive};

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
        Some(tangent) if has_tangent(primal.dtype()) => Array::from_inner(Inner::Jvp {
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
/// returns the primal outputs, then the nonzero output tangents (all of
/// them when `instantiate`, zeros built where needed). Also returns which
/// output tangents are nonzero.
pub(crate) fn jvp_jaxpr(
    jaxpr: &Jaxpr,
    nonzeros: &[bool],
    instantiate: bool,
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
        for ((t, p), o) in tangent_outs
            .into_iter()
            .zip(&results.clone())
            .zip(&jaxpr.outvars)
        {
            let aval = jaxpr.atom_aval(o).clone();
            match t {
                Some(t) => {
                    out_nonzeros.push(true);
                    results.push(t);
                }
                None if instantiate => {
                    out_nonzeros.push(true);
                    let _ = p;
                    results.push(super::support::zeros(&aval));
                }
                None => out_nonzeros.push(false),
            }
        }
        Ok(results)
    })?;
    Ok((traced, consts, out_nonzeros))
}
