//! Profiles (JAX's `jax.profiler.trace`): `profiler::trace(dir, f)` runs
//! `f` while collecting oxla's own spans (trace, lower, compile, disk-cache
//! load, execute, transfer; `tracing` spans on the calling thread) and
//! writes them to one Chrome trace JSON file (`oxla.trace.json`) that
//! `ui.perfetto.dev` and `chrome://tracing` open, and `oxla profile`
//! summarises. Each event carries the jit's name as its `function`
//! argument. The CPU plugins have no PJRT profiler extension, so their
//! per-op timings are not in the file; the file's `otherData` says which
//! plugin ran and whether it has one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::with_default;
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::error::{Error, Result};

/// The file `trace` writes in its directory.
pub const TRACE_FILE: &str = "oxla.trace.json";

/// `PJRT_Extension_Type_Profiler`.
const PROFILER_EXTENSION_TYPE: u32 = 1;

/// One finished span.
#[derive(Debug, Clone)]
struct Event {
    name: String,
    fields: Vec<(String, String)>,
    start_us: f64,
    duration_us: f64,
    thread: u64,
}

/// A span's fields and when it was entered.
struct Open {
    fields: Vec<(String, String)>,
    entered: Option<Instant>,
}

/// Collects the spans of the profiled closure.
struct Collector {
    origin: Instant,
    events: Arc<Mutex<Vec<Event>>>,
}

/// Gathers a span's fields as text.
struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        let text = text.trim_matches('"').to_string();
        match self.0.iter_mut().find(|(n, _)| n == field.name()) {
            Some(slot) => slot.1 = text,
            None => self.0.push((field.name().to_string(), text)),
        }
    }
}

/// A number for the current thread, stable within the process.
fn thread_number() -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut hasher);
    hasher.finish() % 1_000_000
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Collector {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Open {
                fields,
                entered: None,
            });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.fields));
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            open.entered = Some(Instant::now());
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(open) = extensions.get_mut::<Open>() else {
            return;
        };
        let Some(entered) = open.entered.take() else {
            return;
        };
        let event = Event {
            name: span.name().to_string(),
            fields: open.fields.clone(),
            start_us: entered.duration_since(self.origin).as_secs_f64() * 1e6,
            duration_us: entered.elapsed().as_secs_f64() * 1e6,
            thread: thread_number(),
        };
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}

/// The name an event is shown under: a compilation the disk cache served
/// is a `disk-cache load`.
fn display_name(event: &Event) -> &str {
    let from_disk = event
        .fields
        .iter()
        .any(|(n, v)| n == "source" && v.starts_with("DiskHit"));
    if event.name == "compile" && from_disk {
        "disk-cache load"
    } else {
        &event.name
    }
}

/// Whether oxla's plugin offers the PJRT profiler extension.
fn plugin_has_profiler() -> Result<(String, bool)> {
    let api = crate::runtime::client()?.api().clone();
    let found = api.has_extension(PROFILER_EXTENSION_TYPE);
    Ok((api.path().display().to_string(), found))
}

/// Runs `f`, collecting oxla's spans, and writes them as a Chrome trace to
/// `dir/oxla.trace.json` (the directory is created). Returns `f`'s result
/// and the file's path. Spans of other threads are not collected.
pub fn trace<R>(dir: impl AsRef<Path>, f: impl FnOnce() -> R) -> Result<(R, PathBuf)> {
    let dir = dir.as_ref();
    let (plugin, has_profiler) = plugin_has_profiler()?;
    let events = Arc::new(Mutex::new(Vec::new()));
    let collector = Collector {
        origin: Instant::now(),
        events: events.clone(),
    };
    let subscriber = Registry::default().with(collector);
    let result = with_default(subscriber, f);
    let events = events.lock().map(|e| e.clone()).unwrap_or_default();
    let trace_events: Vec<serde_json::Value> = events
        .iter()
        .map(|e| {
            let args: serde_json::Map<String, serde_json::Value> = e
                .fields
                .iter()
                .map(|(n, v)| (n.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "name": display_name(e),
                "cat": "oxla",
                "ph": "X",
                "ts": e.start_us,
                "dur": e.duration_us,
                "pid": std::process::id(),
                "tid": e.thread,
                "args": args,
            })
        })
        .collect();
    let document = serde_json::json!({
        "traceEvents": trace_events,
        "displayTimeUnit": "ms",
        "otherData": {
            "producer": format!("oxla {}", env!("CARGO_PKG_VERSION")),
            "plugin": plugin,
            "plugin_profiler": if has_profiler {
                "the plugin has the PJRT profiler extension; oxla does not collect it yet"
            } else {
                "the plugin has no PJRT profiler extension: oxla's spans only"
            },
        },
    });
    let io = |e: std::io::Error| Error::InvalidArgument(format!("profiler::trace: {e}"));
    std::fs::create_dir_all(dir).map_err(io)?;
    let path = dir.join(TRACE_FILE);
    let text = serde_json::to_string_pretty(&document)
        .map_err(|e| Error::InvalidArgument(format!("profiler::trace: {e}")))?;
    std::fs::write(&path, text).map_err(io)?;
    Ok((result, path))
}
