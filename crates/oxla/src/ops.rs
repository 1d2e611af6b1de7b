//! Applying a primitive: to the trace of the highest-level tracer among the
//! inputs (or the innermost jit trace), or eagerly as a one-equation
//! program (compiled once per primitive, parameters and input types, then
//! kept in a least-recently-used cache of `OXLA_EAGER_CACHE_ENTRIES`
//! programs, default 4096). A cached program carries no source location:
//! it serves every caller, so none of their lines belongs in it.

use oxla_core::primitive::collective;
use std::cell::Cell;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock};

use lru::LruCache;

use oxla_core::shape_rules::abstract_eval;
use oxla_core::{Atom, Aval, CoreError, JaxprBuilder, Location, Primitive, ShardingDesc};
use oxla_pjrt::LoadedExecutable;

use crate::array::{Array, Inner};
use crate::error::{Error, Result};
use crate::sharding::spmd::{self, SpmdProgram};
use crate::trace::{self, TraceKind};
use crate::transform::{batching, jvp};

/// A primitive, its input types, for inputs split over a mesh their
/// shardings, and the id of the device it runs on when not the default.
type EagerKey = (Primitive, Vec<Aval>, Vec<Option<ShardingDesc>>, Option<i64>);

/// A compiled one-equation program: for one device, or for a mesh when an
/// input is sharded or the op pins a sharding.
enum EagerProgram {
    Single(LoadedExecutable),
    Spmd(SpmdProgram),
}

/// Programs the eager cache keeps when `OXLA_EAGER_CACHE_ENTRIES` is unset.
const DEFAULT_EAGER_CACHE_ENTRIES: usize = 4096;

fn eager_cache() -> &'static Mutex<LruCache<EagerKey, Arc<EagerProgram>>> {
    static CACHE: OnceLock<Mutex<LruCache<EagerKey, Arc<EagerProgram>>>> = OnceLock::new();
    CACHE.get_or_init(|| {
        let entries = oxla_pjrt::settings::setting(
            "OXLA_EAGER_CACHE_ENTRIES",
            "a whole number of programs, at least 1",
            |v| v.parse::<NonZeroUsize>().ok(),
        )
        .or_default(NonZeroUsize::new(DEFAULT_EAGER_CACHE_ENTRIES).expect("nonzero"));
        Mutex::new(LruCache::new(entries))
    })
}

/// Number of eagerly compiled primitive programs in the cache.
///
/// Outside `jit`, every operation runs eagerly as a one-equation program,
/// compiled once per primitive, parameters and input types (and input
/// shardings), then kept in a least-recently-used cache of
/// `OXLA_EAGER_CACHE_ENTRIES` programs (default 4096; see
/// [`set_eager_cache_capacity`]). A cached program carries no source
/// location: it serves every caller (shape errors are raised before it,
/// with the caller's line).
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let a = jnp::exp(&x);                                   // compiles exp for f32[2]
/// let n = oxla::eager_cache_size();
/// let y = Array::from_slice(&[3.0f32, 4.0], &[2])?;
/// let b = jnp::exp(&y);                                    // the same program: cached
/// assert_eq!(oxla::eager_cache_size(), n);
/// assert_eq!(a.to_vec::<f32>()?.len() + b.to_vec::<f32>()?.len(), 4);
/// # Ok(())
/// # }
/// ```
pub fn eager_cache_size() -> usize {
    eager_cache().lock().map(|c| c.len()).unwrap_or(0)
}

/// Bounds the eager op cache to `entries` programs (the default is
/// `OXLA_EAGER_CACHE_ENTRIES`, else 4096), dropping the least recently used
/// ones beyond it.
pub fn set_eager_cache_capacity(entries: NonZeroUsize) {
    if let Ok(mut cache) = eager_cache().lock() {
        cache.resize(entries);
    }
}

thread_local! {
    /// While a transformation rule runs: the location of the equation it
    /// is for, which every equation the rule makes carries.
    static RULE_LOCATION: Cell<Option<Location>> = const { Cell::new(None) };
}

/// The location an op called from `caller` records: the user's line, or,
/// inside a transformation rule, the line of the equation being transformed.
pub(crate) fn current_location(caller: &'static std::panic::Location<'static>) -> Location {
    RULE_LOCATION
        .with(Cell::get)
        .unwrap_or_else(|| Location::from_caller(caller))
}

/// The location of the equation whose rule is running, if any.
pub(crate) fn rule_location() -> Option<Location> {
    RULE_LOCATION.with(Cell::get)
}

/// Runs `f` with every equation it records attributed to the line that
/// called the function calling this one: a library function built from
/// other oxla calls (a layer, an activation with a custom rule), marked
/// `#[track_caller]`, then reports its user's line in errors, jaxprs and
/// profiles instead of its own.
#[track_caller]
pub fn at_caller_location<R>(f: impl FnOnce() -> R) -> R {
    let location = current_location(std::panic::Location::caller());
    with_rule_location(location, f)
}

/// Runs a rule for an equation at `location`: equations it makes carry it.
pub(crate) fn with_rule_location<R>(location: Location, f: impl FnOnce() -> R) -> R {
    let saved = RULE_LOCATION.with(|l| l.replace(Some(location)));
    let result = f();
    RULE_LOCATION.with(|l| l.set(saved));
    result
}

/// The compiled one-equation program of `primitive` on inputs of `avals`
/// laid out as `shardings` (`meshes`: the inputs' meshes).
fn eager_program(
    primitive: &Primitive,
    avals: &[Aval],
    shardings: &[Option<ShardingDesc>],
    meshes: &[&crate::sharding::Mesh],
    device: Option<i64>,
) -> Result<Arc<EagerProgram>> {
    let key = (
        primitive.clone(),
        avals.to_vec(),
        shardings.to_vec(),
        device,
    );
    if let Some(e) = eager_cache()
        .lock()
        .ok()
        .and_then(|mut c| c.get(&key).cloned())
    {
        return Ok(e);
    }
    let mut builder = JaxprBuilder::new();
    let inputs: Vec<Atom> = avals
        .iter()
        .map(|a| Atom::Var(builder.add_invar(a.clone())))
        .collect();
    let outputs = builder.add_equation(primitive.clone(), inputs, None)?;
    let jaxpr = builder.finish(outputs.into_iter().map(Atom::Var).collect());
    let program = match oxla_lower::program_mesh(&jaxpr, shardings, &[])? {
        None => {
            EagerProgram::Single(crate::runtime::compile_on(&jaxpr, primitive.name(), device)?.0)
        }
        Some(desc) => {
            let mesh = spmd::mesh_of(&desc, meshes)?;
            let replicated = ShardingDesc::replicated(desc);
            let args: Vec<Option<ShardingDesc>> = shardings
                .iter()
                .map(|s| Some(s.clone().unwrap_or_else(|| replicated.clone())))
                .collect();
            let results = vec![None; jaxpr.outvars.len()];
            let (program, _) =
                spmd::compile(&jaxpr, &mesh, &args, &results, &[], primitive.name())?;
            EagerProgram::Spmd(program)
        }
    };
    let program = Arc::new(program);
    if let Ok(mut cache) = eager_cache().lock() {
        cache.put(key, program.clone());
    }
    Ok(program)
}

/// Applies `primitive` to `inputs` at the caller's source line: the single
/// output, or an error array.
#[track_caller]
pub(crate) fn bind(primitive: Primitive, inputs: &[&Array]) -> Array {
    let location = current_location(std::panic::Location::caller());
    match bind_at(primitive, inputs, location) {
        Ok(mut outs) => outs.swap_remove(0),
        Err(e) => Array::error(e),
    }
}

/// Applies a primitive with `n` outputs at the caller's source line (on
/// failure, `n` error arrays).
#[track_caller]
pub(crate) fn bind_n(primitive: Primitive, inputs: &[&Array], n: usize) -> Vec<Array> {
    let location = current_location(std::panic::Location::caller());
    match bind_at(primitive, inputs, location) {
        Ok(outs) => outs,
        Err(e) => (0..n).map(|_| Array::error(e.clone())).collect(),
    }
}

/// The level of the trace that handles an op on `inputs`: the highest
/// among the inputs' tracers and the innermost dynamic (jit) trace; `None`
/// to run eagerly. A tracer of a closed trace is an error.
pub(crate) fn top_level(inputs: &[&Array], location: Location) -> Result<Option<usize>> {
    let mut top = trace::dynamic_level();
    for x in inputs {
        if let Some(id) = x.trace_id() {
            let level = trace::level_of(id).ok_or(Error::EscapedTracer { location })?;
            top = Some(top.map_or(level, |t| t.max(level)));
        }
    }
    Ok(top)
}

/// The operands of an ordinary op inside a `shard_map` body that checks
/// varying axes, each made to vary over every axis any of them varies
/// over (JAX inserts the same `pvary`s): `None` when they already agree.
/// The `pvary`s are what make reverse mode sum a replicated value's
/// cotangent over the devices.
fn align_varying_axes(
    primitive: &Primitive,
    inputs: &[&Array],
    location: Location,
) -> Result<Option<Vec<Array>>> {
    if inputs.len() < 2
        || oxla_core::shape_rules::varying_rule(primitive)
            != oxla_core::shape_rules::VaryingRule::Union
    {
        return Ok(None);
    }
    // The common case (outside shard_map, every list empty) allocates
    // nothing.
    let mut agree = true;
    for x in &inputs[1..] {
        agree &= x.aval()?.vma == inputs[0].aval()?.vma;
    }
    if agree {
        return Ok(None);
    }
    let vmas: Vec<oxla_core::Vma> = inputs
        .iter()
        .map(|x| x.aval().map(|a| a.vma.clone()))
        .collect::<Result<_>>()?;
    let Some(mesh) = crate::sharding::axis_env::varying_mesh() else {
        return Ok(None);
    };
    let mut all: Vec<Arc<str>> = vmas.iter().flat_map(|v| v.iter().cloned()).collect();
    all.sort();
    all.dedup();
    inputs
        .iter()
        .zip(&vmas)
        .map(|(x, vma)| {
            let missing: Vec<Arc<str>> = all.iter().filter(|a| !vma.contains(a)).cloned().collect();
            if missing.is_empty() {
                return Ok((*x).clone());
            }
            let group = oxla_core::AxisGroup::devices(mesh.clone(), missing.into());
            Ok(bind_at(
                Primitive::Collective(collective::Op::Pvary { group }),
                &[x],
                location,
            )?
            .remove(0))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The level of the batch trace that computes a collective over a named
/// `vmap` axis: the innermost `vmap` of that name, which sees the op even
/// when its operand does not depend on the batch (`None` for other ops).
fn vmap_axis_level(primitive: &Primitive, location: Location) -> Result<Option<usize>> {
    let Some(name) = primitive.axis_group().and_then(|g| g.vmap_axis()) else {
        return Ok(None);
    };
    trace::named_batch_level(name)
        .map(Some)
        .ok_or_else(|| Error::Sharding {
            message: format!(
                "{} over the vmap axis '{name}' outside that vmap: the axis name is not bound",
                primitive.name()
            ),
            location: Some(location),
        })
}

/// What a trace level does with an op.
enum Handler {
    Stage(u64),
    Jvp(u64, Option<u64>),
    Batch(u64, crate::trace::BatchAxis),
}

/// [`bind`] with an explicit location, returning every output. An error is
/// also recorded on the innermost open trace, so it is reported even if no
/// output depends on it.
pub(crate) fn bind_at(
    primitive: Primitive,
    inputs: &[&Array],
    location: Location,
) -> Result<Vec<Array>> {
    let result = dispatch(primitive, inputs, location);
    if let Err(e) = &result {
        trace::record_error(e);
    }
    result
}

fn dispatch(primitive: Primitive, inputs: &[&Array], location: Location) -> Result<Vec<Array>> {
    for x in inputs {
        if let Inner::Error(e) = &*x.inner {
            return Err(e.clone());
        }
    }
    let aligned = align_varying_axes(&primitive, inputs, location)?;
    let aligned_refs: Vec<&Array>;
    let inputs = match &aligned {
        Some(arrays) => {
            aligned_refs = arrays.iter().collect();
            &aligned_refs[..]
        }
        None => inputs,
    };
    let level = match vmap_axis_level(&primitive, location)? {
        Some(axis) => top_level(inputs, location)?.max(Some(axis)),
        None => top_level(inputs, location)?,
    };
    let Some(level) = level else {
        return eager(primitive, inputs, location);
    };
    let handler = trace::with_level(level, |entry| match &entry.kind {
        TraceKind::Staging { .. } => Handler::Stage(entry.id),
        TraceKind::Jvp { tangent_trace } => Handler::Jvp(entry.id, *tangent_trace),
        TraceKind::Batch { axis } => Handler::Batch(entry.id, axis.clone()),
    });
    match handler {
        Handler::Stage(id) => stage(id, primitive, inputs, location),
        Handler::Jvp(id, tangent_trace) => with_rule_location(location, || {
            jvp::process(id, tangent_trace, &primitive, inputs)
        }),
        Handler::Batch(id, axis) => with_rule_location(location, || {
            batching::process(id, &axis, &primitive, inputs)
        }),
    }
}

/// Records the equation in staging trace `id`.
pub(crate) fn stage(
    id: u64,
    primitive: Primitive,
    inputs: &[&Array],
    location: Location,
) -> Result<Vec<Array>> {
    trace::with_frame(id, |frame, id| -> Result<Vec<Array>> {
        let atoms = inputs
            .iter()
            .map(|x| frame.atom(id, x, location))
            .collect::<Result<Vec<_>>>()?;
        let vars = frame
            .builder
            .add_equation(primitive, atoms, Some(location))?;
        Ok(vars
            .into_iter()
            .map(|v| {
                let aval = frame.builder.aval(&Atom::Var(v)).clone();
                Array::from_inner(Inner::Traced {
                    trace: id,
                    atom: Atom::Var(v),
                    aval,
                })
            })
            .collect())
    })
    .unwrap_or_else(|| Err(Error::EscapedTracer { location }))
}

/// Runs one primitive now.
fn eager(primitive: Primitive, inputs: &[&Array], location: Location) -> Result<Vec<Array>> {
    let avals: Vec<Aval> = inputs
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let refs: Vec<&Aval> = avals.iter().collect();
    let out_avals = abstract_eval(&primitive, &refs).map_err(|error| CoreError::Shape {
        primitive: primitive.name().to_string(),
        inputs: avals.clone(),
        message: error.to_string(),
        location: Some(location),
    })?;
    let shardings: Vec<Option<ShardingDesc>> =
        inputs.iter().map(|x| x.program_sharding()).collect();
    let meshes: Vec<crate::sharding::Mesh> =
        inputs.iter().filter_map(|x| x.mesh().cloned()).collect();
    let meshes: Vec<&crate::sharding::Mesh> = meshes.iter().collect();
    let device = crate::sharding::committed::program_device(inputs.iter().copied(), location)?;
    let device_id = device.as_ref().map(|d| d.id().map(i64::from)).transpose()?;
    match &*eager_program(&primitive, &avals, &shardings, &meshes, device_id)? {
        EagerProgram::Single(executable) => {
            let buffers = crate::sharding::committed::buffers_on(
                inputs.iter().copied(),
                device.as_ref(),
                location,
            )?;
            let args: Vec<&oxla_pjrt::Buffer> = buffers.iter().map(|b| b.get()).collect();
            let outputs = executable.execute(&args).map_err(Error::from)?;
            // The outputs are registered as made at the op's line.
            Ok(with_rule_location(location, || {
                outputs
                    .into_iter()
                    .zip(out_avals)
                    .map(|(buffer, aval)| Array::wrap_buffer(buffer, aval))
                    .collect()
            }))
        }
        EagerProgram::Spmd(program) => program.run(
            inputs,
            &out_avals,
            &oxla_pjrt::ExecuteOptions::default(),
            location,
        ),
    }
}
