//! A plugin's own profiler, through the PJRT profiler extension
//! (`PJRT_Extension_Type_Profiler`, whose `PLUGIN_Profiler_Api` comes from
//! XLA's `xla/backends/profiler/plugin/profiler_c_api.h`; layouts below are
//! that header's). What JAX's profiler does with it: create a profiler
//! with serialized `tensorflow.ProfileOptions`, start, stop, collect the
//! serialized `XSpace` once, destroy. The GPU plugins have it (their CUPTI
//! and host tracers); the pinned CPU plugins do not.
//!
//! Facts of the plugins' implementation that shape this code: a profiler
//! records one session (a stopped one cannot start again), so each
//! [`PluginProfiler`] is created for one; `collect_data` with a null
//! buffer hands out the plugin's own buffer (valid until the next call or
//! destroy), holding the `XSpace` and, in the plugins built from XLA's
//! `plugin_tracer_impl.cc`, one trailing zero byte ([`decode_xspace`]
//! accepts both); its errors are freed with the extension's own
//! `error_destroy`, not `PJRT_Error_Destroy`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use prost::Message;

use crate::api::Api;
use crate::error::{Error, ErrorCode, Result};
use crate::ffi;
use crate::profiler_proto::ProfileOptions;
use crate::profiler_proto::profiler::XSpace;

/// `PJRT_Extension_Type_Profiler`.
const PROFILER_EXTENSION: ffi::PJRT_Extension_Type = ffi::PJRT_Extension_Type_Profiler;

/// `PJRT_Profiler_Extension` (its version 0 ends after `profiler_api`).
#[repr(C)]
struct ProfilerExtension {
    base: ffi::PJRT_Extension_Base,
    profiler_api: *const ProfilerApi,
}

#[repr(C)]
struct ErrorDestroyArgs {
    struct_size: usize,
    private: *mut c_void,
    error: *mut c_void,
}

#[repr(C)]
struct ErrorMessageArgs {
    struct_size: usize,
    private: *mut c_void,
    error: *const c_void,
    message: *const c_char,
    message_size: usize,
}

#[repr(C)]
struct ErrorGetCodeArgs {
    struct_size: usize,
    private: *mut c_void,
    error: *const c_void,
    code: c_int,
}

/// The plugin checks this size exactly: the end of `code`, not the
/// struct's padded size.
const ERROR_GET_CODE_ARGS_SIZE: usize = std::mem::offset_of!(ErrorGetCodeArgs, code) + 4;

#[repr(C)]
struct CreateArgs {
    struct_size: usize,
    options: *const c_char,
    options_size: usize,
    profiler: *mut c_void,
}

/// The arguments of destroy, start and stop.
#[repr(C)]
struct HandleArgs {
    struct_size: usize,
    profiler: *mut c_void,
}

#[repr(C)]
struct CollectDataArgs {
    struct_size: usize,
    profiler: *mut c_void,
    buffer: *mut u8,
    buffer_size_in_bytes: usize,
}

type ProfilerFn<A> = unsafe extern "C" fn(*mut A) -> *mut c_void;

/// `PLUGIN_Profiler_Api`.
#[repr(C)]
struct ProfilerApi {
    struct_size: usize,
    private: *mut c_void,
    error_destroy: Option<unsafe extern "C" fn(*mut ErrorDestroyArgs)>,
    error_message: Option<unsafe extern "C" fn(*mut ErrorMessageArgs)>,
    error_get_code: Option<ProfilerFn<ErrorGetCodeArgs>>,
    create: Option<ProfilerFn<CreateArgs>>,
    destroy: Option<ProfilerFn<HandleArgs>>,
    start: Option<ProfilerFn<HandleArgs>>,
    stop: Option<ProfilerFn<HandleArgs>>,
    collect_data: Option<ProfilerFn<CollectDataArgs>>,
}

/// One profiling session of a plugin's profiler: created and started by
/// [`start`](Self::start), ended by [`collect`](Self::collect); destroyed
/// when dropped.
pub struct PluginProfiler {
    api: Arc<Api>,
    table: *const ProfilerApi,
    handle: *mut c_void,
}

// SAFETY: the plugin's profiler API is called from one owner at a time
// (methods take `&mut self` or `self`); its functions are thread-safe.
unsafe impl Send for PluginProfiler {}

impl std::fmt::Debug for PluginProfiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginProfiler")
            .field("plugin", &self.api.path())
            .finish_non_exhaustive()
    }
}

/// The profiler API of `api`'s plugin, if it has the extension and the
/// table is the size oxla knows (or larger).
fn profiler_api(api: &Api) -> Option<*const ProfilerApi> {
    let base = api.extension(PROFILER_EXTENSION)?;
    // SAFETY: an extension of this type starts with the extension's
    // struct; its size says whether `profiler_api` is there.
    unsafe {
        if (*base).struct_size < std::mem::size_of::<ProfilerExtension>() {
            return None;
        }
        let table = (*(base as *const ProfilerExtension)).profiler_api;
        if table.is_null() || (*table).struct_size < std::mem::size_of::<ProfilerApi>() {
            return None;
        }
        Some(table)
    }
}

impl PluginProfiler {
    /// Whether `api`'s plugin has a profiler oxla can drive.
    pub fn available(api: &Api) -> bool {
        profiler_api(api).is_some()
    }

    /// Creates the plugin's profiler with `options` and starts it; `None`
    /// when the plugin has no profiler extension.
    pub fn start(api: &Arc<Api>, options: &ProfileOptions) -> Result<Option<PluginProfiler>> {
        let Some(table) = profiler_api(api) else {
            return Ok(None);
        };
        let options = options.encode_to_vec();
        let mut create = CreateArgs {
            struct_size: std::mem::size_of::<CreateArgs>(),
            options: options.as_ptr().cast(),
            options_size: options.len(),
            profiler: std::ptr::null_mut(),
        };
        // SAFETY: the table is the plugin's (checked size); the args live
        // for the call.
        let error = unsafe { ((*table).create.ok_or_else(|| missing("create"))?)(&mut create) };
        check(table, "PLUGIN_Profiler_Create", error)?;
        if create.profiler.is_null() {
            return Err(Error::Protocol(
                "PLUGIN_Profiler_Create returned no profiler".into(),
            ));
        }
        let mut profiler = PluginProfiler {
            api: api.clone(),
            table,
            handle: create.profiler,
        };
        profiler.call("PLUGIN_Profiler_Start", |t| t.start)?;
        Ok(Some(profiler))
    }

    /// Calls destroy, start or stop (`pick` chooses) on the handle.
    fn call(
        &mut self,
        function: &'static str,
        pick: impl Fn(&ProfilerApi) -> Option<ProfilerFn<HandleArgs>>,
    ) -> Result<()> {
        let mut args = HandleArgs {
            struct_size: std::mem::size_of::<HandleArgs>(),
            profiler: self.handle,
        };
        // SAFETY: the table outlives the plugin (never unloaded); the
        // handle is this session's.
        let f = pick(unsafe { &*self.table }).ok_or_else(|| missing(function))?;
        let error = unsafe { f(&mut args) };
        check(self.table, function, error)
    }

    /// Stops the session and returns what the plugin recorded.
    pub fn collect(mut self) -> Result<XSpace> {
        self.call("PLUGIN_Profiler_Stop", |t| t.stop)?;
        let mut args = CollectDataArgs {
            struct_size: std::mem::size_of::<CollectDataArgs>(),
            profiler: self.handle,
            buffer: std::ptr::null_mut(),
            buffer_size_in_bytes: 0,
        };
        // SAFETY: as in `call`; the returned buffer is the plugin's, valid
        // until destroy (when `self` drops, after the copy).
        let collect_data = unsafe { (*self.table).collect_data }
            .ok_or_else(|| missing("PLUGIN_Profiler_CollectData"))?;
        let error = unsafe { collect_data(&mut args) };
        check(self.table, "PLUGIN_Profiler_CollectData", error)?;
        let bytes = if args.buffer.is_null() || args.buffer_size_in_bytes == 0 {
            Vec::new()
        } else {
            // SAFETY: the plugin's buffer of that many bytes.
            unsafe { std::slice::from_raw_parts(args.buffer, args.buffer_size_in_bytes) }.to_vec()
        };
        decode_xspace(&bytes)
    }
}

impl Drop for PluginProfiler {
    fn drop(&mut self) {
        let _ = self.call("PLUGIN_Profiler_Destroy", |t| t.destroy);
    }
}

/// The `XSpace` in `bytes` as a plugin's `collect_data` gives it: the
/// serialized message, possibly followed by one zero byte (which is not a
/// valid field tag).
pub fn decode_xspace(bytes: &[u8]) -> Result<XSpace> {
    XSpace::decode(bytes).or_else(|first| match bytes.split_last() {
        Some((0, message)) => XSpace::decode(message).map_err(|e| undecodable(&e)),
        _ => Err(undecodable(&first)),
    })
}

fn undecodable(e: &prost::DecodeError) -> Error {
    Error::Protocol(format!(
        "the plugin's profiler returned data that is not an XSpace: {e}"
    ))
}

fn missing(function: &str) -> Error {
    Error::Protocol(format!(
        "the plugin's profiler API has no {function} function"
    ))
}

/// `Ok` for a null error; else the error's code and message, then frees it.
fn check(table: *const ProfilerApi, function: &'static str, error: *mut c_void) -> Result<()> {
    if error.is_null() {
        return Ok(());
    }
    // SAFETY: `error` is the plugin's, freed once below with its own
    // destructor; the message is copied before.
    unsafe {
        let table = &*table;
        let mut message = ErrorMessageArgs {
            struct_size: std::mem::size_of::<ErrorMessageArgs>(),
            private: std::ptr::null_mut(),
            error,
            message: std::ptr::null(),
            message_size: 0,
        };
        if let Some(f) = table.error_message {
            f(&mut message);
        }
        let text = if message.message.is_null() {
            String::from("(no message)")
        } else {
            let bytes =
                std::slice::from_raw_parts(message.message.cast::<u8>(), message.message_size);
            String::from_utf8_lossy(bytes).into_owned()
        };
        let mut code = ErrorGetCodeArgs {
            struct_size: ERROR_GET_CODE_ARGS_SIZE,
            private: std::ptr::null_mut(),
            error,
            code: 2, // UNKNOWN unless the plugin says
        };
        if let Some(f) = table.error_get_code {
            let failed = f(&mut code);
            destroy_error(table, failed);
        }
        destroy_error(table, error);
        Err(Error::Plugin {
            function,
            code: ErrorCode::from_raw(code.code as ffi::PJRT_Error_Code),
            message: text,
        })
    }
}

/// Frees a profiler error (null is allowed).
///
/// # Safety
/// `error` is null or an unfreed error of this table's plugin.
unsafe fn destroy_error(table: &ProfilerApi, error: *mut c_void) {
    if error.is_null() {
        return;
    }
    let mut args = ErrorDestroyArgs {
        struct_size: std::mem::size_of::<ErrorDestroyArgs>(),
        private: std::ptr::null_mut(),
        error,
    };
    if let Some(f) = table.error_destroy {
        // SAFETY: the caller's promise.
        unsafe { f(&mut args) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler_proto::profiler::{XEvent, XLine, XPlane};

    #[test]
    fn an_xspace_decodes_with_or_without_the_plugins_trailing_zero() {
        let space = XSpace {
            planes: vec![XPlane {
                id: 3,
                name: "/host:CPU".into(),
                lines: vec![XLine {
                    id: 1,
                    name: "thread".into(),
                    timestamp_ns: 1_000,
                    events: vec![XEvent {
                        metadata_id: 7,
                        duration_ps: 5_000,
                        data: None,
                        stats: vec![],
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut bytes = space.encode_to_vec();
        assert_eq!(decode_xspace(&bytes).unwrap(), space);
        bytes.push(0);
        assert_eq!(decode_xspace(&bytes).unwrap(), space);
        assert_eq!(decode_xspace(&[0]).unwrap(), XSpace::default());
        let err = decode_xspace(&[0x0a, 0x05, 0x01]).unwrap_err().to_string();
        assert!(err.contains("not an XSpace"), "{err}");
    }

    #[test]
    fn the_get_code_arguments_have_the_size_the_plugins_check() {
        assert_eq!(ERROR_GET_CODE_ARGS_SIZE, 28);
        assert_eq!(std::mem::size_of::<ProfilerApi>(), 80);
        assert_eq!(std::mem::size_of::<ProfilerExtension>(), 32);
    }
}
