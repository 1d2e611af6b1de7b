//! The ABI between a program's host-callback custom calls and the handler
//! the runtime registers with each plugin: the names both sides agree on.

/// The custom-call target of every host callback: the XLA FFI handler the
/// runtime registers with each plugin.
pub const HOST_CALLBACK_TARGET: &str = "oxla_host_callback";
/// The custom call's attribute naming the closure (an unsigned 64-bit id).
pub const CALLBACK_ID_ATTRIBUTE: &str = "callback_id";
/// The custom call's attribute saying the call is ordered: its first
/// operand and first result are a `u8` scalar that chains the program's
/// effectful calls in order, which the handler passes through.
pub const ORDERED_ATTRIBUTE: &str = "ordered";
