//! What can go wrong in the input pipeline.

use std::panic::Location;

/// An error a data source or a user transform returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An input pipeline error: a bad option (named with the caller's line),
/// a record whose read or transform failed (named by its index), batch
/// records that do not stack, a checkpointed state that does not fit the
/// loader, or a failed transfer to the device.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// An option out of range (a batch size of 0, a shard index not below
    /// the shard count, ...).
    #[error("{location}: {what}: {message}")]
    InvalidOption {
        /// The function or option (`DataLoader::batch`, `ShardOptions`).
        what: &'static str,
        /// What is wrong with it.
        message: String,
        /// The caller's line.
        location: &'static Location<'static>,
    },
    /// Reading a record from the source, or one of its transforms, failed.
    #[error("record {index} (epoch {epoch}): {stage} failed: {message}")]
    Record {
        /// The record's index in the source.
        index: usize,
        /// The epoch it was read in.
        epoch: u64,
        /// `reading the source`, or the transform (`map #1`, `filter #2`).
        stage: String,
        /// The error, or the panic's message.
        message: String,
    },
    /// The records of a batch differ in shape or type.
    #[error("records {indices:?} do not stack into a batch: {message}")]
    Stack {
        /// The batch's records, by index in the source.
        indices: Vec<usize>,
        /// What differs.
        message: String,
    },
    /// A restored state does not belong to this loader.
    #[error("the iterator state {state} does not fit this loader: {message}")]
    State {
        /// The state, as JSON.
        state: String,
        /// What does not match (the seed, the shards, a position past the end).
        message: String,
    },
    /// A state's JSON did not parse.
    #[error("not an iterator state: {0}")]
    StateJson(#[from] serde_json::Error),
    /// Moving a batch to the device failed.
    #[error("moving a batch to the device: {0}")]
    Device(#[from] oxla::Error),
    /// The background thread stopped without saying why (it panicked
    /// outside any transform).
    #[error("the loader's {0} thread stopped unexpectedly")]
    ThreadDied(&'static str),
}

impl DataError {
    /// An [`InvalidOption`](DataError::InvalidOption) at the caller's line.
    #[track_caller]
    pub(crate) fn option(what: &'static str, message: impl Into<String>) -> DataError {
        DataError::InvalidOption {
            what,
            message: message.into(),
            location: Location::caller(),
        }
    }
}

/// So a training loop returning `oxla::Result` can use `?` on the loader.
impl From<DataError> for oxla::Error {
    fn from(e: DataError) -> oxla::Error {
        match e {
            DataError::Device(e) => e,
            other => oxla::Error::InvalidArgument(other.to_string()),
        }
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_string()
    }
}
