//! Grain's `IndexSampler` and `ShardOptions`: which record comes at each
//! position of the stream a process reads, as Grain 0.2.18 orders them
//! (`grain.python.IndexSampler` read by `grain.python.DataLoader`).

use std::ops::Range;

use super::error::DataError;
use super::index_shuffle::Permutation;
use super::philox::PhiloxStart;

/// The Feistel rounds of Grain's shuffles.
const SHUFFLE_ROUNDS: u32 = 4;

/// Which part of the records this process reads: Grain's `ShardOptions`
/// and its `even_split`. Shard `i` of `n` holds a contiguous run of
/// `len / n` records, the first `len % n` shards one more (shard `i`
/// starts at `i * (len / n) + min(i, len % n)`), so the shards are
/// disjoint and together hold every record; with `drop_remainder` each
/// holds `len / n` records from `i * (len / n)`, and the last `len % n`
/// records are read by none.
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

    /// The records of this shard among `len` (Grain's `even_split`); an
    /// invalid shard (a count of 0, an index not below the count) holds
    /// none.
    pub fn range(&self, len: usize) -> Range<usize> {
        let (i, n) = (self.shard_index, self.shard_count);
        if i >= n {
            return 0..0;
        }
        let (size, remainder) = (len / n, len % n);
        if self.drop_remainder {
            i * size..(i + 1) * size
        } else {
            i * size + i.min(remainder)..(i + 1) * size + (i + 1).min(remainder)
        }
    }
}

impl Default for ShardOptions {
    fn default() -> ShardOptions {
        ShardOptions::no_sharding()
    }
}

/// The order in which a process reads records, Grain's `IndexSampler`
/// as its `DataLoader` reads it. Position `p` of shard `i` of `n` is the
/// sampler's global index `p * n + i`; the shard's `L` records
/// ([`ShardOptions::range`], from `start`) are read in epochs of `L`
/// positions, position `p` being record
/// `start + index_shuffle(p % L, L - 1, (seed + p / L) mod 2^32, 4)` when
/// shuffling ([`index_shuffle`](super::index_shuffle): every shard draws
/// the same per-epoch seed) and `start + p % L` when not. With
/// `num_epochs` `E`, every shard reads the same number of positions:
/// `E * L` with `drop_remainder`, else `E * num_records / n` (rounded
/// down), so without `drop_remainder` a shard holding one record more
/// than others stops inside its last epoch, and one holding fewer may
/// start an `E + 1`-th.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSampler {
    num_records: usize,
    shard: ShardOptions,
    shuffle: bool,
    num_epochs: Option<u64>,
    seed: u64,
    len: Option<u64>,
}

/// The order of one epoch of a shard: its first record and, when
/// shuffling, the epoch's permutation of the shard's positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EpochOrder {
    start: usize,
    permutation: Option<Permutation>,
}

impl EpochOrder {
    /// The record at position `k` of the epoch (below the shard's length).
    pub(crate) fn get(&self, k: usize) -> usize {
        match &self.permutation {
            None => self.start + k,
            Some(p) => self.start + p.get(k as u64) as usize,
        }
    }
}

impl IndexSampler {
    /// A sampler over `num_records` records: this process's `shard`,
    /// shuffled each epoch when `shuffle`, `num_epochs` times (`None`:
    /// forever); `seed` (below 2^32, as Grain's) draws the shuffles and
    /// the generators `random_map` gets. As in Grain, no records, 0
    /// epochs, a seed of more than 32 bits or a shard index not below the
    /// shard count are errors; so is a shard that holds no records (Grain
    /// reads nothing there or fails dividing by its length).
    #[track_caller]
    pub fn new(
        num_records: usize,
        shard: ShardOptions,
        shuffle: bool,
        num_epochs: Option<u64>,
        seed: u64,
    ) -> Result<IndexSampler, DataError> {
        shard.check()?;
        let invalid = |message: String| DataError::option("IndexSampler", message);
        if num_records == 0 {
            return Err(invalid(
                "0 records: a sampler needs at least one".to_string(),
            ));
        }
        if num_epochs == Some(0) {
            return Err(invalid(
                "0 epochs: give at least one, or None for an endless stream".to_string(),
            ));
        }
        if seed > u64::from(u32::MAX) {
            return Err(invalid(format!(
                "the seed {seed} is not below 2^32 (Grain's seeds are 32-bit)"
            )));
        }
        let shard_len = shard.range(num_records).len();
        if shard_len == 0 {
            return Err(invalid(format!(
                "shard {} of {} holds none of the {num_records} records{}",
                shard.shard_index,
                shard.shard_count,
                if shard.drop_remainder {
                    " (drop_remainder)"
                } else {
                    ""
                }
            )));
        }
        let len = match num_epochs {
            None => None,
            Some(epochs) => {
                let positions = if shard.drop_remainder {
                    u128::from(epochs) * shard_len as u128
                } else {
                    u128::from(epochs) * num_records as u128 / shard.shard_count as u128
                };
                Some(u64::try_from(positions).map_err(|_| {
                    invalid(format!(
                        "{epochs} epochs of {num_records} records overflow a 64-bit position"
                    ))
                })?)
            }
        };
        Ok(IndexSampler {
            num_records,
            shard,
            shuffle,
            num_epochs,
            seed,
            len,
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

    /// Whether each epoch is shuffled.
    pub fn shuffles(&self) -> bool {
        self.shuffle
    }

    /// The number of epochs (`None`: forever).
    pub fn num_epochs(&self) -> Option<u64> {
        self.num_epochs
    }

    /// The records of this shard.
    pub fn shard_records(&self) -> Range<usize> {
        self.shard.range(self.num_records)
    }

    /// Positions per epoch: the shard's record count (at least 1).
    pub fn epoch_len(&self) -> usize {
        self.shard_records().len()
    }

    /// The number of positions in all (`None`: endless), the same for
    /// every shard (see [`IndexSampler`]).
    pub fn len(&self) -> Option<u64> {
        self.len
    }

    /// Whether the stream has no positions (never: a sampler has at least
    /// one record and one epoch).
    pub fn is_empty(&self) -> bool {
        self.len == Some(0)
    }

    /// The order of `epoch`.
    pub(crate) fn epoch(&self, epoch: u64) -> EpochOrder {
        let shard_len = self.epoch_len();
        EpochOrder {
            start: self.shard_records().start,
            permutation: self.shuffle.then(|| {
                // (seed + epoch) mod 2^32, Grain's per-epoch seed.
                let epoch_seed = self.seed.wrapping_add(epoch) as u32;
                Permutation::new(shard_len as u64 - 1, epoch_seed, SHUFFLE_ROUNDS)
            }),
        }
    }

    /// The records of `epoch`, in the order they are read (as Grain's,
    /// a permutation of the shard's records unless the shard has `2^k + 1`
    /// records for an even `k >= 16`; see
    /// [`index_shuffle`](super::index_shuffle)).
    pub fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        let order = self.epoch(epoch);
        (0..self.epoch_len()).map(|k| order.get(k)).collect()
    }

    /// The record read at `position` of the stream; `None` past its end.
    pub fn record(&self, position: u64) -> Option<usize> {
        if self.len.is_some_and(|len| position >= len) {
            return None;
        }
        let shard_len = self.epoch_len() as u64;
        Some(
            self.epoch(position / shard_len)
                .get((position % shard_len) as usize),
        )
    }

    /// Where the generator of the record at `position` starts: Grain's
    /// `np.random.Philox(key=seed + global_index)`, the global index
    /// being `position * shard_count + shard_index`.
    pub(crate) fn record_rng(&self, position: u64) -> PhiloxStart {
        let key = u128::from(self.seed)
            + u128::from(position) * self.shard.shard_count as u128
            + self.shard.shard_index as u128;
        PhiloxStart {
            key: [key as u64, (key >> 64) as u64],
            counter: [0; 4],
        }
    }
}
