//! Host callbacks: Rust closures called from inside compiled programs, as
//! XLA FFI custom calls. One handler (`oxla_host_callback`) is registered
//! per plugin through the PJRT FFI extension (`PJRT_Extension_Type_FFI`);
//! a program calls it with `stablehlo.custom_call @oxla_host_callback`
//! (`api_version = 4`, typed FFI) whose `callback_id` attribute names the
//! closure in this process's registry. The handler hands the closure views
//! of the argument buffers and the result buffers to fill; an error or a
//! panic of the closure becomes an XLA FFI error, which the execution
//! returns as the plugin's error, and the process goes on.
//!
//! On the CPU plugins the handler (platform `Host`) hands the closure the
//! buffers themselves. On CUDA (platform `CUDA`) the buffers live on the
//! GPU: the handler copies the arguments to the host on the call's
//! stream, runs the closure, and copies its results back
//! (`cuda::DeviceStaging`), as jaxlib's GPU callback does.
//!
//! Registration, the call frame and errors are `crate::xla_ffi`'s.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock, RwLock};

use crate::client::Client;
use crate::discovery::Platform;
use crate::element_type::ElementType;
use crate::error::{Error, Result};

mod cuda;

use crate::xla_ffi::abi::*;
use crate::xla_ffi::{
    BufferView, Handler, buffers, dispatch, once_per_plugin, register_handler, scalar_attribute,
};

pub use oxla_dtype::callback_abi::{
    CALLBACK_ID_ATTRIBUTE, HOST_CALLBACK_TARGET, ORDERED_ATTRIBUTE,
};

/// An argument buffer of a host callback: its element type, dimensions
/// and row-major bytes.
#[derive(Debug)]
pub struct CallbackArgument<'a> {
    /// The element type.
    pub element_type: ElementType,
    /// The dimensions.
    pub dims: &'a [i64],
    /// The data, row-major.
    pub bytes: &'a [u8],
}

/// A result buffer of a host callback, which the closure fills whole.
#[derive(Debug)]
pub struct CallbackResult<'a> {
    /// The element type the program expects.
    pub element_type: ElementType,
    /// The dimensions the program expects.
    pub dims: &'a [i64],
    /// The data to write, row-major.
    pub bytes: &'a mut [u8],
}

/// A host callback: reads its arguments, fills its results, or says why
/// it could not.
pub type HostFunction = dyn Fn(&[CallbackArgument<'_>], &mut [CallbackResult<'_>]) -> std::result::Result<(), String>
    + Send
    + Sync;

fn callbacks() -> &'static RwLock<HashMap<u64, Arc<HostFunction>>> {
    static CALLBACKS: OnceLock<RwLock<HashMap<u64, Arc<HostFunction>>>> = OnceLock::new();
    CALLBACKS.get_or_init(Default::default)
}

/// Registers `function` for programs to call; returns the id their custom
/// call names in its `callback_id` attribute. The function stays
/// registered for the life of the process (compiled programs may hold
/// its id).
pub fn register_callback(function: Arc<HostFunction>) -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    callbacks()
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, function);
    id
}

impl Client {
    /// Registers oxla's host-callback handler with this client's plugin,
    /// for the platform it runs (once per plugin; later calls do
    /// nothing): the CPU plugins' `Host`, or `CUDA`. An error for other
    /// platforms, and when the plugin has no FFI extension or one without
    /// handler registration.
    pub fn enable_host_callbacks(&self) -> Result<()> {
        let api = self.api();
        once_per_plugin(api, "host callbacks", || {
            let platform = self.platform_name()?;
            let (platform_name, handler): (&str, Handler) = match platform.parse::<Platform>() {
                Ok(Platform::Cpu) => ("Host", host_handler),
                Ok(Platform::Cuda) => ("CUDA", cuda_handler),
                Ok(Platform::Rocm | Platform::Tpu) | Err(_) => {
                    return Err(Error::HostCallbacksUnsupported { platform });
                }
            };
            register_handler(api, HOST_CALLBACK_TARGET, platform_name, handler)
        })
    }
}

/// The `callback_id` attribute of a call frame.
///
/// # Safety
/// `attrs` is a call frame's attribute table.
unsafe fn callback_id(attrs: &Attributes) -> Option<u64> {
    // SAFETY: per the contract; the value has the type `dtype` says.
    unsafe {
        let (dtype, value) = scalar_attribute(attrs, CALLBACK_ID_ATTRIBUTE)?;
        match dtype {
            U64 => Some(*value.cast::<u64>()),
            S64 => u64::try_from(*value.cast::<i64>()).ok(),
            _ => None,
        }
    }
}

/// Whether the call frame's `ordered` attribute is true.
///
/// # Safety
/// `attrs` is a call frame's attribute table.
unsafe fn is_ordered(attrs: &Attributes) -> bool {
    // SAFETY: per the contract; a PRED is one byte.
    unsafe {
        matches!(scalar_attribute(attrs, ORDERED_ATTRIBUTE), Some((PRED, value)) if *value.cast::<u8>() != 0)
    }
}

/// The handler on the CPU plugins: the buffers are host memory.
unsafe extern "C" fn host_handler(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: XLA calls the handler with a valid call frame.
    unsafe { handle(frame, |_, call| run_on_host(call)) }
}

/// The handler on the CUDA plugin: the buffers are GPU memory, staged
/// through the host on the call's stream.
unsafe extern "C" fn cuda_handler(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: XLA calls the handler with a valid call frame.
    unsafe { handle(frame, |frame, call| cuda::run_staged(frame, call)) }
}

/// What both handlers do: find the closure and the buffers and `run` it.
///
/// # Safety
/// `frame` is a call frame XLA passed.
unsafe fn handle(
    frame: *mut CallFrame,
    run: impl FnOnce(&CallFrame, Call) -> std::result::Result<(), String>,
) -> *mut c_void {
    // SAFETY: per the contract.
    unsafe {
        dispatch(frame, "the host callback", |frame| {
            // The frame's tables come from XLA for this call.
            let call = Call::of(frame)?;
            run(frame, call)
        })
    }
}

/// A call of the handler: the closure its `callback_id` names, whether it
/// is ordered, and its argument and result buffers.
struct Call<'f> {
    function: Arc<HostFunction>,
    ordered: bool,
    arguments: Vec<BufferView<'f>>,
    results: Vec<BufferView<'f>>,
}

impl<'f> Call<'f> {
    /// Reads the call from XLA's frame.
    ///
    /// # Safety
    /// `frame` is a call frame XLA passed for execution.
    unsafe fn of(frame: &'f CallFrame) -> std::result::Result<Self, String> {
        // SAFETY: per the contract.
        let id = unsafe { callback_id(&frame.attrs) }
            .ok_or_else(|| format!("the custom call has no `{CALLBACK_ID_ATTRIBUTE}` attribute"))?;
        let function = callbacks()
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| format!("no host callback {id} is registered in this process"))?;
        // SAFETY: per the contract.
        let ordered = unsafe { is_ordered(&frame.attrs) };
        let call = Call {
            function,
            ordered,
            // SAFETY: per the contract.
            arguments: unsafe { buffers(&frame.args) }?,
            results: unsafe { buffers(&frame.rets) }?,
        };
        if ordered && (call.arguments.is_empty() || call.results.is_empty()) {
            return Err("an ordered host callback without its order operand".into());
        }
        Ok(call)
    }

    /// Runs the closure on host copies or views: `arguments[i]` holds the
    /// bytes of `self.arguments[i]`, `results[i]` the room for
    /// `self.results[i]`. An ordered call's first operand and result chain
    /// the program's effects in order: the chain's result is zeroed and
    /// both are hidden from the closure.
    fn invoke(
        &self,
        arguments: &[&[u8]],
        results: &mut [&mut [u8]],
    ) -> std::result::Result<(), String> {
        let skip = usize::from(self.ordered);
        let mut results = results.iter_mut();
        if self.ordered
            && let Some(chain) = results.next()
        {
            chain.fill(0);
        }
        let arguments: Vec<CallbackArgument<'_>> = self.arguments[skip..]
            .iter()
            .zip(&arguments[skip..])
            .map(|(view, bytes)| CallbackArgument {
                element_type: view.element_type,
                dims: view.dims,
                bytes,
            })
            .collect();
        let mut results: Vec<CallbackResult<'_>> = self.results[skip..]
            .iter()
            .zip(results)
            .map(|(view, bytes)| CallbackResult {
                element_type: view.element_type,
                dims: view.dims,
                bytes,
            })
            .collect();
        (self.function)(&arguments, &mut results)
    }
}

/// Runs a call whose buffers are host memory, on the buffers themselves.
fn run_on_host(call: Call<'_>) -> std::result::Result<(), String> {
    // SAFETY: on the CPU plugins each argument buffer holds `len` bytes
    // read-only for the call, and each result buffer `len` writable bytes
    // no one else touches during it.
    let arguments: Vec<&[u8]> = call
        .arguments
        .iter()
        .map(|view| unsafe { std::slice::from_raw_parts(view.data.cast::<u8>(), view.len) })
        .collect();
    let mut results: Vec<&mut [u8]> = call
        .results
        .iter()
        .map(|view| unsafe { std::slice::from_raw_parts_mut(view.data.cast::<u8>(), view.len) })
        .collect();
    call.invoke(&arguments, &mut results)
}
