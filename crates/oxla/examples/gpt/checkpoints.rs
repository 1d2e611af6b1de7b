//! The run's checkpoints: parameters and optimizer state (each leaf's
//! FSDP blocks, as `CheckpointManager` writes them) with the data loader's
//! position and the train loss as the step's metrics, so `--resume` sees
//! the very batches the interrupted run would have seen next.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use oxla::pytree::Pytree;
use oxla_train::checkpoint::{CheckpointManager, CheckpointManagerOptions};
use oxla_train::data::IteratorState;

/// Where a restored run continues.
pub struct Restored<S> {
    /// The step saved.
    pub step: u64,
    /// The saved state, laid out as the template was.
    pub state: S,
    /// The loader's position after the step's last batch.
    pub loader: IteratorState,
}

/// The step directories of a run (`<out>/checkpoints/<step>/`), the
/// last two kept, written in the background.
pub struct Checkpoints {
    manager: CheckpointManager,
}

impl Checkpoints {
    /// The checkpoints under `dir`.
    pub fn open(dir: &Path) -> Result<Checkpoints> {
        let options = CheckpointManagerOptions::default().max_to_keep(2);
        Ok(Checkpoints {
            manager: CheckpointManager::open(dir, options)?,
        })
    }

    /// Starts saving `state` as `step`, with the loader's position and the
    /// train loss; returns once the arrays are on the host.
    pub fn save<S: Pytree>(
        &mut self,
        step: u64,
        state: &S,
        loader: &IteratorState,
        train_loss: f64,
    ) -> Result<()> {
        // f64 holds the integers exactly up to 2^53.
        let metrics = BTreeMap::from([
            ("loader_epoch".to_string(), loader.epoch as f64),
            ("loader_position".to_string(), loader.position as f64),
            ("train_loss".to_string(), train_loss),
        ]);
        self.manager.save(step, state, metrics)?;
        Ok(())
    }

    /// Waits for the save in flight.
    pub fn wait(&mut self) -> Result<()> {
        Ok(self.manager.wait_until_finished()?)
    }

    /// The latest committed step, if any.
    pub fn latest(&mut self) -> Result<Option<u64>> {
        Ok(self.manager.latest_step()?)
    }

    /// The latest step's state shaped and laid out as `like`, and the
    /// loader position saved with it (for the seed and shard of `fresh`, a
    /// new loader's state); `None` without a checkpoint.
    pub fn restore_latest<S: Pytree>(
        &mut self,
        like: &S,
        fresh: IteratorState,
    ) -> Result<Option<Restored<S>>> {
        let Some((step, state)) = self.manager.restore_latest(like)? else {
            return Ok(None);
        };
        let metrics = self.manager.metrics(step)?;
        let read = |name: &str| -> Result<u64> {
            let value = *metrics
                .get(name)
                .with_context(|| format!("checkpoint {step} has no metric {name}"))?;
            if !(value >= 0.0 && value.fract() == 0.0) {
                bail!("checkpoint {step}'s {name} is {value}, not a position");
            }
            Ok(value as u64)
        };
        let loader = IteratorState {
            epoch: read("loader_epoch")?,
            position: read("loader_position")?,
            ..fresh
        };
        Ok(Some(Restored {
            step,
            state,
            loader,
        }))
    }
}
