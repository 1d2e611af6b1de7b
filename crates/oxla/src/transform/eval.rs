//! Running a jaxpr by binding each equation through the current trace
//! (so rules can re-trace bodies under any transformation), and tracing a
//! function of flat arrays into a jaxpr.

use std::collections::HashMap;

use oxla_core::{Atom, Aval, Jaxpr, Location, Var};

use crate::array::{Array, Inner};
use crate::error::{Error, Result};
use crate::trace::{self, TraceGuard};

/// Where an equation without a recorded location is reported.
pub(crate) const UNKNOWN_LOCATION: Location = Location {
    file: "<unknown>",
    line: 0,
    column: 0,
};

/// An atom's value: the variable's, or the literal as a host scalar.
fn read(env: &HashMap<Var, Array>, atom: &Atom) -> Result<Array> {
    match atom {
        Atom::Var(v) => env.get(v).cloned().ok_or_else(|| {
            Error::Internal(format!("jaxpr variable {} read before it is set", v.0))
        }),
        Atom::Literal(l) => Ok(Array::from_inner(Inner::Scalar {
            value: l.value,
            aval: l.aval.clone(),
        })),
    }
}

/// Evaluates `jaxpr` on `consts` and `args`, binding every equation through
/// the current trace (eagerly when none is open).
pub(crate) fn eval_jaxpr(jaxpr: &Jaxpr, consts: &[Array], args: &[Array]) -> Result<Vec<Array>> {
    if consts.len() != jaxpr.constvars.len() || args.len() != jaxpr.invars.len() {
        return Err(Error::Internal(format!(
            "a jaxpr with {} constants and {} inputs evaluated on {} and {}",
            jaxpr.constvars.len(),
            jaxpr.invars.len(),
            consts.len(),
            args.len()
        )));
    }
    let mut env: HashMap<Var, Array> = HashMap::with_capacity(jaxpr.avals.len());
    for (v, x) in jaxpr
        .constvars
        .iter()
        .zip(consts)
        .chain(jaxpr.invars.iter().zip(args))
    {
        env.insert(*v, x.clone());
    }
    for eqn in &jaxpr.eqns {
        let inputs = eqn
            .inputs
            .iter()
            .map(|a| read(&env, a))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Array> = inputs.iter().collect();
        let location = eqn.location.unwrap_or(UNKNOWN_LOCATION);
        let outs = crate::ops::bind_at(eqn.primitive.clone(), &refs, location)?;
        for (v, x) in eqn.outputs.iter().zip(outs) {
            env.insert(*v, x);
        }
    }
    jaxpr.outvars.iter().map(|a| read(&env, a)).collect()
}

/// Checks that a tracer's trace is still open.
pub(crate) fn check_live(x: &Array, location: Location) -> Result<()> {
    match x.trace_id() {
        Some(id) if trace::level_of(id).is_none() => Err(Error::EscapedTracer { location }),
        Some(_) | None => Ok(()),
    }
}

/// Traces `f` on fresh tracers of `in_avals` into a jaxpr: the jaxpr (its
/// constvars are what `f` captured from outside: concrete arrays and
/// tracers of outer traces) and the captured values. A `dynamic` trace
/// also receives ops on non-tracers (jit's).
pub(crate) fn trace_flat(
    in_avals: &[Aval],
    dynamic: bool,
    location: Location,
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
) -> Result<(Jaxpr, Vec<Array>)> {
    let guard = TraceGuard::staging(dynamic);
    let id = guard.id();
    let tracers: Vec<Array> = in_avals
        .iter()
        .map(|aval| {
            let var = trace::with_frame(id, |frame, _| frame.builder.add_invar(aval.clone()))
                .expect("the trace just opened");
            Array::from_inner(Inner::Traced {
                trace: id,
                atom: Atom::Var(var),
                aval: aval.clone(),
            })
        })
        .collect();
    let outs = f(&tracers)?;
    finish_trace(guard, &outs, location)
}

/// Closes staging trace `guard` with `outs` as the jaxpr's outputs.
pub(crate) fn finish_trace(
    guard: TraceGuard,
    outs: &[Array],
    location: Location,
) -> Result<(Jaxpr, Vec<Array>)> {
    let id = guard.id();
    for x in outs {
        if let Inner::Error(e) = &*x.inner {
            return Err(e.clone());
        }
        check_live(x, location)?;
    }
    let atoms = trace::with_frame(id, |frame, id| {
        outs.iter()
            .map(|x| frame.atom(id, x, location))
            .collect::<Result<Vec<_>>>()
    })
    .expect("the trace is open")?;
    let entry = guard.finish()?;
    match entry.kind {
        trace::TraceKind::Staging { frame, .. } => {
            // Equations nothing uses (a tangent's residuals under
            // stop_gradient, say) are dropped, as jit does in JAX.
            let mut jaxpr = frame.builder.finish(atoms);
            oxla_core::partial_eval::dce(&mut jaxpr);
            Ok((jaxpr, frame.consts.into_iter().map(|(a, _)| a).collect()))
        }
        trace::TraceKind::Jvp { .. } | trace::TraceKind::Batch { .. } => Err(Error::Internal(
            "a staging trace closed as another kind".into(),
        )),
    }
}
