//! The structs and codes of XLA's FFI C API (`xla/ffi/api/c_api.h`) and of
//! the PJRT FFI extension (`pjrt_c_api_ffi_extension.h`) that oxla's FFI
//! handlers (host callbacks, LAPACK) use, laid out as the pinned plugins
//! implement them.

use std::ffi::{c_char, c_int, c_void};

use crate::ffi;

/// `PJRT_Extension_Type_FFI`.
pub(crate) const FFI_EXTENSION_TYPE: ffi::PJRT_Extension_Type = ffi::PJRT_Extension_Type_FFI;
/// `XLA_FFI_Extension_Metadata`: the extension of the call that asks a
/// handler for its API version.
pub(crate) const METADATA_EXTENSION_TYPE: c_int = 1;
/// `XLA_FFI_ArgType_BUFFER` and `XLA_FFI_RetType_BUFFER`.
pub(crate) const BUFFER: c_int = 1;
/// `XLA_FFI_AttrType_SCALAR`.
pub(crate) const SCALAR_ATTRIBUTE: c_int = 3;
/// `XLA_FFI_DataType_U64`, `_S64` and `_PRED`.
pub(crate) const U64: c_int = 9;
pub(crate) const PRED: c_int = 1;
/// `XLA_FFI_DataType_U8`, the type of JAX's one-character enum attributes.
pub(crate) const U8_TYPE: c_int = 6;
pub(crate) const S64: c_int = 5;
/// `XLA_FFI_Error_Code_INVALID_ARGUMENT` and `_INTERNAL`.
pub(crate) const INVALID_ARGUMENT: c_int = 3;
pub(crate) const INTERNAL: c_int = 13;

/// `XLA_FFI_Extension_Base`, the head of XLA FFI's extensions (the PJRT
/// ones start with `ffi::PJRT_Extension_Base`, of the same layout).
#[repr(C)]
pub(crate) struct ExtensionBase {
    pub(crate) struct_size: usize,
    pub(crate) kind: c_int,
    pub(crate) next: *mut ExtensionBase,
}

#[repr(C)]
pub(crate) struct RegisterHandlerArgs {
    pub(crate) struct_size: usize,
    pub(crate) target_name: *const c_char,
    pub(crate) target_name_size: usize,
    pub(crate) handler: *const c_void,
    pub(crate) platform_name: *const c_char,
    pub(crate) platform_name_size: usize,
    pub(crate) traits: u32,
}

/// `offsetof(traits) + 4`, the size the plugins check.
pub(crate) const REGISTER_HANDLER_ARGS_SIZE: usize = 52;

pub(crate) type RegisterHandler =
    unsafe extern "C" fn(*mut RegisterHandlerArgs) -> *mut ffi::PJRT_Error;

#[repr(C)]
pub(crate) struct FfiExtension {
    pub(crate) base: ffi::PJRT_Extension_Base,
    pub(crate) type_register: *const c_void,
    pub(crate) user_data_add: *const c_void,
    pub(crate) register_handler: Option<RegisterHandler>,
}

#[repr(C)]
pub(crate) struct ApiVersion {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) major: c_int,
    pub(crate) minor: c_int,
}

#[repr(C)]
pub(crate) struct Metadata {
    pub(crate) struct_size: usize,
    pub(crate) api_version: ApiVersion,
    pub(crate) traits: u32,
}

#[repr(C)]
pub(crate) struct MetadataExtension {
    pub(crate) base: ExtensionBase,
    pub(crate) metadata: *mut Metadata,
}

#[repr(C)]
pub(crate) struct Buffer {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) dtype: c_int,
    pub(crate) data: *mut c_void,
    pub(crate) rank: i64,
    pub(crate) dims: *const i64,
}

#[repr(C)]
pub(crate) struct Values {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) size: i64,
    pub(crate) types: *const c_int,
    pub(crate) values: *const *mut c_void,
}

#[repr(C)]
pub(crate) struct ByteSpan {
    pub(crate) ptr: *const c_char,
    pub(crate) len: usize,
}

#[repr(C)]
pub(crate) struct Attributes {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) size: i64,
    pub(crate) types: *const c_int,
    pub(crate) names: *const *const ByteSpan,
    pub(crate) values: *const *const c_void,
}

#[repr(C)]
pub(crate) struct Scalar {
    pub(crate) dtype: c_int,
    pub(crate) value: *const c_void,
}

#[repr(C)]
pub(crate) struct ErrorCreateArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) message: *const c_char,
    pub(crate) errc: c_int,
}

/// `XLA_FFI_Error_Create_Args`' size (`offsetof(errc) + 4`).
pub(crate) const ERROR_CREATE_ARGS_SIZE: usize = 28;

pub(crate) type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void;

/// The head of `XLA_FFI_Api` up to `XLA_FFI_Stream_Get`.
#[repr(C)]
pub(crate) struct XlaFfiApi {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) api_version: ApiVersion,
    pub(crate) internal_api: *mut c_void,
    pub(crate) error_create: Option<ErrorCreate>,
    pub(crate) error_get_message: Option<ErrorGetMessage>,
    pub(crate) error_destroy: Option<ErrorDestroy>,
    pub(crate) handler_register: *const c_void,
    pub(crate) stream_get: Option<StreamGet>,
}

/// `XLA_FFI_Error_GetMessage_Args`.
#[repr(C)]
pub(crate) struct ErrorGetMessageArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) error: *mut c_void,
    pub(crate) message: *const c_char,
}

pub(crate) type ErrorGetMessage = unsafe extern "C" fn(*mut ErrorGetMessageArgs);

/// `XLA_FFI_Error_Destroy_Args`.
#[repr(C)]
pub(crate) struct ErrorDestroyArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) error: *mut c_void,
}

pub(crate) type ErrorDestroy = unsafe extern "C" fn(*mut ErrorDestroyArgs);

/// `XLA_FFI_Stream_Get_Args`: the platform stream (a `CUstream` on CUDA)
/// a handler runs on.
#[repr(C)]
pub(crate) struct StreamGetArgs {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut c_void,
    pub(crate) ctx: *mut c_void,
    pub(crate) stream: *mut c_void,
}

pub(crate) type StreamGet = unsafe extern "C" fn(*mut StreamGetArgs) -> *mut c_void;

#[repr(C)]
pub(crate) struct CallFrame {
    pub(crate) struct_size: usize,
    pub(crate) extension_start: *mut ExtensionBase,
    pub(crate) api: *const XlaFfiApi,
    pub(crate) ctx: *mut c_void,
    pub(crate) stage: c_int,
    pub(crate) args: Values,
    pub(crate) rets: Values,
    pub(crate) attrs: Attributes,
}
