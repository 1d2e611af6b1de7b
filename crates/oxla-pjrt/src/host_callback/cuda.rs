//! Host callbacks on CUDA: the call's buffers are GPU memory, so the
//! handler copies the arguments to the host on the call's stream, waits
//! for them, runs the closure, copies its results back on the same stream
//! and waits again before the host copies go away, as jaxlib's GPU
//! callback does. The copies go through the CUDA driver API
//! (`libcuda.so.1`, which every CUDA plugin itself needs), loaded the
//! first time a callback runs on a GPU.

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use super::Call;
use crate::xla_ffi::abi::{CallFrame, StreamGetArgs};
use crate::xla_ffi::ffi_error_message;

/// `CUresult`; 0 is `CUDA_SUCCESS`.
type CuResult = c_int;
/// `CUstream` and `CUcontext`: opaque handles.
type CuHandle = *mut c_void;
/// `CUdeviceptr`.
type DevicePtr = u64;

/// The driver functions the staging uses.
struct Driver {
    /// Keeps the library loaded while the function pointers are used.
    _library: libloading::Library,
    stream_get_ctx: unsafe extern "C" fn(CuHandle, *mut CuHandle) -> CuResult,
    ctx_push_current: unsafe extern "C" fn(CuHandle) -> CuResult,
    ctx_pop_current: unsafe extern "C" fn(*mut CuHandle) -> CuResult,
    memcpy_dtoh_async: unsafe extern "C" fn(*mut c_void, DevicePtr, usize, CuHandle) -> CuResult,
    memcpy_htod_async: unsafe extern "C" fn(DevicePtr, *const c_void, usize, CuHandle) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(CuHandle) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

impl Driver {
    /// Loads `libcuda.so.1` and its functions (once per process).
    fn get() -> Result<&'static Driver, String> {
        static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
        DRIVER
            .get_or_init(|| {
                // SAFETY: loading the CUDA driver runs its initializers,
                // which the CUDA plugin has already run in this process.
                let library = unsafe { libloading::Library::new("libcuda.so.1") }
                    .map_err(|e| format!("cannot load the CUDA driver (libcuda.so.1): {e}"))?;
                // SAFETY: each symbol has the signature of the CUDA driver
                // API function of that name.
                unsafe {
                    macro_rules! symbol {
                        ($name:literal) => {
                            *library.get($name).map_err(|e| {
                                format!(
                                    "the CUDA driver has no {}: {e}",
                                    String::from_utf8_lossy(&$name[..$name.len() - 1])
                                )
                            })?
                        };
                    }
                    Ok(Driver {
                        stream_get_ctx: symbol!(b"cuStreamGetCtx\0"),
                        ctx_push_current: symbol!(b"cuCtxPushCurrent_v2\0"),
                        ctx_pop_current: symbol!(b"cuCtxPopCurrent_v2\0"),
                        memcpy_dtoh_async: symbol!(b"cuMemcpyDtoHAsync_v2\0"),
                        memcpy_htod_async: symbol!(b"cuMemcpyHtoDAsync_v2\0"),
                        stream_synchronize: symbol!(b"cuStreamSynchronize\0"),
                        get_error_string: symbol!(b"cuGetErrorString\0"),
                        _library: library,
                    })
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `Ok` for `CUDA_SUCCESS`, else an error naming `what` and the
    /// driver's message.
    fn check(&self, result: CuResult, what: &str) -> Result<(), String> {
        if result == 0 {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: the driver writes a pointer to a static string, or
        // leaves it null for an unknown code.
        let message = unsafe {
            if (self.get_error_string)(result, &mut text) == 0 && !text.is_null() {
                std::ffi::CStr::from_ptr(text)
                    .to_string_lossy()
                    .into_owned()
            } else {
                "unknown error".to_string()
            }
        };
        Err(format!(
            "{what} failed in the CUDA driver (error {result}: {message})"
        ))
    }
}

impl Driver {
    /// Enqueues `copies` (each an asynchronous copy's result) until one
    /// fails, then waits for the stream either way, so that no host
    /// buffer is freed under a copy in flight.
    fn copy_and_wait(
        &self,
        stream: CuHandle,
        copies: impl Iterator<Item = CuResult>,
        what: &str,
    ) -> Result<(), String> {
        let mut copies = copies;
        let copied = copies.try_for_each(|result| self.check(result, &format!("copying {what}")));
        // SAFETY: the call's live stream.
        let synchronized = self.check(
            unsafe { (self.stream_synchronize)(stream) },
            &format!("waiting for {what} (cuStreamSynchronize)"),
        );
        copied.and(synchronized)
    }
}

/// The stream XLA runs the call on (a `CUstream`).
///
/// # Safety
/// `frame` is a call frame XLA passed for execution.
unsafe fn call_stream(frame: &CallFrame) -> Result<CuHandle, String> {
    // SAFETY: per the contract, `api` is XLA's table for this call.
    let api = unsafe { frame.api.as_ref() }.ok_or("the call frame has no XLA FFI API")?;
    let get = api
        .stream_get
        .ok_or("the plugin's XLA FFI API has no XLA_FFI_Stream_Get")?;
    let mut args = StreamGetArgs {
        struct_size: std::mem::size_of::<StreamGetArgs>(),
        extension_start: std::ptr::null_mut(),
        ctx: frame.ctx,
        stream: std::ptr::null_mut(),
    };
    // SAFETY: `args` is the struct XLA_FFI_Stream_Get takes, with the
    // call's execution context.
    let error = unsafe { get(&mut args) };
    if !error.is_null() {
        // SAFETY: a non-null result is an XLA FFI error of this API.
        return Err(unsafe { ffi_error_message(api, error) });
    }
    Ok(args.stream)
}

/// Runs `call`, whose buffers are GPU memory, on host copies of them.
///
/// # Safety
/// `frame` is the call frame XLA passed for `call`, on the CUDA plugin.
pub(super) unsafe fn run_staged(frame: &CallFrame, call: Call<'_>) -> Result<(), String> {
    let driver = Driver::get()?;
    // SAFETY: per the contract.
    let stream = unsafe { call_stream(frame) }?;
    let mut context: CuHandle = std::ptr::null_mut();
    // SAFETY: `stream` is the live CUstream of this call.
    driver.check(
        unsafe { (driver.stream_get_ctx)(stream, &mut context) },
        "cuStreamGetCtx",
    )?;
    // SAFETY: `context` is the stream's context; it is popped below.
    driver.check(
        unsafe { (driver.ctx_push_current)(context) },
        "cuCtxPushCurrent",
    )?;
    let outcome = stage(driver, stream, &call);
    let mut popped: CuHandle = std::ptr::null_mut();
    // SAFETY: pops the context pushed above.
    let pop = driver.check(
        unsafe { (driver.ctx_pop_current)(&mut popped) },
        "cuCtxPopCurrent",
    );
    outcome.and(pop)
}

/// The copies and the closure, with the stream's context current.
fn stage(driver: &Driver, stream: CuHandle, call: &Call<'_>) -> Result<(), String> {
    let mut arguments: Vec<Vec<u8>> = call.arguments.iter().map(|v| vec![0; v.len]).collect();
    let to_host = call
        .arguments
        .iter()
        .zip(&mut arguments)
        .map(|(view, host)| {
            // SAFETY: `view.data` is a device buffer of `view.len` bytes alive
            // for the call, `host` has room for them, and `copy_and_wait`
            // synchronizes the stream before `host` is read or dropped.
            unsafe {
                (driver.memcpy_dtoh_async)(
                    host.as_mut_ptr().cast(),
                    view.data as DevicePtr,
                    view.len,
                    stream,
                )
            }
        });
    driver.copy_and_wait(stream, to_host, "a host callback's argument to the host")?;
    let mut results: Vec<Vec<u8>> = call.results.iter().map(|v| vec![0; v.len]).collect();
    {
        let argument_bytes: Vec<&[u8]> = arguments.iter().map(Vec::as_slice).collect();
        let mut result_bytes: Vec<&mut [u8]> = results.iter_mut().map(Vec::as_mut_slice).collect();
        call.invoke(&argument_bytes, &mut result_bytes)?;
    }
    let to_device = call.results.iter().zip(&results).map(|(view, host)| {
        // SAFETY: `view.data` is a device buffer of `view.len` writable
        // bytes, `host` holds as many, and `copy_and_wait` synchronizes
        // the stream before `host` is dropped.
        unsafe {
            (driver.memcpy_htod_async)(
                view.data as DevicePtr,
                host.as_ptr().cast(),
                view.len,
                stream,
            )
        }
    });
    driver.copy_and_wait(stream, to_device, "a host callback's result to the GPU")
}
