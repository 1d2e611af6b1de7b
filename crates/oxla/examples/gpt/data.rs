//! The token stream as a Grain-style pipeline (`oxla_train::data`): a
//! random-access source of non-overlapping windows of `length + 1` tokens,
//! shuffled each epoch from the seed, batched, made ahead on a prefetch
//! thread; its iterator state goes into each checkpoint.

use std::sync::Arc;

use anyhow::{Result, bail};
use oxla::Array;
use oxla_train::data::{
    BoxError, DataLoader, IndexSampler, MapDataset, RandomAccessSource, ShardOptions,
};

/// Window `i` of a token sequence: tokens `i·length ..= (i + 1)·length`,
/// the model's input and, shifted by one, its targets.
pub struct TokenWindows {
    ids: Arc<[i32]>,
    length: usize,
}

impl TokenWindows {
    /// The windows of `length + 1` tokens of `ids`; an error when not
    /// even one fits.
    pub fn new(ids: &[u32], length: usize) -> Result<TokenWindows> {
        if length == 0 || ids.len() < length + 1 {
            bail!(
                "{} tokens hold no window of {} (--length {length})",
                ids.len(),
                length + 1
            );
        }
        Ok(TokenWindows {
            ids: ids.iter().map(|&i| i as i32).collect(),
            length,
        })
    }
}

impl RandomAccessSource for TokenWindows {
    type Record = Vec<i32>;

    fn len(&self) -> usize {
        (self.ids.len() - 1) / self.length
    }

    fn get(&self, index: usize) -> Result<Vec<i32>, BoxError> {
        let start = index * self.length;
        Ok(self.ids[start..=start + self.length].to_vec())
    }
}

/// An endless loader of `[batch_size, length + 1]` batches of `windows`,
/// in a fresh order each epoch drawn from `seed`, two batches made ahead.
pub fn loader(windows: TokenWindows, batch_size: usize, seed: u64) -> Result<DataLoader<Array>> {
    let sampler = IndexSampler::new(windows.len(), ShardOptions::no_sharding(), true, None, seed)?;
    Ok(MapDataset::source(windows)
        .loader(sampler)
        .batch(batch_size, true)
        .to_device()
        .prefetch(2)
        .build()?)
}

/// The first `count` windows of `windows` as one `[count, length + 1]`
/// array (the held-out set); an error when there are fewer.
pub fn first_windows(windows: &TokenWindows, count: usize) -> Result<Array> {
    if windows.len() < count {
        bail!(
            "the held-out text has {} windows, the evaluation needs {count}",
            windows.len()
        );
    }
    let flat: Vec<i32> = windows.ids[..count * windows.length + 1]
        .windows(windows.length + 1)
        .step_by(windows.length)
        .flatten()
        .copied()
        .collect();
    Ok(Array::from_slice(
        &flat,
        &[count as i64, windows.length as i64 + 1],
    )?)
}
