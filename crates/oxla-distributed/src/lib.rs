//! Joining a multi-process oxla job, in the spirit of
//! `jax.distributed.initialize`: every process connects to a coordination
//! service (an etcd cluster: [`EtcdStore`]), joins the job under its
//! process id ([`Job::join`]), tells the others its devices and learns
//! theirs ([`Job::exchange`], [`GlobalTopology`]), meets them at barriers
//! ([`Job::barrier`]) and gives its PJRT plugin a key-value store shared
//! with the job ([`Job::key_value_store`], behind the client's `kv_*`
//! callbacks). Every wait is bounded, and a process that dies is reported
//! to the others by id ([`DistributedError::ProcessGone`]) once its
//! heartbeats have been silent for the heartbeat timeout, instead of a
//! hang.
#![warn(missing_docs)]

mod error;
mod etcd;
mod job;
mod security;
mod topology;

pub use error::{DistributedError, Result};
pub use etcd::EtcdStore;
pub use job::{Job, JobOptions};
pub use security::{CoordinatorTls, CoordinatorUser};
pub use topology::{GlobalDevice, GlobalTopology, LocalDevice, ProcessTopology};
