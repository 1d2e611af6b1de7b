//! `PJRT_Event`: completion of an asynchronous transfer or execution.

use std::ffi::c_void;
use std::sync::Arc;

use crate::api::{Api, pjrt_call};
use crate::args::PjrtArgs;
use crate::error::Result;
use crate::ffi;

/// A future-like event; waiting on it returns the error it completed with.
pub struct Event {
    api: Arc<Api>,
    raw: *mut ffi::PJRT_Event,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("ready", &self.is_ready().ok())
            .finish()
    }
}

// SAFETY: PJRT events are thread-safe futures.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

type ReadyCallback = Box<dyn FnOnce(Result<()>) + Send>;

struct CallbackState {
    api: Arc<Api>,
    callback: ReadyCallback,
}

unsafe extern "C" fn on_ready_trampoline(error: *mut ffi::PJRT_Error, user_arg: *mut c_void) {
    // SAFETY: `user_arg` is the `Box<CallbackState>` leaked by `on_ready`, and
    // the plugin calls this exactly once.
    let state = unsafe { Box::from_raw(user_arg.cast::<CallbackState>()) };
    let result = state.api.check(error, "PJRT_Event_OnReady");
    // A panic must not unwind into the plugin's C++ frames.
    let callback = state.callback;
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || callback(result)));
}

impl Event {
    /// Wraps an event the plugin returned; `None` for a null pointer.
    pub(crate) fn from_raw(api: Arc<Api>, raw: *mut ffi::PJRT_Event) -> Option<Event> {
        (!raw.is_null()).then_some(Event { api, raw })
    }

    /// Blocks until the event is ready; returns its error, if any.
    pub fn wait(&self) -> Result<()> {
        let mut args = ffi::PJRT_Event_Await_Args::new();
        args.event = self.raw;
        pjrt_call!(&self.api, PJRT_Event_Await, &mut args)
    }

    /// Whether the event is ready, without blocking.
    pub fn is_ready(&self) -> Result<bool> {
        let mut args = ffi::PJRT_Event_IsReady_Args::new();
        args.event = self.raw;
        pjrt_call!(&self.api, PJRT_Event_IsReady, &mut args)?;
        Ok(args.is_ready)
    }

    /// Calls `callback` with the event's result once it is ready (possibly at
    /// once, on this thread, or later on a plugin thread).
    pub fn on_ready(&self, callback: impl FnOnce(Result<()>) + Send + 'static) -> Result<()> {
        let state = Box::new(CallbackState {
            api: self.api.clone(),
            callback: Box::new(callback),
        });
        let user_arg = Box::into_raw(state);
        let mut args = ffi::PJRT_Event_OnReady_Args::new();
        args.event = self.raw;
        args.callback = Some(on_ready_trampoline);
        args.user_arg = user_arg.cast();
        let registered = pjrt_call!(&self.api, PJRT_Event_OnReady, &mut args);
        if registered.is_err() {
            // SAFETY: the plugin refused the callback, so it never owned the state.
            drop(unsafe { Box::from_raw(user_arg) });
        }
        registered
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let mut args = ffi::PJRT_Event_Destroy_Args::new();
        args.event = self.raw;
        let _ = (|| pjrt_call!(&self.api, PJRT_Event_Destroy, &mut args))();
    }
}
