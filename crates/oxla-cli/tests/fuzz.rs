//! `oxla run` on inputs a user could hand it by mistake: a StableHLO module
//! JAX lowered (tests/jax_module.py), mutated as text (types, dimensions,
//! lines, bytes) and as MLIR bytecode, and valid modules fed `.npy` files
//! whose headers are mutated. Every run must end with status 0, or status 1
//! and an `error:` line: never a signal (an abort), a panic or a hang.
//! CI runs a few inputs of each; `OXLA_FUZZ_SECONDS=600` runs each fuzzer
//! for ten minutes (then the counts print on stderr); `OXLA_FUZZ_VERBOSE=1`
//! prints how each run ended.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "cli-fuzz") };
}

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use oxla_testing::{FuzzBudget, fuzz, output_within};
use proptest::prelude::*;

/// Position `raw` in a sequence of `len` (> 0) items.
fn position(raw: u32, len: usize) -> usize {
    raw as usize % len
}

/// Inputs each fuzzer gets in a normal test run.
const CI_CASES: usize = 24;

/// JAX's module (text and bytecode) and its inputs, written once.
fn fixture() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jax_module.py");
        oxla_testing::run_python(&script, &[dir.path()]);
        dir
    })
    .path()
}

/// Where a failing input is kept for reproduction.
fn keep(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `oxla run` on `module` with `inputs` and checks how it ended: 0, or
/// 1 with an `error:` line; no signal, no panic, done within 60 s. Returns
/// whether it ran (status 0).
fn run_checked(what: &str, module: &[u8], module_name: &str, inputs: &[(&str, &[u8])]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let module_path = dir.path().join(module_name);
    std::fs::write(&module_path, module).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_oxla"));
    command.arg("run").arg(&module_path);
    for (name, bytes) in inputs {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        command.arg("-i").arg(path);
    }
    let out = output_within(&mut command, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let clean = match out.status.code() {
        Some(0) => true,
        Some(1) => stderr.lines().any(|l| l.starts_with("error: ")),
        _ => false,
    };
    if !clean || stderr.contains("panicked at") {
        let kept = keep(module_name, module);
        for (name, bytes) in inputs {
            keep(name, bytes);
        }
        panic!(
            "{what}: `oxla run` ended with {:?} (input kept at {}):\n{stderr}",
            out.status,
            kept.display()
        );
    }
    if std::env::var_os("OXLA_FUZZ_VERBOSE").is_some() {
        let error = stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or("ran");
        eprintln!("{}", error.chars().take(160).collect::<String>());
    }
    out.status.success()
}

/// Counts of how the runs of one fuzzer ended.
#[derive(Default)]
struct Tally {
    ran: usize,
    refused: usize,
}

impl Tally {
    fn add(&mut self, ran: bool) {
        if ran {
            self.ran += 1;
        } else {
            self.refused += 1;
        }
    }

    /// Prints the counts; with `both`, asserts that some inputs ran and
    /// some were refused (the mutations reach past the parser).
    fn finish(&self, what: &str, both: bool) {
        eprintln!(
            "{what}: {} ran, {} refused with an error",
            self.ran, self.refused
        );
        assert!(self.refused > 0, "{what}: no input was refused");
        if both {
            assert!(self.ran > 0, "{what}: no input ran");
        }
    }
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture().join(name)).unwrap()
}

/// A token of StableHLO text a mutation may put in another's place.
const TOKENS: &[&str] = &[
    "f32",
    "f16",
    "bf16",
    "f64",
    "i1",
    "i8",
    "i32",
    "i64",
    "ui8",
    "0",
    "1",
    "2",
    "3",
    "-1",
    "4294967296",
    "x",
    "?",
    "tensor<",
    ">",
    "(",
    ")",
    "{",
    "}",
    ",",
    ":",
    "%arg0",
    "%0",
    "%1",
    "stablehlo.add",
    "stablehlo.dot_general",
    "stablehlo.reduce",
    "stablehlo.convert",
    "dense<1.0>",
    "dense<>",
    "\"",
    "\n",
    "",
    "func.func",
    "return",
];

/// One edit of a module's text.
#[derive(Debug, Clone)]
enum TextEdit {
    /// A token of the module replaced by one of [`TOKENS`].
    Token(u32, usize),
    /// A line deleted.
    DeleteLine(u32),
    /// A line repeated.
    RepeatLine(u32),
    /// Two lines swapped.
    SwapLines(u32, u32),
    /// A byte replaced.
    Byte(u32, u8),
    /// Up to 16 bytes removed.
    Cut(u32, u8),
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    prop_oneof![
        3 => (any::<u32>(), 0..TOKENS.len()).prop_map(|(i, t)| TextEdit::Token(i, t)),
        1 => any::<u32>().prop_map(TextEdit::DeleteLine),
        1 => any::<u32>().prop_map(TextEdit::RepeatLine),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| TextEdit::SwapLines(a, b)),
        1 => (any::<u32>(), any::<u8>()).prop_map(|(i, b)| TextEdit::Byte(i, b)),
        1 => (any::<u32>(), 1u8..16).prop_map(|(i, n)| TextEdit::Cut(i, n)),
    ]
}

/// `text` with `edit` applied.
fn apply_text_edit(text: &[u8], edit: &TextEdit) -> Vec<u8> {
    let s = String::from_utf8_lossy(text).into_owned();
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    match edit {
        TextEdit::Token(at, token) => {
            // Token boundaries: runs of alphanumerics and '_' / '.'.
            let bytes = s.as_bytes();
            let starts: Vec<usize> = (0..bytes.len())
                .filter(|&i| {
                    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
                    word(bytes[i]) && (i == 0 || !word(bytes[i - 1]))
                })
                .collect();
            if starts.is_empty() {
                return text.to_vec();
            }
            let start = starts[position(*at, starts.len())];
            let end = (start..bytes.len())
                .find(|&i| {
                    !(bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                })
                .unwrap_or(bytes.len());
            let mut out = bytes[..start].to_vec();
            out.extend_from_slice(TOKENS[*token].as_bytes());
            out.extend_from_slice(&bytes[end..]);
            return out;
        }
        TextEdit::DeleteLine(at) if !lines.is_empty() => {
            lines.remove(position(*at, lines.len()));
        }
        TextEdit::RepeatLine(at) if !lines.is_empty() => {
            let i = position(*at, lines.len());
            lines.insert(i, lines[i].clone());
        }
        TextEdit::SwapLines(a, b) if !lines.is_empty() => {
            let (a, b) = (position(*a, lines.len()), position(*b, lines.len()));
            lines.swap(a, b);
        }
        TextEdit::Byte(at, value) if !text.is_empty() => {
            let mut out = text.to_vec();
            out[position(*at, text.len())] = *value;
            return out;
        }
        TextEdit::Cut(at, n) if !text.is_empty() => {
            let i = position(*at, text.len());
            let end = (i + *n as usize).min(text.len());
            let mut out = text[..i].to_vec();
            out.extend_from_slice(&text[end..]);
            return out;
        }
        _ => return text.to_vec(),
    }
    lines.join("\n").into_bytes()
}

/// One edit of binary data.
fn byte_edit() -> impl Strategy<Value = (u32, u8, u8)> {
    (any::<u32>(), any::<u8>(), 0u8..3)
}

/// `bytes` with `(at, value, kind)` applied: 0 overwrites, 1 inserts, 2
/// removes a byte.
fn apply_byte_edit(bytes: &mut Vec<u8>, (at, value, kind): &(u32, u8, u8)) {
    if bytes.is_empty() {
        return;
    }
    let i = position(*at, bytes.len());
    match kind {
        0 => bytes[i] = *value,
        1 => bytes.insert(i, *value),
        _ => {
            bytes.remove(i);
        }
    }
}

#[test]
fn mutated_mlir_text_never_aborts() {
    let module = read("module.mlir");
    let (x, y) = (read("x.npy"), read("y.npy"));
    let mut tally = Tally::default();
    let count = fuzz(
        "mutated MLIR text",
        proptest::collection::vec(text_edit(), 1..4),
        FuzzBudget::from_env(CI_CASES),
        |edits| {
            let mutated = edits
                .iter()
                .fold(module.clone(), |m, e| apply_text_edit(&m, e));
            tally.add(run_checked(
                &format!("{edits:?}"),
                &mutated,
                "module.mlir",
                &[("x.npy", &x), ("y.npy", &y)],
            ));
        },
    );
    assert!(count >= 1);
    tally.finish("mutated MLIR text", true);
}

#[test]
fn mutated_mlir_bytecode_never_aborts() {
    let module = read("module.mlirbc");
    let (x, y) = (read("x.npy"), read("y.npy"));
    let mut tally = Tally::default();
    let count = fuzz(
        "mutated MLIR bytecode",
        proptest::collection::vec(byte_edit(), 1..6),
        FuzzBudget::from_env(CI_CASES),
        |edits| {
            let mut mutated = module.clone();
            for e in &edits {
                apply_byte_edit(&mut mutated, e);
            }
            tally.add(run_checked(
                &format!("{edits:?}"),
                &mutated,
                "module.mlirbc",
                &[("x.npy", &x), ("y.npy", &y)],
            ));
        },
    );
    assert!(count >= 1);
    tally.finish("mutated MLIR bytecode", false);
}

/// What a mutation may write into a `.npy` header's dictionary.
const HEADER_TOKENS: &[&str] = &[
    "'<f4'",
    "'<f8'",
    "'>f4'",
    "'|b1'",
    "'<i4'",
    "'<c8'",
    "'<U3'",
    "'O'",
    "'V2'",
    "True",
    "False",
    "(3, 2)",
    "(2, 3)",
    "()",
    "(0,)",
    "(-1, 3)",
    "(99999999999, 99999999999)",
    "(2,)",
    "{",
    "}",
    "'descr'",
    "'shape'",
    "'fortran_order'",
    ":",
    ",",
    "",
];

/// One edit of a `.npy` file's header (magic, version, length or dict).
#[derive(Debug, Clone)]
enum HeaderEdit {
    /// A byte of the first 10 (magic, version, header length) replaced.
    Preamble(u32, u8),
    /// A `'...'`, `(...)` or word of the dictionary replaced by a token.
    Token(u32, usize),
    /// A byte of the dictionary replaced.
    Byte(u32, u8),
}

fn header_edit() -> impl Strategy<Value = HeaderEdit> {
    prop_oneof![
        1 => (any::<u32>(), any::<u8>()).prop_map(|(i, b)| HeaderEdit::Preamble(i, b)),
        3 => (any::<u32>(), 0..HEADER_TOKENS.len()).prop_map(|(i, t)| HeaderEdit::Token(i, t)),
        1 => (any::<u32>(), any::<u8>()).prop_map(|(i, b)| HeaderEdit::Byte(i, b)),
    ]
}

/// The `.npy` file `npy` with `edit` applied to its header.
fn apply_header_edit(npy: &[u8], edit: &HeaderEdit) -> Vec<u8> {
    let header_end = if npy.len() >= 10 {
        (10 + u16::from_le_bytes([npy[8], npy[9]]) as usize).min(npy.len())
    } else {
        npy.len()
    };
    let mut out = npy.to_vec();
    match edit {
        HeaderEdit::Preamble(at, value) => {
            let n = out.len().min(10);
            if n > 0 {
                out[position(*at, n)] = *value;
            }
        }
        HeaderEdit::Byte(at, value) if header_end > 10 => {
            out[10 + position(*at, header_end - 10)] = *value;
        }
        HeaderEdit::Token(at, token) if header_end > 10 => {
            // Items of the dictionary: quoted strings, tuples, words.
            let header = &npy[10..header_end];
            let mut items = Vec::new();
            let mut i = 0;
            while i < header.len() {
                let close = match header[i] {
                    b'\'' => header[i + 1..]
                        .iter()
                        .position(|&b| b == b'\'')
                        .map(|p| i + p + 2),
                    b'(' => header[i..]
                        .iter()
                        .position(|&b| b == b')')
                        .map(|p| i + p + 1),
                    b if b.is_ascii_alphabetic() => Some(
                        header[i..]
                            .iter()
                            .position(|b| !b.is_ascii_alphabetic())
                            .map_or(header.len(), |p| i + p),
                    ),
                    _ => None,
                };
                match close {
                    Some(end) => {
                        items.push((i, end));
                        i = end;
                    }
                    None => i += 1,
                }
            }
            if items.is_empty() {
                return out;
            }
            let (start, end) = items[position(*at, items.len())];
            out = npy[..10 + start].to_vec();
            out.extend_from_slice(HEADER_TOKENS[*token].as_bytes());
            out.extend_from_slice(&npy[10 + end..]);
        }
        HeaderEdit::Byte(..) | HeaderEdit::Token(..) => {}
    }
    out
}

#[test]
fn mutated_npy_headers_never_abort() {
    let module = read("module.mlir");
    let (x, y) = (read("x.npy"), read("y.npy"));
    let mut tally = Tally::default();
    let count = fuzz(
        "mutated .npy headers",
        (
            proptest::collection::vec(header_edit(), 1..4),
            any::<bool>(),
        ),
        FuzzBudget::from_env(CI_CASES),
        |(edits, second)| {
            let target = if second { &y } else { &x };
            let mutated = edits
                .iter()
                .fold(target.clone(), |m, e| apply_header_edit(&m, e));
            let inputs: [(&str, &[u8]); 2] = if second {
                [("x.npy", &x), ("y.npy", &mutated)]
            } else {
                [("x.npy", &mutated), ("y.npy", &y)]
            };
            tally.add(run_checked(
                &format!("{edits:?}"),
                &module,
                "module.mlir",
                &inputs,
            ));
        },
    );
    assert!(count >= 1);
    tally.finish("mutated .npy headers", true);
}

#[test]
fn the_edits_change_what_they_should() {
    let text = b"%0 = stablehlo.add %arg0, %arg0 : tensor<2x3xf32>\nreturn %0";
    let swapped = apply_text_edit(text, &TextEdit::SwapLines(0, 1));
    assert!(
        swapped.starts_with(b"return"),
        "{}",
        String::from_utf8_lossy(&swapped)
    );
    let npy = oxla_npy::HostArray::new(oxla_pjrt::ElementType::F32, vec![2, 3], vec![0; 24])
        .to_npy_bytes();
    let header = |b: &[u8]| String::from_utf8_lossy(&b[10..]).into_owned();
    // Item 0 of the dictionary is the key 'descr'; item 1 its value.
    let retyped = apply_header_edit(&npy, &HeaderEdit::Token(1, 1));
    assert!(header(&retyped).contains("'<f8'"), "{}", header(&retyped));
    assert_ne!(apply_header_edit(&npy, &HeaderEdit::Preamble(0, b'X')), npy);
}

/// `oxla run` on `tests/fixtures/<name>` (an input the bytecode fuzzer
/// found, kept as bytes: JAX's module holds the checkout's path in its
/// locations, so the same edits elsewhere give other bytes), on the pinned
/// xla-cpu-pjrt 0.0.1 plugin it was found with: exit status and stderr.
fn run_found_input(name: &str) -> (Option<i32>, String) {
    let module = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let plugin =
        oxla_pjrt::plugin_dir().join("xla-cpu-pjrt-0.0.1/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_oxla"))
            .arg("run")
            .arg(&module)
            .arg("--plugin")
            .arg(plugin)
            .arg("-i")
            .arg(fixture().join("x.npy"))
            .arg("-i")
            .arg(fixture().join("y.npy")),
        Duration::from_secs(60),
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Found by the bytecode fuzzer (one byte of JAX's module set to 16): XLA's
/// CPU plugin throws a C++ exception ("SmallVector unable to grow") out of
/// PJRT_Client_Compile, which aborted the process before oxla-pjrt caught
/// exceptions at the C API boundary.
#[test]
fn a_module_that_makes_the_plugin_throw_is_an_error() {
    let (status, stderr) = run_found_input("plugin_throws.mlirbc");
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: cannot compile")
            && stderr.contains("PJRT_Client_Compile")
            && stderr.contains("threw a C++ exception"),
        "{stderr}"
    );
}

/// Found by the bytecode fuzzer (five byte edits): the plugin's LLVM calls
/// `report_fatal_error` ("LLVM ERROR: unsupported integer type"), which
/// aborts; `oxla run` works in a child process, so this is one error line.
#[test]
fn a_module_that_makes_the_plugin_abort_is_an_error() {
    let (status, stderr) = run_found_input("plugin_aborts.mlirbc");
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: the plugin ended the process (signal 6)")
            && stderr.contains("LLVM ERROR"),
        "{stderr}"
    );
}
