//! Host callbacks (JAX's `pure_callback` and `io_callback`): a Rust
//! closure on host arrays, called from inside jitted code. The closure is
//! registered with the runtime (`oxla_pjrt::register_callback`) and the
//! program calls it through an XLA FFI custom call, so it runs inside the
//! one compiled executable, on whatever thread XLA runs it. A closure that
//! returns an error, returns arrays of other types than declared, or
//! panics, makes the call's execution fail with a message naming the
//! callback and its source line; the process goes on.

use oxla_core::DType;
use oxla_core::primitive::host;
use oxla_pjrt::ElementType;
use std::sync::Arc;

use oxla_core::{Aval, HostCallback, Location, Primitive, VmapMethod};
use oxla_npy::HostArray;
use oxla_pjrt::{CallbackArgument, CallbackResult};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::transform::support::bind_all;

/// What a host callback returns: its results, or why it failed.
pub type CallbackOutput = std::result::Result<Vec<HostArray>, String>;

/// Calls `f` on the host with `args`' values from inside the program,
/// which gets arrays of `results`' types back (`jax.pure_callback`). The
/// call is pure: XLA may skip it when nothing uses its results, or run it
/// once for equal calls. Under `vmap`, `vmap_method` says how it batches;
/// under `grad` it is an error unless wrapped in a custom rule.
#[track_caller]
pub fn pure_callback<F>(
    f: F,
    results: &[Aval],
    args: &[&Array],
    vmap_method: VmapMethod,
) -> Result<Vec<Array>>
where
    F: Fn(&[HostArray]) -> CallbackOutput + Send + Sync + 'static,
{
    let location = Location::from_caller(std::panic::Location::caller());
    host_call(
        "pure_callback",
        f,
        results,
        args,
        false,
        vmap_method,
        location,
    )
}

/// Calls `f` on the host for its effect (`jax.io_callback` with
/// `ordered=True`): never dropped, in program order with the program's
/// other effects, once per example under `vmap`.
#[track_caller]
pub fn io_callback<F>(f: F, results: &[Aval], args: &[&Array]) -> Result<Vec<Array>>
where
    F: Fn(&[HostArray]) -> CallbackOutput + Send + Sync + 'static,
{
    let location = Location::from_caller(std::panic::Location::caller());
    host_call(
        "io_callback",
        f,
        results,
        args,
        true,
        VmapMethod::Sequential,
        location,
    )
}

/// Registers `f` and binds its call on `args`.
pub(crate) fn host_call<F>(
    kind: &str,
    f: F,
    results: &[Aval],
    args: &[&Array],
    effectful: bool,
    vmap_method: VmapMethod,
    location: Location,
) -> Result<Vec<Array>>
where
    F: Fn(&[HostArray]) -> CallbackOutput + Send + Sync + 'static,
{
    let name = format!("{kind} at {location}");
    crate::runtime::client()?
        .enable_host_callbacks()
        .map_err(|e| Error::Runtime(Arc::new(e)))?;
    let label = name.clone();
    let id = oxla_pjrt::register_callback(Arc::new(
        move |arguments: &[CallbackArgument<'_>], slots: &mut [CallbackResult<'_>]| {
            let inputs: Vec<HostArray> = arguments
                .iter()
                .map(|a| HostArray::new(a.element_type, a.dims.to_vec(), a.bytes.to_vec()))
                .collect();
            let outputs = f(&inputs).map_err(|e| format!("{label}: {e}"))?;
            fill_results(&label, outputs, slots)
        },
    ));
    let primitive = Primitive::Host(host::Op::HostCallback {
        callback: HostCallback {
            id,
            name,
            effectful,
            vmap_method,
        },
        results: results.to_vec(),
    });
    // Errors of the transformations (grad) name the caller's line.
    crate::ops::with_rule_location(location, || bind_all(primitive, args))
}

/// Copies a callback's `outputs` into the program's result `slots` (the
/// declared types, batched under vmap), after checking them.
fn fill_results(
    label: &str,
    outputs: Vec<HostArray>,
    slots: &mut [CallbackResult<'_>],
) -> std::result::Result<(), String> {
    if outputs.len() != slots.len() {
        return Err(format!(
            "{label} returned {} arrays; it was declared with {}",
            outputs.len(),
            slots.len()
        ));
    }
    for (i, (out, slot)) in outputs.iter().zip(slots.iter_mut()).enumerate() {
        let declared = describe(slot.element_type, slot.dims);
        let got = describe(out.element_type(), &out.dims);
        if out.element_type() != slot.element_type || out.dims != slot.dims {
            return Err(format!(
                "{label} returned {got} for result {i}; it was declared {declared}"
            ));
        }
        if out.bytes.len() != slot.bytes.len() {
            return Err(format!(
                "{label} returned {} bytes for result {i} ({got}); {} expected",
                out.bytes.len(),
                slot.bytes.len()
            ));
        }
        slot.bytes.copy_from_slice(&out.bytes);
    }
    Ok(())
}

/// `f32[2,3]` for an element type and dimensions.
fn describe(element: oxla_pjrt::ElementType, dims: &[i64]) -> String {
    Aval::new(DType::from(element), dims).to_string()
}

/// A host array of `dtype` and `shape` from its row-major bytes, for
/// callbacks that build their results.
pub fn host_array(dtype: oxla_core::DType, shape: &[i64], bytes: Vec<u8>) -> HostArray {
    HostArray::new(ElementType::from(dtype), shape.to_vec(), bytes)
}
