//! Grain's `MapDataset`: a source and the per-record transforms over it
//! (`map`, `filter`, `random_map`), lazy and indexable, so any worker
//! thread computes any record.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::error::{BoxError, DataError, panic_message};
use super::philox::PhiloxStart;
use super::rng::Rng;
use super::seed_sequence;
use super::source::RandomAccessSource;

/// How the `random_map` stages of one record share its generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Draws {
    /// One generator per record, each stage drawing on where the last
    /// stopped (Grain's `DataLoader`: every `RandomMapTransform` gets the
    /// record's `metadata.rng`).
    Shared,
    /// Each stage starts the generator afresh (Grain's
    /// `MapDataset.random_map(.., seed=)`, whose stages each reset theirs
    /// to the record's index).
    PerStage,
}

/// Where a record is read: its index in the source, the epoch, and where
/// its `random_map` generator starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct At {
    pub index: usize,
    pub epoch: u64,
    pub rng: PhiloxStart,
    pub draws: Draws,
}

/// A record's value after the transforms so far (`None` when a filter
/// dropped it), given where it is and the generator its `random_map`
/// stages draw from.
type Read<T> = Arc<dyn Fn(At, &mut Rng) -> Result<Option<T>, DataError> + Send + Sync>;

/// A source with per-record transforms, `T` the records they make.
/// Transforms run where the loader reads the record (a worker thread);
/// a transform that returns an error or panics fails that record, named
/// by its index and the transform.
pub struct MapDataset<T> {
    len: usize,
    read: Read<T>,
    transforms: usize,
}

impl<T> Clone for MapDataset<T> {
    fn clone(&self) -> Self {
        MapDataset {
            len: self.len,
            read: self.read.clone(),
            transforms: self.transforms,
        }
    }
}

impl<T> std::fmt::Debug for MapDataset<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapDataset")
            .field("len", &self.len)
            .field("transforms", &self.transforms)
            .finish()
    }
}

/// Runs one stage on record `at`, turning an error or a panic into a
/// [`DataError::Record`] naming the record and `stage`.
fn guarded<R>(
    at: At,
    stage: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<R, BoxError>,
) -> Result<R, DataError> {
    let failed = |message: String| DataError::Record {
        index: at.index,
        epoch: at.epoch,
        stage: stage(),
        message,
    };
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(failed(e.to_string())),
        Err(payload) => Err(failed(panic_message(payload.as_ref()))),
    }
}

impl<T: Send + 'static> MapDataset<T> {
    /// The records of `source`, untransformed.
    pub fn source<S: RandomAccessSource<Record = T>>(source: S) -> MapDataset<T> {
        let len = source.len();
        let read: Read<T> = Arc::new(move |at: At, _: &mut Rng| {
            guarded(
                at,
                || "reading the source".to_string(),
                || source.get(at.index),
            )
            .map(Some)
        });
        MapDataset {
            len,
            read,
            transforms: 0,
        }
    }

    /// The number of records in the source (before filters).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the source has no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Record `index` with its transforms applied (`None`: filtered out),
    /// as Grain's `MapDataset.source(..)` with the same transforms, each
    /// `random_map` given `seed=seed`, returns `ds[index]`: every
    /// `random_map` stage draws from a fresh
    /// `np.random.Generator(np.random.Philox(seed))` whose counter is
    /// `[0, 0, 0, index]`.
    pub fn get(&self, index: usize, seed: u64) -> Result<Option<T>, DataError> {
        if index >= self.len {
            return Err(DataError::option(
                "MapDataset::get",
                format!("index {index} is not below the length {}", self.len),
            ));
        }
        let at = At {
            index,
            epoch: 0,
            rng: PhiloxStart {
                key: seed_sequence::philox_key(seed),
                counter: [0, 0, 0, index as u64],
            },
            draws: Draws::PerStage,
        };
        (self.read)(at, &mut Rng::start(at.rng))
    }

    /// Adds a stage: `f` gets the record so far, where it is and the
    /// record's generator; a failure names the stage by `name` and its
    /// number.
    fn then<U: Send + 'static>(
        self,
        name: &'static str,
        f: impl Fn(T, At, &mut Rng) -> Result<Option<U>, BoxError> + Send + Sync + 'static,
    ) -> MapDataset<U> {
        let number = self.transforms + 1;
        let previous = self.read;
        let read: Read<U> = Arc::new(move |at: At, rng: &mut Rng| match previous(at, rng)? {
            None => Ok(None),
            Some(record) => guarded(
                at,
                || format!("{name} (transform {number})"),
                || f(record, at, rng),
            ),
        });
        MapDataset {
            len: self.len,
            read,
            transforms: number,
        }
    }

    /// Applies `f` to each record.
    pub fn map<U: Send + 'static>(
        self,
        f: impl Fn(T) -> U + Send + Sync + 'static,
    ) -> MapDataset<U> {
        self.then("map", move |r, _, _| Ok(Some(f(r))))
    }

    /// Applies `f` to each record; an error fails the record.
    pub fn try_map<U: Send + 'static, E: Into<BoxError>>(
        self,
        f: impl Fn(T) -> Result<U, E> + Send + Sync + 'static,
    ) -> MapDataset<U> {
        self.then("try_map", move |r, _, _| f(r).map(Some).map_err(Into::into))
    }

    /// Keeps the records for which `keep` is true (a filter that keeps
    /// nothing of an endless stream leaves `next` searching forever, as in
    /// Grain).
    pub fn filter(self, keep: impl Fn(&T) -> bool + Send + Sync + 'static) -> MapDataset<T> {
        self.then("filter", move |r, _, _| Ok(keep(&r).then_some(r)))
    }

    /// Applies `f` to each record with the record's generator, as Grain's
    /// `RandomMapTransform`: in a loader, the generator Grain's
    /// `IndexSampler` gives the record at its position
    /// (`np.random.Philox(key=seed + global_index)`, see
    /// [`IndexSampler`](super::IndexSampler)), shared by the record's
    /// `random_map` stages in turn; so the same record at the same
    /// position draws the same numbers whichever worker computes it, and
    /// the numbers Grain draws there.
    pub fn random_map<U: Send + 'static>(
        self,
        f: impl Fn(T, &mut Rng) -> U + Send + Sync + 'static,
    ) -> MapDataset<U> {
        self.then("random_map", move |r, at, rng| {
            match at.draws {
                Draws::Shared => {}
                Draws::PerStage => *rng = Rng::start(at.rng),
            }
            Ok(Some(f(r, rng)))
        })
    }

    /// Reads record `at` (the loader's workers call this), its
    /// `random_map` stages drawing from a generator started at `at.rng`.
    pub(crate) fn read(&self, at: At) -> Result<Option<T>, DataError> {
        (self.read)(at, &mut Rng::start(at.rng))
    }
}
