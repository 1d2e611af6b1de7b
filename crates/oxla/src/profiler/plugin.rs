//! The plugin's own profile in a trace: where the plugin has the PJRT
//! profiler extension (the GPU plugins), a session of its profiler (host
//! tracer level 2, device tracer level 1, as JAX's defaults) runs beside
//! oxla's spans, and the `XSpace` it collects becomes Chrome trace events:
//! one trace process per plane (`/host:CPU`, `/device:GPU:0`, ...), one
//! thread per line (a host thread, a CUDA stream), each event named by its
//! metadata with its stats as arguments (a stat `hlo_module` also as the
//! `function` argument, so `oxla profile` groups device ops per program).
//! XLines' timestamps are nanoseconds since the UNIX epoch; events are
//! placed on oxla's time axis by the wall-clock time the trace began.

use std::sync::Arc;

use oxla_pjrt::PluginProfiler;
use oxla_pjrt::profiler_proto::ProfileOptions;
use oxla_pjrt::profiler_proto::profiler::{XPlane, XSpace, XStat, x_stat};
use serde_json::{Map, Value, json};

/// The first trace process id of the plugin's planes (oxla's spans use
/// the OS process id).
const PLANE_PID_BASE: u64 = 1_000_000_000;

/// A running plugin profiler, or why there is none.
pub(super) struct PluginCapture {
    session: Option<PluginProfiler>,
    status: String,
}

impl PluginCapture {
    /// Starts the plugin's profiler if it has one; a plugin whose profiler
    /// refuses to start (another profiler of the process runs) leaves the
    /// trace with oxla's spans and says so.
    pub(super) fn start(api: &Arc<oxla_pjrt::Api>) -> PluginCapture {
        let options = ProfileOptions {
            host_tracer_level: 2,
            device_tracer_level: 1,
            version: 1,
            ..Default::default()
        };
        match PluginProfiler::start(api, &options) {
            Ok(Some(session)) => PluginCapture {
                session: Some(session),
                status: "the plugin's profiler (PJRT profiler extension) recorded".into(),
            },
            Ok(None) => PluginCapture {
                session: None,
                status: "the plugin has no PJRT profiler extension: oxla's spans only".into(),
            },
            Err(e) => PluginCapture {
                session: None,
                status: format!("the plugin's profiler did not start ({e}): oxla's spans only"),
            },
        }
    }

    /// Stops the plugin's profiler: its events on the time axis that starts
    /// at `origin_unix_ns`, and a sentence on what was collected.
    pub(super) fn finish(self, origin_unix_ns: i128) -> (Vec<Value>, String) {
        let Some(session) = self.session else {
            return (Vec::new(), self.status);
        };
        match session.collect() {
            Ok(space) => {
                let events = chrome_events(&space, origin_unix_ns);
                let complete = events.iter().filter(|e| e["ph"] == "X").count();
                let status = format!(
                    "{}: {complete} events on {} planes",
                    self.status,
                    space.planes.len()
                );
                (events, status)
            }
            Err(e) => (
                Vec::new(),
                format!("the plugin's profiler failed to collect ({e})"),
            ),
        }
    }
}

/// The value of a stat (a reference is the name it refers to).
fn stat_value(plane: &XPlane, stat: &XStat) -> Value {
    match &stat.value {
        Some(x_stat::Value::DoubleValue(v)) => json!(v),
        Some(x_stat::Value::Uint64Value(v)) => json!(v),
        Some(x_stat::Value::Int64Value(v)) => json!(v),
        Some(x_stat::Value::StrValue(v)) => json!(v),
        Some(x_stat::Value::BytesValue(v)) => json!(format!("{} bytes", v.len())),
        Some(x_stat::Value::RefValue(id)) => json!(
            plane
                .stat_metadata
                .get(&(*id as i64))
                .map(|m| m.name.as_str())
                .unwrap_or("?")
        ),
        None => Value::Null,
    }
}

/// The Chrome trace events of `space`: process and thread names, then one
/// complete event per timed XEvent (aggregated ones, with occurrence
/// counts instead of offsets, are skipped).
pub(super) fn chrome_events(space: &XSpace, origin_unix_ns: i128) -> Vec<Value> {
    let mut events = Vec::new();
    for (index, plane) in space.planes.iter().enumerate() {
        let pid = PLANE_PID_BASE + index as u64;
        events.push(json!({
            "ph": "M", "name": "process_name", "pid": pid, "args": {"name": plane.name},
        }));
        for line in &plane.lines {
            let thread = if line.display_name.is_empty() {
                &line.name
            } else {
                &line.display_name
            };
            events.push(json!({
                "ph": "M", "name": "thread_name", "pid": pid, "tid": line.id,
                "args": {"name": thread},
            }));
            for event in &line.events {
                let Some(oxla_pjrt::profiler_proto::profiler::x_event::Data::OffsetPs(offset)) =
                    event.data
                else {
                    continue;
                };
                let metadata = plane.event_metadata.get(&event.metadata_id);
                let name = metadata
                    .map(|m| {
                        if m.display_name.is_empty() {
                            m.name.as_str()
                        } else {
                            m.display_name.as_str()
                        }
                    })
                    .unwrap_or("?");
                let mut args = Map::new();
                for stat in event
                    .stats
                    .iter()
                    .chain(metadata.into_iter().flat_map(|m| &m.stats))
                {
                    let key = plane
                        .stat_metadata
                        .get(&stat.metadata_id)
                        .map(|m| m.name.clone())
                        .unwrap_or_else(|| format!("stat {}", stat.metadata_id));
                    args.insert(key, stat_value(plane, stat));
                }
                if let Some(module) = args.get("hlo_module").cloned() {
                    args.insert("function".into(), module);
                }
                let start_ns = i128::from(line.timestamp_ns) + i128::from(offset) / 1000;
                events.push(json!({
                    "name": name,
                    "cat": "plugin",
                    "ph": "X",
                    "ts": (start_ns - origin_unix_ns) as f64 / 1000.0,
                    "dur": event.duration_ps as f64 / 1e6,
                    "pid": pid,
                    "tid": line.id,
                    "args": args,
                }));
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxla_pjrt::profiler_proto::profiler::{
        XEvent, XEventMetadata, XLine, XStatMetadata, x_event,
    };

    #[test]
    fn planes_lines_and_events_become_chrome_events_on_oxlas_time_axis() {
        let origin = 1_700_000_000_000_000_000i128;
        let plane = XPlane {
            id: 1,
            name: "/device:GPU:0".into(),
            lines: vec![XLine {
                id: 7,
                name: "Stream #13".into(),
                timestamp_ns: (origin + 2_000_000) as i64,
                events: vec![
                    XEvent {
                        metadata_id: 1,
                        data: Some(x_event::Data::OffsetPs(3_000_000)),
                        duration_ps: 1_500_000,
                        stats: vec![
                            XStat {
                                metadata_id: 10,
                                value: Some(x_stat::Value::StrValue("jit_step".into())),
                            },
                            XStat {
                                metadata_id: 11,
                                value: Some(x_stat::Value::RefValue(12)),
                            },
                        ],
                    },
                    XEvent {
                        metadata_id: 1,
                        data: Some(x_event::Data::NumOccurrences(4)),
                        duration_ps: 9,
                        stats: vec![],
                    },
                ],
                ..Default::default()
            }],
            event_metadata: [(
                1,
                XEventMetadata {
                    id: 1,
                    name: "fusion.3".into(),
                    ..Default::default()
                },
            )]
            .into(),
            stat_metadata: [
                (10, "hlo_module"),
                (11, "kernel"),
                (12, "loop_fusion_kernel"),
            ]
            .into_iter()
            .map(|(id, name)| {
                (
                    id,
                    XStatMetadata {
                        id,
                        name: name.into(),
                        ..Default::default()
                    },
                )
            })
            .collect(),
            ..Default::default()
        };
        let space = XSpace {
            planes: vec![plane],
            ..Default::default()
        };
        let events = chrome_events(&space, origin);
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[0]["args"]["name"], "/device:GPU:0");
        assert_eq!(events[1]["args"]["name"], "Stream #13");
        let op = &events[2];
        assert_eq!(op["name"], "fusion.3");
        // 2 ms after the origin, plus 3 µs.
        assert_eq!(op["ts"], 2003.0);
        assert_eq!(op["dur"], 1.5);
        assert_eq!(op["tid"], 7);
        assert_eq!(op["args"]["hlo_module"], "jit_step");
        assert_eq!(op["args"]["function"], "jit_step");
        assert_eq!(op["args"]["kernel"], "loop_fusion_kernel");
    }
}
