//! Global switches that change tracing, as JAX's config has them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

fn x64_flag() -> &'static AtomicBool {
    static FLAG: OnceLock<AtomicBool> = OnceLock::new();
    FLAG.get_or_init(|| {
        let on = std::env::var("OXLA_ENABLE_X64")
            .is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "True"));
        AtomicBool::new(on)
    })
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

/// Whether `OXLA_LOG_COMPILES` asks for a line per compilation.
pub(crate) fn log_compiles() -> bool {
    std::env::var("OXLA_LOG_COMPILES").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether `OXLA_EXPLAIN_CACHE_MISSES` asks for an explanation per miss.
pub(crate) fn explain_cache_misses() -> bool {
    std::env::var("OXLA_EXPLAIN_CACHE_MISSES").is_ok_and(|v| !v.is_empty() && v != "0")
}
