//! Linearize: run a function under a jvp trace whose tangents are staged
//! into a separate trace. Primal values are computed by the enclosing
//! trace (concretely, outside jit), so Rust control flow on them works;
//! the tangent computation becomes a linear jaxpr whose constants are the
//! residuals it needs.

use oxla_core::{Aval, Jaxpr, Location};

use super::jvp::{split, tracer};
use super::support::{Tangent, has_tangent};
use crate::array::Array;
use crate::error::Result;
use crate::trace::{TraceGuard, TraceKind};

/// The linear part of a function at a point.
pub(crate) struct Linear {
    /// The tangent jaxpr: constvars are residuals, invars the nonzero input
    /// tangents, outvars the nonzero output tangents.
    pub(crate) jaxpr: Jaxpr,
    /// The residuals' values.
    pub(crate) residuals: Vec<Array>,
    /// Which inputs have a tangent (float inputs).
    pub(crate) in_nonzero: Vec<bool>,
    /// Which outputs have a nonzero tangent.
    pub(crate) out_nonzero: Vec<bool>,
    /// Input types (of the tangents).
    pub(crate) in_avals: Vec<Aval>,
    /// Output types (of the cotangents).
    pub(crate) out_avals: Vec<Aval>,
}

/// Linearizes `f` at `primals`: its outputs and its linear part. Inputs
/// with `differentiable[i] == false` (and non-float inputs) get no tangent.
pub(crate) fn linearize_flat(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    differentiable: &[bool],
    location: Location,
) -> Result<(Vec<Array>, Linear)> {
    let in_avals: Vec<Aval> = primals
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let in_nonzero: Vec<bool> = in_avals
        .iter()
        .zip(differentiable)
        .map(|(a, d)| *d && has_tangent(a.dtype))
        .collect();
    let tangent_avals: Vec<Aval> = in_avals
        .iter()
        .zip(&in_nonzero)
        .filter(|(_, nz)| **nz)
        .map(|(a, _)| a.clone())
        .collect();
    let tangent_guard = TraceGuard::staging(false);
    let tangent_id = tangent_guard.id();
    let tangent_tracers: Vec<Array> = tangent_avals
        .iter()
        .map(|aval| {
            let var = crate::trace::with_frame(tangent_id, |frame, _| {
                frame.builder.add_invar(aval.clone())
            })
            .expect("the tangent trace just opened");
            Array::from_inner(crate::array::Inner::Traced {
                trace: tangent_id,
                atom: oxla_core::Atom::Var(var),
                aval: aval.clone(),
            })
        })
        .collect();
    let jvp_guard = TraceGuard::open(TraceKind::Jvp {
        tangent_trace: Some(tangent_id),
    });
    let jvp_id = jvp_guard.id();
    let mut next_tangent = tangent_tracers.into_iter();
    let inputs: Vec<Array> = primals
        .iter()
        .zip(&in_nonzero)
        .map(|(p, nz)| {
            let t = if *nz { next_tangent.next() } else { None };
            tracer(jvp_id, p.clone(), t)
        })
        .collect();
    let outs = f(&inputs)?;
    for x in &outs {
        super::eval::check_live(x, location)?;
        x.check()?;
    }
    jvp_guard.finish()?;
    let (primal_outs, tangent_outs): (Vec<Array>, Vec<Tangent>) =
        outs.iter().map(|x| split(jvp_id, x)).unzip();
    let out_avals: Vec<Aval> = primal_outs
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let out_nonzero: Vec<bool> = tangent_outs.iter().map(Option::is_some).collect();
    let nonzero_tangents: Vec<Array> = tangent_outs.into_iter().flatten().collect();
    let (mut jaxpr, residuals) =
        super::eval::finish_trace(tangent_guard, &nonzero_tangents, location)?;
    oxla_core::partial_eval::dce(&mut jaxpr);
    Ok((
        primal_outs,
        Linear {
            jaxpr,
            residuals,
            in_nonzero,
            out_nonzero,
            in_avals,
            out_avals,
        },
    ))
}

impl Linear {
    /// Applies the linear map to input tangents (one per input; ignored
    /// where the input has none): the output tangents (`None` = zero).
    pub(crate) fn apply(&self, tangents: &[Tangent]) -> Result<Vec<Tangent>> {
        let args: Vec<Array> = tangents
            .iter()
            .zip(&self.in_nonzero)
            .zip(&self.in_avals)
            .filter(|((_, nz), _)| **nz)
            .map(|((t, _), aval)| super::support::instantiate(t, aval))
            .collect();
        let outs = super::eval::eval_jaxpr(&self.jaxpr, &self.residuals, &args)?;
        let mut outs = outs.into_iter();
        Ok(self
            .out_nonzero
            .iter()
            .map(|nz| if *nz { outs.next() } else { None })
            .collect())
    }

    /// Applies the transpose: input cotangents (`None` = zero) from output
    /// cotangents.
    pub(crate) fn transpose(&self, cts: &[Tangent]) -> Result<Vec<Tangent>> {
        let out_cts: Vec<Tangent> = cts
            .iter()
            .zip(&self.out_nonzero)
            .filter(|(_, nz)| **nz)
            .map(|(c, _)| c.clone())
            .collect();
        let in_cts = super::transpose::backward_pass(&self.jaxpr, &self.residuals, &out_cts)?;
        let mut in_cts = in_cts.into_iter();
        Ok(self
            .in_nonzero
            .iter()
            .map(|nz| if *nz { in_cts.next().flatten() } else { None })
            .collect())
    }
}
