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
//! The struct layouts are facts of XLA's FFI C API (`xla/ffi/api/c_api.h`)
//! and of the PJRT FFI extension (`pjrt_c_api_ffi_extension.h`) as the
//! pinned plugins implement them.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::api::Api;
use crate::element_type::ElementType;
use crate::element_type::ElementTypeTags;
use crate::error::{Error, Result};
use crate::ffi;

pub use oxla_dtype::callback_abi::{
    CALLBACK_ID_ATTRIBUTE, HOST_CALLBACK_TARGET, ORDERED_ATTRIBUTE,
};

/// `PJRT_Extension_Type_FFI`.
const FFI_EXTENSION_TYPE: ffi::PJRT_Extension_Type = ffi::PJRT_Extension_Type_FFI;
/// The platform name the CPU plugins register host handlers under.
const HOST_PLATFORM: &str = "Host";
/// `XLA_FFI_Extension_Metadata`: the extension of the call that asks a
/// handler for its API version.
const METADATA_EXTENSION_TYPE: c_int = 1;
/// `XLA_FFI_ArgType_BUFFER` and `XLA_FFI_RetType_BUFFER`.
const BUFFER: c_int = 1;
/// `XLA_FFI_AttrType_SCALAR`.
const SCALAR_ATTRIBUTE: c_int = 3;
/// `XLA_FFI_DataType_U64`, `_S64` and `_PRED`.
const U64: c_int = 9;
const PRED: c_int = 1;
const S64: c_int = 5;
/// `XLA_FFI_Error_Code_INVALID_ARGUMENT` and `_INTERNAL`.
const INVALID_ARGUMENT: c_int = 3;
const INTERNAL: c_int = 13;

/// `XLA_FFI_Extension_Base`, the head of XLA FFI's extensions (the PJRT
/// ones start with `ffi::PJRT_Extension_Base`, of the same layout).
#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: c_int,
    next: *mut ExtensionBase,
}

#[repr(C)]
struct RegisterHandlerArgs {
    struct_size: usize,
    target_name: *const c_char,
    target_name_size: usize,
    handler: *const c_void,
    platform_name: *const c_char,
    platform_name_size: usize,
    traits: u32,
}

/// `offsetof(traits) + 4`, the size the plugins check.
const REGISTER_HANDLER_ARGS_SIZE: usize = 52;

type RegisterHandler = unsafe extern "C" fn(*mut RegisterHandlerArgs) -> *mut ffi::PJRT_Error;

#[repr(C)]
struct FfiExtension {
    base: ffi::PJRT_Extension_Base,
    type_register: *const c_void,
    user_data_add: *const c_void,
    register_handler: Option<RegisterHandler>,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut c_void,
    major: c_int,
    minor: c_int,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
}

#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut c_void,
    dtype: c_int,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

#[repr(C)]
struct Values {
    struct_size: usize,
    extension_start: *mut c_void,
    size: i64,
    types: *const c_int,
    values: *const *mut c_void,
}

#[repr(C)]
struct ByteSpan {
    ptr: *const c_char,
    len: usize,
}

#[repr(C)]
struct Attributes {
    struct_size: usize,
    extension_start: *mut c_void,
    size: i64,
    types: *const c_int,
    names: *const *const ByteSpan,
    values: *const *const c_void,
}

#[repr(C)]
struct Scalar {
    dtype: c_int,
    value: *const c_void,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut c_void,
    message: *const c_char,
    errc: c_int,
}

/// `XLA_FFI_Error_Create_Args`' size (`offsetof(errc) + 4`).
const ERROR_CREATE_ARGS_SIZE: usize = 28;

type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void;

/// The head of `XLA_FFI_Api` up to `XLA_FFI_Error_Create`.
#[repr(C)]
struct XlaFfiApi {
    struct_size: usize,
    extension_start: *mut c_void,
    api_version: ApiVersion,
    internal_api: *mut c_void,
    error_create: Option<ErrorCreate>,
}

#[repr(C)]
struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const XlaFfiApi,
    ctx: *mut c_void,
    stage: c_int,
    args: Values,
    rets: Values,
    attrs: Attributes,
}

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

impl Api {
    /// Registers oxla's host-callback handler with this plugin (once per
    /// plugin; later calls do nothing). An error when the plugin has no
    /// FFI extension, or one without handler registration.
    pub fn enable_host_callbacks(&self) -> Result<()> {
        static ENABLED: OnceLock<Mutex<HashSet<std::path::PathBuf>>> = OnceLock::new();
        let mut enabled = ENABLED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if enabled.contains(self.path()) {
            return Ok(());
        }
        let unsupported = |function: &'static str| Error::Unsupported {
            function,
            api: self.version(),
        };
        let extension = self
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
            handler: host_callback_handler as *const c_void,
            platform_name: HOST_PLATFORM.as_ptr().cast(),
            platform_name_size: HOST_PLATFORM.len(),
            traits: 0,
        };
        // SAFETY: `args` is the struct `register_handler` takes, its names
        // live across the call (XLA copies them), and the handler is a
        // function of the XLA FFI handler signature for the process's life.
        let error = unsafe { register(&mut args) };
        self.check(error, "PJRT_FFI_Register_Handler")?;
        enabled.insert(self.path().to_path_buf());
        Ok(())
    }
}

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

/// The XLA FFI handler of every host callback.
unsafe extern "C" fn host_callback_handler(frame: *mut CallFrame) -> *mut c_void {
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
        unsafe { run_callback(frame) }
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

/// Runs the closure the frame's `callback_id` names on its buffers.
///
/// # Safety
/// `frame` is a call frame XLA passed for execution.
unsafe fn run_callback(frame: &CallFrame) -> std::result::Result<(), String> {
    // SAFETY: per the contract.
    let id = unsafe { callback_id(&frame.attrs) }
        .ok_or_else(|| format!("the custom call has no `{CALLBACK_ID_ATTRIBUTE}` attribute"))?;
    let function = callbacks()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned()
        .ok_or_else(|| format!("no host callback {id} is registered in this process"))?;
    let buffers = |values: &Values| -> std::result::Result<Vec<*mut Buffer>, String> {
        let n = usize::try_from(values.size).map_err(|_| "a negative count".to_string())?;
        (0..n)
            .map(|i| {
                // SAFETY: XLA's table holds `size` types and values.
                unsafe {
                    if *values.types.add(i) != BUFFER {
                        return Err("a non-buffer operand".to_string());
                    }
                    Ok((*values.values.add(i)).cast::<Buffer>())
                }
            })
            .collect()
    };
    let mut arguments = Vec::new();
    for buffer in buffers(&frame.args)? {
        // SAFETY: XLA's buffer, read-only for the call.
        let buffer = unsafe { &*buffer };
        // SAFETY: as above.
        let (element_type, dims, len) = unsafe { buffer_shape(buffer) }?;
        // SAFETY: the buffer holds `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(buffer.data.cast::<u8>(), len) };
        arguments.push(CallbackArgument {
            element_type,
            dims,
            bytes,
        });
    }
    let mut results = Vec::new();
    for buffer in buffers(&frame.rets)? {
        // SAFETY: XLA's result buffer, ours to write for the call.
        let buffer = unsafe { &*buffer };
        // SAFETY: as above.
        let (element_type, dims, len) = unsafe { buffer_shape(buffer) }?;
        // SAFETY: the buffer holds `len` writable bytes no one else reads
        // during the call.
        let bytes = unsafe { std::slice::from_raw_parts_mut(buffer.data.cast::<u8>(), len) };
        results.push(CallbackResult {
            element_type,
            dims,
            bytes,
        });
    }
    // An ordered call's first operand and result chain the program's
    // effects in order: pass the chain on, hide it from the closure.
    // SAFETY: per the contract.
    if unsafe { is_ordered(&frame.attrs) } {
        if arguments.is_empty() || results.is_empty() {
            return Err("an ordered host callback without its order operand".into());
        }
        arguments.remove(0);
        results.remove(0).bytes.fill(0);
    }
    function(&arguments, &mut results)
}
