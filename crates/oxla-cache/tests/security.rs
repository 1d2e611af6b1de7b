//! Who a compile cache trusts. A private cache (the default) refuses a
//! directory or entry owned by another user or writable by its group or
//! by others, as ssh refuses such keys; a shared cache refuses every entry
//! whose HMAC-SHA256 tag is not its key's, whoever wrote it. The tests
//! that need a second user create one with `useradd` when run as root and
//! otherwise say why they are skipped; a child process writes as that
//! user for real.
#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use oxla_cache::{CacheKey, DiskCache, Entry, EntryError, Key, Lookup, Sharing};

/// The second user the tests create.
const OTHER_USER: &str = "oxla-cache-test";
/// Set for the child that writes a shared cache as the second user.
const CHILD_DIR: &str = "OXLA_CACHE_SECURITY_CHILD_DIR";
const CHILD_KEY: &str = "OXLA_CACHE_SECURITY_CHILD_KEY";

fn entry(k: u8) -> Entry {
    Entry {
        key: Key([k; 32]),
        compile_nanos: 5_000_000,
        executable: (0..4096u32).map(|i| (i * 7 % 253) as u8).collect(),
    }
}

fn key(text: &[u8]) -> CacheKey {
    CacheKey::new(text).unwrap()
}

/// The one file in a cache directory.
fn only_entry(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn untrusted(lookup: Lookup) -> String {
    match lookup {
        Lookup::Untrusted(why) => why,
        other => panic!("expected the cache to be refused, got {other:?}"),
    }
}

/// The second user's (uid, gid), created if missing; `None` (with the
/// reason printed) when the tests do not run as root.
fn other_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: creating a second user with useradd needs root");
        return None;
    }
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, OTHER_USER]).output().ok()?;
        String::from_utf8(out.stdout).ok()?.trim().parse().ok()
    };
    if id("-u").is_none() {
        let status = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(OTHER_USER)
            .status()
            .expect("useradd runs");
        // 9: the user exists (another test created it meanwhile).
        assert!(
            status.success() || status.code() == Some(9),
            "useradd {OTHER_USER}: {status}"
        );
    }
    Some((id("-u")?, id("-g")?))
}

#[test]
fn a_private_cache_is_made_for_its_user_alone() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("nested").join("compile");
    let cache = DiskCache::new(&dir, 1 << 30);
    cache.store(&entry(1)).unwrap();
    assert_eq!(mode(&dir), 0o700 & !umask());
    let file = only_entry(&dir);
    assert_eq!(mode(&file), 0o600 & !umask());
    assert!(matches!(cache.load(&Key([1; 32])), Lookup::Hit(_)));
}

/// This process's umask.
fn umask() -> u32 {
    // SAFETY: umask has no preconditions; it is set back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old
    }
}

#[test]
fn a_group_or_world_writable_directory_or_entry_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("compile");
    let cache = DiskCache::new(&dir, 1 << 30);
    cache.store(&entry(2)).unwrap();
    let key = Key([2; 32]);
    set_mode(&dir, 0o770);
    let why = untrusted(cache.load(&key));
    assert!(
        why.contains(&dir.display().to_string()) && why.contains("writable by its group"),
        "{why}"
    );
    // Nothing is written there either, and the entry is left alone.
    let err = cache.store(&entry(3)).unwrap_err().to_string();
    assert!(err.contains("writable by its group"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    set_mode(&dir, 0o700);
    assert!(matches!(cache.load(&key), Lookup::Hit(_)));
    // An entry others may write.
    let file = only_entry(&dir);
    set_mode(&file, 0o646);
    let why = untrusted(cache.load(&key));
    assert!(why.contains("writable by others"), "{why}");
    set_mode(&file, 0o600);
    // A link to a file elsewhere.
    let elsewhere = root.path().join("elsewhere.oxc");
    std::fs::rename(&file, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    let why = untrusted(cache.load(&key));
    assert!(why.contains("symbolic link"), "{why}");
}

#[test]
fn a_cache_directory_another_user_owns_is_refused() {
    let Some((uid, gid)) = other_user() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("compile");
    let cache = DiskCache::new(&dir, 1 << 30);
    cache.store(&entry(4)).unwrap();
    let file = only_entry(&dir);
    // The entry becomes the other user's: even root does not run it.
    std::os::unix::fs::chown(&file, Some(uid), Some(gid)).unwrap();
    let why = untrusted(cache.load(&Key([4; 32])));
    assert!(
        why.contains(&file.display().to_string()) && why.contains(&format!("user {uid}")),
        "{why}"
    );
    // So does the directory.
    std::os::unix::fs::chown(&file, Some(0), Some(0)).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
    let why = untrusted(cache.load(&Key([4; 32])));
    assert!(why.contains(&dir.display().to_string()), "{why}");
    assert!(cache.store(&entry(5)).is_err());
}

#[test]
fn a_tampered_shared_entry_with_a_valid_checksum_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shared");
    let right = key(b"the right key, 32 bytes long....");
    let wrong = key(b"someone else's key, also long...");
    // Someone without the key writes an entry whose checksum is valid:
    // a private cache would read it, the shared one refuses it.
    DiskCache::with_sharing(&dir, 1 << 30, Sharing::Shared(wrong))
        .store(&entry(6))
        .unwrap();
    let path = only_entry(&dir);
    let planted = std::fs::read(&path).unwrap();
    assert!(matches!(
        in_a_private_cache(&planted, &path),
        Lookup::Hit(_)
    ));
    let shared = DiskCache::with_sharing(&dir, 1 << 30, Sharing::Shared(right.clone()));
    assert_eq!(
        match shared.load(&Key([6; 32])) {
            Lookup::Corrupt(e) => e,
            other => panic!("the planted entry was not refused: {other:?}"),
        },
        EntryError::Unauthenticated
    );
    assert!(!path.exists(), "the refused entry is removed");
    // An entry written with the key, then altered with its checksum
    // recomputed, is refused too.
    shared.store(&entry(6)).unwrap();
    assert!(matches!(shared.load(&Key([6; 32])), Lookup::Hit(_)));
    let mut altered = std::fs::read(&path).unwrap();
    assert_ne!(altered, planted);
    // The body lies between the 92-byte header and the 32-byte tag; its
    // SHA-256 checksum sits at bytes 44..76.
    let body = 92..altered.len() - 32;
    altered[body.end - 1] ^= 0x40;
    let checksum: [u8; 32] = sha2_digest(&altered[body.clone()]);
    altered[44..76].copy_from_slice(&checksum);
    assert!(!matches!(
        in_a_private_cache(&altered, &path),
        Lookup::Corrupt(EntryError::Checksum)
    ));
    std::fs::write(&path, &altered).unwrap();
    assert!(matches!(
        shared.load(&Key([6; 32])),
        Lookup::Corrupt(EntryError::Unauthenticated)
    ));
}

/// What a private cache makes of `bytes` stored as the entry file `path`
/// names (it reads no tags).
fn in_a_private_cache(bytes: &[u8], path: &Path) -> Lookup {
    let root = tempfile::tempdir().unwrap();
    let private = DiskCache::new(root.path().join("private"), 1 << 30);
    private.store(&entry(0)).unwrap();
    std::fs::write(
        root.path().join("private").join(path.file_name().unwrap()),
        bytes,
    )
    .unwrap();
    private.load(&Key([6; 32]))
}

/// SHA-256, as the entry's checksum.
fn sha2_digest(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

#[test]
fn a_key_file_others_may_read_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("cache.key");
    std::fs::write(&path, "a key of thirty-two bytes, or so\n").unwrap();
    set_mode(&path, 0o644);
    let err = CacheKey::from_file(&path).unwrap_err().to_string();
    assert!(
        err.contains("mode 644") && err.contains("cache.key"),
        "{err}"
    );
    set_mode(&path, 0o600);
    let from_file = CacheKey::from_file(&path).unwrap();
    // The trailing newline is not part of the key, and the key never prints.
    let tagged =
        DiskCache::with_sharing(root.path().join("c"), 1 << 30, Sharing::Shared(from_file));
    tagged.store(&entry(7)).unwrap();
    let same = key(b"a key of thirty-two bytes, or so");
    assert!(format!("{same:?}").contains("32 bytes") && !format!("{same:?}").contains("thirty"));
    assert!(matches!(
        DiskCache::with_sharing(root.path().join("c"), 1 << 30, Sharing::Shared(same))
            .load(&Key([7; 32])),
        Lookup::Hit(_)
    ));
}

/// The directory and key the child writes with, when this process is it.
fn child_setting() -> Option<(PathBuf, CacheKey)> {
    let dir = std::env::var_os(CHILD_DIR)?;
    let key = std::env::var(CHILD_KEY).ok()?;
    Some((PathBuf::from(dir), CacheKey::new(key.into_bytes()).ok()?))
}

/// Run by `the_shared_mode_works_across_users_and_processes` as the
/// second user: writes entry 8 to the shared cache.
#[test]
#[ignore = "a child of another test"]
fn child_writes_the_shared_cache() {
    let (dir, key) = child_setting().expect("run as a child, with its directory and key");
    DiskCache::with_sharing(dir, 1 << 30, Sharing::Shared(key))
        .store(&entry(8))
        .unwrap();
}

/// Whether every folder above `path` lets others through (so the second
/// user can run the test binary).
fn reachable_by_others(path: &Path) -> bool {
    path.ancestors()
        .skip(1)
        .all(|p| p.as_os_str().is_empty() || mode(p) & 0o001 != 0)
}

#[test]
fn the_shared_mode_works_across_users_and_processes() {
    let Some((uid, gid)) = other_user() else {
        return;
    };
    let exe = std::env::current_exe().unwrap();
    if !reachable_by_others(&exe) {
        eprintln!(
            "skipped: the second user cannot reach the test binary {}",
            exe.display()
        );
        return;
    }
    let root = tempfile::tempdir().unwrap();
    set_mode(root.path(), 0o755);
    // A directory everyone may write, as a cache shared between users is.
    let dir = root.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    set_mode(&dir, 0o1777);
    let secret = "a key both users hold, 40 bytes of it...";
    let status = Command::new(&exe)
        .args(["child_writes_the_shared_cache", "--exact", "--ignored"])
        .env(CHILD_DIR, &dir)
        .env(CHILD_KEY, secret)
        .uid(uid)
        .gid(gid)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the second user's process failed: {status}"
    );
    let file = only_entry(&dir);
    assert_eq!(std::fs::metadata(&file).unwrap().uid(), uid);
    assert_eq!(mode(&file) & 0o044, 0o044, "readable by the other sharers");
    // With the key, this process loads what the other user wrote.
    let shared = DiskCache::with_sharing(&dir, 1 << 30, Sharing::Shared(key(secret.as_bytes())));
    match shared.load(&Key([8; 32])) {
        Lookup::Hit(e) => assert_eq!(e, entry(8)),
        other => panic!("the shared entry was not loaded: {other:?}"),
    }
    // A private cache refuses the same directory.
    let why = untrusted(DiskCache::new(&dir, 1 << 30).load(&Key([8; 32])));
    assert!(why.contains("writable by"), "{why}");
    // Another key refuses the entry.
    let other = DiskCache::with_sharing(
        &dir,
        1 << 30,
        Sharing::Shared(key(b"not the key the writer used......")),
    );
    assert!(matches!(
        other.load(&Key([8; 32])),
        Lookup::Corrupt(EntryError::Unauthenticated)
    ));
}

use std::os::unix::process::CommandExt;
