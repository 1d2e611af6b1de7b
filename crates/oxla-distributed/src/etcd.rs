//! The etcd v3 service as the job's coordinator (`etcd-client` over
//! gRPC): each process holds one lease, kept alive by a background task,
//! and every key it writes is attached to that lease, so a process that
//! dies (or shuts down) takes its keys with it once the lease expires (or
//! is revoked). oxla keeps the blocking world: each call runs on the
//! store's own tokio runtime.

use std::future::Future;
use std::time::Duration;

use etcd_client::{Client, Compare, CompareOp, ConnectOptions, GetOptions, PutOptions, Txn, TxnOp};
use tokio::runtime::Runtime;

use crate::error::{DistributedError, Result};
use crate::security::{CoordinatorTls, CoordinatorUser};

/// A connection to an etcd cluster holding this process's lease.
pub struct EtcdStore {
    coordinator: String,
    runtime: Runtime,
    client: Client,
    lease: i64,
    heartbeat_timeout: Duration,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("coordinator", &self.coordinator)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl EtcdStore {
    /// Connects to the etcd endpoint `coordinator` (`host:port`, or an
    /// `http://` URL) within `connect_timeout` and takes a lease that
    /// expires `heartbeat_timeout` after this process's last heartbeat (at
    /// least a second; heartbeats go three times per timeout).
    pub fn connect(
        coordinator: &str,
        connect_timeout: Duration,
        heartbeat_timeout: Duration,
    ) -> Result<EtcdStore> {
        EtcdStore::connect_secured(coordinator, connect_timeout, heartbeat_timeout, None, None)
    }

    /// [`connect`](Self::connect) over TLS (`tls`: the endpoint is then
    /// `https`) and as an etcd `user`, each when given. A refusal names
    /// what the connection presented (CA, client certificate, user) and
    /// the server's or the transport's reason.
    pub fn connect_secured(
        coordinator: &str,
        connect_timeout: Duration,
        heartbeat_timeout: Duration,
        tls: Option<&CoordinatorTls>,
        user: Option<&CoordinatorUser>,
    ) -> Result<EtcdStore> {
        let failed = |operation: &str, e: &dyn std::fmt::Display| DistributedError::Coordinator {
            coordinator: coordinator.to_string(),
            operation: operation.to_string(),
            message: e.to_string(),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("oxla-etcd")
            .enable_all()
            .build()
            .map_err(|e| failed("starting the client's runtime", &e))?;
        let ttl_seconds = heartbeat_timeout.as_secs().max(1) as i64;
        let (options, how) = crate::security::secure(
            ConnectOptions::new()
                .with_connect_timeout(connect_timeout)
                .with_timeout(connect_timeout.max(Duration::from_secs(1))),
            tls,
            user,
        )?;
        let connecting = format!("connecting {how}");
        let (client, lease) = runtime.block_on(async {
            let mut client = tokio::time::timeout(
                connect_timeout,
                Client::connect([coordinator], Some(options)),
            )
            .await
            .map_err(|_| {
                failed(
                    &connecting,
                    &format!("no answer within {connect_timeout:?}"),
                )
            })?
            .map_err(|e| failed(&connecting, &crate::security::with_sources(&e)))?;
            let lease = client
                .lease_grant(ttl_seconds, None)
                .await
                .map_err(|e| {
                    failed(
                        &format!("granting the process's lease ({how})"),
                        &crate::security::with_sources(&e),
                    )
                })?
                .id();
            Ok::<_, DistributedError>((client, lease))
        })?;
        let store = EtcdStore {
            coordinator: coordinator.to_string(),
            runtime,
            client,
            lease,
            heartbeat_timeout: Duration::from_secs(ttl_seconds as u64),
        };
        store.keep_lease_alive()?;
        Ok(store)
    }

    /// The coordinator's address.
    pub fn coordinator(&self) -> &str {
        &self.coordinator
    }

    /// How long after this process's last heartbeat its keys expire.
    pub fn heartbeat_timeout(&self) -> Duration {
        self.heartbeat_timeout
    }

    /// Starts the task that renews the lease three times per timeout. It
    /// stops when the lease is revoked or the connection is lost (then the
    /// lease expires and the other processes see this one gone).
    fn keep_lease_alive(&self) -> Result<()> {
        let mut client = self.client.clone();
        let lease = self.lease;
        let (mut keeper, mut responses) = self.block_on("starting heartbeats", async move {
            client.lease_keep_alive(lease).await
        })?;
        let period = self.heartbeat_timeout / 3;
        self.runtime.spawn(async move {
            loop {
                if keeper.keep_alive().await.is_err() {
                    break;
                }
                match responses.message().await {
                    // A TTL of 0 means the lease is gone (revoked or expired).
                    Ok(Some(answer)) if answer.ttl() > 0 => {}
                    _ => break,
                }
                tokio::time::sleep(period).await;
            }
            tracing::debug!(lease, "etcd lease heartbeats stopped");
        });
        Ok(())
    }

    /// Runs one request on the runtime; its error names `operation`.
    fn block_on<T>(
        &self,
        operation: &str,
        request: impl Future<Output = std::result::Result<T, etcd_client::Error>>,
    ) -> Result<T> {
        self.runtime
            .block_on(request)
            .map_err(|e| DistributedError::Coordinator {
                coordinator: self.coordinator.clone(),
                operation: operation.to_string(),
                message: e.to_string(),
            })
    }

    /// Sets `key` (attached to this process's lease).
    pub fn put(&self, key: &str, value: &[u8]) -> Result<()> {
        let mut client = self.client.clone();
        let options = PutOptions::new().with_lease(self.lease);
        let value = value.to_vec();
        self.block_on(&format!("put {key:?}"), async move {
            client.put(key, value, Some(options)).await
        })
        .map(drop)
    }

    /// Sets `key` (attached to this process's lease) unless it exists:
    /// whether it was set.
    pub fn put_if_absent(&self, key: &str, value: &[u8]) -> Result<bool> {
        let mut client = self.client.clone();
        let options = PutOptions::new().with_lease(self.lease);
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, value.to_vec(), Some(options))]);
        self.block_on(
            &format!("create {key:?}"),
            async move { client.txn(txn).await },
        )
        .map(|answer| answer.succeeded())
    }

    /// The value of `key`, if it has one.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut client = self.client.clone();
        let answer = self.block_on(&format!("get {key:?}"), async move {
            client.get(key, None).await
        })?;
        Ok(answer.kvs().first().map(|kv| kv.value().to_vec()))
    }

    /// Every key under `prefix` with its value, in key order.
    pub fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let mut client = self.client.clone();
        let answer = self.block_on(&format!("list {prefix:?}"), async move {
            client
                .get(prefix, Some(GetOptions::new().with_prefix()))
                .await
        })?;
        Ok(answer
            .kvs()
            .iter()
            .map(|kv| {
                (
                    String::from_utf8_lossy(kv.key()).into_owned(),
                    kv.value().to_vec(),
                )
            })
            .collect())
    }

    /// Ends this process's lease: its keys are deleted at once and its
    /// heartbeats stop.
    pub fn revoke(&self) -> Result<()> {
        let mut client = self.client.clone();
        let lease = self.lease;
        self.block_on("revoking the process's lease", async move {
            client.lease_revoke(lease).await
        })
        .map(drop)
    }
}
