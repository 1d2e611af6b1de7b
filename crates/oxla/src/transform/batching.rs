//! Batching (vmap): the batch trace's handling of each primitive (split its
//! tracers into values and batch dims, apply the primitive's batching
//! rule, wrap the results), vmap of flat functions, and batching of jaxprs.

use std::cell::RefCell;

use oxla_core::{Aval, Jaxpr, Location};

use super::batch_rules;
use super::support::batch_at;
use crate::array::{Array, Inner};
use crate::error::Result;
use crate::trace::{BatchAxis, TraceGuard, TraceKind};

thread_local! {
    /// The axes of the batch traces whose rules are running, innermost
    /// last: a rule that batches a jaxpr (a call, a loop body) opens its
    /// trace over the same named axis.
    static RULE_AXES: RefCell<Vec<BatchAxis>> = const { RefCell::new(Vec::new()) };
}

/// Pops the rule axis pushed by [`process`], also on unwinding.
struct RuleAxisGuard;

impl Drop for RuleAxisGuard {
    fn drop(&mut self) {
        RULE_AXES.with(|a| a.borrow_mut().pop());
    }
}

/// The axis of the batch trace whose rule is running, if it has `size`
/// examples (else an unnamed axis of `size`): what a rule's nested
/// batching maps over.
pub(crate) fn rule_axis(size: i64) -> BatchAxis {
    RULE_AXES
        .with(|a| a.borrow().last().cloned())
        .filter(|axis| axis.size == size)
        .unwrap_or_else(|| BatchAxis::unnamed(size))
}

/// A batch tracer of trace `trace`, or the value itself if unbatched.
pub(crate) fn tracer(trace: u64, value: Array, bdim: Option<usize>) -> Result<Array> {
    match bdim {
        None => Ok(value),
        Some(bdim) => {
            let full = value.aval()?;
            let mut aval = full.clone();
            aval.shape.remove(bdim);
            Ok(Array::from_inner(Inner::Batched {
                trace,
                value,
                bdim,
                aval,
            }))
        }
    }
}

/// The value and batch dim of `x` as seen by batch trace `trace`.
pub(crate) fn split(trace: u64, x: &Array) -> (Array, Option<usize>) {
    match &*x.inner {
        Inner::Batched {
            trace: t,
            value,
            bdim,
            ..
        } if *t == trace => (value.clone(), Some(*bdim)),
        Inner::Batched { .. }
        | Inner::Concrete { .. }
        | Inner::Traced { .. }
        | Inner::Jvp { .. }
        | Inner::Scalar { .. }
        | Inner::Error(_) => (x.clone(), None),
    }
}

/// Applies `primitive` to `inputs` under batch trace `trace`.
pub(crate) fn process(
    trace: u64,
    axis: &BatchAxis,
    primitive: &oxla_core::Primitive,
    inputs: &[&Array],
) -> Result<Vec<Array>> {
    let (values, bdims): (Vec<Array>, Vec<Option<usize>>) =
        inputs.iter().map(|x| split(trace, x)).unzip();
    RULE_AXES.with(|a| a.borrow_mut().push(axis.clone()));
    let guard = RuleAxisGuard;
    let batched = batch_rules::batch(primitive, &values, &bdims, axis.size);
    drop(guard);
    let (outs, out_bdims) = batched?;
    outs.into_iter()
        .zip(out_bdims)
        .map(|(v, b)| tracer(trace, v, b))
        .collect()
}

/// Runs `f` on inputs batched along `in_axes` (None: unbatched) over
/// `axis`, returning outputs batched along `out_axes` (None: the output
/// must not depend on the batch).
pub(crate) fn vmap_flat(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    in_axes: &[Option<usize>],
    axis: BatchAxis,
    out_axes: &dyn Fn(usize) -> Option<i64>,
) -> Result<Vec<Result<Array, usize>>> {
    let axis_size = axis.size;
    let _names = axis
        .name
        .clone()
        .map(|name| crate::sharding::axis_env::bind_vmap(name, axis_size as usize));
    let guard = TraceGuard::open(TraceKind::Batch { axis });
    let id = guard.id();
    let inputs = args
        .iter()
        .zip(in_axes)
        .map(|(x, b)| tracer(id, x.clone(), *b))
        .collect::<Result<Vec<_>>>()?;
    let outs = f(&inputs)?;
    for x in &outs {
        x.check()?;
    }
    guard.finish()?;
    outs.iter()
        .enumerate()
        .map(|(i, x)| {
            let rank = x.aval()?.rank() as i64 + 1;
            let (value, bdim) = split(id, x);
            match (bdim, out_axes(i)) {
                (Some(_), None) => Ok(Err(i)),
                (None, None) => Ok(Ok(value)),
                (bdim, Some(to)) => {
                    if to < -rank || to >= rank {
                        return Err(crate::error::Error::InvalidArgument(format!(
                            "vmap: out_axes {to} of output {i} is out of range for its rank {rank}"
                        )));
                    }
                    let to = if to < 0 { to + rank } else { to } as usize;
                    Ok(Ok(batch_at(&value, bdim, axis_size, to)))
                }
            }
        })
        .collect()
}

/// The jaxpr of `jaxpr` batched with its inputs' batch dims at `in_bdims`
/// (None: unbatched): every output batched at 0.
pub(crate) fn batch_jaxpr(
    jaxpr: &Jaxpr,
    in_bdims: &[Option<usize>],
    axis_size: i64,
    location: Location,
) -> Result<(Jaxpr, Vec<Array>)> {
    let in_avals = batched_invar_avals(jaxpr, in_bdims, axis_size);
    batch_jaxpr_typed(
        jaxpr,
        in_avals,
        in_bdims,
        rule_axis(axis_size),
        location,
        Ok,
    )
}

/// The types of `jaxpr`'s inputs with their batch dimensions of
/// `axis_size` at `in_bdims`.
pub(crate) fn batched_invar_avals(
    jaxpr: &Jaxpr,
    in_bdims: &[Option<usize>],
    axis_size: i64,
) -> Vec<Aval> {
    jaxpr
        .invars
        .iter()
        .zip(in_bdims)
        .map(|(v, b)| {
            let mut aval = jaxpr.aval(*v).clone();
            if let Some(b) = b {
                aval.shape.insert(*b, axis_size);
            }
            aval
        })
        .collect()
}

/// [`batch_jaxpr`] over `axis`, tracing from inputs of `in_avals` (the
/// batched types, which may carry other varying axes than the body's) and
/// passing the batched outputs (every one at 0) through `finish`.
pub(crate) fn batch_jaxpr_typed(
    jaxpr: &Jaxpr,
    in_avals: Vec<Aval>,
    in_bdims: &[Option<usize>],
    axis: BatchAxis,
    location: Location,
    finish: impl FnOnce(Vec<Array>) -> Result<Vec<Array>>,
) -> Result<(Jaxpr, Vec<Array>)> {
    super::eval::trace_flat(&in_avals, true, location, |args| {
        let outs = vmap_flat(
            |inputs| super::eval::eval_jaxpr(jaxpr, &[], inputs),
            args,
            in_bdims,
            axis,
            &|_| Some(0),
        )?;
        let outs = outs
            .into_iter()
            .map(|r| r.map_err(|_| crate::error::Error::Internal("unbatched output".into())))
            .collect::<Result<Vec<_>>>()?;
        finish(outs)
    })
}

/// The jaxpr of `jaxpr` batched with its inputs' batch dims at `in_bdims`:
/// an output is batched at 0 if it depends on the batch or is in `force`
/// (broadcast), and unbatched otherwise. Returns the jaxpr, its captured
/// values and which outputs are batched.
pub(crate) fn batch_jaxpr_partial(
    jaxpr: &Jaxpr,
    in_bdims: &[Option<usize>],
    axis_size: i64,
    force: &[bool],
) -> Result<(Jaxpr, Vec<Array>, Vec<bool>)> {
    let location = crate::ops::rule_location().unwrap_or(super::eval::UNKNOWN_LOCATION);
    let in_avals = batched_invar_avals(jaxpr, in_bdims, axis_size);
    let mut out_batched = Vec::new();
    let (j, consts) = super::eval::trace_flat(&in_avals, true, location, |args| {
        let guard = TraceGuard::open(TraceKind::Batch {
            axis: rule_axis(axis_size),
        });
        let id = guard.id();
        let inputs = args
            .iter()
            .zip(in_bdims)
            .map(|(x, b)| tracer(id, x.clone(), *b))
            .collect::<Result<Vec<_>>>()?;
        let outs = super::eval::eval_jaxpr(jaxpr, &[], &inputs)?;
        guard.finish()?;
        Ok(outs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let (value, bdim) = split(id, x);
                let batched = bdim.is_some() || force.get(i).copied().unwrap_or(false);
                out_batched.push(batched);
                if batched {
                    batch_at(&value, bdim, axis_size, 0)
                } else {
                    value
                }
            })
            .collect())
    })?;
    Ok((j, consts, out_batched))
}
