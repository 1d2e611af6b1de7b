//! Errors (`PJRT_Error`, returned by every fallible function; null is
//! success) and events (`PJRT_Event`, the completion of asynchronous work).

use std::ffi::{c_char, c_void};

opaque_types! {
    /// An error a plugin returned; the caller frees it with
    /// `PJRT_Error_Destroy`.
    PJRT_Error,
    /// A future: ready once a transfer or computation is done, carrying
    /// its error if it failed.
    PJRT_Event,
}

pjrt_enums! {
    /// An error's status code: absl's canonical codes.
    enum PJRT_Error_Code {
        PJRT_Error_Code_OK = 0,
        PJRT_Error_Code_CANCELLED = 1,
        PJRT_Error_Code_UNKNOWN = 2,
        PJRT_Error_Code_INVALID_ARGUMENT = 3,
        PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
        PJRT_Error_Code_NOT_FOUND = 5,
        PJRT_Error_Code_ALREADY_EXISTS = 6,
        PJRT_Error_Code_PERMISSION_DENIED = 7,
        PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
        PJRT_Error_Code_FAILED_PRECONDITION = 9,
        PJRT_Error_Code_ABORTED = 10,
        PJRT_Error_Code_OUT_OF_RANGE = 11,
        PJRT_Error_Code_UNIMPLEMENTED = 12,
        PJRT_Error_Code_INTERNAL = 13,
        PJRT_Error_Code_UNAVAILABLE = 14,
        PJRT_Error_Code_DATA_LOSS = 15,
        PJRT_Error_Code_UNAUTHENTICATED = 16,
    }
}

/// Called by the plugin once an event is ready, with the event's error
/// (owned by the callee, null on success) and the caller's `user_arg`.
pub type PJRT_Event_OnReadyCallback =
    Option<unsafe extern "C" fn(error: *mut PJRT_Error, user_arg: *mut c_void)>;

pjrt_structs! {
    /// Arguments of `PJRT_Error_Destroy`: frees `error`.
    args PJRT_Error_Destroy_Args / PJRT_Error_Destroy_Args_STRUCT_SIZE {
        error: *mut PJRT_Error,
    }

    /// Arguments of `PJRT_Error_Message`: the message, owned by the error.
    args PJRT_Error_Message_Args / PJRT_Error_Message_Args_STRUCT_SIZE {
        error: *const PJRT_Error,
        message: *const c_char,
        message_size: usize,
    }

    /// Arguments of `PJRT_Error_GetCode`: the error's status code.
    args PJRT_Error_GetCode_Args / PJRT_Error_GetCode_Args_STRUCT_SIZE {
        error: *const PJRT_Error,
        code: PJRT_Error_Code,
    }

    /// Arguments of `PJRT_Event_Destroy`: frees `event`.
    args PJRT_Event_Destroy_Args / PJRT_Event_Destroy_Args_STRUCT_SIZE {
        event: *mut PJRT_Event,
    }

    /// Arguments of `PJRT_Event_IsReady`: whether the event is ready, without
    /// blocking.
    args PJRT_Event_IsReady_Args / PJRT_Event_IsReady_Args_STRUCT_SIZE {
        event: *mut PJRT_Event,
        is_ready: bool,
    }

    /// Arguments of `PJRT_Event_Await`: blocks until the event is ready and
    /// returns its error.
    args PJRT_Event_Await_Args / PJRT_Event_Await_Args_STRUCT_SIZE {
        event: *mut PJRT_Event,
    }

    /// Arguments of `PJRT_Event_OnReady`: registers `callback`, called once
    /// with `user_arg` when the event is ready (possibly at once).
    args PJRT_Event_OnReady_Args / PJRT_Event_OnReady_Args_STRUCT_SIZE {
        event: *mut PJRT_Event,
        callback: PJRT_Event_OnReadyCallback,
        user_arg: *mut c_void,
    }
}
