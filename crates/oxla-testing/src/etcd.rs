//! A real etcd server on loopback for the multi-process tests: Debian's
//! `etcd` (package `etcd-server`, which ci/setup installs), one member,
//! its data in a temporary directory of its own, killed when dropped.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A running etcd; [`endpoint`](Self::endpoint) is its client URL.
pub struct EtcdServer {
    child: Child,
    endpoint: String,
    /// Unique per server (a name made from the process id and a free
    /// port could repeat between two servers of one test binary, and the
    /// first one dropped would delete the other's data).
    _data_dir: tempfile::TempDir,
}

/// A loopback port nobody listens on now, never the same twice in one
/// process: tests running side by side each start servers, and the
/// system may hand a just-closed port out again before a server binds it.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("no free loopback port");
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if given.insert(port) {
            return port;
        }
    }
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

/// The PEM files of a server that speaks TLS to its clients.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The server's certificate.
    pub certificate: std::path::PathBuf,
    /// Its private key.
    pub key: std::path::PathBuf,
    /// The CA whose certificates clients must present
    /// (`--client-cert-auth`), if clients must present one.
    pub client_ca: Option<std::path::PathBuf>,
}

impl EtcdServer {
    /// Starts etcd on two free loopback ports and waits (up to 30 s) until
    /// it is healthy, on other ports again (three tries) if it exits at
    /// start because another process took one. Panics, saying how to
    /// install it, when `etcd` is not on the PATH.
    pub fn start() -> EtcdServer {
        EtcdServer::start_with(None)
    }

    /// [`start`](Self::start) serving clients over TLS with `tls`'s
    /// certificate (an `https://` endpoint), checking their certificates
    /// when it names a client CA.
    pub fn start_tls(tls: &ServerTls) -> EtcdServer {
        EtcdServer::start_with(Some(tls))
    }

    fn start_with(tls: Option<&ServerTls>) -> EtcdServer {
        let mut tries = 0;
        loop {
            tries += 1;
            match EtcdServer::try_start(tls) {
                Ok(server) => return server,
                Err(status) if tries < 3 => {
                    eprintln!("etcd exited at start ({status}); trying other ports");
                }
                Err(status) => panic!("etcd exited at start ({status}), {tries} times"),
            }
        }
    }

    /// One try of [`EtcdServer::start`]: the server, or how its process
    /// ended at start.
    fn try_start(tls: Option<&ServerTls>) -> Result<EtcdServer, std::process::ExitStatus> {
        let data_dir = tempfile::Builder::new()
            .prefix("oxla-etcd-")
            .tempdir()
            .expect("a temporary directory for etcd's data");
        let client_port = free_port();
        let peer_port = free_port();
        // The health check is plain HTTP on a port of its own.
        let health_port = free_port();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let client = format!("{scheme}://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let mut command = Command::new("etcd");
        if let Some(tls) = tls {
            command
                .arg("--cert-file")
                .arg(&tls.certificate)
                .arg("--key-file")
                .arg(&tls.key);
            if let Some(ca) = &tls.client_ca {
                command
                    .arg("--client-cert-auth")
                    .arg("--trusted-ca-file")
                    .arg(ca);
            }
        }
        let child = command
            .args(["--name", "oxla-test"])
            .args([
                "--listen-metrics-urls",
                &format!("http://127.0.0.1:{health_port}"),
            ])
            .arg("--data-dir")
            .arg(data_dir.path())
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
            _data_dir: data_dir,
        };
        let start = Instant::now();
        while !healthy(health_port) {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(status);
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "etcd did not become healthy within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // The answer must be this server's: one that lost its port to
        // another process exits at start.
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(status);
        }
        Ok(server)
    }

    /// The client URL (`http://127.0.0.1:<port>`, `https://` with TLS).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The data directory goes with `_data_dir`, after etcd has stopped.
    }
}
