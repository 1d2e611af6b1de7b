//! `oxla profile FILE`: a Chrome trace (what `oxla::profiler::trace` or
//! another tracer wrote) summarised in the terminal: the events grouped by
//! name and function, the groups taking the most time first.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

/// Arguments of `oxla profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A Chrome trace JSON file (`oxla.trace.json`).
    file: PathBuf,
    /// How many groups to list.
    #[arg(long, default_value_t = 20)]
    top: usize,
}

/// The time events of one name and function took.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) count: usize,
    pub(crate) total_us: f64,
    pub(crate) max_us: f64,
}

/// Groups the complete events (`"ph": "X"`) of a trace document by name
/// and `function` argument, the longest total first.
pub(crate) fn summarize(document: &serde_json::Value) -> anyhow::Result<Vec<Group>> {
    let events = document
        .get("traceEvents")
        .or(Some(document))
        .and_then(|e| e.as_array())
        .context("not a Chrome trace: no traceEvents array")?;
    let mut groups: HashMap<String, Group> = HashMap::new();
    for event in events {
        if event.get("ph").and_then(|p| p.as_str()) != Some("X") {
            continue;
        }
        let name = event.get("name").and_then(|n| n.as_str()).unwrap_or("?");
        let function = event
            .get("args")
            .and_then(|a| a.get("function"))
            .and_then(|f| f.as_str());
        let key = match function {
            Some(f) => format!("{name} {f}"),
            None => name.to_string(),
        };
        let duration = event.get("dur").and_then(|d| d.as_f64()).unwrap_or(0.0);
        let group = groups.entry(key.clone()).or_insert_with(|| Group {
            name: key,
            ..Group::default()
        });
        group.count += 1;
        group.total_us += duration;
        group.max_us = group.max_us.max(duration);
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by(|a, b| b.total_us.total_cmp(&a.total_us).then(a.name.cmp(&b.name)));
    Ok(groups)
}

/// Runs `oxla profile`.
pub fn run(args: &ProfileArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let document: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.file.display()))?;
    let groups = summarize(&document)?;
    if groups.is_empty() {
        bail!("{} holds no complete (\"X\") events", args.file.display());
    }
    let total: f64 = groups.iter().map(|g| g.total_us).sum();
    if let Some(plugin) = document
        .get("otherData")
        .and_then(|o| o.get("plugin_profiler"))
        .and_then(|p| p.as_str())
    {
        println!("{plugin}");
    }
    println!(
        "{:>12} {:>7} {:>6} {:>12} {:>12}  event",
        "total ms", "share", "count", "mean ms", "max ms"
    );
    for g in groups.iter().take(args.top) {
        println!(
            "{:>12.3} {:>6.1}% {:>6} {:>12.3} {:>12.3}  {}",
            g.total_us / 1e3,
            100.0 * g.total_us / total.max(f64::MIN_POSITIVE),
            g.count,
            g.total_us / 1e3 / g.count as f64,
            g.max_us / 1e3,
            g.name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_grouped_by_name_and_function_longest_first() {
        let document = serde_json::json!({"traceEvents": [
            {"name": "execute", "ph": "X", "ts": 0, "dur": 5.0, "args": {"function": "step"}},
            {"name": "execute", "ph": "X", "ts": 9, "dur": 7.0, "args": {"function": "step"}},
            {"name": "compile", "ph": "X", "ts": 1, "dur": 100.0, "args": {"function": "step"}},
            {"name": "marker", "ph": "i", "ts": 1},
        ]});
        let groups = summarize(&document).unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].name, "compile step");
        assert_eq!(
            (groups[1].count, groups[1].total_us, groups[1].max_us),
            (2, 12.0, 7.0)
        );
        assert!(summarize(&serde_json::json!({"x": 1})).is_err());
    }
}
