//! Grain's `DataLoader`: a dataset read in a sampler's order by worker
//! threads, batched, prefetched, and checkpointable.

use std::sync::Arc;

use super::dataset::MapDataset;
use super::error::DataError;
use super::prefetch::{Pipeline, Prefetch};
use super::sampler::IndexSampler;
use super::stack::{Stack, ToDevice};
use super::state::IteratorState;
use super::stream::{Batches, Finish, RecordStream};

/// The options of a [`DataLoader`] and how it finishes its items; made by
/// [`MapDataset::loader`] and ended by [`build`](Self::build). `T` is
/// the record type, `B` the item type (`T` until [`batch`](Self::batch)).
/// An option out of range is reported by `build`, naming the call and its
/// line.
pub struct DataLoaderBuilder<T, B> {
    dataset: MapDataset<T>,
    sampler: IndexSampler,
    batch_size: usize,
    drop_remainder: bool,
    finish: Finish<T, B>,
    worker_count: usize,
    worker_buffer_size: usize,
    prefetch: usize,
    error: Option<DataError>,
}

impl<T: Send + 'static> MapDataset<T> {
    /// A loader of these records in `sampler`'s order (no workers, no
    /// prefetch, one record per item until the builder says otherwise).
    pub fn loader(self, sampler: IndexSampler) -> DataLoaderBuilder<T, T> {
        let finish: Finish<T, T> = Arc::new(|records: Vec<T>, indices: &[usize]| {
            records.into_iter().next().ok_or_else(|| DataError::Stack {
                indices: indices.to_vec(),
                message: "an empty group".into(),
            })
        });
        DataLoaderBuilder {
            dataset: self,
            sampler,
            batch_size: 1,
            drop_remainder: false,
            finish,
            worker_count: 0,
            worker_buffer_size: 16,
            prefetch: 0,
            error: None,
        }
    }
}

impl<T: Send + 'static> DataLoaderBuilder<T, T> {
    /// Stacks `batch_size` consecutive records into one item (see
    /// [`Stack`]); the last smaller batch of a finite stream is dropped
    /// when `drop_remainder` (so every batch has one shape, and a jitted
    /// step one executable). Batches run over epoch boundaries, as
    /// Grain's do. A batch size of 0 is an error.
    #[track_caller]
    pub fn batch(self, batch_size: usize, drop_remainder: bool) -> DataLoaderBuilder<T, T::Batch>
    where
        T: Stack,
    {
        let mut error = self.error;
        if batch_size == 0 && error.is_none() {
            error = Some(DataError::option(
                "DataLoaderBuilder::batch",
                "a batch size of 0",
            ));
        }
        let finish: Finish<T, T::Batch> = Arc::new(|records: Vec<T>, indices: &[usize]| {
            T::stack(records).map_err(|message| DataError::Stack {
                indices: indices.to_vec(),
                message,
            })
        });
        DataLoaderBuilder {
            dataset: self.dataset,
            sampler: self.sampler,
            batch_size,
            drop_remainder,
            finish,
            worker_count: self.worker_count,
            worker_buffer_size: self.worker_buffer_size,
            prefetch: self.prefetch,
            error,
        }
    }
}

impl<T: Send + 'static, B: Send + 'static> DataLoaderBuilder<T, B> {
    /// Reads and transforms records on `count` threads (0, the default:
    /// on the thread that makes the batches). The items are the same for
    /// any count: records are handed on in the sampler's order.
    pub fn worker_count(mut self, count: usize) -> Self {
        self.worker_count = count;
        self
    }

    /// How many records each worker may read ahead of the one the batch
    /// waits for (default 16). 0 is an error.
    #[track_caller]
    pub fn worker_buffer_size(mut self, size: usize) -> Self {
        if size == 0 && self.error.is_none() {
            self.error = Some(DataError::option(
                "DataLoaderBuilder::worker_buffer_size",
                "a buffer of 0 records",
            ));
        }
        self.worker_buffer_size = size;
        self
    }

    /// Makes items on a background thread that keeps `depth` of them
    /// ready (0, the default: each item is made when `next` asks).
    pub fn prefetch(mut self, depth: usize) -> Self {
        self.prefetch = depth;
        self
    }

    /// Moves each item to the device where it is made (on the prefetch
    /// thread when prefetching, so the transfer overlaps the step too).
    pub fn to_device(self) -> DataLoaderBuilder<T, B::Device>
    where
        B: ToDevice,
        B::Device: Send + 'static,
    {
        let host = self.finish;
        let finish: Finish<T, B::Device> = Arc::new(move |records: Vec<T>, indices: &[usize]| {
            Ok(host(records, indices)?.to_device()?)
        });
        DataLoaderBuilder {
            dataset: self.dataset,
            sampler: self.sampler,
            batch_size: self.batch_size,
            drop_remainder: self.drop_remainder,
            finish,
            worker_count: self.worker_count,
            worker_buffer_size: self.worker_buffer_size,
            prefetch: self.prefetch,
            error: self.error,
        }
    }

    /// The loader, positioned at the start of the stream (its first
    /// items already being made when prefetching); the first bad option,
    /// or a sampler over another number of records than the dataset's,
    /// is an error.
    #[track_caller]
    pub fn build(self) -> Result<DataLoader<B>, DataError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.sampler.num_records() != self.dataset.len() {
            return Err(DataError::option(
                "DataLoaderBuilder::build",
                format!(
                    "the sampler orders {} records, the dataset has {}",
                    self.sampler.num_records(),
                    self.dataset.len()
                ),
            ));
        }
        let (dataset, sampler) = (self.dataset, self.sampler.clone());
        let (workers, window) = (
            self.worker_count,
            self.worker_count * self.worker_buffer_size,
        );
        let (batch_size, drop_remainder, finish) =
            (self.batch_size, self.drop_remainder, self.finish);
        let start: Start<B> = Arc::new(move |position| {
            Box::new(Batches {
                records: RecordStream::new(
                    dataset.clone(),
                    sampler.clone(),
                    position,
                    workers,
                    window,
                ),
                batch_size,
                drop_remainder,
                finish: finish.clone(),
            })
        });
        let mut loader = DataLoader {
            start,
            sampler: self.sampler,
            prefetch: self.prefetch,
            position: 0,
            running: None,
            failed: false,
        };
        loader.launch()?;
        Ok(loader)
    }
}

/// Starts the pipeline at a stream position.
type Start<B> = Arc<dyn Fn(u64) -> Pipeline<B> + Send + Sync>;

/// The running pipeline.
enum Running<B> {
    /// Items made as `next` asks.
    Inline(Pipeline<B>),
    /// Items made ahead on a thread.
    Prefetched(Prefetch<B>),
}

/// An iterator of batches (or records) of a [`MapDataset`] in an
/// [`IndexSampler`]'s order, as Grain's `DataLoader`: records are read
/// and transformed by worker threads, handed on in the sampler's order
/// (so the items do not depend on the number of workers), stacked into
/// batches, optionally moved to the device, and made ahead on a
/// background thread. [`state`](Self::state) says where it is and
/// [`restore`](Self::restore) goes back there, so a resumed run sees the
/// batches the interrupted one would have. After an error (a record whose
/// read or transform failed, named by its index) the iterator ends;
/// restoring the state resumes before the failed batch.
///
/// ```no_run
/// use oxla_train::data::{IndexSampler, MapDataset, ShardOptions};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let records: Vec<(Vec<f32>, i32)> = (0..1000).map(|i| (vec![i as f32; 8], i % 10)).collect();
/// let sampler = IndexSampler::new(records.len(), ShardOptions::no_sharding(), true, Some(2), 0)?;
/// let mut loader = MapDataset::source(records)
///     .map(|(x, y): (Vec<f32>, i32)| (x.iter().map(|v| v / 1000.0).collect::<Vec<f32>>(), y))
///     .loader(sampler)
///     .worker_count(4)
///     .batch(32, true)
///     .to_device()
///     .prefetch(2)
///     .build()?;
/// for batch in &mut loader {
///     let (x, y) = batch?; // f32[32, 8] and i32[32] on the device
///     # let _ = (x, y);
/// }
/// let saved = loader.state().to_json();
/// # let _ = saved;
/// # Ok(())
/// # }
/// ```
pub struct DataLoader<B> {
    start: Start<B>,
    sampler: IndexSampler,
    prefetch: usize,
    position: u64,
    running: Option<Running<B>>,
    failed: bool,
}

impl<B: Send + 'static> DataLoader<B> {
    /// Starts the pipeline at `self.position`.
    fn launch(&mut self) -> Result<(), DataError> {
        self.running = None;
        let pipeline = (self.start)(self.position);
        self.running = Some(if self.prefetch == 0 {
            Running::Inline(pipeline)
        } else {
            Running::Prefetched(Prefetch::start(pipeline, self.prefetch)?)
        });
        Ok(())
    }

    /// The sampler.
    pub fn sampler(&self) -> &IndexSampler {
        &self.sampler
    }

    /// Where the loader is: the position after the last record of the last
    /// item `next` returned (items made ahead do not count).
    pub fn state(&self) -> IteratorState {
        let epoch_len = self.sampler.epoch_len() as u64;
        let (epoch, position) = match epoch_len {
            0 => (0, 0),
            n => (self.position / n, self.position % n),
        };
        let shard = self.sampler.shard();
        IteratorState {
            epoch,
            position,
            seed: self.sampler.seed(),
            shard_index: shard.shard_index,
            shard_count: shard.shard_count,
        }
    }

    /// Goes to `state` (from [`state`](Self::state) of a loader built the
    /// same way): the next items are those that loader would have
    /// yielded. A state of another seed or shard, or past the stream's
    /// end, is an error.
    pub fn restore(&mut self, state: &IteratorState) -> Result<(), DataError> {
        let mismatch = |message: String| DataError::State {
            state: state.to_json(),
            message,
        };
        let shard = self.sampler.shard();
        if state.seed != self.sampler.seed() {
            return Err(mismatch(format!(
                "its seed is {}, the loader's {}",
                state.seed,
                self.sampler.seed()
            )));
        }
        if (state.shard_index, state.shard_count) != (shard.shard_index, shard.shard_count) {
            return Err(mismatch(format!(
                "it is shard {} of {}, the loader reads shard {} of {}",
                state.shard_index, state.shard_count, shard.shard_index, shard.shard_count
            )));
        }
        let epoch_len = self.sampler.epoch_len() as u64;
        if state.position >= epoch_len.max(1) {
            return Err(mismatch(format!(
                "position {} is past an epoch of {epoch_len} records",
                state.position
            )));
        }
        let position = state
            .epoch
            .checked_mul(epoch_len)
            .and_then(|p| p.checked_add(state.position))
            .ok_or_else(|| mismatch("the position overflows".into()))?;
        if let Some(len) = self.sampler.len()
            && position > len
        {
            return Err(mismatch(format!(
                "position {position} of the stream (epoch {}) is past its end at {len}",
                state.epoch
            )));
        }
        self.position = position;
        self.failed = false;
        self.launch()
    }
}

impl<B: Send + 'static> Iterator for DataLoader<B> {
    type Item = Result<B, DataError>;

    fn next(&mut self) -> Option<Result<B, DataError>> {
        if self.failed {
            return None;
        }
        let produced = match self.running.as_mut()? {
            Running::Inline(pipeline) => pipeline.next()?,
            Running::Prefetched(prefetch) => prefetch.next()?,
        };
        Some(match produced {
            Ok((item, after)) => {
                self.position = after;
                Ok(item)
            }
            Err(e) => {
                self.failed = true;
                self.running = None;
                Err(e)
            }
        })
    }
}
