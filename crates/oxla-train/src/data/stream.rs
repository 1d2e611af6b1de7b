//! The records of a sampler's stream through a dataset's transforms, in
//! the stream's order whatever the number of worker threads, and cut into
//! batches.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::dataset::{At, MapDataset};
use super::error::DataError;
use super::philox::PhiloxStart;
use super::sampler::{EpochOrder, IndexSampler};

/// A record's place: its position in the stream, what to read, and
/// where the generator its unseeded `random_map` stages share starts.
#[derive(Debug, Clone, Copy)]
struct Job {
    position: u64,
    at: At,
    rng: PhiloxStart,
}

/// What a worker sends back: the job and its record (`None`: filtered).
type Done<T> = (Job, Result<Option<T>, DataError>);

/// Worker threads that read the records of the jobs they receive, in any
/// order; dropping the pool ends and joins them.
struct Pool<T> {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done<T>>,
    threads: Vec<JoinHandle<()>>,
}

impl<T: Send + 'static> Pool<T> {
    fn new(dataset: &MapDataset<T>, workers: usize) -> Pool<T> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (report, done) = mpsc::channel();
        let threads = (0..workers)
            .map(|i| {
                let (dataset, queue, report) = (dataset.clone(), queue.clone(), report.clone());
                std::thread::Builder::new()
                    .name(format!("oxla-data-worker-{i}"))
                    .spawn(move || {
                        loop {
                            // One worker at a time waits on the queue; the lock is released
                            // before the record is read.
                            let job = match queue.lock() {
                                Ok(queue) => queue.recv(),
                                Err(_) => return,
                            };
                            let Ok(job) = job else { return };
                            if report.send((job, dataset.read(job.at, job.rng))).is_err() {
                                return;
                            }
                        }
                    })
            })
            .filter_map(Result::ok)
            .collect();
        Pool {
            jobs: Some(jobs),
            done,
            threads,
        }
    }
}

impl<T> Drop for Pool<T> {
    fn drop(&mut self) {
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The stream's records from a position on, filtered ones skipped: read
/// inline, or by a pool that reads up to `window` positions ahead while
/// the records are handed out in position order.
pub(crate) struct RecordStream<T> {
    dataset: MapDataset<T>,
    sampler: IndexSampler,
    epoch_len: u64,
    order: Option<(u64, EpochOrder)>,
    next_dispatch: u64,
    next_emit: u64,
    pool: Option<Pool<T>>,
    window: u64,
    pending: BTreeMap<u64, Done<T>>,
}

impl<T: Send + 'static> RecordStream<T> {
    /// The records from `position` on, read by `workers` threads (0: by
    /// the caller) up to `window` positions ahead.
    pub(crate) fn new(
        dataset: MapDataset<T>,
        sampler: IndexSampler,
        position: u64,
        workers: usize,
        window: usize,
    ) -> RecordStream<T> {
        let pool = (workers > 0).then(|| Pool::new(&dataset, workers));
        RecordStream {
            epoch_len: sampler.epoch_len() as u64,
            dataset,
            sampler,
            order: None,
            next_dispatch: position,
            next_emit: position,
            pool,
            window: window.max(1) as u64,
            pending: BTreeMap::new(),
        }
    }

    fn exhausted(&self, position: u64) -> bool {
        self.epoch_len == 0 || self.sampler.len().is_some_and(|end| position >= end)
    }

    /// The job of `position` (which is not past the end).
    fn job(&mut self, position: u64) -> Job {
        let epoch = position / self.epoch_len;
        let in_epoch = (position % self.epoch_len) as usize;
        let index = match &self.order {
            Some((e, order)) if *e == epoch => order.get(in_epoch),
            Some(_) | None => {
                let order = self.sampler.epoch(epoch);
                let index = order.get(in_epoch);
                self.order = Some((epoch, order));
                index
            }
        };
        Job {
            position,
            at: At { index, epoch },
            rng: self.sampler.record_rng(position),
        }
    }

    /// The job and result of position `next_emit`.
    fn take(&mut self) -> Result<Done<T>, DataError> {
        let position = self.next_emit;
        if self.pool.is_none() {
            let job = self.job(position);
            return Ok((job, self.dataset.read(job.at, job.rng)));
        }
        while self.next_dispatch < position + self.window && !self.exhausted(self.next_dispatch) {
            let job = self.job(self.next_dispatch);
            let pool = self.pool.as_ref().ok_or(DataError::ThreadDied("worker"))?;
            let jobs = pool.jobs.as_ref().ok_or(DataError::ThreadDied("worker"))?;
            jobs.send(job)
                .map_err(|_| DataError::ThreadDied("worker"))?;
            self.next_dispatch += 1;
        }
        loop {
            if let Some(done) = self.pending.remove(&position) {
                return Ok(done);
            }
            let pool = self.pool.as_ref().ok_or(DataError::ThreadDied("worker"))?;
            let done = pool
                .done
                .recv()
                .map_err(|_| DataError::ThreadDied("worker"))?;
            self.pending.insert(done.0.position, done);
        }
    }

    /// The next record that passes the filters: its position, its index in
    /// the source, and its value or error; `None` at the end.
    pub(crate) fn next_record(&mut self) -> Option<(u64, usize, Result<T, DataError>)> {
        loop {
            if self.exhausted(self.next_emit) {
                return None;
            }
            let position = self.next_emit;
            let (job, result) = match self.take() {
                Ok(done) => done,
                Err(e) => return Some((position, 0, Err(e))),
            };
            self.next_emit += 1;
            match result {
                Ok(None) => continue,
                Ok(Some(record)) => return Some((position, job.at.index, Ok(record))),
                Err(e) => return Some((position, job.at.index, Err(e))),
            }
        }
    }
}

/// What turns a batch's records (with their indices in the source) into
/// the loader's item.
pub(crate) type Finish<T, B> = Arc<dyn Fn(Vec<T>, &[usize]) -> Result<B, DataError> + Send + Sync>;

/// The stream's records in groups of `batch_size` (a last smaller group
/// unless `drop_remainder`), each finished into an item, with the position
/// after its last record (where a restored loader goes on).
pub(crate) struct Batches<T, B> {
    pub(crate) records: RecordStream<T>,
    pub(crate) batch_size: usize,
    pub(crate) drop_remainder: bool,
    pub(crate) finish: Finish<T, B>,
}

impl<T: Send + 'static, B> Iterator for Batches<T, B> {
    type Item = Result<(B, u64), DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut records = Vec::with_capacity(self.batch_size);
        let mut indices = Vec::with_capacity(self.batch_size);
        let mut after = 0;
        while records.len() < self.batch_size {
            match self.records.next_record() {
                None => break,
                Some((position, index, Ok(record))) => {
                    records.push(record);
                    indices.push(index);
                    after = position + 1;
                }
                Some((_, _, Err(e))) => return Some(Err(e)),
            }
        }
        if records.is_empty() || (records.len() < self.batch_size && self.drop_remainder) {
            return None;
        }
        Some((self.finish)(records, &indices).map(|item| (item, after)))
    }
}
