//! Device memory profiles (JAX's `jax.profiler.save_device_memory_profile`):
//! every device array oxla holds is registered, with its size and the
//! source line that made it, while it lives. `save_device_memory_profile`
//! writes the live ones as a pprof profile, as JAX does (`pprof -top
//! FILE`, `oxla profile FILE`); `device_memory_summary` says the same in
//! text, grouped by source line; `live_arrays` returns them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use oxla_core::{Aval, Location};

use crate::error::{Error, Result};

/// A live device array: its type, bytes and the line that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveArray {
    /// Its type.
    pub aval: Aval,
    /// Its size on the devices (every shard).
    pub bytes: u64,
    /// The source line that made it.
    pub location: Location,
}

fn registry() -> &'static Mutex<HashMap<u64, LiveArray>> {
    static LIVE: OnceLock<Mutex<HashMap<u64, LiveArray>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Keeps an array in the registry while it lives (held by the array).
#[derive(Debug)]
pub(crate) struct Tracked(u64);

impl Tracked {
    /// Registers an array of `aval` taking `bytes`, made at `location`.
    pub(crate) fn new(aval: &Aval, bytes: u64, location: Location) -> Tracked {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let entry = LiveArray {
            aval: aval.clone(),
            bytes,
            location,
        };
        registry()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, entry);
        Tracked(id)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        registry()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}

/// The device arrays alive now, largest first.
pub fn live_arrays() -> Vec<LiveArray> {
    let mut live: Vec<LiveArray> = registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .cloned()
        .collect();
    live.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.location.to_string().cmp(&b.location.to_string()))
    });
    live
}

/// The live device arrays as a gzip-compressed pprof profile (JAX's
/// `jax.profiler.device_memory_profile`): sample types `allocations` and
/// `space` (bytes), one sample per array at the source line that made it.
pub fn device_memory_profile() -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let live: Vec<oxla_pprof::Allocation> = live_arrays()
        .into_iter()
        .map(|a| oxla_pprof::Allocation {
            file: a.location.file.to_string(),
            line: a.location.line,
            column: a.location.column,
            bytes: a.bytes,
            shape: a.aval.to_string(),
        })
        .collect();
    oxla_pprof::gzipped(&oxla_pprof::memory_profile(&live, now))
}

/// Writes [`device_memory_profile`] to `path`.
pub fn save_device_memory_profile(path: impl AsRef<Path>) -> Result<()> {
    std::fs::write(path.as_ref(), device_memory_profile()).map_err(|e| {
        Error::InvalidArgument(format!(
            "save_device_memory_profile: cannot write {}: {e}",
            path.as_ref().display()
        ))
    })
}

/// The live device arrays in text: the total, then one line per source
/// line that made arrays (bytes, count, the line), the largest first, then
/// every array.
pub fn device_memory_summary() -> String {
    let live = live_arrays();
    let total: u64 = live.iter().map(|a| a.bytes).sum();
    let mut by_line: HashMap<String, (u64, usize)> = HashMap::new();
    for a in &live {
        let slot = by_line.entry(a.location.to_string()).or_default();
        slot.0 += a.bytes;
        slot.1 += 1;
    }
    let mut lines: Vec<(String, (u64, usize))> = by_line.into_iter().collect();
    lines.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let mut text = format!(
        "oxla device memory profile: {total} bytes in {} live arrays\n\nby source line:\n",
        live.len()
    );
    for (line, (bytes, count)) in &lines {
        text.push_str(&format!("{bytes:>14} bytes {count:>6} arrays  {line}\n"));
    }
    text.push_str("\narrays:\n");
    for a in &live {
        text.push_str(&format!(
            "{:>14} bytes  {}  {}\n",
            a.bytes, a.aval, a.location
        ));
    }
    text
}
