//! Callbacks the caller gives the plugin: the key-value store of a
//! multi-process client (`PJRT_Client_Create_Args`' `kv_*` callbacks) and
//! the error constructor the plugin hands them.

use std::ffi::{c_char, c_int, c_void};

use super::{PJRT_Error, PJRT_Error_Code};

/// The plugin's constructor of a `PJRT_Error` (code, message bytes),
/// handed to a callback to report its failure.
pub type PJRT_CallbackError = Option<
    unsafe extern "C" fn(
        code: PJRT_Error_Code,
        message: *const c_char,
        message_size: usize,
    ) -> *mut PJRT_Error,
>;

/// Frees a value a `kv_get` callback returned.
pub type PJRT_KeyValueGetCallback_ValueDeleter = Option<unsafe extern "C" fn(value: *mut c_char)>;
/// Frees a value a `kv_try_get` callback returned.
pub type PJRT_KeyValueTryGetCallback_ValueDeleter =
    Option<unsafe extern "C" fn(value: *mut c_char)>;

/// A blocking get: the value of `key`, waiting up to `timeout_in_ms`.
pub type PJRT_KeyValueGetCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValueGetCallback_Args) -> *mut PJRT_Error>;
/// A non-blocking get: the value of `key`, or a `NOT_FOUND` error.
pub type PJRT_KeyValueTryGetCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValueTryGetCallback_Args) -> *mut PJRT_Error>;
/// Stores `value` under `key`.
pub type PJRT_KeyValuePutCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValuePutCallback_Args) -> *mut PJRT_Error>;

pjrt_structs! {
    /// What the plugin passes a `kv_get` callback; the callback fills
    /// `value`, `value_size` and the deleter that frees the value.
    args PJRT_KeyValueGetCallback_Args / PJRT_KeyValueGetCallback_Args_STRUCT_SIZE {
        key: *const c_char,
        key_size: usize,
        timeout_in_ms: c_int,
        callback_error: *mut PJRT_CallbackError,
        user_arg: *mut c_void,
        value: *mut c_char,
        value_size: usize,
        value_deleter_callback: PJRT_KeyValueGetCallback_ValueDeleter,
    }

    /// What the plugin passes a `kv_try_get` callback; filled as for
    /// `kv_get`.
    args PJRT_KeyValueTryGetCallback_Args / PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE {
        key: *const c_char,
        key_size: usize,
        callback_error: *mut PJRT_CallbackError,
        user_arg: *mut c_void,
        value: *mut c_char,
        value_size: usize,
        value_deleter_callback: PJRT_KeyValueTryGetCallback_ValueDeleter,
    }

    /// What the plugin passes a `kv_put` callback.
    args PJRT_KeyValuePutCallback_Args / PJRT_KeyValuePutCallback_Args_STRUCT_SIZE {
        key: *const c_char,
        key_size: usize,
        value: *const c_char,
        value_size: usize,
        callback_error: *mut PJRT_CallbackError,
        user_arg: *mut c_void,
    }
}
