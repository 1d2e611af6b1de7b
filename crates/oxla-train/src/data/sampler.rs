//! Grain's `IndexSampler` and `ShardOptions`: which record comes at each
//! position of the stream a process reads.

use std::ops::Range;

use super::error::DataError;
use super::rng::Rng;

/// Which part of the records this process reads: Grain's `ShardOptions`.
/// Shard `i` of `n` holds the contiguous records
/// `len * i / n .. len * (i + 1) / n`, so the shards are disjoint and
/// together hold every record; with `drop_remainder` each holds
/// `len / n` records (`i * (len / n) ..`), the same count in every
/// process, and the last `len % n` records are read by none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardOptions {
    /// This process's shard, below `shard_count`.
    pub shard_index: usize,
    /// The number of shards (processes).
    pub shard_count: usize,
    /// Give every shard `len / shard_count` records.
    pub drop_remainder: bool,
}

impl ShardOptions {
    /// Shard `shard_index` of `shard_count`.
    pub fn new(shard_index: usize, shard_count: usize, drop_remainder: bool) -> ShardOptions {
        ShardOptions {
            shard_index,
            shard_count,
            drop_remainder,
        }
    }

    /// One shard: every record (Grain's `NoSharding`).
    pub fn no_sharding() -> ShardOptions {
        ShardOptions::new(0, 1, false)
    }

    /// This process's shard of the job's processes
    /// ([`oxla::distributed::process_index`] of `process_count`), Grain's
    /// `ShardByJaxProcess`.
    pub fn by_process(drop_remainder: bool) -> ShardOptions {
        ShardOptions::new(
            oxla::distributed::process_index(),
            oxla::distributed::process_count(),
            drop_remainder,
        )
    }

    #[track_caller]
    fn check(&self) -> Result<(), DataError> {
        if self.shard_count == 0 {
            return Err(DataError::option("ShardOptions", "a shard count of 0"));
        }
        if self.shard_index >= self.shard_count {
            return Err(DataError::option(
                "ShardOptions",
                format!(
                    "shard index {} is not below the shard count {}",
                    self.shard_index, self.shard_count
                ),
            ));
        }
        Ok(())
    }

    /// The records of this shard among `len`.
    pub fn range(&self, len: usize) -> Range<usize> {
        let (i, n) = (self.shard_index as u128, self.shard_count as u128);
        if self.drop_remainder {
            let size = len / self.shard_count;
            self.shard_index * size..(self.shard_index + 1) * size
        } else {
            let at = |k: u128| (len as u128 * k / n) as usize;
            at(i)..at(i + 1)
        }
    }
}

impl Default for ShardOptions {
    fn default() -> ShardOptions {
        ShardOptions::no_sharding()
    }
}

/// The order in which a process reads records: its shard, each epoch in a
/// fresh order when shuffling (a Fisher–Yates shuffle of the shard drawn
/// from `seed` and the epoch, the same on every machine), for
/// `num_epochs` epochs or forever. Position `p` of the stream is record
/// `epoch_order(p / epoch_len)[p % epoch_len]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSampler {
    num_records: usize,
    shard: ShardOptions,
    shuffle: bool,
    num_epochs: Option<u64>,
    seed: u64,
}

impl IndexSampler {
    /// A sampler over `num_records` records: this process's `shard`,
    /// shuffled each epoch when `shuffle`, `num_epochs` times (`None`:
    /// forever); `seed` draws the shuffles and `random_map`'s generators.
    /// A shard index not below the shard count is an error.
    #[track_caller]
    pub fn new(
        num_records: usize,
        shard: ShardOptions,
        shuffle: bool,
        num_epochs: Option<u64>,
        seed: u64,
    ) -> Result<IndexSampler, DataError> {
        shard.check()?;
        Ok(IndexSampler {
            num_records,
            shard,
            shuffle,
            num_epochs,
            seed,
        })
    }

    /// The number of records sampled from (all shards').
    pub fn num_records(&self) -> usize {
        self.num_records
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The shard options.
    pub fn shard(&self) -> ShardOptions {
        self.shard
    }

    /// The number of epochs (`None`: forever).
    pub fn num_epochs(&self) -> Option<u64> {
        self.num_epochs
    }

    /// The records of this shard.
    pub fn shard_records(&self) -> Range<usize> {
        self.shard.range(self.num_records)
    }

    /// Positions per epoch: the shard's record count.
    pub fn epoch_len(&self) -> usize {
        self.shard_records().len()
    }

    /// The number of positions in all (`None`: endless).
    pub fn len(&self) -> Option<u64> {
        self.num_epochs.map(|e| e * self.epoch_len() as u64)
    }

    /// Whether the stream has no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0) || self.epoch_len() == 0
    }

    /// The records of `epoch`, in the order they are read.
    pub fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = self.shard_records().collect();
        if self.shuffle {
            Rng::derive(self.seed, &[epoch, self.shard.shard_index as u64]).shuffle(&mut order);
        }
        order
    }

    /// The seed of the generator `random_map` gets at `position`: a
    /// function of the seed and the position only (as Grain's per-record
    /// `seed + index`), so any worker computes the same record.
    pub(crate) fn record_seed(&self, position: u64) -> u64 {
        Rng::derive(self.seed, &[position, self.shard.shard_index as u64]).next_u64()
    }
}
