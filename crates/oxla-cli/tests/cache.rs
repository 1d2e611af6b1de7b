//! The persistent compile cache across processes, through the `oxla`
//! binary: warm starts, and every fault leaving oxla working and the cache
//! valid.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "cli-cache") };
}

use oxla_testing::BoundedOutput;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/linear_regression.mlir")
}

fn oxla(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oxla"));
    c.args(args)
        .env("OXLA_CACHE_DIR", cache)
        .env("OXLA_LOG_COMPILES", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output_bounded()
}

/// oxla's own stderr lines (the plugins' absl logs left out).
fn oxla_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("oxla:") || l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

fn run(cache: &Path) -> Output {
    let o = oxla(cache, &["run", example().to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn compiled(o: &Output) -> bool {
    oxla_lines(o)
        .iter()
        .any(|l| l.starts_with("oxla: compiled "))
}

fn hit(o: &Output) -> bool {
    oxla_lines(o)
        .iter()
        .any(|l| l.starts_with("oxla: disk cache hit for ") && l.contains("saved"))
}

/// The one entry file of a cache directory.
fn entry(cache: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "oxc"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

fn verify(cache: &Path) -> String {
    let o = oxla(cache, &["cache", "verify"], &[]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_second_process_loads_from_disk_with_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let first = run(dir.path());
    assert!(compiled(&first) && !hit(&first), "{:?}", oxla_lines(&first));
    let second = run(dir.path());
    assert!(
        hit(&second) && !compiled(&second),
        "{:?}",
        oxla_lines(&second)
    );
    assert_eq!(first.stdout, second.stdout);
    let stats =
        String::from_utf8_lossy(&oxla(dir.path(), &["cache", "stats"], &[]).stdout).into_owned();
    assert!(stats.contains("entries:   1"), "{stats}");
    let list =
        String::from_utf8_lossy(&oxla(dir.path(), &["cache", "list"], &[]).stdout).into_owned();
    assert_eq!(list.lines().count(), 1, "{list}");
    let cleared =
        String::from_utf8_lossy(&oxla(dir.path(), &["cache", "clear"], &[]).stdout).into_owned();
    assert!(cleared.starts_with("removed 1 files"), "{cleared}");
    assert!(compiled(&run(dir.path())));
}

/// Damages the entry with `damage`, then checks: one warning naming
/// `reason`, a recompilation, a rewritten good entry, then hits again.
fn damaged_entry_is_reported_once_and_rewritten(damage: impl Fn(&mut Vec<u8>), reason: &str) {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path());
    let path = entry(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    damage(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let o = run(dir.path());
    let warnings: Vec<String> = oxla_lines(&o)
        .into_iter()
        .filter(|l| l.contains("ignored damaged cache entry"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:?}", oxla_lines(&o));
    assert!(warnings[0].contains(reason), "{warnings:?}");
    assert!(compiled(&o));
    assert!(verify(dir.path()).contains("1 entries ok"));
    assert!(hit(&run(dir.path())));
}

#[test]
fn a_corrupt_entry_is_reported_ignored_and_rewritten() {
    damaged_entry_is_reported_once_and_rewritten(
        |b| {
            // The body's last byte, before the 32-byte tag (which a
            // private cache does not read).
            let last = b.len() - 33;
            b[last] ^= 0xff;
        },
        "checksum does not match",
    );
}

#[test]
fn a_truncated_entry_is_reported_ignored_and_rewritten() {
    damaged_entry_is_reported_once_and_rewritten(|b| b.truncate(b.len() / 3), "truncated");
}

#[test]
fn an_entry_of_a_foreign_format_version_is_reported_ignored_and_rewritten() {
    damaged_entry_is_reported_once_and_rewritten(
        |b| b[8..12].copy_from_slice(&99u32.to_le_bytes()),
        "format 99",
    );
}

#[test]
fn a_writer_killed_mid_write_leaves_the_cache_valid() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(["run", example().to_str().unwrap()])
        .env("OXLA_CACHE_DIR", dir.path())
        .env("OXLA_CACHE_FAULT", "pause-before-rename:20000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let temp_written = || {
        std::fs::read_dir(dir.path())
            .map(|r| {
                r.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "tmp"))
            })
            .unwrap_or(false)
    };
    while !temp_written() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the writer never got to its temporary file"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let report = verify(dir.path());
    assert!(
        report.contains("0 entries ok") && report.contains("leftover of an interrupted write"),
        "{report}"
    );
    let o = run(dir.path());
    assert!(compiled(&o) && !hit(&o), "{:?}", oxla_lines(&o));
    assert!(verify(dir.path()).contains("1 entries ok"));
    assert!(hit(&run(dir.path())));
}

#[test]
fn two_processes_compiling_one_key_both_succeed_and_leave_one_good_entry() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_oxla"))
            .args(["run", example().to_str().unwrap()])
            .env("OXLA_CACHE_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    entry(dir.path());
    assert!(verify(dir.path()).contains("1 entries ok"));
}

#[test]
fn an_unwritable_cache_directory_leaves_oxla_working_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not_a_directory");
    std::fs::write(&file, b"").unwrap();
    let cache = file.join("compile");
    let o = run(&cache);
    let warnings: Vec<String> = oxla_lines(&o)
        .into_iter()
        .filter(|l| l.contains("cannot write the compile cache"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:?}", oxla_lines(&o));
    assert!(
        warnings[0].contains("continuing with the memory cache only"),
        "{warnings:?}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("out[3]"));
}

#[test]
fn an_entry_written_by_another_plugin_build_is_never_loaded() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path());
    // The default CPU plugin is lammps-jax-pjrt-cpu; the other pinned one:
    let other =
        oxla_pjrt::plugin_dir().join("xla-cpu-pjrt-0.0.1/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
    let o = oxla(
        dir.path(),
        &[
            "run",
            example().to_str().unwrap(),
            "--plugin",
            other.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(compiled(&o) && !hit(&o), "{:?}", oxla_lines(&o));
    let stats =
        String::from_utf8_lossy(&oxla(dir.path(), &["cache", "stats"], &[]).stdout).into_owned();
    assert!(stats.contains("entries:   2"), "{stats}");
}

#[test]
fn the_cache_can_be_turned_off() {
    let o = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(["run", example().to_str().unwrap()])
        .env("OXLA_CACHE_DIR", "off")
        .env("OXLA_LOG_COMPILES", "1")
        .output_bounded();
    assert!(o.status.success());
    assert!(compiled(&o) && !hit(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_oxla"))
        .args(["cache", "stats"])
        .env("OXLA_CACHE_DIR", "off")
        .output_bounded();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the compile cache is off"));
}

/// A cache directory others may write is refused with one warning naming
/// it: the program is compiled, nothing is read or written there.
#[test]
#[cfg(unix)]
fn a_cache_directory_others_may_write_is_refused_with_one_warning() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    run(dir.path());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    for _ in 0..2 {
        let o = run(dir.path());
        let refused: Vec<String> = oxla_lines(&o)
            .into_iter()
            .filter(|l| l.contains("not using the compile cache"))
            .collect();
        assert_eq!(refused.len(), 1, "{:?}", oxla_lines(&o));
        assert!(
            refused[0].contains(&dir.path().display().to_string())
                && refused[0].contains("writable by its group and others"),
            "{refused:?}"
        );
        assert!(compiled(&o) && !hit(&o));
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(hit(&run(dir.path())));
}

/// `OXLA_CACHE_SHARED=1` with `OXLA_CACHE_KEY`: processes holding the key
/// share entries; one with another key refuses them (and rewrites its
/// own); sharing without a key is one warning and no disk cache.
#[test]
fn a_shared_cache_takes_the_entries_of_its_key_only() {
    let dir = tempfile::tempdir().unwrap();
    let key = [
        ("OXLA_CACHE_SHARED", "1"),
        ("OXLA_CACHE_KEY", "a key every sharer of this cache holds"),
    ];
    let shared_run = |env: &[(&str, &str)]| {
        let o = oxla(dir.path(), &["run", example().to_str().unwrap()], env);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    assert!(compiled(&shared_run(&key)));
    assert!(hit(&shared_run(&key)));
    // A process with another key refuses the entry, compiles, and writes
    // its own.
    let other = [
        ("OXLA_CACHE_SHARED", "1"),
        ("OXLA_CACHE_KEY", "another key, held by someone else"),
    ];
    let o = shared_run(&other);
    assert!(
        oxla_lines(&o)
            .iter()
            .any(|l| l.contains("ignored damaged cache entry") && l.contains("authentication tag")),
        "{:?}",
        oxla_lines(&o)
    );
    assert!(compiled(&o));
    assert!(hit(&shared_run(&other)));
    // No key: one warning, and the disk cache is not used.
    let o = shared_run(&[("OXLA_CACHE_SHARED", "1")]);
    let lines = oxla_lines(&o);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("OXLA_CACHE_SHARED is set but neither OXLA_CACHE_KEY")),
        "{lines:?}"
    );
    assert!(compiled(&o) && !hit(&o));
}
