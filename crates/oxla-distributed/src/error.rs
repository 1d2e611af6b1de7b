//! What can go wrong when joining or running a multi-process job.

use std::time::Duration;

/// Errors of oxla-distributed; each names the job's coordinator, the
/// processes concerned and what was being waited for.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DistributedError {
    /// The options cannot describe a job.
    #[error("invalid distributed options: {0}")]
    InvalidOptions(String),
    /// The coordination service could not be reached or refused a request.
    #[error("coordinator {coordinator}: {operation} failed: {message}")]
    Coordinator {
        /// The coordinator's address.
        coordinator: String,
        /// What oxla asked of it.
        operation: String,
        /// The service's (or the transport's) message.
        message: String,
    },
    /// Another live process already joined with this process id.
    #[error(
        "process {process_id} already joined job {job:?} at {coordinator}: another process runs \
         with the same process_id, or one that died less than the heartbeat timeout ago \
         ({heartbeat_timeout:?}) has not expired yet"
    )]
    DuplicateProcess {
        /// The contested id.
        process_id: usize,
        /// The job's name.
        job: String,
        /// The coordinator's address.
        coordinator: String,
        /// How long a dead process's membership outlives it.
        heartbeat_timeout: Duration,
    },
    /// Waiting for every process ran out of time.
    #[error(
        "timed out after {waited:?} waiting for {what} of job {job:?}: process(es) {missing:?} of \
         {num_processes} never arrived"
    )]
    Timeout {
        /// What was awaited (a barrier, the topology exchange, a key).
        what: String,
        /// The job's name.
        job: String,
        /// The processes that did not arrive.
        missing: Vec<usize>,
        /// How many processes the job has.
        num_processes: usize,
        /// How long this process waited.
        waited: Duration,
    },
    /// A process of the job stopped (its heartbeat lease ran out or it
    /// left) while the others needed it.
    #[error(
        "process {process_id} of job {job:?} is gone (it stopped sending heartbeats for \
         {heartbeat_timeout:?}, or it shut down) while this process was waiting for {what}"
    )]
    ProcessGone {
        /// The process that is gone.
        process_id: usize,
        /// The job's name.
        job: String,
        /// What this process was waiting for.
        what: String,
        /// The liveness timeout.
        heartbeat_timeout: Duration,
    },
    /// The processes' topologies cannot form one job.
    #[error("the processes of job {job:?} disagree: {message}")]
    Disagreement {
        /// The job's name.
        job: String,
        /// What differs.
        message: String,
    },
    /// This process left the job (after `shutdown`).
    #[error("this process already left job {job:?}")]
    Left {
        /// The job's name.
        job: String,
    },
}

/// `Result` with [`DistributedError`].
pub type Result<T> = std::result::Result<T, DistributedError>;
