//! Applying a primitive: staged into the open trace, or run eagerly as a
//! one-equation program (compiled once per primitive, parameters and input
//! types, then cached).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use oxla_core::shape_rules::abstract_eval;
use oxla_core::{Atom, Aval, CoreError, JaxprBuilder, Location, Primitive};
use oxla_pjrt::LoadedExecutable;

use crate::array::{Array, Inner};
use crate::error::{Error, Result};
use crate::trace;

type EagerKey = (Primitive, Vec<Aval>);

fn eager_cache() -> &'static Mutex<HashMap<EagerKey, Arc<LoadedExecutable>>> {
    static CACHE: OnceLock<Mutex<HashMap<EagerKey, Arc<LoadedExecutable>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Number of eagerly compiled primitive programs in the cache.
pub fn eager_cache_size() -> usize {
    eager_cache().lock().map(|c| c.len()).unwrap_or(0)
}

/// The compiled one-equation program of `primitive` on `avals`.
fn eager_executable(
    primitive: &Primitive,
    avals: &[Aval],
    location: Location,
) -> Result<Arc<LoadedExecutable>> {
    let key = (primitive.clone(), avals.to_vec());
    if let Some(e) = eager_cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(e);
    }
    let mut builder = JaxprBuilder::new();
    let inputs: Vec<Atom> = avals
        .iter()
        .map(|a| Atom::Var(builder.add_invar(a.clone())))
        .collect();
    let outputs = builder.add_equation(primitive.clone(), inputs, Some(location))?;
    let jaxpr = builder.finish(outputs.into_iter().map(Atom::Var).collect());
    let (executable, _) = crate::runtime::compile(&jaxpr, primitive.name())?;
    let executable = Arc::new(executable);
    if let Ok(mut cache) = eager_cache().lock() {
        cache.insert(key, executable.clone());
    }
    Ok(executable)
}

/// Applies `primitive` to `inputs` at the caller's source line: the single
/// output, or an error array.
#[track_caller]
pub(crate) fn bind(primitive: Primitive, inputs: &[&Array]) -> Array {
    let location = Location::from_caller(std::panic::Location::caller());
    match bind_at(primitive, inputs, location) {
        Ok(mut outs) => outs.swap_remove(0),
        Err(e) => Array::error(e),
    }
}

/// Applies a primitive with `n` outputs at the caller's source line (on
/// failure, `n` error arrays).
#[track_caller]
pub(crate) fn bind_n(primitive: Primitive, inputs: &[&Array], n: usize) -> Vec<Array> {
    let location = Location::from_caller(std::panic::Location::caller());
    match bind_at(primitive, inputs, location) {
        Ok(outs) => outs,
        Err(e) => (0..n).map(|_| Array::error(e.clone())).collect(),
    }
}

/// [`bind`] with an explicit location, returning every output.
pub(crate) fn bind_at(
    primitive: Primitive,
    inputs: &[&Array],
    location: Location,
) -> Result<Vec<Array>> {
    for x in inputs {
        if let Inner::Error(e) = &*x.inner {
            return Err(e.clone());
        }
    }
    if let Some(staged) = trace::with_top(|frame| -> Result<Vec<Array>> {
        let atoms = inputs
            .iter()
            .map(|x| frame.atom(x, location))
            .collect::<Result<Vec<_>>>()?;
        let vars = frame
            .builder
            .add_equation(primitive.clone(), atoms, Some(location))?;
        Ok(vars
            .into_iter()
            .map(|v| {
                let aval = frame.builder.aval(&Atom::Var(v)).clone();
                Array::from_inner(Inner::Traced {
                    trace: frame.id,
                    atom: Atom::Var(v),
                    aval,
                })
            })
            .collect())
    }) {
        return staged;
    }
    eager(primitive, inputs, location)
}

/// Runs one primitive now.
fn eager(primitive: Primitive, inputs: &[&Array], location: Location) -> Result<Vec<Array>> {
    let avals: Vec<Aval> = inputs
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let refs: Vec<&Aval> = avals.iter().collect();
    let out_avals = abstract_eval(&primitive, &refs).map_err(|message| CoreError::Shape {
        primitive: primitive.name().to_string(),
        inputs: avals.clone(),
        message,
        location: Some(location),
    })?;
    let executable = eager_executable(&primitive, &avals, location)?;
    let buffers = inputs
        .iter()
        .map(|x| x.buffer_at(location))
        .collect::<Result<Vec<_>>>()?;
    let args: Vec<&oxla_pjrt::Buffer> = buffers.iter().map(|b| b.get()).collect();
    let outputs = executable.execute(&args).map_err(Error::from)?;
    Ok(outputs
        .into_iter()
        .zip(out_avals)
        .map(|(buffer, aval)| Array::wrap_buffer(buffer, aval))
        .collect())
}
