//! The checkpointable position of a loader (Grain's iterator state).

use serde::{Deserialize, Serialize};

use super::error::DataError;

/// Where a loader is: the next record to read is at `position` of
/// `epoch`, for the sampler of `seed` and shard `shard_index` of
/// `shard_count`. Small and serializable (JSON: [`to_json`](Self::to_json)),
/// so it goes into a checkpoint beside the model; restoring it into a
/// loader built the same way yields exactly the batches the saved loader
/// would have yielded next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IteratorState {
    /// The epoch of the next record.
    pub epoch: u64,
    /// The next record's position within its epoch.
    pub position: u64,
    /// The sampler's seed.
    pub seed: u64,
    /// This process's shard.
    pub shard_index: usize,
    /// The number of shards.
    pub shard_count: usize,
}

impl IteratorState {
    /// The state as a JSON object.
    pub fn to_json(&self) -> String {
        // A struct of integers always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A state from [`to_json`](Self::to_json)'s text.
    pub fn from_json(json: &str) -> Result<IteratorState, DataError> {
        Ok(serde_json::from_str(json)?)
    }
}
