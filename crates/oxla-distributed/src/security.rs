//! How a process proves itself to a secured etcd and checks it is talking
//! to the right one: TLS with the cluster's CA (and a client certificate
//! where etcd runs with `--client-cert-auth`), and etcd's own users.

use std::fmt;
use std::path::{Path, PathBuf};

use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};

use crate::error::{DistributedError, Result};

/// TLS to the coordinator: the endpoint is then reached over `https`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorTls {
    /// PEM file of the CA that signed etcd's server certificate; the
    /// server must present a certificate it signed.
    pub ca_certificate: PathBuf,
    /// PEM files of this process's certificate and its private key, for
    /// an etcd that checks its clients' certificates
    /// (`--client-cert-auth`).
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// The name the server's certificate must carry, when it is not the
    /// endpoint's host (an address, or a name behind a proxy).
    pub server_name: Option<String>,
}

impl CoordinatorTls {
    /// TLS checking the server against the CA in `ca_certificate`.
    pub fn new(ca_certificate: impl Into<PathBuf>) -> CoordinatorTls {
        CoordinatorTls {
            ca_certificate: ca_certificate.into(),
            client_identity: None,
            server_name: None,
        }
    }

    /// Also presents the client certificate `certificate` with its `key`.
    pub fn with_client_certificate(
        mut self,
        certificate: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> CoordinatorTls {
        self.client_identity = Some((certificate.into(), key.into()));
        self
    }

    /// Checks the server's certificate for `name` instead of the
    /// endpoint's host.
    pub fn with_server_name(mut self, name: impl Into<String>) -> CoordinatorTls {
        self.server_name = Some(name.into());
        self
    }

    /// What the connection presents and checks, for error messages.
    pub(crate) fn describe(&self) -> String {
        let client = match &self.client_identity {
            Some((certificate, _)) => format!("client certificate {}", certificate.display()),
            None => "no client certificate".to_string(),
        };
        format!(
            "TLS (CA {}, {client}{})",
            self.ca_certificate.display(),
            self.server_name
                .as_ref()
                .map_or(String::new(), |n| format!(", server name {n}"))
        )
    }

    /// etcd-client's TLS options, the PEM files read.
    fn options(&self) -> Result<TlsOptions> {
        let mut tls = TlsOptions::new().ca_certificate(Certificate::from_pem(read_pem(
            &self.ca_certificate,
            "the CA certificate",
        )?));
        if let Some((certificate, key)) = &self.client_identity {
            tls = tls.identity(Identity::from_pem(
                read_pem(certificate, "the client certificate")?,
                read_pem(key, "the client key")?,
            ));
        }
        if let Some(name) = &self.server_name {
            tls = tls.domain_name(name.clone());
        }
        Ok(tls)
    }
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        DistributedError::InvalidOptions(format!("cannot read {what} {}: {e}", path.display()))
    })
}

/// An etcd user (etcd's `auth enable`) and its password, read from a file
/// or an environment variable and never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct CoordinatorUser {
    /// The etcd user name.
    pub name: String,
    password: String,
}

impl fmt::Debug for CoordinatorUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoordinatorUser")
            .field("name", &self.name)
            .field("password", &"<hidden>")
            .finish()
    }
}

impl CoordinatorUser {
    /// The user `name` with the password in the file `path` (its first
    /// line, without the line ending).
    pub fn with_password_file(name: &str, path: &Path) -> Result<CoordinatorUser> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            DistributedError::InvalidOptions(format!(
                "cannot read etcd user {name}'s password file {}: {e}",
                path.display()
            ))
        })?;
        let password = text.lines().next().unwrap_or("").to_string();
        Ok(CoordinatorUser {
            name: name.to_string(),
            password,
        })
    }

    /// The user `name` with the password in the environment variable
    /// `variable`.
    pub fn with_password_from_env(name: &str, variable: &str) -> Result<CoordinatorUser> {
        let password = std::env::var(variable).map_err(|_| {
            DistributedError::InvalidOptions(format!(
                "etcd user {name}'s password: the environment variable {variable} is not set"
            ))
        })?;
        Ok(CoordinatorUser {
            name: name.to_string(),
            password,
        })
    }
}

/// The connect options for `tls` and `user` on top of `options`, and
/// how the connection authenticates, for error messages.
pub(crate) fn secure(
    options: ConnectOptions,
    tls: Option<&CoordinatorTls>,
    user: Option<&CoordinatorUser>,
) -> Result<(ConnectOptions, String)> {
    let mut described = Vec::new();
    let mut options = options;
    if let Some(tls) = tls {
        options = options.with_tls(tls.options()?);
        described.push(tls.describe());
    }
    if let Some(user) = user {
        options = options.with_user(user.name.clone(), user.password.clone());
        described.push(format!("as etcd user {}", user.name));
    }
    let described = if described.is_empty() {
        "without TLS or credentials".to_string()
    } else {
        described.join(" ")
    };
    Ok((options, described))
}

/// `error` with its sources, outermost first: the transport's own words
/// (an unknown issuer, a refused certificate) are in the sources.
pub(crate) fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let words = inner.to_string();
        if !text.contains(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        source = inner.source();
    }
    text
}
