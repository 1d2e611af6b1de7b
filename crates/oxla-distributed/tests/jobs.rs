//! Jobs against a real etcd server on loopback: processes (here, jobs
//! joined by threads, each with its own connection and lease, as separate
//! processes have) exchange values, meet at barriers, share the plugins'
//! key-value store and leave; every failure is a bounded, named error.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use oxla_distributed::{DistributedError, Job, JobOptions};
use oxla_pjrt::ErrorCode;
use oxla_testing::etcd::EtcdServer;

fn options(server: &EtcdServer, job: &str, n: usize, id: usize) -> JobOptions {
    JobOptions {
        job: job.into(),
        heartbeat_timeout: Duration::from_secs(2),
        initialization_timeout: Duration::from_secs(20),
        ..JobOptions::new(server.endpoint(), n, id)
    }
}

/// Runs `body` as each of `n` processes of `job`, on threads.
fn run_processes<T: Send + 'static>(
    server: &EtcdServer,
    job: &str,
    n: usize,
    body: impl Fn(Job) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|id| {
            let options = options(server, job, n, id);
            let body = body.clone();
            thread::spawn(move || body(Job::join(options).unwrap()))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn processes_exchange_values_meet_at_barriers_share_keys_and_leave() {
    let server = EtcdServer::start();
    let timeout = Duration::from_secs(20);
    let results = run_processes(&server, "together", 3, move |job| {
        let me = job.process_id();
        let all = job
            .exchange("hello", format!("from {me}").as_bytes(), timeout)
            .unwrap();
        // A barrier's name can be used again.
        job.barrier("step", timeout).unwrap();
        job.barrier("step", timeout).unwrap();
        // The plugins' store: each puts its key, reads the next one's.
        let kv = job.key_value_store();
        kv.put(&format!("id/{me}"), &[me as u8]).unwrap();
        let next = kv
            .get(&format!("id/{}", (me + 1) % 3), Duration::from_secs(20))
            .unwrap();
        job.shutdown(timeout).unwrap();
        (all, next)
    });
    for (me, (all, next)) in results.into_iter().enumerate() {
        let want: Vec<Vec<u8>> = (0..3).map(|i| format!("from {i}").into_bytes()).collect();
        assert_eq!(all, want);
        assert_eq!(next, vec![((me + 1) % 3) as u8]);
    }
    // Every key went with its process: the job's name is free again.
    let again = run_processes(&server, "together", 1, |job| {
        job.barrier("alone", Duration::from_secs(5))
    });
    assert!(again[0].is_ok());
}

#[test]
fn a_second_process_with_the_same_id_is_refused() {
    let server = EtcdServer::start();
    let first = Job::join(options(&server, "dup", 2, 1)).unwrap();
    let err = Job::join(options(&server, "dup", 2, 1)).unwrap_err();
    assert!(
        matches!(
            err,
            DistributedError::DuplicateProcess { process_id: 1, .. }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("process 1 already joined job \"dup\""),
        "{err}"
    );
    drop(first);
    // Its lease revoked, the id is free.
    Job::join(options(&server, "dup", 2, 1)).unwrap();
}

#[test]
fn a_process_that_never_comes_is_a_timeout_naming_it() {
    let server = EtcdServer::start();
    // Processes 0 and 1 both joined before either waits; 2 never comes.
    let joined = Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|id| {
            let options = options(&server, "three", 3, id);
            let joined = joined.clone();
            thread::spawn(move || {
                let job = Job::join(options).unwrap();
                joined.wait();
                let start = Instant::now();
                let err = job.barrier("all", Duration::from_millis(700)).unwrap_err();
                // The job is returned, so neither leaves while the other waits.
                (err, start.elapsed(), job)
            })
        })
        .collect();
    let done: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (err, waited, _job) in done {
        assert!(
            matches!(&err, DistributedError::Timeout { missing, num_processes: 3, .. } if missing == &[2]),
            "{err}"
        );
        assert!(err.to_string().contains("barrier \"all\""), "{err}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    }
}

#[test]
fn a_process_that_leaves_is_reported_to_those_waiting_for_it() {
    let server = EtcdServer::start();
    let timeout = Duration::from_secs(20);
    let leaver = Job::join(options(&server, "gone", 3, 2)).unwrap();
    // The leaver leaves once every process has passed "joined".
    let passed = Arc::new(std::sync::Barrier::new(3));
    let waiters: Vec<_> = (0..2)
        .map(|id| {
            let options = options(&server, "gone", 3, id);
            let passed = passed.clone();
            thread::spawn(move || {
                let job = Job::join(options).unwrap();
                job.barrier("joined", timeout).unwrap();
                passed.wait();
                let start = Instant::now();
                let barrier = job.barrier("later", timeout).unwrap_err();
                let kv = job
                    .key_value_store()
                    .get("never/set", Duration::from_secs(20))
                    .unwrap_err();
                // The job is returned, so no waiter leaves before all are done.
                (barrier, kv, start.elapsed(), job)
            })
        })
        .collect();
    leaver.barrier("joined", timeout).unwrap();
    passed.wait();
    drop(leaver);
    let done: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    for (barrier, kv, waited, _job) in done {
        assert!(
            matches!(barrier, DistributedError::ProcessGone { process_id: 2, .. }),
            "{barrier}"
        );
        assert!(
            barrier
                .to_string()
                .contains("process 2 of job \"gone\" is gone"),
            "{barrier}"
        );
        assert_eq!(kv.code, ErrorCode::Unavailable, "{kv}");
        assert!(kv.message.contains("process 2"), "{kv}");
        assert!(waited < Duration::from_secs(10), "{waited:?}");
    }
}

#[test]
fn plugin_keys_time_out_and_bad_options_or_coordinators_are_errors() {
    let server = EtcdServer::start();
    let job = Job::join(options(&server, "kv", 1, 0)).unwrap();
    let kv = job.key_value_store();
    assert_eq!(kv.try_get("absent").unwrap(), None);
    let start = Instant::now();
    let err = kv.get("absent", Duration::from_millis(200)).unwrap_err();
    assert_eq!(err.code, ErrorCode::DeadlineExceeded, "{err}");
    assert!(start.elapsed() < Duration::from_secs(3));
    job.shutdown(Duration::from_secs(5)).unwrap();
    let err = job.barrier("after", Duration::from_secs(1)).unwrap_err();
    assert!(matches!(err, DistributedError::Left { .. }), "{err}");

    let err = Job::join(options(&server, "kv", 2, 2)).unwrap_err();
    assert!(
        err.to_string()
            .contains("process_id 2 is not below num_processes 2"),
        "{err}"
    );
    let err = Job::join(options(&server, "a/b", 1, 0)).unwrap_err();
    assert!(err.to_string().contains("without '/'"), "{err}");

    // Nobody listens there: a bounded error naming the coordinator.
    let nowhere = format!("http://127.0.0.1:{}", oxla_testing::etcd::free_port());
    let start = Instant::now();
    let err = Job::join(JobOptions {
        connect_timeout: Duration::from_secs(1),
        ..JobOptions::new(&nowhere, 1, 0)
    })
    .unwrap_err();
    assert!(err.to_string().contains(&nowhere), "{err}");
    assert!(start.elapsed() < Duration::from_secs(10));
}
