//! `oxla profile FILE`: a Chrome trace (what `oxla::profiler::trace` or
//! another tracer wrote) summarised in the terminal: the events grouped by
//! name and function, the groups taking the most time first. A pprof
//! memory profile (`save_device_memory_profile`'s, or JAX's) is summarised
//! by location instead: bytes and allocations, the largest first.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

/// Arguments of `oxla profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A Chrome trace JSON file (`oxla.trace.json`) or a pprof memory
    /// profile (`save_device_memory_profile`'s).
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

/// The bytes and allocations of a memory profile's samples, by their
/// innermost location's function, the most bytes first.
pub(crate) fn summarize_memory(profile: &oxla_pprof::Profile) -> Vec<(String, i64, i64)> {
    let text = |i: i64| {
        profile
            .string_table
            .get(i as usize)
            .cloned()
            .unwrap_or_default()
    };
    let index = |name: &str| {
        profile
            .sample_type
            .iter()
            .position(|t| text(t.r#type) == name)
    };
    let (space, count) = (index("space"), index("allocations"));
    let place = |location: u64| {
        let function = profile
            .location
            .iter()
            .find(|l| l.id == location)
            .and_then(|l| l.line.first())
            .and_then(|line| profile.function.iter().find(|f| f.id == line.function_id));
        function.map_or_else(|| "?".to_string(), |f| text(f.name))
    };
    let mut groups: HashMap<String, (i64, i64)> = HashMap::new();
    for sample in &profile.sample {
        let key = sample
            .location_id
            .first()
            .map_or("?".to_string(), |&l| place(l));
        let slot = groups.entry(key).or_default();
        slot.0 += space
            .and_then(|i| sample.value.get(i))
            .copied()
            .unwrap_or(0);
        slot.1 += count
            .and_then(|i| sample.value.get(i))
            .copied()
            .unwrap_or(0);
    }
    let mut groups: Vec<(String, i64, i64)> =
        groups.into_iter().map(|(k, (b, n))| (k, b, n)).collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    groups
}

/// Prints a memory profile's summary.
fn run_memory(args: &ProfileArgs, profile: &oxla_pprof::Profile) {
    let groups = summarize_memory(profile);
    let total: i64 = groups.iter().map(|g| g.1).sum();
    println!(
        "device memory: {total} bytes in {} samples",
        profile.sample.len()
    );
    println!("{:>14} {:>7} {:>8}  location", "bytes", "share", "arrays");
    for (place, bytes, count) in groups.iter().take(args.top) {
        println!(
            "{bytes:>14} {:>6.1}% {count:>8}  {place}",
            100.0 * *bytes as f64 / total.max(1) as f64
        );
    }
}

/// Runs `oxla profile`.
pub fn run(args: &ProfileArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let profile = oxla_pprof::read(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
        run_memory(args, &profile);
        return Ok(());
    }
    let text = String::from_utf8(bytes).with_context(|| {
        format!(
            "{} is neither a trace nor a pprof profile",
            args.file.display()
        )
    })?;
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
