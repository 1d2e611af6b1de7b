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

/// `precision` as the default matmul precision's flag value (0: none).
fn precision_code(precision: Option<oxla_core::Precision>) -> u8 {
    match precision {
        None => 0,
        Some(oxla_core::Precision::Default) => 1,
        Some(oxla_core::Precision::High) => 2,
        Some(oxla_core::Precision::Highest) => 3,
    }
}

fn precision_of_code(code: u8) -> Option<oxla_core::Precision> {
    match code {
        1 => Some(oxla_core::Precision::Default),
        2 => Some(oxla_core::Precision::High),
        3 => Some(oxla_core::Precision::Highest),
        _ => None,
    }
}

/// A precision's name as `jax_default_matmul_precision` takes it: the
/// precision's own (`default`, `high`, `highest`) or the format it computes
/// in (`bfloat16`, `tensorfloat32`, `float32`), any case.
fn parse_precision(name: &str) -> Option<oxla_core::Precision> {
    match name.trim().to_ascii_lowercase().as_str() {
        "default" | "fastest" | "bfloat16" => Some(oxla_core::Precision::Default),
        "high" | "tensorfloat32" | "bfloat16_3x" => Some(oxla_core::Precision::High),
        "highest" | "float32" => Some(oxla_core::Precision::Highest),
        _ => None,
    }
}

fn matmul_precision_flag() -> &'static std::sync::atomic::AtomicU8 {
    static FLAG: OnceLock<std::sync::atomic::AtomicU8> = OnceLock::new();
    FLAG.get_or_init(|| {
        let initial = oxla_pjrt::settings::setting(
            "OXLA_DEFAULT_MATMUL_PRECISION",
            "default, high, highest (or bfloat16, tensorfloat32, float32)",
            |v| parse_precision(v).map(Some),
        )
        .or_default(None);
        std::sync::atomic::AtomicU8::new(precision_code(initial))
    })
}

thread_local! {
    /// This thread's override (see [`with_default_matmul_precision`]).
    static MATMUL_PRECISION_HERE: std::cell::Cell<Option<u8>> = const { std::cell::Cell::new(None) };
}

/// The precision of every `dot_general` (so `matmul`, `dot`, `einsum` and
/// the layers) that names none, process-wide, as
/// `jax_default_matmul_precision`: `None` (the default) leaves it to the
/// backend, which on GPUs computes f32 dots in TensorFloat-32 as JAX's do;
/// `Some(Precision::Highest)` asks for full f32. CPUs compute in full
/// precision either way. Read when a function is traced and part of every
/// jit cache key. Initially `OXLA_DEFAULT_MATMUL_PRECISION` (`default`,
/// `high`, `highest`, or JAX's `bfloat16`, `tensorfloat32`, `float32`).
/// Convolutions take no precision yet.
pub fn set_default_matmul_precision(precision: Option<oxla_core::Precision>) {
    matmul_precision_flag().store(precision_code(precision), Ordering::SeqCst);
}

/// Runs `f` with the default matmul precision set to `precision` on this
/// thread only (as JAX's `jax.default_matmul_precision(...)` context
/// manager), then restores it.
pub fn with_default_matmul_precision<R>(
    precision: Option<oxla_core::Precision>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<u8>);
    impl Drop for Restore {
        fn drop(&mut self) {
            MATMUL_PRECISION_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore =
        Restore(MATMUL_PRECISION_HERE.with(|c| c.replace(Some(precision_code(precision)))));
    f()
}

/// The default matmul precision in force on this thread (see
/// [`set_default_matmul_precision`], [`with_default_matmul_precision`]).
pub fn default_matmul_precision() -> Option<oxla_core::Precision> {
    let code = MATMUL_PRECISION_HERE
        .with(std::cell::Cell::get)
        .unwrap_or_else(|| matmul_precision_flag().load(Ordering::SeqCst));
    precision_of_code(code)
}

#[cfg(test)]
mod matmul_precision_tests {
    use super::*;
    use oxla_core::Precision;

    #[test]
    fn names_parse_as_jax_takes_them() {
        assert_eq!(parse_precision("float32"), Some(Precision::Highest));
        assert_eq!(parse_precision(" HIGHEST "), Some(Precision::Highest));
        assert_eq!(parse_precision("tensorfloat32"), Some(Precision::High));
        assert_eq!(parse_precision("bfloat16"), Some(Precision::Default));
        assert_eq!(parse_precision("f32"), None);
    }

    #[test]
    fn a_scoped_precision_is_restored_even_after_a_panic() {
        assert_eq!(default_matmul_precision(), None);
        let inner =
            with_default_matmul_precision(Some(Precision::Highest), default_matmul_precision);
        assert_eq!(inner, Some(Precision::Highest));
        let unwound = std::panic::catch_unwind(|| {
            with_default_matmul_precision(Some(Precision::High), || panic!("inside"))
        });
        assert!(unwound.is_err());
        assert_eq!(default_matmul_precision(), None);
        for code in 0..4 {
            assert_eq!(precision_code(precision_of_code(code)), code);
        }
    }
}
