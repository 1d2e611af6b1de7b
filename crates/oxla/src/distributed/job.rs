//! Joining a job of many processes through etcd, and what a joined
//! process asks of it (the `distributed` feature).
use std::sync::OnceLock;
use std::time::Duration;

pub use oxla_distributed::{
    CoordinatorTls, CoordinatorUser, DistributedError, GlobalDevice, GlobalTopology, Job,
    JobOptions, LocalDevice, ProcessTopology,
};

use crate::error::{Error, Result};

/// The job this process joined.
pub(super) struct Joined {
    pub(super) job: Job,
    topology: GlobalTopology,
}

pub(super) static JOINED: OnceLock<Joined> = OnceLock::new();

/// Joins process `process_id` of `num_processes` to the job coordinated
/// by the etcd endpoint `coordinator` (`host:port` or URL), with
/// [`JobOptions::new`]'s timeouts. See [`initialize_with`].
pub fn initialize(coordinator: &str, num_processes: usize, process_id: usize) -> Result<()> {
    initialize_with(JobOptions::new(coordinator, num_processes, process_id))
}

/// Joins the job `options` describe (see the module's documentation);
/// once per process, before its first array or compilation.
pub fn initialize_with(options: JobOptions) -> Result<()> {
    if JOINED.get().is_some() {
        return Err(Error::InvalidArgument(
            "distributed::initialize was already called in this process".into(),
        ));
    }
    let timeout = options.initialization_timeout;
    let job = Job::join(options)?;
    let client = crate::runtime::create_job_client(
        job.key_value_store(),
        job.process_id(),
        job.num_processes(),
    )?;
    let local = local_topology(client, job.process_id())?;
    let published = serde_json::to_vec(&local).expect("a topology serializes");
    let topologies = job
        .exchange("topology", &published, timeout)?
        .iter()
        .enumerate()
        .map(|(id, bytes)| {
            serde_json::from_slice::<ProcessTopology>(bytes).map_err(|e| {
                Error::InvalidArgument(format!(
                    "process {id} published a topology oxla cannot read: {e}"
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let topology = GlobalTopology::assemble(&job.options().job, &topologies)?;
    job.barrier("initialized", timeout)?;
    tracing::debug!(
        process = job.process_id(),
        devices = topology.devices.len(),
        "joined the job"
    );
    JOINED
        .set(Joined { job, topology })
        .map_err(|_| Error::InvalidArgument("distributed::initialize ran twice at once".into()))
}

/// This process's devices as the others learn them.
fn local_topology(client: &oxla_pjrt::Client, process_id: usize) -> Result<ProcessTopology> {
    let devices = client
        .addressable_devices()?
        .iter()
        .map(|d| {
            Ok(LocalDevice {
                id: i64::from(d.id()?),
                kind: d.kind()?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ProcessTopology {
        process_id,
        platform: client.platform_name()?,
        platform_version: client.platform_version()?,
        devices,
    })
}

/// The joined job, or an error saying [`initialize`] must come first.
fn joined() -> Result<&'static Joined> {
    JOINED.get().ok_or_else(|| {
        Error::InvalidArgument(
            "this process joined no job: call distributed::initialize first".into(),
        )
    })
}

/// Every device of the job, process-major (as `jax.devices()` across
/// processes).
pub fn global_devices() -> Result<Vec<GlobalDevice>> {
    Ok(joined()?.topology.devices.clone())
}

/// The job this process joined (for exchanges of its own, or the
/// plugins' key-value store).
pub fn job() -> Result<&'static Job> {
    Ok(&joined()?.job)
}

/// Waits until every process of the job reaches barrier `name` (JAX's
/// `multihost_utils.sync_global_devices`), up to `timeout`.
pub fn barrier(name: &str, timeout: Duration) -> Result<()> {
    Ok(joined()?.job.barrier(name, timeout)?)
}

/// Leaves the job: a last barrier with every process (up to `timeout`),
/// then this process's keys go. Arrays and compiled programs stay usable
/// locally.
pub fn shutdown(timeout: Duration) -> Result<()> {
    Ok(joined()?.job.shutdown(timeout)?)
}
