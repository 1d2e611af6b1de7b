//! Property tests of the readers: random bytes, and a real export (or its
//! portable artifact, for the VHLO reader) with random bytes overwritten,
//! inserted or removed, give `Ok` or `Err`, never a panic, an abort or a
//! hang (each input must be read within a second); shape refinement of
//! mutated polymorphic modules likewise.
//! `PROPTEST_CASES` sets how many cases.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "oxla-export-fuzz") };
}

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use oxla_export::Exported;
use proptest::prelude::*;

/// The zoo's directory, exported once per test binary.
fn zoo() -> &'static tempfile::TempDir {
    static ZOO: OnceLock<tempfile::TempDir> = OnceLock::new();
    ZOO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export_zoo.py");
        oxla_testing::run_python(&script, &[dir.path()]);
        dir
    })
}

/// A real export (the elementwise case of the zoo), made once.
fn sample() -> &'static [u8] {
    static SAMPLE: OnceLock<Vec<u8>> = OnceLock::new();
    SAMPLE.get_or_init(|| std::fs::read(zoo().path().join("elementwise.jaxexport")).unwrap())
}

/// The VHLO text of two shape-polymorphic zoo exports' modules (slicing
/// and padding; a batched convolution with pooling).
fn polymorphic_texts() -> &'static [String; 2] {
    static TEXTS: OnceLock<[String; 2]> = OnceLock::new();
    TEXTS.get_or_init(|| {
        ["poly_slicing", "poly_conv"].map(|case| {
            let bytes = std::fs::read(zoo().path().join(format!("{case}.jaxexport"))).unwrap();
            let exported = Exported::from_bytes(&bytes).unwrap();
            oxla_export::artifact_to_text(&exported.mlir_module).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300)
    ))]

    /// Shape refinement of real polymorphic modules with digits of their
    /// text changed (dims, attribute values, constants: the text still
    /// parses) and random input dims: a refined module or an error, never a
    /// panic or a hang.
    #[test]
    fn refining_mutated_polymorphic_modules_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..10), 0..6),
        raw_dims in proptest::collection::vec(proptest::collection::vec(0i64..9, 0..5), 1..3),
        batch in 0i64..9,
        use_raw in any::<bool>(),
        which in 0usize..2,
    ) {
        // Mostly the module's own input shapes at a random batch size, so
        // refinement goes past its argument checks.
        let dims = match (use_raw, which) {
            (true, _) => raw_dims,
            (false, 0) => vec![vec![batch, 3]],
            (false, _) => vec![vec![batch, 8, 8, 3], vec![3, 3, 3, 4]],
        };
        let mut text: Vec<char> = polymorphic_texts()[which].chars().collect();
        let digits: Vec<usize> = (0..text.len()).filter(|&i| text[i].is_ascii_digit()).collect();
        for (at, digit) in edits {
            text[digits[at.index(digits.len())]] = char::from(b'0' + digit);
        }
        let text: String = text.into_iter().collect();
        oxla_testing::within(
            Duration::from_secs(2),
            &format!("refining a mutated module to {dims:?}"),
            move || {
                if let Ok(artifact) = oxla_export::vhlo_text_to_artifact(&text, "1.0.0") {
                    let _ = oxla_export::refine_shapes(&artifact, &dims, "1.0.0");
                }
            },
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        read_within_a_second(bytes);
    }

    #[test]
    fn mutated_exports_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut bytes = sample().to_vec();
        mutate(&mut bytes, edits, 0);
        read_within_a_second(bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
    ))]

    /// The VHLO reader on the sample's portable artifact with bytes
    /// overwritten, inserted or removed: text or an error, never a panic.
    #[test]
    fn mutated_artifacts_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut bytes = artifact().to_vec();
        // Keep the magic number, so the reader goes past it.
        mutate(&mut bytes, edits, 4);
        let size = bytes.len();
        oxla_testing::within(
            Duration::from_secs(1),
            &format!("reading {size} bytes as a portable artifact"),
            move || {
                let _ = oxla_export::artifact_to_text(&bytes);
            },
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
    ))]

    /// The VHLO writer on the sample's module text (VHLO, and a StableHLO
    /// spelling of it) with characters overwritten, inserted or removed:
    /// an artifact or an error, never a panic.
    #[test]
    fn mutated_module_text_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 1..8),
        as_stablehlo in any::<bool>(),
    ) {
        let mut text: Vec<char> = module_texts()[usize::from(as_stablehlo)].chars().collect();
        mutate(&mut text, edits, 0);
        let text: String = text.into_iter().collect();
        oxla_testing::within(
            Duration::from_secs(1),
            &format!("writing {} characters as a portable artifact", text.len()),
            move || {
                let _ = oxla_export::vhlo_text_to_artifact(&text, "1.0.0");
                let _ = oxla_export::stablehlo_text_to_artifact(&text);
            },
        );
    }
}

/// The sample's module as VHLO text, and with its VHLO ops renamed to
/// StableHLO ones (the legalizer's input spelling, attributes aside).
fn module_texts() -> &'static [String; 2] {
    static TEXTS: OnceLock<[String; 2]> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let vhlo = oxla_export::artifact_to_text(artifact()).unwrap();
        let stablehlo = vhlo
            .replace("\"vhlo.func_v1\"", "\"func.func\"")
            .replace("\"vhlo.return_v1\"", "\"func.return\"")
            .replace("\"vhlo.", "\"stablehlo.")
            .replace("_v1\"", "\"")
            .replace("_v2\"", "\"");
        [vhlo, stablehlo]
    })
}

/// Applies `edits` to `items` past its first `keep` items: each
/// overwrites (kind 0), inserts (1) or removes (2) one item at an index.
fn mutate<T>(items: &mut Vec<T>, edits: Vec<(prop::sample::Index, T, u8)>, keep: usize) {
    for (at, value, kind) in edits {
        if items.len() <= keep {
            break;
        }
        let i = keep + at.index(items.len() - keep);
        match kind {
            0 => items[i] = value,
            1 => items.insert(i, value),
            _ => {
                items.remove(i);
            }
        }
    }
}

/// The portable artifact of the sample export.
fn artifact() -> &'static [u8] {
    static ARTIFACT: OnceLock<Vec<u8>> = OnceLock::new();
    ARTIFACT.get_or_init(|| Exported::from_bytes(sample()).unwrap().mlir_module)
}

/// Reads `bytes` as an export on a thread of its own; panics if that takes
/// more than a second or panics.
fn read_within_a_second(bytes: Vec<u8>) {
    let size = bytes.len();
    oxla_testing::within(
        Duration::from_secs(1),
        &format!("reading {size} bytes as an export"),
        move || {
            let _ = Exported::from_bytes(&bytes);
        },
    );
}
