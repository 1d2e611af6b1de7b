//! Grain's `MapDataset`: a source and the transforms over it (`map`,
//! `filter`, `random_map`, `shuffle`, `repeat`, and `seed`, the
//! pipeline's seed that random transforms derive theirs from), lazy and
//! indexable, so any worker thread computes any record.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::error::{BoxError, DataError, panic_message};
use super::index_shuffle::index_shuffle;
use super::philox::PhiloxStart;
use super::rng::Rng;
use super::seed_sequence;
use super::source::RandomAccessSource;

/// Where a record is read: its index at the stage reading it, and the
/// epoch it is read in (for error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct At {
    pub index: usize,
    pub epoch: u64,
}

/// The length Grain gives an endless `repeat` (`sys.maxsize`).
const ENDLESS: usize = i64::MAX as usize;

/// The nearest `seed` upstream of a dataset: its seed, and how many
/// stages above it the dataset is (0: the dataset is the `seed` stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PipelineSeed {
    seed: u64,
    depth: u64,
}

/// A record's value after the transforms so far (`None` when a filter
/// dropped it), given where it is and the loader's generator for the
/// record (`None` outside a loader, in [`MapDataset::get`]).
type Read<T> = Arc<dyn Fn(At, &mut Option<Rng>) -> Result<Option<T>, DataError> + Send + Sync>;

/// A source with transforms, `T` the records they make, in the manner
/// of Grain's `MapDataset`. Record transforms run where the loader reads
/// the record (a worker thread); a transform that returns an error or
/// panics fails that record, named by its index and the transform.
pub struct MapDataset<T> {
    len: usize,
    read: Read<T>,
    transforms: usize,
    seed: Option<PipelineSeed>,
}

impl<T> Clone for MapDataset<T> {
    fn clone(&self) -> Self {
        MapDataset {
            len: self.len,
            read: self.read.clone(),
            transforms: self.transforms,
            seed: self.seed,
        }
    }
}

impl<T> std::fmt::Debug for MapDataset<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapDataset")
            .field("len", &self.len)
            .field("transforms", &self.transforms)
            .field("pipeline_seed", &self.seed.map(|s| s.seed))
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
    /// The records of `source`, untransformed. Index `i` reads record
    /// `i % len`, as Grain's `MapDataset.source` does, so indices past
    /// the end are the following epochs.
    pub fn source<S: RandomAccessSource<Record = T>>(source: S) -> MapDataset<T> {
        let len = source.len();
        let read: Read<T> = Arc::new(move |at: At, _: &mut Option<Rng>| {
            guarded(
                at,
                || "reading the source".to_string(),
                || source.get(at.index % len),
            )
            .map(Some)
        });
        MapDataset {
            len,
            read,
            transforms: 0,
            seed: None,
        }
    }

    /// The number of records (before filters; `sys.maxsize`, as in
    /// Grain, after an endless `repeat`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the dataset has no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Record `index` with its transforms applied (`None`: filtered out):
    /// Grain's `ds[index]` for the same pipeline, draws included. As in
    /// Grain, an index past `len()` wraps to the following epochs of the
    /// source (a `shuffle` orders each epoch anew). An error for an empty
    /// dataset, and for a `random_map` with no seed (neither its own nor
    /// one from [`seed`](Self::seed) upstream), whose generator only a
    /// [`DataLoader`](super::DataLoader) gives.
    #[track_caller]
    pub fn get(&self, index: usize) -> Result<Option<T>, DataError> {
        if self.len == 0 {
            return Err(DataError::option(
                "MapDataset::get",
                format!("the dataset is empty; there is no record {index}"),
            ));
        }
        let at = At {
            index,
            epoch: (index / self.len) as u64,
        };
        (self.read)(at, &mut None)
    }

    /// This dataset with another read, one stage further from the
    /// pipeline's seed.
    fn stage<U>(&self, len: usize, transforms: usize, read: Read<U>) -> MapDataset<U> {
        MapDataset {
            len,
            read,
            transforms,
            seed: self.seed.map(|s| PipelineSeed {
                seed: s.seed,
                depth: s.depth + 1,
            }),
        }
    }

    /// The seed Grain gives a random transformation added on top of this
    /// dataset without a seed of its own (`_default_seed`):
    /// `SeedSequence([pipeline seed, depth]).generate_state(1, uint32)`,
    /// the depth counting the stages from the new one to the `seed`
    /// stage.
    fn default_seed(&self) -> Option<u32> {
        self.seed
            .map(|s| seed_sequence::state_word(&[s.seed, s.depth + 1]))
    }

    /// Grain's `ds.seed(seed)`: the random transformations added after
    /// this (`shuffle`, `random_map`) without a seed of their own each
    /// derive one from `seed` and their distance from this stage, so one
    /// seed gives a whole pipeline distinct, reproducible streams. A
    /// later `seed` overrides it for what follows.
    pub fn seed(self, seed: u64) -> MapDataset<T> {
        MapDataset {
            seed: Some(PipelineSeed { seed, depth: 0 }),
            ..self
        }
    }

    /// Grain's `shuffle()`: the records in a global order drawn from the
    /// pipeline's seed (see [`seed`](Self::seed)); an error if there is
    /// none upstream.
    #[track_caller]
    pub fn shuffle(self) -> Result<MapDataset<T>, DataError> {
        match self.default_seed() {
            Some(seed) => Ok(self.shuffle_seeded(seed)),
            None => Err(DataError::option(
                "MapDataset::shuffle",
                "shuffle needs a seed: call .seed(seed) upstream or use shuffle_seeded",
            )),
        }
    }

    /// Grain's `shuffle(seed=seed)`: index `i` of epoch `e` (`i + e·len`)
    /// reads record `index_shuffle(i, len − 1, seed + e, 4)` of the epoch,
    /// so each epoch has its own order, Grain's.
    pub fn shuffle_seeded(self, seed: u32) -> MapDataset<T> {
        let (len, previous) = (self.len, self.read.clone());
        let read: Read<T> = Arc::new(move |at: At, rng: &mut Option<Rng>| {
            let (epoch, in_epoch) = (at.index / len, at.index % len);
            let epoch_seed = seed.wrapping_add(epoch as u32);
            let shuffled = index_shuffle(in_epoch as u64, len as u64 - 1, epoch_seed, 4)?;
            let index = shuffled as usize + epoch * len;
            previous(At { index, ..at }, rng)
        });
        self.stage(len, self.transforms, read)
    }

    /// Grain's `repeat(num_epochs, reseed_each_epoch=..)`: `num_epochs`
    /// passes over the records (`None`: endless). With
    /// `reseed_each_epoch` each pass reads the following epoch upstream
    /// (a new shuffle order, new `random_map` draws); without it every
    /// pass repeats the first. An error for 0 epochs, and for repeating
    /// an endless dataset.
    #[track_caller]
    pub fn repeat(
        self,
        num_epochs: Option<u64>,
        reseed_each_epoch: bool,
    ) -> Result<MapDataset<T>, DataError> {
        let what = "MapDataset::repeat";
        if num_epochs == Some(0) {
            return Err(DataError::option(
                what,
                "num_epochs must be positive, not 0",
            ));
        }
        if self.len >= ENDLESS {
            return Err(DataError::option(
                what,
                "repeating an endless dataset does nothing",
            ));
        }
        let parent_len = self.len;
        let len = match num_epochs {
            None if parent_len == 0 => 0,
            None => ENDLESS,
            Some(epochs) => usize::try_from(epochs)
                .ok()
                .and_then(|e| e.checked_mul(parent_len))
                .filter(|&len| len < ENDLESS)
                .ok_or_else(|| {
                    DataError::option(
                        what,
                        format!("{epochs} epochs of {parent_len} records do not fit in an index"),
                    )
                })?,
        };
        let previous = self.read.clone();
        let read: Read<T> = Arc::new(move |at: At, rng: &mut Option<Rng>| {
            let index = if reseed_each_epoch {
                at.index
            } else {
                at.index % parent_len
            };
            previous(At { index, ..at }, rng)
        });
        Ok(self.stage(len, self.transforms, read))
    }

    /// Adds a record transform: `f` gets the record so far, where it is
    /// and the loader's generator; a failure names the stage by `name`
    /// and its number.
    fn then<U: Send + 'static>(
        self,
        name: &'static str,
        f: impl Fn(T, At, &mut Option<Rng>) -> Result<Option<U>, BoxError> + Send + Sync + 'static,
    ) -> MapDataset<U> {
        let number = self.transforms + 1;
        let previous = self.read.clone();
        let read: Read<U> =
            Arc::new(
                move |at: At, rng: &mut Option<Rng>| match previous(at, rng)? {
                    None => Ok(None),
                    Some(record) => guarded(
                        at,
                        || format!("{name} (transform {number})"),
                        || f(record, at, rng),
                    ),
                },
            );
        self.stage(self.len, number, read)
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

    /// Applies `f` to each record with a generator.
    ///
    /// After a [`seed`](Self::seed) upstream, this is Grain's
    /// `ds.random_map(f)`: the transform derives its seed from the
    /// pipeline's, and index `i` draws from
    /// [`random_map_seeded`](Self::random_map_seeded)'s generator for
    /// that seed. With no seed upstream, `f` draws from the generator a
    /// [`DataLoader`](super::DataLoader) gives the record, as Grain's
    /// `RandomMapTransform` in a `DataLoader`'s operations: the one
    /// Grain's `IndexSampler` gives the record at its position
    /// (`np.random.Philox(key=seed + global_index)`, see
    /// [`IndexSampler`](super::IndexSampler)), shared by the record's
    /// unseeded `random_map` stages in turn; so the same record at the
    /// same position draws the same numbers whichever worker computes
    /// it, and the numbers Grain draws there. Such a stage has no
    /// generator in [`get`](Self::get), which is an error.
    pub fn random_map<U: Send + 'static>(
        self,
        f: impl Fn(T, &mut Rng) -> U + Send + Sync + 'static,
    ) -> MapDataset<U> {
        match self.default_seed() {
            Some(seed) => self.random_map_seeded(f, u64::from(seed)),
            None => self.then("random_map", move |r, _, rng| match rng {
                Some(rng) => Ok(Some(f(r, rng))),
                None => Err(
                    "this random_map has no seed, and only a DataLoader gives a \
                             generator to an unseeded one: call .seed(seed) upstream or use \
                             random_map_seeded"
                        .into(),
                ),
            }),
        }
    }

    /// Grain's `ds.random_map(f, seed=seed)`: index `i` at this stage
    /// draws from a fresh `np.random.Generator(np.random.Philox(seed))`
    /// whose counter is `[0, 0, 0, i]`, in a loader as well.
    pub fn random_map_seeded<U: Send + 'static>(
        self,
        f: impl Fn(T, &mut Rng) -> U + Send + Sync + 'static,
        seed: u64,
    ) -> MapDataset<U> {
        let key = seed_sequence::philox_key(seed);
        self.then("random_map", move |r, at, _| {
            let mut rng = Rng::start(PhiloxStart {
                key,
                counter: [0, 0, 0, at.index as u64],
            });
            Ok(Some(f(r, &mut rng)))
        })
    }

    /// Reads record `at` (the loader's workers call this), its unseeded
    /// `random_map` stages drawing from a generator started at `rng`.
    pub(crate) fn read(&self, at: At, rng: PhiloxStart) -> Result<Option<T>, DataError> {
        (self.read)(at, &mut Some(Rng::start(rng)))
    }
}
