//! A real etcd server on loopback for the multi-process tests: Debian's
//! `etcd` (package `etcd-server`, which ci/setup installs), one member,
//! its data in a temporary directory, killed when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd; [`endpoint`](Self::endpoint) is its client URL.
pub struct EtcdServer {
    child: Child,
    endpoint: String,
    data_dir: PathBuf,
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// Whether etcd at `port` answers its health check with `true`.
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}

impl EtcdServer {
    /// Starts etcd on two free loopback ports and waits (up to 30 s) until
    /// it is healthy. Panics, saying how to install it, when `etcd` is not
    /// on the PATH.
    pub fn start() -> EtcdServer {
        let data_dir =
            std::env::temp_dir().join(format!("oxla-etcd-{}-{}", std::process::id(), free_port()));
        let client_port = free_port();
        let peer_port = free_port();
        let client = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let child = Command::new("etcd")
            .args(["--name", "oxla-test"])
            .arg("--data-dir")
            .arg(&data_dir)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("oxla-test={peer}")])
            .args(["--logger", "zap", "--log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start `etcd` ({e}): the multi-process tests need an etcd server; \
                     install Debian's etcd-server (`bash ci/setup` does)"
                )
            });
        let mut server = EtcdServer {
            child,
            endpoint: client,
            data_dir,
        };
        let start = Instant::now();
        while !healthy(client_port) {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("etcd exited at start ({status})");
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "etcd did not become healthy within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The client URL (`http://127.0.0.1:<port>`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}
