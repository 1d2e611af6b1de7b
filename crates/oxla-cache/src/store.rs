//! The cache directory: one file per key, written to a temporary file and
//! renamed (readers never see half an entry, a killed writer leaves only a
//! temporary file), least-recently-used eviction past a size limit. A
//! private cache trusts only its user's files (`trust`); a shared one only
//! entries tagged under its key (`sharing`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use crate::entry::{self, Entry, EntryError};
use crate::key::Key;
use crate::sharing::{KeyError, Sharing};

const ENTRY_SUFFIX: &str = "oxc";
const TEMP_SUFFIX: &str = "tmp";

/// Errors of the cache directory itself.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A private cache's directory that another user could have written.
    #[error("not writing the compile cache: {0}")]
    Untrusted(String),
    /// A shared cache without a usable key.
    #[error("the shared compile cache is off: {0}")]
    NoKey(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    /// A valid entry.
    Hit(Entry),
    /// No entry.
    Miss,
    /// An entry that cannot be used (removed; the caller compiles again).
    Corrupt(EntryError),
    /// A private cache's entry, or its directory, that another user could
    /// have written (left alone; the caller compiles again): why.
    Untrusted(String),
}

/// One line of `list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The key.
    pub key: Key,
    /// Bytes on disk.
    pub bytes: u64,
    /// Compile time the entry saves, in nanoseconds (if the header is readable).
    pub compile_nanos: Option<u64>,
    /// Last use.
    pub modified: SystemTime,
}

/// A persistent compile cache in a directory.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    max_bytes: u64,
    sharing: Sharing,
    /// Why the cache cannot be used at all (a shared cache without a key).
    unusable: Option<String>,
    warned: AtomicBool,
}

/// The default size limit: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

impl DiskCache {
    /// This user's private cache in `dir` (created on first write)
    /// holding at most `max_bytes`.
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> Self {
        Self::with_sharing(dir, max_bytes, Sharing::Private)
    }

    /// A cache in `dir` holding at most `max_bytes`, shared as `sharing` says.
    pub fn with_sharing(dir: impl Into<PathBuf>, max_bytes: u64, sharing: Sharing) -> Self {
        Self {
            dir: dir.into(),
            max_bytes,
            sharing,
            unusable: None,
            warned: AtomicBool::new(false),
        }
    }

    /// A cache in `dir` shared as the environment says ([`Sharing::from_env`]);
    /// when it asks for sharing without a usable key, a cache that reads
    /// and writes nothing and says why ([`DiskCache::unusable`]).
    pub fn with_env_sharing(dir: impl Into<PathBuf>, max_bytes: u64) -> Self {
        match Sharing::from_env() {
            Ok(sharing) => Self::with_sharing(dir, max_bytes, sharing),
            Err(e) => Self::without_key(dir, max_bytes, &e),
        }
    }

    fn without_key(dir: impl Into<PathBuf>, max_bytes: u64, problem: &KeyError) -> Self {
        Self {
            unusable: Some(problem.to_string()),
            ..Self::with_sharing(dir, max_bytes, Sharing::Private)
        }
    }

    /// The cache the environment asks for: `OXLA_CACHE_DIR` (`off` for
    /// none), else `<oxla home>/compile`; `OXLA_CACHE_MAX_BYTES` sets the
    /// limit; `OXLA_CACHE_SHARED` and its key the sharing
    /// ([`DiskCache::with_env_sharing`]).
    pub fn from_env() -> Option<Self> {
        let dir = match std::env::var_os("OXLA_CACHE_DIR") {
            Some(v)
                if v.to_str().is_some_and(|s| {
                    oxla_pjrt::settings::parse_flag(s.trim()) == Some(false)
                        || s.trim().eq_ignore_ascii_case("none")
                }) =>
            {
                return None;
            }
            Some(v) => PathBuf::from(v),
            None => oxla_pjrt::oxla_home().join("compile"),
        };
        Some(Self::with_env_sharing(dir, Self::max_bytes_from_env()))
    }

    /// The size limit the environment asks for: `OXLA_CACHE_MAX_BYTES`,
    /// else [`DEFAULT_MAX_BYTES`].
    pub fn max_bytes_from_env() -> u64 {
        oxla_pjrt::settings::setting("OXLA_CACHE_MAX_BYTES", "a whole number of bytes", |v| {
            v.parse().ok()
        })
        .or_default(DEFAULT_MAX_BYTES)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size limit.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// How the cache is shared.
    pub fn sharing(&self) -> &Sharing {
        &self.sharing
    }

    /// Why the cache reads and writes nothing, if so (a shared cache
    /// without a usable key).
    pub fn unusable(&self) -> Option<&str> {
        self.unusable.as_deref()
    }

    /// Why this user's private cache cannot trust `path`, if it cannot: the
    /// directory's and the file's owner, mode and type. A shared cache
    /// trusts tags instead.
    fn distrust(&self, path: Option<&Path>) -> Option<String> {
        if matches!(self.sharing, Sharing::Shared(_)) {
            return None;
        }
        std::iter::once(self.dir.as_path())
            .chain(path)
            .find_map(|p| {
                fs::symlink_metadata(p)
                    .ok()
                    .and_then(|meta| crate::trust::distrust(p, &meta))
            })
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.{ENTRY_SUFFIX}", key.hex()))
    }

    /// Whether this is the first problem of the cache directory to report
    /// (later ones stay quiet, as the cache keeps working from memory).
    pub fn first_warning(&self) -> bool {
        !self.warned.swap(true, Ordering::SeqCst)
    }

    /// Reads the entry of `key`. A damaged entry (or, in a shared cache,
    /// one without the key's tag) is removed and reported as
    /// [`Lookup::Corrupt`]; in a private cache, an entry or directory
    /// another user could have written is [`Lookup::Untrusted`] and left
    /// alone; a hit marks the entry as recently used.
    pub fn load(&self, key: &Key) -> Lookup {
        if self.unusable.is_some() {
            return Lookup::Miss;
        }
        let path = self.path(key);
        if fs::symlink_metadata(&path).is_err() {
            return Lookup::Miss;
        }
        if let Some(why) = self.distrust(Some(&path)) {
            return Lookup::Untrusted(why);
        }
        let Ok(bytes) = fs::read(&path) else {
            return Lookup::Miss;
        };
        match entry::decode(&bytes, Some(*key), self.sharing.key()) {
            Ok(entry) => {
                if let Ok(file) = fs::File::options().append(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                Lookup::Hit(entry)
            }
            Err(e) => {
                self.remove(key);
                Lookup::Corrupt(e)
            }
        }
    }

    /// Removes the entry of `key`, if any.
    pub fn remove(&self, key: &Key) {
        let _ = fs::remove_file(self.path(key));
    }

    /// Writes an entry (temporary file + rename), then evicts the least
    /// recently used entries past the size limit. A private cache's
    /// directory is created with mode 700 and refused if another user
    /// could write it; its entries get mode 600 (a shared cache's 770 and 644).
    pub fn store(&self, entry: &Entry) -> Result<(), StoreError> {
        if let Some(problem) = &self.unusable {
            return Err(StoreError::NoKey(problem.clone()));
        }
        let (dir_mode, file_mode) = match self.sharing {
            Sharing::Private => (0o700, 0o600),
            Sharing::Shared(_) => (0o770, 0o644),
        };
        create_dir(&self.dir, dir_mode).map_err(io(&self.dir))?;
        if let Some(why) = self.distrust(None) {
            return Err(StoreError::Untrusted(why));
        }
        let bytes = entry::encode(entry, self.sharing.key());
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let temp = self.dir.join(format!(
            ".{}.{}.{nanos}.{TEMP_SUFFIX}",
            entry.key.hex(),
            std::process::id()
        ));
        let write = || -> std::io::Result<()> {
            let mut file = create_file(&temp, file_mode)?;
            file.write_all(&bytes)?;
            file.sync_all()
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&temp);
            return Err(io(&temp)(e));
        }
        fault_pause_before_rename();
        let target = self.path(&entry.key);
        fs::rename(&temp, &target).map_err(|e| {
            let _ = fs::remove_file(&temp);
            io(&target)(e)
        })?;
        self.evict()
    }

    /// Removes least-recently-used entries until the cache fits its limit.
    pub fn evict(&self) -> Result<(), StoreError> {
        let mut entries = self.list()?;
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        entries.sort_by_key(|e| e.modified);
        for e in entries {
            if total <= self.max_bytes {
                break;
            }
            self.remove(&e.key);
            total -= e.bytes;
        }
        Ok(())
    }

    /// Every entry, oldest use first.
    pub fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let read = match fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for item in read.flatten() {
            let path = item.path();
            let Some(key) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(&format!(".{ENTRY_SUFFIX}")))
                .and_then(Key::from_hex)
            else {
                continue;
            };
            let Ok(meta) = item.metadata() else { continue };
            let head = fs::File::open(&path).ok().and_then(|mut f| {
                let mut head = vec![0u8; entry::HEADER_LEN];
                std::io::Read::read_exact(&mut f, &mut head)
                    .ok()
                    .map(|_| head)
            });
            out.push(Listed {
                key,
                bytes: meta.len(),
                compile_nanos: head.and_then(|h| entry::header_compile_nanos(&h)),
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
        out.sort_by_key(|e| e.modified);
        Ok(out)
    }

    /// Temporary files left by writers that did not finish (killed ones).
    pub fn leftovers(&self) -> Vec<PathBuf> {
        fs::read_dir(&self.dir)
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == TEMP_SUFFIX))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Removes every entry and leftover temporary file; returns how many.
    pub fn clear(&self) -> Result<usize, StoreError> {
        let entries = self.list()?;
        for e in &entries {
            self.remove(&e.key);
        }
        let leftovers = self.leftovers();
        for p in &leftovers {
            let _ = fs::remove_file(p);
        }
        Ok(entries.len() + leftovers.len())
    }

    /// Checks every entry; returns the bad ones with what is wrong.
    pub fn verify(&self) -> Result<Vec<(Key, EntryError)>, StoreError> {
        let mut bad = Vec::new();
        for e in self.list()? {
            let path = self.path(&e.key);
            let bytes = fs::read(&path).map_err(io(&path))?;
            if let Err(problem) = entry::decode(&bytes, Some(e.key), self.sharing.key()) {
                bad.push((e.key, problem));
            }
        }
        Ok(bad)
    }
}

/// Creates `dir` and its missing parents with `mode` (before the umask).
fn create_dir(dir: &Path, mode: u32) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, mode);
    #[cfg(not(unix))]
    let _ = mode;
    builder.create(dir)
}

/// Creates the new file `path` with `mode` (before the umask).
fn create_file(path: &Path, mode: u32) -> std::io::Result<fs::File> {
    let mut options = fs::File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    options.open(path)
}

/// `OXLA_CACHE_FAULT=pause-before-rename:MS` holds a writer between writing
/// its temporary file and renaming it, so a test can kill it there.
fn fault_pause_before_rename() {
    if let Some(ms) = std::env::var("OXLA_CACHE_FAULT").ok().and_then(|v| {
        v.strip_prefix("pause-before-rename:")
            .and_then(|m| m.parse::<u64>().ok())
    }) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry with incompressible (pseudo-random) contents.
    fn entry(k: u8, size: usize) -> Entry {
        let mut state = 0x2545_F491_4F6C_DD1Du64 ^ u64::from(k);
        Entry {
            key: Key([k; 32]),
            compile_nanos: 1_000_000,
            executable: (0..size)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect(),
        }
    }

    #[test]
    fn store_load_list_clear() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(dir.path().join("c"), DEFAULT_MAX_BYTES);
        assert!(matches!(cache.load(&Key([1; 32])), Lookup::Miss));
        cache.store(&entry(1, 1000)).unwrap();
        match cache.load(&Key([1; 32])) {
            Lookup::Hit(e) => assert_eq!(e, entry(1, 1000)),
            other => panic!("{other:?}"),
        }
        assert_eq!(cache.list().unwrap().len(), 1);
        assert!(cache.verify().unwrap().is_empty());
        assert!(cache.leftovers().is_empty());
        assert_eq!(cache.clear().unwrap(), 1);
        assert!(cache.list().unwrap().is_empty());
    }

    #[test]
    fn damaged_entries_are_removed_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(dir.path(), DEFAULT_MAX_BYTES);
        cache.store(&entry(2, 500)).unwrap();
        let path = cache.path(&Key([2; 32]));
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(cache.verify().unwrap().len(), 1);
        assert!(matches!(
            cache.load(&Key([2; 32])),
            Lookup::Corrupt(EntryError::Malformed)
        ));
        assert!(!path.exists(), "the damaged entry is removed");
        assert!(matches!(cache.load(&Key([2; 32])), Lookup::Miss));
    }

    #[test]
    fn least_recently_used_entries_go_first() {
        let dir = tempfile::tempdir().unwrap();
        // Random bodies do not compress: each entry is ~5 kB.
        let cache = DiskCache::new(dir.path(), 12_000);
        for k in 1..=2 {
            cache.store(&entry(k, 5000)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Use entry 1, so entry 2 is the least recently used.
        assert!(matches!(cache.load(&Key([1; 32])), Lookup::Hit(_)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.store(&entry(3, 5000)).unwrap();
        let keys: Vec<u8> = cache.list().unwrap().iter().map(|e| e.key.0[0]).collect();
        assert!(!keys.contains(&2), "{keys:?}");
        assert!(keys.contains(&1) && keys.contains(&3), "{keys:?}");
    }
}
