//! Many processes (JAX's `jax.distributed`): `initialize` joins this
//! process to a job coordinated by an etcd cluster, before its first array
//! or compilation. It connects, joins under `process_id` (a live process
//! with the same id is an error), makes the default PJRT client with the
//! job's key-value store behind the client's `kv_*` callbacks (and, on GPU
//! plugins, the `node_id`/`num_nodes` options that make a multi-node
//! client), publishes this process's devices and waits for every
//! process's, then meets the others at a barrier. Afterwards
//! `global_devices` lists the job's devices (process-major, as
//! `jax.devices()`), `barrier` synchronises (`sync_global_devices`) and
//! `shutdown` leaves. Every wait is bounded; a process that dies is
//! reported by id to the others once its heartbeats have been silent for
//! the heartbeat timeout.
//!
//! The CPU plugins run no cross-process collectives: on them the job is a
//! set of processes that agree on the device list and synchronise, each
//! computing on its own devices. docs/multi-host.md says how a GPU or TPU
//! job runs end to end.
//!
//! Joining a job needs oxla's `distributed` feature (off by default: it
//! brings etcd's client and an async runtime). Without it a process is a
//! job of one: [`is_initialized`] is false, [`process_index`] 0 and
//! [`process_count`] 1, and the functions that join or talk to a job are
//! absent (rustc's error says they are gated behind the feature).

#[cfg(feature = "distributed")]
mod job;

#[cfg(feature = "distributed")]
pub use job::{
    CoordinatorTls, CoordinatorUser, DistributedError, GlobalDevice, GlobalTopology, Job,
    JobOptions, LocalDevice, ProcessTopology, barrier, global_devices, initialize, initialize_with,
    job, shutdown,
};

/// Whether this process joined a job.
pub fn is_initialized() -> bool {
    #[cfg(feature = "distributed")]
    return job::JOINED.get().is_some();
    #[cfg(not(feature = "distributed"))]
    false
}

/// This process's index in its job (0 when it joined none), as
/// `jax.process_index()`.
pub fn process_index() -> usize {
    #[cfg(feature = "distributed")]
    return job::JOINED.get().map_or(0, |j| j.job.process_id());
    #[cfg(not(feature = "distributed"))]
    0
}

/// How many processes the job has (1 when this process joined none), as
/// `jax.process_count()`.
pub fn process_count() -> usize {
    #[cfg(feature = "distributed")]
    return job::JOINED.get().map_or(1, |j| j.job.num_processes());
    #[cfg(not(feature = "distributed"))]
    1
}
