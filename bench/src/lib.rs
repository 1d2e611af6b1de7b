//! Shared pieces of oxla's benchmarks: interleaved timing of two contenders
//! and the table that reports them with their ratio.

use std::time::Instant;

pub mod gru;
pub mod mlp;
pub mod twin;

/// Per-call times of one contender, one entry per measured block.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Mean nanoseconds per call of each block.
    pub block_ns: Vec<f64>,
}

impl Samples {
    /// The median block's nanoseconds per call.
    pub fn median_ns(&self) -> f64 {
        let mut v = self.block_ns.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// The fastest block's nanoseconds per call.
    pub fn min_ns(&self) -> f64 {
        self.block_ns.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

/// Times `a` and `b` in alternating blocks of `calls` calls, `blocks` times
/// each (after one warm-up block each), so that drift of the machine hits
/// both alike. Each closure runs one call and may fail.
pub fn interleave(
    blocks: usize,
    calls: usize,
    mut a: impl FnMut() -> anyhow::Result<()>,
    mut b: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<(Samples, Samples)> {
    let time_block = |f: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let start = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        Ok(start.elapsed().as_nanos() as f64 / calls as f64)
    };
    time_block(&mut a)?;
    time_block(&mut b)?;
    let (mut sa, mut sb) = (Samples::default(), Samples::default());
    for _ in 0..blocks {
        sa.block_ns.push(time_block(&mut a)?);
        sb.block_ns.push(time_block(&mut b)?);
    }
    Ok((sa, sb))
}

/// Prints one row of a comparison table.
pub fn print_row(workload: &str, reference: &Samples, oxla: &Samples) {
    let (r, o) = (reference.median_ns(), oxla.median_ns());
    println!(
        "| {workload:<34} | {:>10.3} | {:>10.3} | {:>+9.3} | {:>6.3} |",
        r / 1000.0,
        o / 1000.0,
        (o - r) / 1000.0,
        o / r
    );
}

/// Prints the table's header; `reference` names the first column.
pub fn print_header(reference: &str) {
    println!(
        "| {:<34} | {:>10} | {:>10} | {:>9} | {:>6} |",
        "workload (median µs per call)", reference, "oxla", "oxla - ref", "ratio"
    );
    println!(
        "|{}|{}|{}|{}|{}|",
        "-".repeat(36),
        "-".repeat(12),
        "-".repeat(12),
        "-".repeat(11),
        "-".repeat(8)
    );
}

/// The median of `blocks` blocks of `calls` calls of `f`, in µs per call
/// (after one warm-up call).
pub fn median_us(
    mut f: impl FnMut() -> anyhow::Result<()>,
    calls: usize,
    blocks: usize,
) -> anyhow::Result<f64> {
    f()?;
    let mut times = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let start = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        times.push(start.elapsed().as_secs_f64() / calls as f64 * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
