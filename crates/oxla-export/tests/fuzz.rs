//! Property tests of the reader: random bytes, and a real export with
//! random bytes overwritten, inserted or removed, give `Ok` or `Err`, never
//! a panic, an abort or a hang. `PROPTEST_CASES` sets how many cases.

use std::path::Path;
use std::sync::OnceLock;

use oxla_export::Exported;
use proptest::prelude::*;

/// A real export (the elementwise case of the zoo), made once.
fn sample() -> &'static [u8] {
    static SAMPLE: OnceLock<Vec<u8>> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export_zoo.py");
        oxla_testing::run_python(&script, &[dir.path()]);
        std::fs::read(dir.path().join("elementwise.jaxexport")).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Exported::from_bytes(&bytes);
    }

    #[test]
    fn mutated_exports_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut bytes = sample().to_vec();
        for (at, value, kind) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = value,
                1 => bytes.insert(i, value),
                _ => { bytes.remove(i); }
            }
        }
        let _ = Exported::from_bytes(&bytes);
    }
}
