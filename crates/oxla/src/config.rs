//! Global switches that change tracing, as JAX's config has them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

fn x64_flag() -> &'static AtomicBool {
    static FLAG: OnceLock<AtomicBool> = OnceLock::new();
    FLAG.get_or_init(|| AtomicBool::new(oxla_pjrt::settings::flag("OXLA_ENABLE_X64")))
}

/// Enables 64-bit types (`jax_enable_x64`): default int and float become
/// `i64` and `f64`, and 64-bit inputs stay 64-bit. Off by default (or
/// from `OXLA_ENABLE_X64=1`). Part of every jit cache key.
pub fn enable_x64(on: bool) {
    x64_flag().store(on, Ordering::SeqCst);
}

/// Whether 64-bit types are enabled.
pub fn x64_enabled() -> bool {
    x64_flag().load(Ordering::SeqCst)
}

fn log_compiles_flag() -> &'static AtomicBool {
    static FLAG: OnceLock<AtomicBool> = OnceLock::new();
    FLAG.get_or_init(|| AtomicBool::new(oxla_pjrt::settings::flag("OXLA_LOG_COMPILES")))
}

fn explain_flag() -> &'static AtomicBool {
    static FLAG: OnceLock<AtomicBool> = OnceLock::new();
    FLAG.get_or_init(|| AtomicBool::new(oxla_pjrt::settings::flag("OXLA_EXPLAIN_CACHE_MISSES")))
}

/// Logs a line per compilation (function, signature, trace, lower and
/// compile times), as `jax_log_compiles`. Default: `OXLA_LOG_COMPILES=1`.
pub fn set_log_compiles(on: bool) {
    log_compiles_flag().store(on, Ordering::SeqCst);
}

/// Explains each jit cache miss against the closest earlier key, as
/// `jax_explain_cache_misses`. Default: `OXLA_EXPLAIN_CACHE_MISSES=1`.
pub fn set_explain_cache_misses(on: bool) {
    explain_flag().store(on, Ordering::SeqCst);
}

pub(crate) fn log_compiles() -> bool {
    log_compiles_flag().load(Ordering::SeqCst)
}

pub(crate) fn explain_cache_misses() -> bool {
    explain_flag().load(Ordering::SeqCst)
}

type Sink = Box<dyn Fn(&str) + Send + Sync>;

fn sink() -> &'static std::sync::Mutex<Option<Sink>> {
    static SINK: OnceLock<std::sync::Mutex<Option<Sink>>> = OnceLock::new();
    SINK.get_or_init(Default::default)
}

/// Sends oxla's diagnostic lines (compile logs, cache-miss explanations) to
/// `f` instead of stderr; `None` restores stderr.
pub fn set_diagnostics_sink(f: Option<Sink>) {
    if let Ok(mut s) = sink().lock() {
        *s = f;
    }
}

/// Emits one diagnostic line.
pub(crate) fn diagnostic(line: &str) {
    match sink().lock() {
        Ok(s) if s.is_some() => (s.as_ref().expect("checked"))(line),
        _ => eprintln!("{line}"),
    }
}

/// What happens on an implicit transfer (JAX's `jax_transfer_guard`): a
/// Rust scalar copied to the device because an op or a jitted call needed
/// it there, or an array copied to the host to be printed. Explicit ones
/// (`Array::from_slice`, `to_vec`, `item`, `to_npy`) are always allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferGuard {
    /// Allow silently (the default).
    Allow,
    /// Allow, with a diagnostic line naming the source line.
    Log,
    /// Refuse with [`crate::Error::TransferGuard`].
    Disallow,
}

fn guard_flag() -> &'static std::sync::atomic::AtomicU8 {
    static FLAG: OnceLock<std::sync::atomic::AtomicU8> = OnceLock::new();
    FLAG.get_or_init(|| {
        let initial = oxla_pjrt::settings::setting(
            "OXLA_TRANSFER_GUARD",
            "allow, log, disallow",
            |v| match v.to_ascii_lowercase().as_str() {
                "allow" => Some(TransferGuard::Allow),
                "log" => Some(TransferGuard::Log),
                "disallow" => Some(TransferGuard::Disallow),
                _ => None,
            },
        )
        .or_default(TransferGuard::Allow);
        std::sync::atomic::AtomicU8::new(initial as u8)
    })
}

/// Sets the transfer guard (default: `OXLA_TRANSFER_GUARD=allow|log|disallow`).
pub fn set_transfer_guard(guard: TransferGuard) {
    guard_flag().store(guard as u8, Ordering::SeqCst);
}

/// The transfer guard in force.
pub fn transfer_guard() -> TransferGuard {
    match guard_flag().load(Ordering::SeqCst) {
        1 => TransferGuard::Log,
        2 => TransferGuard::Disallow,
        _ => TransferGuard::Allow,
    }
}
