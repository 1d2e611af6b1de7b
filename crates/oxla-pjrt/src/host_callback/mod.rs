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
//! The struct layouts are in `abi`.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::client::Client;
use crate::discovery::Platform;
use crate::element_type::ElementType;
use crate::element_type::ElementTypeTags;
use crate::error::{Error, Result};

mod abi;
mod cuda;

use abi::*;

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
        static ENABLED: OnceLock<Mutex<HashSet<std::path::PathBuf>>> = OnceLock::new();
        let api = self.api();
        let mut enabled = ENABLED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if enabled.contains(api.path()) {
            return Ok(());
        }
        let unsupported = |function: &'static str| Error::Unsupported {
            function,
            api: api.version(),
        };
        let platform = self.platform_name()?;
        let (platform_name, handler): (&str, Handler) = match platform.parse::<Platform>() {
            Ok(Platform::Cpu) => ("Host", host_handler),
            Ok(Platform::Cuda) => ("CUDA", cuda_handler),
            Ok(Platform::Rocm | Platform::Tpu) | Err(_) => {
                return Err(Error::HostCallbacksUnsupported { platform });
            }
        };
        let extension = api
            .extension(FFI_EXTENSION_TYPE)
            .map_or(std::ptr::null(), |e| e.cast::<FfiExtension>());
        if extension.is_null() {
            return Err(unsupported(
                "the FFI extension (PJRT_Extension_Type_FFI), which host callbacks need",
            ));
        }
        // SAFETY: an FFI extension's struct holds `register_handler` when
        // its size covers it.
        let register = unsafe {
            if (*extension).base.struct_size < std::mem::size_of::<FfiExtension>() {
                None
            } else {
                (*extension).register_handler
            }
        }
        .ok_or_else(|| {
            unsupported("PJRT_FFI_Register_Handler of the FFI extension, which host callbacks need")
        })?;
        let mut args = RegisterHandlerArgs {
            struct_size: REGISTER_HANDLER_ARGS_SIZE,
            target_name: HOST_CALLBACK_TARGET.as_ptr().cast(),
            target_name_size: HOST_CALLBACK_TARGET.len(),
            handler: handler as *const c_void,
            platform_name: platform_name.as_ptr().cast(),
            platform_name_size: platform_name.len(),
            traits: 0,
        };
        // SAFETY: `args` is the struct `register_handler` takes, its names
        // live across the call (XLA copies them), and the handler is a
        // function of the XLA FFI handler signature for the process's life.
        let error = unsafe { register(&mut args) };
        api.check(error, "PJRT_FFI_Register_Handler")?;
        enabled.insert(api.path().to_path_buf());
        Ok(())
    }
}

/// An XLA FFI handler.
type Handler = unsafe extern "C" fn(*mut CallFrame) -> *mut c_void;

/// Makes an XLA FFI error with `message` through the call frame's API.
///
/// # Safety
/// `frame.api` points at the XLA FFI API table XLA passed.
unsafe fn ffi_error(frame: &CallFrame, code: c_int, message: &str) -> *mut c_void {
    let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: per the contract, `api` is XLA's table; `Error_Create` copies
    // the message.
    unsafe {
        let Some(create) = frame.api.as_ref().and_then(|api| api.error_create) else {
            return std::ptr::null_mut();
        };
        let mut args = ErrorCreateArgs {
            struct_size: ERROR_CREATE_ARGS_SIZE,
            extension_start: std::ptr::null_mut(),
            message: text.as_ptr(),
            errc: code,
        };
        create(&mut args)
    }
}

/// The message of an XLA FFI error `api` made, which it then destroys.
///
/// # Safety
/// `error` is a live XLA FFI error of `api`, not used afterwards.
unsafe fn ffi_error_message(api: &XlaFfiApi, error: *mut c_void) -> String {
    let mut message = "an XLA FFI error with no message".to_string();
    // SAFETY: per the contract; the message lives until the error is
    // destroyed, and is copied first.
    unsafe {
        if let Some(get) = api.error_get_message {
            let mut args = ErrorGetMessageArgs {
                struct_size: std::mem::size_of::<ErrorGetMessageArgs>(),
                extension_start: std::ptr::null_mut(),
                error,
                message: std::ptr::null(),
            };
            get(&mut args);
            if !args.message.is_null() {
                message = std::ffi::CStr::from_ptr(args.message)
                    .to_string_lossy()
                    .into_owned();
            }
        }
        if let Some(destroy) = api.error_destroy {
            let mut args = ErrorDestroyArgs {
                struct_size: std::mem::size_of::<ErrorDestroyArgs>(),
                extension_start: std::ptr::null_mut(),
                error,
            };
            destroy(&mut args);
        }
    }
    message
}

/// The scalar attribute `wanted` of a call frame: its XLA data type and
/// a pointer to its value.
///
/// # Safety
/// `attrs` is a call frame's attribute table.
unsafe fn scalar_attribute(attrs: &Attributes, wanted: &str) -> Option<(c_int, *const c_void)> {
    // SAFETY: XLA's table holds `size` names, types and values.
    unsafe {
        for i in 0..usize::try_from(attrs.size).ok()? {
            let name = &**attrs.names.add(i);
            let name = std::slice::from_raw_parts(name.ptr.cast::<u8>(), name.len);
            if name == wanted.as_bytes() && *attrs.types.add(i) == SCALAR_ATTRIBUTE {
                let scalar = &*(*attrs.values.add(i)).cast::<Scalar>();
                return Some((scalar.dtype, scalar.value));
            }
        }
    }
    None
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

/// A buffer's element type, dimensions and byte length.
///
/// # Safety
/// `buffer` is a buffer XLA passed in a call frame.
unsafe fn buffer_shape(
    buffer: &Buffer,
) -> std::result::Result<(ElementType, &[i64], usize), String> {
    let element_type = crate::proto::PrimitiveType::try_from(buffer.dtype)
        .ok()
        .and_then(ElementType::from_primitive_type)
        .ok_or_else(|| format!("a buffer of XLA data type {}", buffer.dtype))?;
    let rank = usize::try_from(buffer.rank).map_err(|_| "a negative rank".to_string())?;
    // SAFETY: XLA passes `rank` dimensions.
    let dims = unsafe {
        if rank == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(buffer.dims, rank)
        }
    };
    let count: usize = dims.iter().map(|&d| d.max(0) as usize).product();
    Ok((element_type, dims, count * element_type.byte_size()))
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

/// What both handlers do: answer XLA's metadata query, find the closure
/// and the buffers, `run` it, and turn its error or panic into an XLA
/// FFI error.
///
/// # Safety
/// `frame` is a call frame XLA passed.
unsafe fn handle(
    frame: *mut CallFrame,
    run: impl FnOnce(&CallFrame, Call) -> std::result::Result<(), String>,
) -> *mut c_void {
    // SAFETY: XLA calls the handler with a valid call frame.
    let frame = unsafe { &*frame };
    // The metadata query (at registration): report FFI API 0.1, which
    // every pinned plugin accepts, and no traits.
    // SAFETY: a non-null extension starts with its base.
    if let Some(extension) = unsafe { frame.extension_start.as_ref() }
        && extension.kind == METADATA_EXTENSION_TYPE
    {
        // SAFETY: the metadata extension holds XLA's metadata struct.
        unsafe {
            let metadata = &mut *(*(frame.extension_start as *mut MetadataExtension)).metadata;
            metadata.api_version.struct_size = std::mem::size_of::<ApiVersion>();
            metadata.api_version.extension_start = std::ptr::null_mut();
            metadata.api_version.major = 0;
            metadata.api_version.minor = 1;
            metadata.traits = 0;
        }
        return std::ptr::null_mut();
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the frame's tables come from XLA for this call.
        let call = unsafe { Call::of(frame) }?;
        run(frame, call)
    }));
    let (code, message) = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(message)) => (INVALID_ARGUMENT, message),
        Err(panic) => (
            INTERNAL,
            format!(
                "the host callback panicked: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)")
            ),
        ),
    };
    // SAFETY: the frame's API table is XLA's.
    unsafe { ffi_error(frame, code, &message) }
}

/// One buffer of a call: where it is (host or device memory, by
/// platform), its element type, dimensions and byte length.
struct BufferView<'f> {
    data: *mut c_void,
    element_type: ElementType,
    dims: &'f [i64],
    len: usize,
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
        let views = |values: &'f Values| -> std::result::Result<Vec<BufferView<'f>>, String> {
            let n = usize::try_from(values.size).map_err(|_| "a negative count".to_string())?;
            (0..n)
                .map(|i| {
                    // SAFETY: XLA's table holds `size` types and values,
                    // and a buffer value is an `XLA_FFI_Buffer` alive for
                    // the call.
                    unsafe {
                        if *values.types.add(i) != BUFFER {
                            return Err("a non-buffer operand".to_string());
                        }
                        let buffer = &*(*values.values.add(i)).cast::<Buffer>();
                        let (element_type, dims, len) = buffer_shape(buffer)?;
                        Ok(BufferView {
                            data: buffer.data,
                            element_type,
                            dims,
                            len,
                        })
                    }
                })
                .collect()
        };
        // SAFETY: per the contract.
        let ordered = unsafe { is_ordered(&frame.attrs) };
        let call = Call {
            function,
            ordered,
            arguments: views(&frame.args)?,
            results: views(&frame.rets)?,
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
