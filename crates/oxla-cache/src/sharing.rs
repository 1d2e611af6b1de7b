//! Who a cache is shared with, and the key that authenticates a shared
//! cache's entries (HMAC-SHA256, every sharer holding the key).

use std::fmt;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The fewest bytes a shared cache's key may have.
pub const MIN_KEY_BYTES: usize = 16;

/// Who may write the cache directory, and so what is trusted in it.
#[derive(Clone, Debug, Default)]
pub enum Sharing {
    /// This user only (the default). The directory is created with mode
    /// 700 and entries with 600; a directory or entry owned by another
    /// user, writable by its group or by others, or a symbolic link, is
    /// refused (as ssh refuses such keys).
    #[default]
    Private,
    /// Users or hosts that hold the same key: every entry carries an
    /// HMAC-SHA256 tag under it, and an entry without a valid tag is
    /// refused whoever wrote it. Entries are created readable by all
    /// (mode 644), a missing directory with mode 770: whoever shares the
    /// directory sets who may write it.
    Shared(CacheKey),
}

impl Sharing {
    /// The sharing the environment asks for: `OXLA_CACHE_SHARED=1` is
    /// [`Sharing::Shared`] with the key of [`CacheKey::from_env`] (an
    /// error when there is none), anything else [`Sharing::Private`].
    pub fn from_env() -> Result<Sharing, KeyError> {
        let shared = std::env::var("OXLA_CACHE_SHARED")
            .ok()
            .and_then(|v| oxla_pjrt::settings::parse_flag(v.trim()))
            .unwrap_or(false);
        if !shared {
            return Ok(Sharing::Private);
        }
        CacheKey::from_env()?
            .map(Sharing::Shared)
            .ok_or(KeyError::Missing)
    }

    /// The key entries are tagged with, for a shared cache.
    pub fn key(&self) -> Option<&CacheKey> {
        match self {
            Sharing::Private => None,
            Sharing::Shared(key) => Some(key),
        }
    }
}

/// The secret of a shared cache. Its bytes are never printed.
#[derive(Clone)]
pub struct CacheKey(Vec<u8>);

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({} bytes)", self.0.len())
    }
}

/// Why a shared cache has no usable key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// `OXLA_CACHE_SHARED` asks for sharing without a key.
    #[error(
        "OXLA_CACHE_SHARED is set but neither OXLA_CACHE_KEY nor OXLA_CACHE_KEY_FILE gives the \
         key that authenticates a shared cache's entries"
    )]
    Missing,
    /// The key is too short to resist guessing.
    #[error("a shared cache's key needs at least {MIN_KEY_BYTES} bytes, this one has {0}")]
    TooShort(usize),
    /// The key file cannot be read.
    #[error("cannot read the cache key file {path}: {source}")]
    File {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Someone besides its owner may read or write the key file.
    #[error(
        "the cache key file {path} has mode {mode:o}: others than its owner may read or write it \
         (make it 600)"
    )]
    Permissions {
        /// The key file.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// The key file belongs to another user.
    #[error("the cache key file {path} belongs to user {owner}, not to this process's user {user}")]
    Owner {
        /// The key file.
        path: PathBuf,
        /// Its owner's id.
        owner: u32,
        /// This process's effective user id.
        user: u32,
    },
}

impl CacheKey {
    /// A key of `bytes` (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<CacheKey, KeyError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(KeyError::TooShort(bytes.len()));
        }
        Ok(CacheKey(bytes))
    }

    /// The key in the file `path` (trailing newlines dropped), which must
    /// belong to this process's user and be neither readable nor writable
    /// by anyone else (mode 600 or 400).
    pub fn from_file(path: &Path) -> Result<CacheKey, KeyError> {
        let file_error = |source| KeyError::File {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(file_error)?;
        crate::trust::check_key_file(path, &meta)?;
        let mut bytes = std::fs::read(path).map_err(file_error)?;
        while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            bytes.pop();
        }
        CacheKey::new(bytes)
    }

    /// The key the environment gives: `OXLA_CACHE_KEY` (its bytes), else
    /// the file `OXLA_CACHE_KEY_FILE` names; `None` when neither is set.
    pub fn from_env() -> Result<Option<CacheKey>, KeyError> {
        if let Some(key) = std::env::var_os("OXLA_CACHE_KEY").filter(|k| !k.is_empty()) {
            return CacheKey::new(key.into_encoded_bytes()).map(Some);
        }
        match std::env::var_os("OXLA_CACHE_KEY_FILE").filter(|k| !k.is_empty()) {
            Some(path) => CacheKey::from_file(Path::new(&path)).map(Some),
            None => Ok(None),
        }
    }

    fn mac(&self, data: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(data);
        mac
    }

    /// The tag of `data`.
    pub(crate) fn tag(&self, data: &[u8]) -> [u8; 32] {
        self.mac(data).finalize().into_bytes().into()
    }

    /// Whether `tag` is `data`'s (compared in constant time).
    pub(crate) fn verifies(&self, data: &[u8], tag: &[u8]) -> bool {
        self.mac(data).verify_slice(tag).is_ok()
    }
}
