//! [`CheckpointManager`]: step directories, retention and asynchronous
//! saves of a training run's state.

mod layout;
mod regions;
mod retention;
mod snapshot;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use oxla::Result;
use oxla::pytree::Pytree;

use super::checkpoint_error;
use retention::Committed;
pub use retention::{BestBy, BestMode, Retention};
use snapshot::{HostBuffers, Snapshot};

/// How a [`CheckpointManager`] saves and what it keeps (Orbax's
/// `CheckpointManagerOptions`).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointManagerOptions {
    /// Which committed steps to keep.
    pub retention: Retention,
    /// [`save`](CheckpointManager::save) writes only steps that are
    /// multiples of this (1: every step).
    pub save_interval_steps: u64,
    /// Write in a background thread (the default), or before `save`
    /// returns.
    pub async_save: bool,
    /// Keep the host buffers of the last save for the next one (the
    /// default): a repeated save then copies into memory the process has
    /// rather than faulting in fresh pages, at the cost of holding one
    /// step's host copy between saves.
    pub keep_host_buffers: bool,
}

impl Default for CheckpointManagerOptions {
    fn default() -> Self {
        CheckpointManagerOptions {
            retention: Retention::default(),
            save_interval_steps: 1,
            async_save: true,
            keep_host_buffers: true,
        }
    }
}

impl CheckpointManagerOptions {
    /// Keep at most `n` checkpoints: the latest ones, or the best ones
    /// with [`best_by`](Self::best_by) (the latest is kept as well, so a
    /// run can always resume).
    pub fn max_to_keep(mut self, n: usize) -> Self {
        self.retention.max_to_keep = Some(n);
        self
    }

    /// Rank checkpoints by the metric `metric` passed to `save`, smaller or
    /// larger being better as `mode` says.
    pub fn best_by(mut self, metric: &str, mode: BestMode) -> Self {
        self.retention.best = Some(BestBy {
            metric: metric.to_string(),
            mode,
        });
        self
    }

    /// Also keep every step that is a multiple of `period`.
    pub fn keep_period(mut self, period: u64) -> Self {
        self.retention.keep_period = Some(period);
        self
    }

    /// Save only steps that are multiples of `interval`.
    pub fn save_interval_steps(mut self, interval: u64) -> Self {
        self.save_interval_steps = interval.max(1);
        self
    }

    /// Write before `save` returns (`false`), or in the background.
    pub fn async_save(mut self, async_save: bool) -> Self {
        self.async_save = async_save;
        self
    }

    /// Keep the last save's host buffers for the next save (`true`, the
    /// default), or free them once written.
    pub fn keep_host_buffers(mut self, keep: bool) -> Self {
        self.keep_host_buffers = keep;
        self
    }
}

/// Saves a training run's state at chosen steps into one directory and
/// restores it, in the manner of Orbax's `CheckpointManager`: one
/// directory per saved step, keep-the-last-N or keep-the-best-by-a-metric,
/// and asynchronous saves. [`CheckpointManager::save`] returns once the
/// arrays are copied to the host (each array's distinct blocks, never
/// gathered on one device), so the train step goes on while a background
/// thread writes and commits; [`wait_until_finished`] blocks until it is
/// done. A step's directory is written under a partial name and renamed
/// when whole, so a process killed mid-save leaves the last committed step
/// as the latest one, and the next manager opened on the directory removes
/// what the killed save left.
///
/// [`wait_until_finished`]: CheckpointManager::wait_until_finished
///
/// ```
/// use std::collections::BTreeMap;
/// use oxla::Array;
/// use oxla_train::checkpoint::{CheckpointManager, CheckpointManagerOptions};
/// # fn main() -> oxla::Result<()> {
/// let dir = std::env::temp_dir().join(format!("oxla-doc-manager-{}", std::process::id()));
/// let options = CheckpointManagerOptions::default().max_to_keep(2);
/// let mut manager = CheckpointManager::open(&dir, options)?;
/// for step in 0..5u64 {
///     let state = Array::scalar(step as f32)?;
///     manager.save(step, &state, BTreeMap::new())?; // returns before the write ends
/// }
/// manager.wait_until_finished()?;
/// assert_eq!(manager.all_steps()?, vec![3, 4]);
/// let (step, state) = manager.restore_latest(&Array::scalar(0.0f32)?)?.unwrap();
/// assert_eq!((step, state.item::<f32>()?), (4, 4.0));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
///
/// One manager (one process) writes a directory at a time. Dropping the
/// manager waits for a save in flight.
pub struct CheckpointManager {
    root: PathBuf,
    options: CheckpointManagerOptions,
    in_flight: Option<JoinHandle<(Result<()>, Snapshot)>>,
    buffers: HostBuffers,
}

impl CheckpointManager {
    /// A manager of the directory `root` (created if absent). Steps that a
    /// killed process left half-written or half-deleted are removed.
    pub fn open(root: impl AsRef<Path>, options: CheckpointManagerOptions) -> Result<Self> {
        let root = root.as_ref().to_path_buf();
        std::fs::create_dir_all(&root).map_err(|e| checkpoint_error(&root, e))?;
        layout::remove_leftovers(&root)?;
        Ok(CheckpointManager {
            root,
            options,
            in_flight: None,
            buffers: HostBuffers::default(),
        })
    }

    /// The managed directory.
    pub fn directory(&self) -> &Path {
        &self.root
    }

    /// Whether [`save`](Self::save) would write `step`.
    pub fn should_save(&self, step: u64) -> bool {
        step.is_multiple_of(self.options.save_interval_steps)
    }

    /// Saves `state` as step `step` with its `metrics` (what
    /// [`CheckpointManagerOptions::best_by`] ranks by; may be empty), unless
    /// the step is off the save interval (then `Ok(false)`).
    ///
    /// Waits for the previous save first (one is in flight at a time, so
    /// host memory holds at most one step), copies the arrays to the host,
    /// and, with `async_save`, returns while a background thread writes,
    /// commits and applies the retention; its error, if any, is returned
    /// by the next `save`, [`wait_until_finished`](Self::wait_until_finished)
    /// or restore. An existing step is an error.
    pub fn save<P: Pytree>(
        &mut self,
        step: u64,
        state: &P,
        metrics: BTreeMap<String, f64>,
    ) -> Result<bool> {
        if !self.should_save(step) {
            return Ok(false);
        }
        self.wait_until_finished()?;
        if layout::step_dir(&self.root, step).exists() {
            return Err(checkpoint_error(
                &self.root,
                format!("step {step} is already saved"),
            ));
        }
        let snapshot = Snapshot::take(step, state, metrics, &mut self.buffers);
        // Kept buffers this state did not use (its shapes changed) go.
        self.buffers.clear();
        let snapshot = snapshot?;
        let root = self.root.clone();
        let retention = self.options.retention.clone();
        let write = move || {
            let written = write_and_commit(&root, &snapshot, &retention);
            (written, snapshot)
        };
        if self.options.async_save {
            let thread = std::thread::Builder::new()
                .name(format!("oxla-checkpoint-{step}"))
                .spawn(write)
                .map_err(|e| checkpoint_error(&self.root, e))?;
            self.in_flight = Some(thread);
            Ok(true)
        } else {
            let (written, snapshot) = write();
            self.recycle(snapshot);
            written.map(|()| true)
        }
    }

    /// Blocks until the save in flight, if any, is committed; its error if
    /// it failed.
    pub fn wait_until_finished(&mut self) -> Result<()> {
        let Some(thread) = self.in_flight.take() else {
            return Ok(());
        };
        match thread.join() {
            Ok((written, snapshot)) => {
                self.recycle(snapshot);
                written
            }
            Err(_) => Err(checkpoint_error(&self.root, "the background save panicked")),
        }
    }

    /// Keeps a written snapshot's host buffers for the next save, if the
    /// options say so.
    fn recycle(&mut self, snapshot: Snapshot) {
        if self.options.keep_host_buffers {
            self.buffers.keep(snapshot.into_buffers());
        }
    }

    /// Whether a save is being written now.
    pub fn is_saving(&self) -> bool {
        self.in_flight.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// The committed steps, in increasing order (after any save in flight).
    pub fn all_steps(&mut self) -> Result<Vec<u64>> {
        self.wait_until_finished()?;
        layout::committed_steps(&self.root)
    }

    /// The latest committed step.
    pub fn latest_step(&mut self) -> Result<Option<u64>> {
        Ok(self.all_steps()?.last().copied())
    }

    /// The committed step best by the ranking metric (the latest without
    /// one, or when no step has the metric).
    pub fn best_step(&mut self) -> Result<Option<u64>> {
        let steps = self.all_steps()?;
        let Some(best) = &self.options.retention.best else {
            return Ok(steps.last().copied());
        };
        let mut ranked = Vec::with_capacity(steps.len());
        for &step in &steps {
            if let Some(&value) = self.metrics(step)?.get(&best.metric) {
                ranked.push((value, step));
            }
        }
        let best_step = ranked
            .into_iter()
            .filter(|(value, _)| !value.is_nan())
            .min_by(|a, b| best.rank(*a, *b));
        Ok(best_step.map(|(_, s)| s).or(steps.last().copied()))
    }

    /// The metrics saved with `step` (a non-finite value reads as NaN).
    pub fn metrics(&self, step: u64) -> Result<BTreeMap<String, f64>> {
        step_metrics(&self.root, step)
    }

    /// The state saved at `step`, shaped and placed like `like`: each leaf
    /// comes back with `like`'s sharding (any mesh, whatever the saving
    /// one was) or on `like`'s device. The names, dtypes, shapes and
    /// static fields must be the saved ones.
    pub fn restore<P: Pytree>(&mut self, step: u64, like: &P) -> Result<P> {
        self.wait_until_finished()?;
        let dir = layout::step_dir(&self.root, step);
        if !dir.join(layout::MANIFEST).is_file() {
            let steps = layout::committed_steps(&self.root)?;
            return Err(checkpoint_error(
                &self.root,
                format!("no committed step {step} (committed: {steps:?})"),
            ));
        }
        snapshot::restore(&dir, like)
    }

    /// The latest committed step and its state (see
    /// [`restore`](Self::restore)); `None` in an empty directory.
    pub fn restore_latest<P: Pytree>(&mut self, like: &P) -> Result<Option<(u64, P)>> {
        match self.latest_step()? {
            None => Ok(None),
            Some(step) => Ok(Some((step, self.restore(step, like)?))),
        }
    }
}

impl Drop for CheckpointManager {
    fn drop(&mut self) {
        if let Err(e) = self.wait_until_finished() {
            tracing::error!("a checkpoint save failed: {e}");
        }
    }
}

/// The metrics saved with committed step `step` under `root` (a
/// non-finite value reads as NaN).
fn step_metrics(root: &Path, step: u64) -> Result<BTreeMap<String, f64>> {
    let manifest = snapshot::read_manifest(&layout::step_dir(root, step))?;
    Ok(manifest
        .metrics
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect())
}

/// Writes `snapshot` under a partial name, commits it, then deletes what
/// the retention no longer keeps.
fn write_and_commit(root: &Path, snapshot: &Snapshot, retention: &Retention) -> Result<()> {
    let _span = tracing::info_span!("checkpoint_save", step = snapshot.step).entered();
    let partial = layout::start(root, snapshot.step)?;
    snapshot.write(&partial)?;
    layout::commit(root, snapshot.step)?;
    let steps = layout::committed_steps(root)?;
    let committed = steps
        .iter()
        .map(|&step| {
            let metric = match &retention.best {
                None => None,
                Some(best) => step_metrics(root, step)?.get(&best.metric).copied(),
            };
            Ok(Committed { step, metric })
        })
        .collect::<Result<Vec<_>>>()?;
    for step in retention.to_delete(&committed) {
        layout::delete(root, step)?;
    }
    Ok(())
}
