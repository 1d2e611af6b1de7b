//! Jobs against a secured etcd, as production clusters run it: TLS with
//! client certificates (`--client-cert-auth`, certificates made at test
//! time with rcgen) and etcd's users (a root user, and a job user whose
//! role may read and write only its job's keys). A process with the right
//! certificate and user joins and meets the others; one without a
//! certificate, with another CA or with a wrong password is refused with
//! an error naming what it presented and why it was refused; the job user
//! cannot touch another job's keys.

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, Permission, TlsOptions};
use oxla_distributed::{CoordinatorTls, CoordinatorUser, Job, JobOptions};
use oxla_testing::etcd::{EtcdServer, ServerTls};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};

const ROOT_PASSWORD: &str = "root's password, never printed";
const JOB_USER: &str = "trainer";
const JOB_PASSWORD: &str = "the trainer's password";
/// The job the job user's role covers (`oxla/jobs/<job>/`).
const JOB: &str = "secured";

/// A CA, a server certificate for 127.0.0.1 and a client certificate it
/// signed, and a second CA with its own client certificate, as PEM files.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn new() -> Pki {
        let pki = Pki {
            dir: tempfile::tempdir().unwrap(),
        };
        let write = |name: &str, text: String| std::fs::write(pki.path(name), text).unwrap();
        for (prefix, name) in [("", "oxla test CA"), ("other-", "someone else's CA")] {
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
            write(&format!("{prefix}ca.pem"), ca.pem());
            let mut leaves = vec![("client", Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)];
            if prefix.is_empty() {
                leaves.push((
                    "server",
                    vec!["127.0.0.1".to_string(), "localhost".to_string()],
                    ExtendedKeyUsagePurpose::ServerAuth,
                ));
            }
            for (leaf, names, usage) in leaves {
                let key = KeyPair::generate().unwrap();
                let mut params = CertificateParams::new(names).unwrap();
                params
                    .distinguished_name
                    .push(DnType::CommonName, format!("oxla test {leaf}"));
                params.extended_key_usages = vec![usage];
                let certificate = params.signed_by(&key, &ca).unwrap();
                write(&format!("{prefix}{leaf}.pem"), certificate.pem());
                write(&format!("{prefix}{leaf}-key.pem"), key.serialize_pem());
            }
        }
        pki
    }

    /// TLS trusting `ca` (`ca.pem` or `other-ca.pem`), presenting the
    /// client certificate with `prefix` when given.
    fn tls(&self, ca: &str, client: Option<&str>) -> CoordinatorTls {
        let tls = CoordinatorTls::new(self.path(ca));
        match client {
            Some(prefix) => tls.with_client_certificate(
                self.path(&format!("{prefix}client.pem")),
                self.path(&format!("{prefix}client-key.pem")),
            ),
            None => tls,
        }
    }

    /// etcd's own client over this PKI's TLS, as `user` when given.
    fn etcd_client(
        &self,
        server: &EtcdServer,
        user: Option<(&str, &str)>,
    ) -> (tokio::runtime::Runtime, Client) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let read = |name: &str| std::fs::read(self.path(name)).unwrap();
        let tls = TlsOptions::new()
            .ca_certificate(Certificate::from_pem(read("ca.pem")))
            .identity(Identity::from_pem(
                read("client.pem"),
                read("client-key.pem"),
            ));
        let mut options = ConnectOptions::new().with_tls(tls);
        if let Some((name, password)) = user {
            options = options.with_user(name, password);
        }
        let client = runtime
            .block_on(Client::connect([server.endpoint()], Some(options)))
            .unwrap();
        (runtime, client)
    }
}

/// A TLS etcd checking client certificates, with auth enabled: `root`, and
/// the job user whose role reads and writes `oxla/jobs/secured/` only.
fn secured_server(pki: &Pki) -> EtcdServer {
    let server = EtcdServer::start_tls(&ServerTls {
        certificate: pki.path("server.pem"),
        key: pki.path("server-key.pem"),
        client_ca: Some(pki.path("ca.pem")),
    });
    let (runtime, mut client) = pki.etcd_client(&server, None);
    runtime.block_on(async {
        client.user_add("root", ROOT_PASSWORD, None).await.unwrap();
        client.user_grant_role("root", "root").await.unwrap();
        client.role_add("job").await.unwrap();
        let prefix = format!("oxla/jobs/{JOB}/");
        client
            .role_grant_permission("job", Permission::read_write(prefix).with_prefix())
            .await
            .unwrap();
        client.user_add(JOB_USER, JOB_PASSWORD, None).await.unwrap();
        client.user_grant_role(JOB_USER, "job").await.unwrap();
        client.auth_enable().await.unwrap();
    });
    server
}

fn password_file(pki: &Pki, password: &str) -> PathBuf {
    let path = pki.path("password");
    std::fs::write(&path, format!("{password}\n")).unwrap();
    path
}

fn options(
    server: &EtcdServer,
    job: &str,
    n: usize,
    id: usize,
    tls: CoordinatorTls,
    user: CoordinatorUser,
) -> JobOptions {
    JobOptions {
        job: job.into(),
        heartbeat_timeout: Duration::from_secs(2),
        initialization_timeout: Duration::from_secs(20),
        connect_timeout: Duration::from_secs(5),
        tls: Some(tls),
        user: Some(user),
        ..JobOptions::new(server.endpoint(), n, id)
    }
}

#[test]
fn a_process_with_the_right_certificate_and_user_joins_and_meets_the_barrier() {
    let pki = Pki::new();
    let server = secured_server(&pki);
    let user =
        CoordinatorUser::with_password_file(JOB_USER, &password_file(&pki, JOB_PASSWORD)).unwrap();
    assert!(!format!("{user:?}").contains(JOB_PASSWORD), "{user:?}");
    let handles: Vec<_> = (0..2)
        .map(|id| {
            // One process checks the server's certificate for its name
            // rather than the endpoint's address.
            let tls = match id {
                0 => pki.tls("ca.pem", Some("")),
                _ => pki.tls("ca.pem", Some("")).with_server_name("localhost"),
            };
            let options = options(&server, JOB, 2, id, tls, user.clone());
            thread::spawn(move || {
                let job = Job::join(options).unwrap();
                let timeout = Duration::from_secs(20);
                let all = job.exchange("hello", &[id as u8], timeout).unwrap();
                job.barrier("step", timeout).unwrap();
                job.shutdown(timeout).unwrap();
                all
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.join().unwrap(), vec![vec![0u8], vec![1u8]]);
    }
}

fn refusal(options: JobOptions) -> String {
    let err = Job::join(options).expect_err("the coordinator should refuse");
    let text = err.to_string();
    assert!(!text.contains(JOB_PASSWORD), "{text}");
    text
}

#[test]
fn a_missing_certificate_another_ca_or_a_wrong_password_is_refused_by_name() {
    let pki = Pki::new();
    let server = secured_server(&pki);
    let user =
        CoordinatorUser::with_password_file(JOB_USER, &password_file(&pki, JOB_PASSWORD)).unwrap();
    // No client certificate: etcd ends the handshake (with a TLS alert,
    // or by closing the stream first, as the timing goes).
    let text = refusal(options(
        &server,
        JOB,
        1,
        0,
        pki.tls("ca.pem", None),
        user.clone(),
    ));
    eprintln!("no certificate: {text}");
    assert!(
        text.contains("no client certificate")
            && text.contains("ca.pem")
            && text.contains("transport error"),
        "{text}"
    );
    // Another CA: oxla does not trust the server's certificate.
    let text = refusal(options(
        &server,
        JOB,
        1,
        0,
        pki.tls("other-ca.pem", Some("")),
        user.clone(),
    ));
    eprintln!("other CA: {text}");
    assert!(
        text.contains("other-ca.pem") && text.contains("UnknownIssuer"),
        "{text}"
    );
    // A certificate another CA signed: etcd does not trust the client.
    let text = refusal(options(
        &server,
        JOB,
        1,
        0,
        pki.tls("ca.pem", Some("other-")),
        user.clone(),
    ));
    eprintln!("other client certificate: {text}");
    assert!(
        text.contains("other-client.pem") && text.contains("transport error"),
        "{text}"
    );
    // The server's certificate checked for a name it does not carry.
    let text = refusal(options(
        &server,
        JOB,
        1,
        0,
        pki.tls("ca.pem", Some(""))
            .with_server_name("elsewhere.example"),
        user.clone(),
    ));
    eprintln!("other server name: {text}");
    assert!(
        text.contains("server name elsewhere.example") && text.contains("NotValidForName"),
        "{text}"
    );
    // A wrong password: etcd's authentication fails, the password unsaid.
    let wrong = CoordinatorUser::with_password_file(
        JOB_USER,
        &password_file(&pki, "not the trainer's password"),
    )
    .unwrap();
    let text = refusal(options(
        &server,
        JOB,
        1,
        0,
        pki.tls("ca.pem", Some("")),
        wrong,
    ));
    eprintln!("wrong password: {text}");
    assert!(
        text.contains(&format!("as etcd user {JOB_USER}"))
            && text.contains("authentication failed"),
        "{text}"
    );
    assert!(!text.contains("not the trainer's password"), "{text}");
}

#[test]
fn a_job_user_cannot_read_or_write_outside_its_jobs_keys() {
    let pki = Pki::new();
    let server = secured_server(&pki);
    unsafe_env_password();
    let user = CoordinatorUser::with_password_from_env(JOB_USER, PASSWORD_VARIABLE).unwrap();
    // Joining another job writes under that job's prefix: refused.
    let text = refusal(options(
        &server,
        "someone-elses",
        1,
        0,
        pki.tls("ca.pem", Some("")),
        user,
    ));
    eprintln!("another job: {text}");
    assert!(text.contains("permission denied"), "{text}");
    // etcd's own client, as the job user: its job's keys only.
    let (runtime, mut client) = pki.etcd_client(&server, Some((JOB_USER, JOB_PASSWORD)));
    runtime.block_on(async {
        client
            .put(format!("oxla/jobs/{JOB}/note"), "mine", None)
            .await
            .unwrap();
        let write = client.put("oxla/jobs/other/note", "theirs", None).await;
        assert!(
            write
                .as_ref()
                .is_err_and(|e| e.to_string().contains("permission denied")),
            "{write:?}"
        );
        let read = client.get("oxla/jobs/other/note", None).await;
        assert!(
            read.as_ref()
                .is_err_and(|e| e.to_string().contains("permission denied")),
            "{read:?}"
        );
    });
}

const PASSWORD_VARIABLE: &str = "OXLA_TEST_ETCD_PASSWORD";

/// Sets the job user's password variable (the same value for every test
/// that reads it, so setting it again is harmless).
fn unsafe_env_password() {
    // SAFETY: only this test binary's tests read the variable, and they
    // all set the same value.
    unsafe { std::env::set_var(PASSWORD_VARIABLE, JOB_PASSWORD) };
}
