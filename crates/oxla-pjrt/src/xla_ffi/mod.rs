//! What every XLA FFI handler oxla registers shares: registering a
//! handler with a plugin through the PJRT FFI extension
//! (`PJRT_Extension_Type_FFI`), answering XLA's metadata query, reading a
//! call frame's buffers and scalar attributes, and turning a handler's
//! error or panic into an XLA FFI error, which the execution returns as
//! the plugin's error while the process goes on.
//!
//! The handlers: host callbacks (`crate::host_callback`) and LAPACK's
//! (`crate::lapack`). The struct layouts are in `abi`.

pub(crate) mod abi;

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use abi::*;

use crate::api::Api;
use crate::element_type::{ElementType, ElementTypeTags};
use crate::error::{Error, Result};

/// An XLA FFI handler.
pub(crate) type Handler = unsafe extern "C" fn(*mut CallFrame) -> *mut c_void;

/// Registers `handler` for custom calls to `target` on `platform_name`
/// (the CPU plugins' `Host`, or `CUDA`) with the plugin of `api`.
pub(crate) fn register_handler(
    api: &Api,
    target: &str,
    platform_name: &str,
    handler: Handler,
) -> Result<()> {
    let unsupported = |function: &'static str| Error::Unsupported {
        function,
        api: api.version(),
    };
    let extension = api
        .extension(FFI_EXTENSION_TYPE)
        .map_or(std::ptr::null(), |e| e.cast::<FfiExtension>());
    if extension.is_null() {
        return Err(unsupported(
            "the FFI extension (PJRT_Extension_Type_FFI), which oxla's FFI handlers \
             (host callbacks, LAPACK) need",
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
        unsupported(
            "PJRT_FFI_Register_Handler of the FFI extension, which oxla's FFI handlers \
             (host callbacks, LAPACK) need",
        )
    })?;
    let mut args = RegisterHandlerArgs {
        struct_size: REGISTER_HANDLER_ARGS_SIZE,
        target_name: target.as_ptr().cast(),
        target_name_size: target.len(),
        handler: handler as *const c_void,
        platform_name: platform_name.as_ptr().cast(),
        platform_name_size: platform_name.len(),
        traits: 0,
    };
    // SAFETY: `args` is the struct `register_handler` takes, its names
    // live across the call (XLA copies them), and the handler is a
    // function of the XLA FFI handler signature for the process's life.
    let error = unsafe { register(&mut args) };
    api.check(error, "PJRT_FFI_Register_Handler")
}

/// Runs `register` once per plugin (by its library path) and `what`
/// (`"host callbacks"`, `"LAPACK"`): later calls for the same plugin do
/// nothing; a failed registration is tried again next time.
pub(crate) fn once_per_plugin(
    api: &Api,
    what: &'static str,
    register: impl FnOnce() -> Result<()>,
) -> Result<()> {
    static DONE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashSet<(std::path::PathBuf, &'static str)>>,
    > = std::sync::OnceLock::new();
    let mut done = DONE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = (api.path().to_path_buf(), what);
    if done.contains(&key) {
        return Ok(());
    }
    register()?;
    done.insert(key);
    Ok(())
}

/// Makes an XLA FFI error with `message` through the call frame's API.
///
/// # Safety
/// `frame.api` points at the XLA FFI API table XLA passed.
pub(crate) unsafe fn ffi_error(frame: &CallFrame, code: c_int, message: &str) -> *mut c_void {
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
pub(crate) unsafe fn ffi_error_message(api: &XlaFfiApi, error: *mut c_void) -> String {
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
pub(crate) unsafe fn scalar_attribute(
    attrs: &Attributes,
    wanted: &str,
) -> Option<(c_int, *const c_void)> {
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

/// One buffer of a call: where it is (host or device memory, by
/// platform), its element type, dimensions and byte length.
pub(crate) struct BufferView<'f> {
    /// The buffer's memory.
    pub(crate) data: *mut c_void,
    /// Its element type.
    pub(crate) element_type: ElementType,
    /// Its dimensions, in logical order.
    pub(crate) dims: &'f [i64],
    /// Its size in bytes.
    pub(crate) len: usize,
}

// SAFETY: a view is of a buffer XLA keeps alive for the call; the
// handlers that share views across threads (LAPACK's batches) touch
// disjoint parts of it from each.
unsafe impl Send for BufferView<'_> {}
// SAFETY: as above.
unsafe impl Sync for BufferView<'_> {}

/// The buffers of a call frame's argument or result table.
///
/// # Safety
/// `values` is a table of a call frame XLA passed for execution.
pub(crate) unsafe fn buffers(values: &Values) -> std::result::Result<Vec<BufferView<'_>>, String> {
    let n = usize::try_from(values.size).map_err(|_| "a negative count".to_string())?;
    (0..n)
        .map(|i| {
            // SAFETY: XLA's table holds `size` types and values, and a
            // buffer value is an `XLA_FFI_Buffer` alive for the call.
            unsafe {
                if *values.types.add(i) != BUFFER {
                    return Err("a non-buffer operand".to_string());
                }
                let buffer = &*(*values.values.add(i)).cast::<Buffer>();
                let element_type = crate::proto::PrimitiveType::try_from(buffer.dtype)
                    .ok()
                    .and_then(ElementType::from_primitive_type)
                    .ok_or_else(|| format!("a buffer of XLA data type {}", buffer.dtype))?;
                let rank =
                    usize::try_from(buffer.rank).map_err(|_| "a negative rank".to_string())?;
                // XLA passes `rank` dimensions.
                let dims = if rank == 0 {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(buffer.dims, rank)
                };
                let count: usize = dims.iter().map(|&d| d.max(0) as usize).product();
                Ok(BufferView {
                    data: buffer.data,
                    element_type,
                    dims,
                    len: count * element_type.byte_size(),
                })
            }
        })
        .collect()
}

/// What every handler does around its work: answer XLA's metadata query
/// (at registration), then `run` the call and turn its error or panic
/// (`what` names the handler in a panic's message) into an XLA FFI error.
///
/// # Safety
/// `frame` is a call frame XLA passed.
pub(crate) unsafe fn dispatch(
    frame: *mut CallFrame,
    what: &str,
    run: impl FnOnce(&CallFrame) -> std::result::Result<(), String>,
) -> *mut c_void {
    // SAFETY: XLA calls a handler with a valid call frame.
    let frame = unsafe { &*frame };
    // The metadata query: report FFI API 0.1, which every pinned plugin
    // accepts, and no traits.
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
    let outcome = catch_unwind(AssertUnwindSafe(|| run(frame)));
    let (code, message) = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(message)) => (INVALID_ARGUMENT, message),
        Err(panic) => (
            INTERNAL,
            format!(
                "{what} panicked: {}",
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
