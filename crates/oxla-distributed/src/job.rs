//! One process's membership of a job: joining (a member key on this
//! process's lease, refused when a live process holds the same id),
//! waiting for every process (exchanges, barriers) with a bounded timeout
//! and liveness checks, the key-value store PJRT plugins share, and
//! leaving.
//!
//! Keys, under `oxla/jobs/<job>/`: `members/<id>` (while the process
//! lives), `exchange/<name>/<id>`, `barrier/<name>/<n>/<id>` (the n-th
//! barrier of that name), `leaving/<id>`, and `kv/<key>` for the plugins.
//! Every key is on its writer's lease, so nothing outlives the run: a
//! process that dies takes its keys with it once its heartbeats stop for
//! the heartbeat timeout, and the others, polling, see its member key gone
//! and stop waiting with [`DistributedError::ProcessGone`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oxla_pjrt::{ErrorCode, KeyValueError, KeyValueStore};

use crate::error::{DistributedError, Result};
use crate::etcd::EtcdStore;
use crate::security::{CoordinatorTls, CoordinatorUser};

/// How to join a job (JAX's `jax.distributed.initialize` arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct JobOptions {
    /// The etcd endpoint every process reaches (`host:port` or URL).
    pub coordinator: String,
    /// How many processes the job has.
    pub num_processes: usize,
    /// This process's id, in `0..num_processes`.
    pub process_id: usize,
    /// The job's name: jobs of other names share the coordinator freely.
    pub job: String,
    /// How long joining waits for every process (JAX's
    /// `initialization_timeout`, 300 s).
    pub initialization_timeout: Duration,
    /// How long a silent process stays a member (JAX's
    /// `heartbeat_timeout_seconds`); the others notice a dead process this
    /// long after it died. Whole seconds, at least one.
    pub heartbeat_timeout: Duration,
    /// How long connecting to the coordinator may take.
    pub connect_timeout: Duration,
    /// TLS to the coordinator (a secured etcd), if any.
    pub tls: Option<CoordinatorTls>,
    /// The etcd user this process authenticates as (etcd's auth), if any.
    pub user: Option<CoordinatorUser>,
}

impl JobOptions {
    /// Process `process_id` of `num_processes` coordinated by
    /// `coordinator`, with JAX's timeouts (300 s to join) and a 10 s
    /// heartbeat timeout, in the job named `oxla`.
    pub fn new(coordinator: &str, num_processes: usize, process_id: usize) -> Self {
        Self {
            coordinator: coordinator.to_string(),
            num_processes,
            process_id,
            job: "oxla".into(),
            initialization_timeout: Duration::from_secs(300),
            heartbeat_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            tls: None,
            user: None,
        }
    }

    fn check(&self) -> Result<()> {
        let invalid = |m: String| Err(DistributedError::InvalidOptions(m));
        if self.num_processes == 0 {
            return invalid("num_processes is 0: a job has at least one process".into());
        }
        if self.process_id >= self.num_processes {
            return invalid(format!(
                "process_id {} is not below num_processes {}",
                self.process_id, self.num_processes
            ));
        }
        if self.job.is_empty() || self.job.contains('/') {
            return invalid(format!(
                "job name {:?} must be non-empty and without '/'",
                self.job
            ));
        }
        if self.coordinator.is_empty() {
            return invalid("the coordinator address is empty".into());
        }
        Ok(())
    }
}

/// The shared state of a joined job.
struct Membership {
    store: EtcdStore,
    options: JobOptions,
    /// `oxla/jobs/<job>/`.
    root: String,
    /// How many barriers of each name this process has passed.
    barriers: Mutex<HashMap<String, u64>>,
    /// The processes seen as members: one missing later is gone.
    seen: Mutex<BTreeSet<usize>>,
    left: AtomicBool,
}

/// This process's place in a multi-process job.
#[derive(Clone)]
pub struct Job {
    membership: Arc<Membership>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("options", &self.membership.options)
            .finish_non_exhaustive()
    }
}

/// The key's process id when `key` is `<prefix><id>`.
fn process_of(key: &str, prefix: &str) -> Option<usize> {
    key.strip_prefix(prefix)?.parse().ok()
}

/// The pauses between polls: 5 ms, doubling up to 100 ms, never past
/// what is left of the wait.
struct Backoff {
    pause: Duration,
}

impl Backoff {
    fn new() -> Self {
        Self {
            pause: Duration::from_millis(5),
        }
    }

    /// Sleeps the next pause, at most `left`.
    fn sleep(&mut self, left: Duration) {
        std::thread::sleep(self.pause.min(left));
        self.pause = (self.pause * 2).min(Duration::from_millis(100));
    }
}

/// One poll of the job's keys.
struct Snapshot {
    /// The values under the awaited prefix, by process.
    values: BTreeMap<usize, Vec<u8>>,
    /// The processes whose member key exists.
    members: BTreeSet<usize>,
}

/// How a wait treats a process whose member key disappears.
#[derive(Clone, Copy, PartialEq)]
enum Gone {
    /// An error: the job cannot go on without it.
    IsAnError,
    /// As good as arrived (when leaving, a process may finish first).
    CountsAsArrived,
}

impl Job {
    /// Connects to the coordinator and joins the job as
    /// `options.process_id` (it does not wait for the others; see
    /// [`exchange`](Self::exchange)).
    pub fn join(options: JobOptions) -> Result<Job> {
        options.check()?;
        let store = EtcdStore::connect_secured(
            &options.coordinator,
            options.connect_timeout,
            options.heartbeat_timeout,
            options.tls.as_ref(),
            options.user.as_ref(),
        )?;
        let root = format!("oxla/jobs/{}/", options.job);
        let member = format!("{root}members/{}", options.process_id);
        let about = serde_json::json!({ "os_pid": std::process::id() }).to_string();
        if !store.put_if_absent(&member, about.as_bytes())? {
            let _ = store.revoke();
            return Err(DistributedError::DuplicateProcess {
                process_id: options.process_id,
                job: options.job.clone(),
                coordinator: options.coordinator.clone(),
                heartbeat_timeout: store.heartbeat_timeout(),
            });
        }
        tracing::debug!(job = %options.job, process = options.process_id, "joined");
        Ok(Job {
            membership: Arc::new(Membership {
                store,
                options,
                root,
                barriers: Mutex::default(),
                seen: Mutex::default(),
                left: AtomicBool::new(false),
            }),
        })
    }

    /// The options the job was joined with.
    pub fn options(&self) -> &JobOptions {
        &self.membership.options
    }

    /// This process's id.
    pub fn process_id(&self) -> usize {
        self.membership.options.process_id
    }

    /// How many processes the job has.
    pub fn num_processes(&self) -> usize {
        self.membership.options.num_processes
    }

    fn check_not_left(&self) -> Result<()> {
        match self.membership.left.load(Ordering::SeqCst) {
            true => Err(DistributedError::Left {
                job: self.membership.options.job.clone(),
            }),
            false => Ok(()),
        }
    }

    /// Publishes `value` as this process's part of exchange `name` and
    /// waits (up to `timeout`) for every process's: their values in
    /// process order. Each name is used once per job.
    pub fn exchange(&self, name: &str, value: &[u8], timeout: Duration) -> Result<Vec<Vec<u8>>> {
        self.check_not_left()?;
        let prefix = format!("exchange/{name}/");
        self.publish_and_wait(
            &format!("exchange {name:?}"),
            &prefix,
            value,
            timeout,
            Gone::IsAnError,
        )
    }

    /// Waits (up to `timeout`) until every process reaches barrier `name`
    /// (JAX's `sync_global_devices`); a barrier's name can be used again,
    /// every process counting its passes alike.
    pub fn barrier(&self, name: &str, timeout: Duration) -> Result<()> {
        self.check_not_left()?;
        let pass = {
            let mut barriers = self
                .membership
                .barriers
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let count = barriers.entry(name.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let prefix = format!("barrier/{name}/{pass}/");
        self.publish_and_wait(
            &format!("barrier {name:?}"),
            &prefix,
            b"",
            timeout,
            Gone::IsAnError,
        )
        .map(drop)
    }

    /// Leaves the job: a barrier with every process (up to `timeout`), then
    /// waiting until each has seen it pass (a process gone by then has
    /// left), then ending this process's lease, which deletes its keys.
    pub fn shutdown(&self, timeout: Duration) -> Result<()> {
        self.barrier("shutdown", timeout)?;
        self.publish_and_wait(
            "the others to leave",
            "leaving/",
            b"",
            timeout,
            Gone::CountsAsArrived,
        )?;
        self.leave()
    }

    /// Ends this process's membership at once (its keys go; the others see
    /// it gone).
    fn leave(&self) -> Result<()> {
        if self.membership.left.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.membership.store.revoke()
    }

    /// A key-value store for a PJRT plugin's client, under `kv/`: `get`
    /// waits and fails fast when a process of the job is gone.
    pub fn key_value_store(&self) -> Arc<dyn KeyValueStore> {
        Arc::new(JobKeyValueStore { job: self.clone() })
    }

    /// Puts this process's `value` under `prefix` and waits for every
    /// process's value there.
    fn publish_and_wait(
        &self,
        what: &str,
        prefix: &str,
        value: &[u8],
        timeout: Duration,
        gone: Gone,
    ) -> Result<Vec<Vec<u8>>> {
        let m = &self.membership;
        let key = format!("{}{prefix}{}", m.root, m.options.process_id);
        m.store.put(&key, value)?;
        let start = Instant::now();
        let mut backoff = Backoff::new();
        // Arrival is kept once seen: a process that arrived and then left
        // (its keys going with its lease) has arrived.
        let mut values: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
        loop {
            let snapshot = self.poll(prefix)?;
            values.extend(snapshot.values);
            let gone_now = self.gone_processes(&snapshot.members);
            let arrived = |id: &usize| {
                values.contains_key(id) || (gone == Gone::CountsAsArrived && gone_now.contains(id))
            };
            if gone == Gone::IsAnError
                && let Some(&process_id) = gone_now.iter().find(|id| !values.contains_key(id))
            {
                return Err(DistributedError::ProcessGone {
                    process_id,
                    job: m.options.job.clone(),
                    what: what.to_string(),
                    heartbeat_timeout: m.store.heartbeat_timeout(),
                });
            }
            let missing: Vec<usize> = (0..m.options.num_processes)
                .filter(|id| !arrived(id))
                .collect();
            if missing.is_empty() {
                return Ok((0..m.options.num_processes)
                    .map(|id| values.remove(&id).unwrap_or_default())
                    .collect());
            }
            if start.elapsed() >= timeout {
                return Err(DistributedError::Timeout {
                    what: what.to_string(),
                    job: m.options.job.clone(),
                    missing,
                    num_processes: m.options.num_processes,
                    waited: start.elapsed(),
                });
            }
            backoff.sleep(timeout.saturating_sub(start.elapsed()));
        }
    }

    /// The values under `prefix` by process, and the current members: two
    /// range reads of just those keys (not the whole job, whose barrier
    /// keys grow with its length), the members first.
    fn poll(&self, prefix: &str) -> Result<Snapshot> {
        let m = &self.membership;
        let members = self.members()?;
        let full_prefix = format!("{}{prefix}", m.root);
        let values = m
            .store
            .list(&full_prefix)?
            .into_iter()
            .filter_map(|(key, value)| Some((process_of(&key, &full_prefix)?, value)))
            .collect();
        Ok(Snapshot { values, members })
    }

    /// The processes seen as members before that are not any more (and
    /// notes the current members as seen).
    fn gone_processes(&self, members: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut seen = self
            .membership
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        seen.extend(members.iter().copied());
        seen.difference(members).copied().collect()
    }

    /// The processes whose member key exists now.
    fn members(&self) -> Result<BTreeSet<usize>> {
        let m = &self.membership;
        let members_prefix = format!("{}members/", m.root);
        Ok(m.store
            .list(&members_prefix)?
            .into_iter()
            .filter_map(|(key, _)| process_of(&key, &members_prefix))
            .collect())
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        if !self.left.swap(true, Ordering::SeqCst) {
            let _ = self.store.revoke();
        }
    }
}

/// The store a plugin's client uses (under the job's `kv/`).
struct JobKeyValueStore {
    job: Job,
}

impl JobKeyValueStore {
    fn key(&self, key: &str) -> String {
        format!("{}kv/{key}", self.job.membership.root)
    }

    fn unavailable(e: DistributedError) -> KeyValueError {
        KeyValueError::new(ErrorCode::Unavailable, e.to_string())
    }
}

impl KeyValueStore for JobKeyValueStore {
    fn get(&self, key: &str, timeout: Duration) -> std::result::Result<Vec<u8>, KeyValueError> {
        let full = self.key(key);
        let start = Instant::now();
        let mut backoff = Backoff::new();
        loop {
            if let Some(value) = self
                .job
                .membership
                .store
                .get(&full)
                .map_err(Self::unavailable)?
            {
                return Ok(value);
            }
            let members = self.job.members().map_err(Self::unavailable)?;
            if let Some(&process_id) = self.job.gone_processes(&members).iter().next() {
                return Err(Self::unavailable(DistributedError::ProcessGone {
                    process_id,
                    job: self.job.options().job.clone(),
                    what: format!("key {key:?}"),
                    heartbeat_timeout: self.job.membership.store.heartbeat_timeout(),
                }));
            }
            if start.elapsed() >= timeout {
                return Err(KeyValueError::new(
                    ErrorCode::DeadlineExceeded,
                    format!(
                        "key {key:?} of job {:?} was not set within {timeout:?}",
                        self.job.options().job
                    ),
                ));
            }
            backoff.sleep(timeout.saturating_sub(start.elapsed()));
        }
    }

    fn try_get(&self, key: &str) -> std::result::Result<Option<Vec<u8>>, KeyValueError> {
        self.job
            .membership
            .store
            .get(&self.key(key))
            .map_err(Self::unavailable)
    }

    fn put(&self, key: &str, value: &[u8]) -> std::result::Result<(), KeyValueError> {
        self.job
            .membership
            .store
            .put(&self.key(key), value)
            .map_err(Self::unavailable)
    }
}
