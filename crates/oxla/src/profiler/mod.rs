//! Profiles (JAX's `jax.profiler.trace`): `profiler::trace(dir, f)` runs
//! `f` while collecting oxla's own spans (trace, lower, compile, disk-cache
//! load, execute, transfer; `tracing` spans of every thread) and
//! writes them to one Chrome trace JSON file (`oxla.trace.json`) that
//! `ui.perfetto.dev` and `chrome://tracing` open, and `oxla profile`
//! summarises. Each event carries the jit's name as its `function`
//! argument. Where the plugin has the PJRT profiler extension (the GPU
//! plugins), its own profile (host and device tracers: ops, kernels,
//! copies) is collected over the same time and added; the
//! pinned CPU plugins have none, so their per-op timings are not in the
//! file. The file's `otherData` says which plugin ran and what its
//! profiler gave.
//!
//! oxla installs its collector as the global `tracing` subscriber at the
//! first profile; a program with its own subscriber adds [`layer`] to it
//! instead (`registry().with(its_layers).with(oxla::profiler::layer())`),
//! and both see oxla's spans.
//!
//! The plugin's profile becomes trace events as JAX's does: one trace
//! process per plane (`/host:CPU`, `/device:GPU:0`, ...), one thread per
//! line (a host thread, a CUDA stream), each event named by its metadata
//! with its stats as arguments (a stat `hlo_module` also as the `function`
//! argument, so `oxla profile` groups device ops per program), placed on
//! oxla's time axis by the wall-clock time the trace began. The plugin's
//! profiler runs with JAX's default levels (host tracer 2, device tracer 1).

mod plugin;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::error::{Error, Result};

/// The file `trace` writes in its directory.
pub const TRACE_FILE: &str = "oxla.trace.json";

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

/// The profile being recorded: when it began and its events.
struct Session {
    origin: Instant,
    events: Vec<Event>,
}

/// The recording session, if one is on (one at a time, process-wide).
fn session() -> &'static Mutex<Option<Session>> {
    static SESSION: OnceLock<Mutex<Option<Session>>> = OnceLock::new();
    SESSION.get_or_init(Default::default)
}

/// Whether a session is on: spans are only made while one is.
static RECORDING: AtomicBool = AtomicBool::new(false);

/// Whether a collector is part of the process's subscriber (oxla's own, or
/// a program's that added [`layer`]).
static ATTACHED: AtomicBool = AtomicBool::new(false);

/// The `tracing` layer that records spans into the session, behind
/// [`layer`]'s per-layer filter (oxla's spans, only while a session
/// records), so it never disables anything for a program's other layers.
struct Collector;

/// The profiler's `tracing` layer, for a program that installs its own
/// subscriber: add it there and [`trace`] records through it (without it,
/// `trace` installs one of its own, which a program's global subscriber
/// prevents). It only sees oxla's spans (targets `oxla*`), only while a
/// profile records, and filters nothing out for the program's other
/// layers.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt;
/// let subscriber = tracing_subscriber::registry().with(oxla::profiler::layer());
/// tracing::subscriber::set_global_default(subscriber).expect("the first subscriber");
/// let ((), _path) = oxla::profiler::trace("profile", || {}).expect("a profile");
/// ```
pub fn layer<S>() -> impl Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let oxla_spans_while_recording = tracing_subscriber::filter::filter_fn(|metadata| {
        RECORDING.load(Ordering::Relaxed) && metadata.target().starts_with("oxla")
    });
    Collector.with_filter(oxla_spans_while_recording)
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
    fn on_layer(&mut self, _subscriber: &mut S) {
        ATTACHED.store(true, Ordering::Relaxed);
    }

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
        let duration_us = entered.elapsed().as_secs_f64() * 1e6;
        let mut session = session().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(session) = session.as_mut() {
            session.events.push(Event {
                name: span.name().to_string(),
                fields: open.fields.clone(),
                start_us: entered
                    .saturating_duration_since(session.origin)
                    .as_secs_f64()
                    * 1e6,
                duration_us,
                thread: thread_number(),
            });
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

/// Installs the collector as the global `tracing` subscriber (once),
/// unless the program's subscriber has [`layer`]; an error when the
/// program installed a subscriber without it.
fn install() -> Result<()> {
    static INSTALLED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    if ATTACHED.load(Ordering::Relaxed) {
        return Ok(());
    }
    INSTALLED
        .get_or_init(|| {
            tracing::subscriber::set_global_default(Registry::default().with(layer())).map_err(
                |_| {
                    "profiler::trace: the program installed its own tracing subscriber; add \
                     oxla::profiler::layer() to it (registry().with(your_layers).with(\
                     oxla::profiler::layer())) and trace records through it"
                        .to_string()
                },
            )
        })
        .clone()
        .map_err(Error::InvalidArgument)
}

/// Runs `f`, collecting oxla's spans (of every thread), and writes them as
/// a Chrome trace to `dir/oxla.trace.json` (the directory is created).
/// Returns `f`'s result and the file's path. One profile records at a
/// time.
pub fn trace<R>(dir: impl AsRef<Path>, f: impl FnOnce() -> R) -> Result<(R, PathBuf)> {
    let dir = dir.as_ref();
    let api = crate::runtime::client()?.api().clone();
    install()?;
    {
        let mut current = session().lock().unwrap_or_else(|p| p.into_inner());
        if current.is_some() {
            return Err(Error::InvalidArgument(
                "profiler::trace: a profile is already being recorded".into(),
            ));
        }
        *current = Some(Session {
            origin: Instant::now(),
            events: Vec::new(),
        });
        RECORDING.store(true, Ordering::Relaxed);
    }
    let origin_unix_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    let capture = plugin::PluginCapture::start(&api);
    /// Ends the session, also when `f` panics.
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            RECORDING.store(false, Ordering::Relaxed);
            session().lock().unwrap_or_else(|p| p.into_inner()).take();
        }
    }
    let end = End;
    let result = f();
    let (plugin_events, plugin_status) = capture.finish(origin_unix_ns);
    RECORDING.store(false, Ordering::Relaxed);
    let events = session()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .map(|s| s.events)
        .unwrap_or_default();
    drop(end);
    let mut trace_events: Vec<serde_json::Value> = events
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
    trace_events.extend(plugin_events);
    let document = serde_json::json!({
        "traceEvents": trace_events,
        "displayTimeUnit": "ms",
        "otherData": {
            "producer": format!("oxla {}", env!("CARGO_PKG_VERSION")),
            "plugin": api.path().display().to_string(),
            "plugin_profiler": plugin_status,
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
