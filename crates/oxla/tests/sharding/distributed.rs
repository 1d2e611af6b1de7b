//! Many processes on loopback: real child processes (this test binary,
//! running the ignored `child` test) join one job through a real etcd
//! server, agree on the job's device list, compute, meet at barriers and
//! leave; a process killed with SIGKILL is reported by id to those
//! waiting for it, within the heartbeat timeout, instead of a hang.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oxla::distributed::{self, JobOptions};
use oxla::{Array, jit, numpy as jnp};
use oxla_testing::etcd::EtcdServer;

/// The variable that tells a child its part: `coordinator,job,n,id,mode`.
const ROLE: &str = "OXLA_TEST_DISTRIBUTED_ROLE";

/// Starts this binary's `child` test as process `id` of `n`.
fn spawn_process(server: &EtcdServer, job: &str, n: usize, id: usize, mode: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "distributed::child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, format!("{},{job},{n},{id},{mode}", server.endpoint()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The child's stdout lines, read on a thread, as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// What follows `tag` on the first line holding it, waiting up to 120 s.
fn line_tagged(lines: &mpsc::Receiver<String>, tag: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                // libtest may write the test's name first on the line.
                if let Some(at) = line.find(tag) {
                    return line[at + tag.len()..].trim().to_string();
                }
            }
            Err(e) => panic!("no {tag:?} line from the child ({e})"),
        }
    }
}

/// Waits (bounded) for a child to exit successfully.
fn wait_ok(mut child: Child) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "a process failed: {status}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "a process hangs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn processes_agree_on_the_global_devices_compute_and_meet_at_barriers() {
    let server = EtcdServer::start();
    let mut children: Vec<Child> = (0..3)
        .map(|id| spawn_process(&server, "agree", 3, id, "stay"))
        .collect();
    let lines: Vec<_> = children.iter_mut().map(lines_of).collect();
    let results: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(&line_tagged(l, "RESULT")).unwrap())
        .collect();
    for child in children {
        wait_ok(child);
    }
    // Two CPU devices per process, numbered process-major.
    let want: Vec<serde_json::Value> = (0..6)
        .map(|id| serde_json::json!([id, id / 2, id % 2]))
        .collect();
    for (id, result) in results.iter().enumerate() {
        assert_eq!(result["process_index"], id, "{result}");
        assert_eq!(result["process_count"], 3, "{result}");
        assert_eq!(result["devices"].as_array().unwrap(), &want, "{result}");
        // Each computed on its own devices: sum(arange(4)) * (id + 1).
        assert_eq!(result["value"], 6.0 * (id as f64 + 1.0), "{result}");
        assert_eq!(result["local_devices"], 2, "{result}");
    }
}

#[test]
fn a_killed_process_is_reported_by_id_to_the_others() {
    let server = EtcdServer::start();
    let mut survivors: Vec<Child> = (0..2)
        .map(|id| spawn_process(&server, "killed", 3, id, "stay"))
        .collect();
    let mut victim = spawn_process(&server, "killed", 3, 2, "linger");
    let victim_lines = lines_of(&mut victim);
    let survivor_lines: Vec<_> = survivors.iter_mut().map(lines_of).collect();
    line_tagged(&victim_lines, "JOINED");
    // No goodbye: SIGKILL, its lease runs out after the heartbeat timeout.
    victim.kill().unwrap();
    victim.wait().unwrap();
    let killed_at = Instant::now();
    for lines in &survivor_lines {
        let error = line_tagged(lines, "ERROR");
        assert!(
            error.contains("process 2 of job \"killed\" is gone")
                && error.contains("barrier \"work\""),
            "{error}"
        );
    }
    // Heartbeat timeout 2 s (the lease's TTL is rounded by etcd).
    assert!(
        killed_at.elapsed() < Duration::from_secs(30),
        "{:?}",
        killed_at.elapsed()
    );
    for child in survivors {
        wait_ok(child);
    }
}

#[test]
fn initialize_after_the_first_array_or_without_a_coordinator_is_an_error() {
    // No coordinator listens there: a bounded error naming it.
    let err = distributed::initialize_with(JobOptions {
        connect_timeout: Duration::from_millis(500),
        ..JobOptions::new("127.0.0.1:1", 2, 0)
    })
    .unwrap_err();
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
    // This test binary's client (8 devices, as every test here asks)
    // exists: joining now would leave it outside the job.
    crate::eight_devices();
    let _ = Array::scalar(1.0f32).unwrap();
    let server = EtcdServer::start();
    let err = distributed::initialize_with(JobOptions {
        job: "late".into(),
        ..JobOptions::new(server.endpoint(), 1, 0)
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("must come before the process's first array or compilation"),
        "{err}"
    );
    assert!(!distributed::is_initialized());
    assert_eq!(distributed::process_count(), 1);
    let err = distributed::global_devices().unwrap_err();
    assert!(
        err.to_string()
            .contains("call distributed::initialize first"),
        "{err}"
    );
}

/// One process of the tests above (run as a child, with its role).
#[test]
#[ignore = "run by the multi-process tests above"]
fn child() {
    let role = std::env::var(ROLE).unwrap();
    let [coordinator, job, n, id, mode]: [&str; 5] =
        role.split(',').collect::<Vec<_>>().try_into().unwrap();
    let id: usize = id.parse().unwrap();
    let say = |line: String| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    oxla::set_cpu_device_count(2).unwrap();
    distributed::initialize_with(JobOptions {
        job: job.into(),
        heartbeat_timeout: Duration::from_secs(2),
        initialization_timeout: Duration::from_secs(60),
        ..JobOptions::new(coordinator, n.parse().unwrap(), id)
    })
    .unwrap();
    say("JOINED".into());
    if mode == "linger" {
        // Waits to be killed.
        std::thread::sleep(Duration::from_secs(120));
        return;
    }
    let scale = (id + 1) as f64;
    let value = jit(move |x: Array| jnp::sum(&(x * scale), None, false))
        .call(jnp::arange(0.0, 4.0, 1.0, oxla::DType::F32))
        .unwrap()
        .to_vec::<f32>()
        .unwrap()[0];
    if let Err(e) = distributed::barrier("work", Duration::from_secs(60)) {
        say(format!("ERROR {e}"));
        return;
    }
    let devices: Vec<serde_json::Value> = distributed::global_devices()
        .unwrap()
        .iter()
        .map(|d| serde_json::json!([d.id, d.process_index, d.local_id]))
        .collect();
    let result = serde_json::json!({
        "process_index": distributed::process_index(),
        "process_count": distributed::process_count(),
        "devices": devices,
        "value": value,
        "local_devices": oxla::client().unwrap().addressable_devices().unwrap().len(),
    });
    say(format!("RESULT {result}"));
    distributed::shutdown(Duration::from_secs(60)).unwrap();
}
