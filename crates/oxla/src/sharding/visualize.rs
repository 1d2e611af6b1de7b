//! `visualize_sharding`: which devices hold which block of a 1-D or 2-D
//! array, drawn as a grid of boxes (as `jax.debug.visualize_array_sharding`).

use super::placement::ShardLayout;
use crate::array::Array;
use crate::error::{Error, Result};

/// A drawing of how `x` is laid out: one box per block of its first two
/// dimensions, naming the devices that hold the block
/// (`CPU 0,1`, with the platform's name). An array on one device is one box.
pub fn visualize_sharding(x: &Array) -> Result<String> {
    let aval = x.aval()?.clone();
    if aval.shape.len() > 2 {
        return Err(Error::InvalidArgument(format!(
            "visualize_sharding draws arrays of rank 1 or 2, not {aval}"
        )));
    }
    let dims: Vec<i64> = aval.shape.to_vec();
    let (rows, cols, cells) = match x.sharded() {
        Some(sharded) => blocks(&sharded.layout, &dims)?,
        None => (1, 1, vec![x.device_ids()?]),
    };
    let platform = crate::runtime::client()?.platform_name()?.to_uppercase();
    let label = |ids: &Vec<i64>| {
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        format!("{platform} {}", list.join(","))
    };
    let width = cells.iter().map(|c| label(c).len()).max().unwrap_or(5) + 4;
    let line = |left: &str, mid: &str, right: &str| {
        let segments: Vec<String> = (0..cols).map(|_| "─".repeat(width)).collect();
        format!("{left}{}{right}\n", segments.join(mid))
    };
    let mut out = line("┌", "┬", "┐");
    for r in 0..rows {
        let row: Vec<String> = (0..cols)
            .map(|c| format!("{:^width$}", label(&cells[r * cols + c])))
            .collect();
        out.push_str(&format!("│{}│\n", row.join("│")));
        out.push_str(&if r + 1 == rows {
            line("└", "┴", "┘")
        } else {
            line("├", "┼", "┤")
        });
    }
    Ok(out)
}

/// The block grid of the first two dimensions and the devices of each
/// block, row-major.
fn blocks(layout: &ShardLayout, dims: &[i64]) -> Result<(usize, usize, Vec<Vec<i64>>)> {
    let shard = layout.hlo.shard_dims(dims)?;
    let count = |d: usize| match (dims.get(d), shard.get(d)) {
        (Some(&n), Some(&s)) if s > 0 => ((n + s - 1) / s) as usize,
        _ => 1,
    };
    let (rows, cols) = (count(0), count(1));
    let mut cells = vec![Vec::new(); rows * cols];
    for (p, id) in layout.mesh.device_ids().iter().enumerate() {
        let Some(ranges) = layout.hlo.block(p as i64, dims)? else {
            continue;
        };
        let index = |d: usize| match (ranges.get(d), shard.get(d)) {
            (Some(r), Some(&s)) if s > 0 => (r.start / s) as usize,
            _ => 0,
        };
        cells[index(0) * cols + index(1)].push(*id);
    }
    Ok((rows, cols, cells))
}
