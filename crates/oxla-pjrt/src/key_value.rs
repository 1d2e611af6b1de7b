//! The key-value store a multi-process client shares with its peers: a
//! [`KeyValueStore`] the caller backs (oxla-distributed backs it with
//! etcd) behind the three callbacks of `PJRT_Client_Create_Args`
//! (`kv_get_callback`, `kv_try_get_callback`, `kv_put_callback`). A plugin
//! that builds a multi-node client (the GPU plugins, with the `node_id`
//! and `num_nodes` options) exchanges its local topologies and collective
//! ids through them.
//!
//! The C header's rules, and how they are kept: the callbacks are
//! thread-safe (the store is `Send + Sync`); `get` blocks up to the
//! plugin's timeout, `try_get` answers `NOT_FOUND` at once; the caller
//! avoids collisions between users of one store (between plugins, not
//! between the nodes of one plugin), so every key the plugin names is
//! stored under the plugin's prefix ([`KeyValueCallbacks::new`]; JAX uses
//! `<platform>:`); a value handed to the plugin is freed by the deleter
//! oxla gives with it; errors are made with the plugin's
//! `PJRT_CallbackError`; a panic in the store is caught and becomes an
//! `INTERNAL` error, never an unwind into the plugin.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use crate::error::ErrorCode;
use crate::ffi;

/// Why a store operation failed: a status code the plugin understands
/// (`NotFound` for an absent key, `DeadlineExceeded` for a wait that ran
/// out, `Unavailable` when a peer or the store is gone) and a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct KeyValueError {
    /// The status code handed to the plugin.
    pub code: ErrorCode,
    /// What went wrong, for people.
    pub message: String,
}

impl KeyValueError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// A key-value store shared by the processes of one job. Implementations
/// are thread-safe; values are bytes.
pub trait KeyValueStore: Send + Sync {
    /// The value of `key`, waiting up to `timeout` for some process to put
    /// it (`DeadlineExceeded` when none does).
    fn get(&self, key: &str, timeout: Duration) -> Result<Vec<u8>, KeyValueError>;

    /// The value of `key` if it has one now.
    fn try_get(&self, key: &str) -> Result<Option<Vec<u8>>, KeyValueError>;

    /// Sets `key` to `value` for every process of the job.
    fn put(&self, key: &str, value: &[u8]) -> Result<(), KeyValueError>;
}

/// A store handed to one plugin's client: what the three callbacks reach
/// through their `user_arg`. Every key the plugin names is stored as
/// `prefix + key`.
pub struct KeyValueCallbacks {
    store: Arc<dyn KeyValueStore>,
    prefix: String,
}

impl std::fmt::Debug for KeyValueCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyValueCallbacks")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl KeyValueCallbacks {
    /// The store `store`, with the plugin's keys under `prefix` (JAX's
    /// convention is the platform's name and a colon: `cuda:`).
    pub fn new(store: Arc<dyn KeyValueStore>, prefix: impl Into<String>) -> Self {
        Self {
            store,
            prefix: prefix.into(),
        }
    }

    /// Fills the callback fields of `args`; `self` must outlive the client
    /// (the plugin may call back at any time, e.g. to exchange collective
    /// ids when a program first runs).
    pub(crate) fn install(&self, args: &mut ffi::PJRT_Client_Create_Args) {
        let user_arg = self as *const Self as *mut std::ffi::c_void;
        args.kv_get_callback = Some(kv_get);
        args.kv_get_user_arg = user_arg;
        args.kv_try_get_callback = Some(kv_try_get);
        args.kv_try_get_user_arg = user_arg;
        args.kv_put_callback = Some(kv_put);
        args.kv_put_user_arg = user_arg;
    }

    fn key(&self, raw: *const std::ffi::c_char, len: usize) -> Result<String, KeyValueError> {
        // SAFETY: the plugin passes `len` bytes at `raw`, alive for the call.
        let bytes = unsafe { raw_bytes(raw.cast(), len) };
        let key = std::str::from_utf8(bytes).map_err(|_| {
            KeyValueError::new(
                ErrorCode::InvalidArgument,
                format!("a key-value store key is not UTF-8: {bytes:?}"),
            )
        })?;
        Ok(format!("{}{key}", self.prefix))
    }
}

/// `len` bytes at `ptr` (none when `len` is 0, whatever `ptr` is).
///
/// # Safety
/// When `len > 0`, `ptr` points to `len` readable bytes that outlive `'a`.
unsafe fn raw_bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Hands `value` to the plugin: a heap copy whose length sits in the eight
/// bytes before it, freed by [`delete_value`] (the deleter gets only the
/// pointer).
fn give_value(value: Vec<u8>) -> (*mut std::ffi::c_char, usize) {
    let len = value.len();
    let mut block = Vec::with_capacity(len + size_of::<usize>());
    block.extend_from_slice(&(len + size_of::<usize>()).to_ne_bytes());
    block.extend_from_slice(&value);
    let block: Box<[u8]> = block.into_boxed_slice();
    let start = Box::into_raw(block) as *mut u8;
    // SAFETY: the block holds the length's bytes, then the value.
    (unsafe { start.add(size_of::<usize>()) }.cast(), len)
}

/// The deleter of values oxla gives the plugin.
unsafe extern "C" fn delete_value(value: *mut std::ffi::c_char) {
    if value.is_null() {
        return;
    }
    // SAFETY: `value` came from `give_value`: the block starts eight bytes
    // before it with the block's length.
    unsafe {
        let start = (value as *mut u8).sub(size_of::<usize>());
        let mut len = [0u8; size_of::<usize>()];
        std::ptr::copy_nonoverlapping(start, len.as_mut_ptr(), len.len());
        let block = std::ptr::slice_from_raw_parts_mut(start, usize::from_ne_bytes(len));
        drop(Box::from_raw(block));
    }
}

/// Runs a store operation for a callback: its error (or a panic) becomes
/// the plugin's error through `callback_error`.
fn answer(
    callback_error: *mut ffi::PJRT_CallbackError,
    operation: impl FnOnce() -> Result<(), KeyValueError>,
) -> *mut ffi::PJRT_Error {
    let error = match catch_unwind(AssertUnwindSafe(operation)) {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(e)) => e,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            KeyValueError::new(
                ErrorCode::Internal,
                format!("the key-value store panicked: {what}"),
            )
        }
    };
    // SAFETY: the plugin passes its error constructor, which copies the
    // message.
    unsafe {
        match callback_error.as_ref().and_then(|f| *f) {
            Some(make) => make(
                error.code.to_raw(),
                error.message.as_ptr().cast(),
                error.message.len(),
            ),
            None => std::ptr::null_mut(),
        }
    }
}

unsafe extern "C" fn kv_get(args: *mut ffi::PJRT_KeyValueGetCallback_Args) -> *mut ffi::PJRT_Error {
    // SAFETY: the plugin passes valid args whose user_arg is the
    // `KeyValueCallbacks` installed with the client (alive as long as it).
    let args = unsafe { &mut *args };
    let callbacks = unsafe { &*(args.user_arg as *const KeyValueCallbacks) };
    answer(args.callback_error, || {
        let key = callbacks.key(args.key, args.key_size)?;
        let timeout = Duration::from_millis(args.timeout_in_ms.max(0) as u64);
        let (value, size) = give_value(callbacks.store.get(&key, timeout)?);
        args.value = value;
        args.value_size = size;
        args.value_deleter_callback = Some(delete_value);
        Ok(())
    })
}

unsafe extern "C" fn kv_try_get(
    args: *mut ffi::PJRT_KeyValueTryGetCallback_Args,
) -> *mut ffi::PJRT_Error {
    // SAFETY: as in `kv_get`.
    let args = unsafe { &mut *args };
    let callbacks = unsafe { &*(args.user_arg as *const KeyValueCallbacks) };
    answer(args.callback_error, || {
        let key = callbacks.key(args.key, args.key_size)?;
        let value = callbacks.store.try_get(&key)?.ok_or_else(|| {
            KeyValueError::new(ErrorCode::NotFound, format!("no value for key {key:?}"))
        })?;
        let (value, size) = give_value(value);
        args.value = value;
        args.value_size = size;
        args.value_deleter_callback = Some(delete_value);
        Ok(())
    })
}

unsafe extern "C" fn kv_put(args: *mut ffi::PJRT_KeyValuePutCallback_Args) -> *mut ffi::PJRT_Error {
    // SAFETY: as in `kv_get`; the value lives for the call.
    let args = unsafe { &mut *args };
    let callbacks = unsafe { &*(args.user_arg as *const KeyValueCallbacks) };
    answer(args.callback_error, || {
        let key = callbacks.key(args.key, args.key_size)?;
        let value = unsafe { raw_bytes(args.value.cast(), args.value_size) };
        callbacks.store.put(&key, value)
    })
}

#[cfg(test)]
mod tests {
    //! The callbacks called as a plugin calls them: through the function
    //! pointers `install` writes, with an error constructor of the
    //! plugin's shape.
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    #[derive(Default)]
    struct MapStore(Mutex<HashMap<String, Vec<u8>>>);

    impl KeyValueStore for MapStore {
        fn get(&self, key: &str, timeout: Duration) -> Result<Vec<u8>, KeyValueError> {
            self.try_get(key)?.ok_or_else(|| {
                KeyValueError::new(
                    ErrorCode::DeadlineExceeded,
                    format!("{key} not set within {timeout:?}"),
                )
            })
        }
        fn try_get(&self, key: &str) -> Result<Option<Vec<u8>>, KeyValueError> {
            if key.ends_with("boom") {
                panic!("store failure on {key}");
            }
            Ok(self.0.lock().unwrap().get(key).cloned())
        }
        fn put(&self, key: &str, value: &[u8]) -> Result<(), KeyValueError> {
            self.0.lock().unwrap().insert(key.into(), value.to_vec());
            Ok(())
        }
    }

    /// What the fake plugin's error constructor was last given.
    static LAST_ERROR: Mutex<Option<(u32, String)>> = Mutex::new(None);

    unsafe extern "C" fn make_error(
        code: ffi::PJRT_Error_Code,
        message: *const std::ffi::c_char,
        size: usize,
    ) -> *mut ffi::PJRT_Error {
        let text = unsafe { raw_bytes(message.cast(), size) };
        *LAST_ERROR.lock().unwrap() = Some((code, String::from_utf8_lossy(text).into_owned()));
        // Any non-null pointer: the callbacks only pass it back.
        std::ptr::NonNull::dangling().as_ptr()
    }

    fn installed(callbacks: &KeyValueCallbacks) -> ffi::PJRT_Client_Create_Args {
        let mut args: ffi::PJRT_Client_Create_Args = unsafe { std::mem::zeroed() };
        callbacks.install(&mut args);
        args
    }

    #[test]
    fn a_plugin_puts_and_gets_through_the_callbacks_under_its_prefix() {
        let store = Arc::new(MapStore::default());
        let callbacks = KeyValueCallbacks::new(store.clone(), "cuda:");
        let client = installed(&callbacks);
        let mut error_fn: ffi::PJRT_CallbackError = Some(make_error);
        let key = "gpu:local_topology/0";
        let value = b"topology bytes\0with a zero";
        let mut put: ffi::PJRT_KeyValuePutCallback_Args = unsafe { std::mem::zeroed() };
        put.key = key.as_ptr().cast();
        put.key_size = key.len();
        put.value = value.as_ptr().cast();
        put.value_size = value.len();
        put.callback_error = &mut error_fn;
        put.user_arg = client.kv_put_user_arg;
        let error = unsafe { client.kv_put_callback.unwrap()(&mut put) };
        assert!(error.is_null());
        assert_eq!(
            store
                .0
                .lock()
                .unwrap()
                .get("cuda:gpu:local_topology/0")
                .unwrap(),
            value
        );

        let mut get: ffi::PJRT_KeyValueGetCallback_Args = unsafe { std::mem::zeroed() };
        get.key = key.as_ptr().cast();
        get.key_size = key.len();
        get.timeout_in_ms = 1000;
        get.callback_error = &mut error_fn;
        get.user_arg = client.kv_get_user_arg;
        assert!(unsafe { client.kv_get_callback.unwrap()(&mut get) }.is_null());
        let got = unsafe { raw_bytes(get.value.cast(), get.value_size) }.to_vec();
        assert_eq!(got, value);
        unsafe { get.value_deleter_callback.unwrap()(get.value) };

        let mut try_get: ffi::PJRT_KeyValueTryGetCallback_Args = unsafe { std::mem::zeroed() };
        try_get.key = key.as_ptr().cast();
        try_get.key_size = key.len();
        try_get.callback_error = &mut error_fn;
        try_get.user_arg = client.kv_try_get_user_arg;
        assert!(unsafe { client.kv_try_get_callback.unwrap()(&mut try_get) }.is_null());
        assert_eq!(
            unsafe { raw_bytes(try_get.value.cast(), try_get.value_size) },
            value
        );
        unsafe { try_get.value_deleter_callback.unwrap()(try_get.value) };
    }

    #[test]
    fn absent_keys_timeouts_and_panics_become_the_plugins_errors() {
        let callbacks = KeyValueCallbacks::new(Arc::new(MapStore::default()), "cpu:");
        let client = installed(&callbacks);
        let mut error_fn: ffi::PJRT_CallbackError = Some(make_error);
        let mut try_get = |key: &str| {
            let mut args: ffi::PJRT_KeyValueTryGetCallback_Args = unsafe { std::mem::zeroed() };
            args.key = key.as_ptr().cast();
            args.key_size = key.len();
            args.callback_error = &mut error_fn;
            args.user_arg = client.kv_try_get_user_arg;
            let error = unsafe { client.kv_try_get_callback.unwrap()(&mut args) };
            assert!(!error.is_null() && args.value.is_null());
            LAST_ERROR.lock().unwrap().take().unwrap()
        };
        let (code, message) = try_get("absent");
        assert_eq!(code, ffi::PJRT_Error_Code_NOT_FOUND);
        assert!(message.contains("cpu:absent"), "{message}");
        let (code, message) = try_get("boom");
        assert_eq!(code, ffi::PJRT_Error_Code_INTERNAL);
        assert!(
            message.contains("panicked: store failure on cpu:boom"),
            "{message}"
        );

        let mut get: ffi::PJRT_KeyValueGetCallback_Args = unsafe { std::mem::zeroed() };
        let key = "never";
        get.key = key.as_ptr().cast();
        get.key_size = key.len();
        get.timeout_in_ms = 5;
        get.callback_error = &mut error_fn;
        get.user_arg = client.kv_get_user_arg;
        assert!(!unsafe { client.kv_get_callback.unwrap()(&mut get) }.is_null());
        let (code, message) = LAST_ERROR.lock().unwrap().take().unwrap();
        assert_eq!(code, ffi::PJRT_Error_Code_DEADLINE_EXCEEDED);
        assert!(
            message.contains("cpu:never not set within 5ms"),
            "{message}"
        );
    }
}
