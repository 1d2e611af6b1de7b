//! oxla's type promotion against JAX's, for every pair of dtypes and weak
//! types, with x64 off and on.

use oxla::DType;
use oxla_core::promotion::promote;

use crate::reference::jaxprs_and_promotion;

#[test]
fn promotion_table_matches_jax() {
    let table = jaxprs_and_promotion()["promotion"].as_array().unwrap();
    assert!(table.len() > 300, "{} rows", table.len());
    let mut mismatches = Vec::new();
    for row in table {
        let r = row.as_array().unwrap();
        let dt = |i: usize| DType::from_name(r[i].as_str().unwrap()).unwrap();
        let b = |i: usize| r[i].as_bool().unwrap();
        let (a, aw, bb, bw, x64, want, want_weak) = (dt(0), b(1), dt(2), b(3), b(4), dt(5), b(6));
        let got = promote(a, aw, bb, bw, x64);
        if got != (want, want_weak) {
            mismatches.push(format!(
                "{a}{} + {bb}{} (x64={x64}): oxla {got:?}, jax ({want}, {want_weak})",
                if aw { " weak" } else { "" },
                if bw { " weak" } else { "" }
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
