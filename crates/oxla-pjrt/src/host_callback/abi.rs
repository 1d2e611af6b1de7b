//! The structs and codes of XLA's FFI C API (`xla/ffi/api/c_api.h`) and of
//! the PJRT FFI extension (`pjrt_c_api_ffi_extension.h`) that host
//! callbacks use, laid out as the pinned plugins implement them.

use std::ffi::{c_char, c_int, c_void};

use crate::ffi;

/// `PJRT_Extension_Type_FFI`.
pub(super) const FFI_EXTENSION_TYPE: ffi::PJRT_Extension_Type = ffi::PJRT_Extension_Type_FFI;
/// `XLA_FFI_Extension_Metadata`: the extension of the call that asks a
/// handler for its API version.
pub(super) const METADATA_EXTENSION_TYPE: c_int = 1;
/// `XLA_FFI_ArgType_BUFFER` and `XLA_FFI_RetType_BUFFER`.
pub(super) const BUFFER: c_int = 1;
/// `XLA_FFI_AttrType_SCALAR`.
pub(super) const SCALAR_ATTRIBUTE: c_int = 3;
/// `XLA_FFI_DataType_U64`, `_S64` and `_PRED`.
pub(super) const U64: c_int = 9;
pub(super) const PRED: c_int = 1;
pub(super) const S64: c_int = 5;
/// `XLA_FFI_Error_Code_INVALID_ARGUMENT` and `_INTERNAL`.
pub(super) const INVALID_ARGUMENT: c_int = 3;
pub(super) const INTERNAL: c_int = 13;

/// `XLA_FFI_Extension_Base`, the head of XLA FFI's extensions (the PJRT
/// ones start with `ffi::PJRT_Extension_Base`, of the same layout).
#[repr(C)]
pub(super) struct ExtensionBase {
    pub(super) struct_size: usize,
    pub(super) kind: c_int,
    pub(super) next: *mut ExtensionBase,
}

#[repr(C)]
pub(super) struct RegisterHandlerArgs {
    pub(super) struct_size: usize,
    pub(super) target_name: *const c_char,
    pub(super) target_name_size: usize,
    pub(super) handler: *const c_void,
    pub(super) platform_name: *const c_char,
    pub(super) platform_name_size: usize,
    pub(super) traits: u32,
}

/// `offsetof(traits) + 4`, the size the plugins check.
pub(super) const REGISTER_HANDLER_ARGS_SIZE: usize = 52;

pub(super) type RegisterHandler =
    unsafe extern "C" fn(*mut RegisterHandlerArgs) -> *mut ffi::PJRT_Error;

#[repr(C)]
pub(super) struct FfiExtension {
    pub(super) base: ffi::PJRT_Extension_Base,
    pub(super) type_register: *const c_void,
    pub(super) user_data_add: *const c_void,
    pub(super) register_handler: Option<RegisterHandler>,
}

#[repr(C)]
pub(super) struct ApiVersion {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) major: c_int,
    pub(super) minor: c_int,
}

#[repr(C)]
pub(super) struct Metadata {
    pub(super) struct_size: usize,
    pub(super) api_version: ApiVersion,
    pub(super) traits: u32,
}

#[repr(C)]
pub(super) struct MetadataExtension {
    pub(super) base: ExtensionBase,
    pub(super) metadata: *mut Metadata,
}

#[repr(C)]
pub(super) struct Buffer {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) dtype: c_int,
    pub(super) data: *mut c_void,
    pub(super) rank: i64,
    pub(super) dims: *const i64,
}

#[repr(C)]
pub(super) struct Values {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) size: i64,
    pub(super) types: *const c_int,
    pub(super) values: *const *mut c_void,
}

#[repr(C)]
pub(super) struct ByteSpan {
    pub(super) ptr: *const c_char,
    pub(super) len: usize,
}

#[repr(C)]
pub(super) struct Attributes {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) size: i64,
    pub(super) types: *const c_int,
    pub(super) names: *const *const ByteSpan,
    pub(super) values: *const *const c_void,
}

#[repr(C)]
pub(super) struct Scalar {
    pub(super) dtype: c_int,
    pub(super) value: *const c_void,
}

#[repr(C)]
pub(super) struct ErrorCreateArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) message: *const c_char,
    pub(super) errc: c_int,
}

/// `XLA_FFI_Error_Create_Args`' size (`offsetof(errc) + 4`).
pub(super) const ERROR_CREATE_ARGS_SIZE: usize = 28;

pub(super) type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void;

/// The head of `XLA_FFI_Api` up to `XLA_FFI_Stream_Get`.
#[repr(C)]
pub(super) struct XlaFfiApi {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) api_version: ApiVersion,
    pub(super) internal_api: *mut c_void,
    pub(super) error_create: Option<ErrorCreate>,
    pub(super) error_get_message: Option<ErrorGetMessage>,
    pub(super) error_destroy: Option<ErrorDestroy>,
    pub(super) handler_register: *const c_void,
    pub(super) stream_get: Option<StreamGet>,
}

/// `XLA_FFI_Error_GetMessage_Args`.
#[repr(C)]
pub(super) struct ErrorGetMessageArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) error: *mut c_void,
    pub(super) message: *const c_char,
}

pub(super) type ErrorGetMessage = unsafe extern "C" fn(*mut ErrorGetMessageArgs);

/// `XLA_FFI_Error_Destroy_Args`.
#[repr(C)]
pub(super) struct ErrorDestroyArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) error: *mut c_void,
}

pub(super) type ErrorDestroy = unsafe extern "C" fn(*mut ErrorDestroyArgs);

/// `XLA_FFI_Stream_Get_Args`: the platform stream (a `CUstream` on CUDA)
/// a handler runs on.
#[repr(C)]
pub(super) struct StreamGetArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) ctx: *mut c_void,
    pub(super) stream: *mut c_void,
}

pub(super) type StreamGet = unsafe extern "C" fn(*mut StreamGetArgs) -> *mut c_void;

#[repr(C)]
pub(super) struct CallFrame {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) api: *const XlaFfiApi,
    pub(super) ctx: *mut c_void,
    pub(super) stage: c_int,
    pub(super) args: Values,
    pub(super) rets: Values,
    pub(super) attrs: Attributes,
}
