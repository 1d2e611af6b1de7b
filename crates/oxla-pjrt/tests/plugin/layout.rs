//! oxla-pjrt's hand-written PJRT C API declarations (`oxla_pjrt::ffi`)
//! against the real header: a C program generated from the declarations'
//! own list (`ffi::layout`) includes the pinned `pjrt_c_api.h` and prints,
//! for every declared struct, its `sizeof`, `_Alignof` and
//! `<Name>_STRUCT_SIZE`, and for every declared field (every `PJRT_Api`
//! entry included) its `offsetof` and `sizeof`, and the value of every
//! declared constant; Rust prints the same from `size_of`, `align_of` and
//! `offset_of!`, and the two texts must be equal. A name the header lacks
//! fails the C compile.

use std::fmt::Write as _;
use std::path::Path;

use oxla_pjrt::ffi::layout;

use crate::support::pjrt_header;

/// The facts as Rust declares them, one line each.
fn rust_facts() -> Vec<String> {
    let mut lines = Vec::new();
    for s in layout::structs() {
        lines.push(format!(
            "struct {} size={} align={} struct_size={}",
            s.name, s.size, s.align, s.struct_size
        ));
        for f in s.fields {
            lines.push(format!(
                "  {}.{} offset={} size={}",
                s.name, f.name, f.offset, f.size
            ));
        }
    }
    for c in layout::constants() {
        lines.push(format!("const {} = {}", c.name, c.value));
    }
    lines
}

/// A C program that prints the same facts, in the same format, from the
/// header.
fn c_program() -> String {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"pjrt_c_api.h\"\n\nint main(void) {\n",
    );
    for s in layout::structs() {
        let name = s.name;
        writeln!(
            c,
            "  printf(\"struct {name} size=%zu align=%zu struct_size=%zu\\n\", \
             sizeof({name}), (size_t)_Alignof({name}), (size_t){name}_STRUCT_SIZE);"
        )
        .unwrap();
        for f in s.fields {
            let field = f.name;
            writeln!(
                c,
                "  printf(\"  {name}.{field} offset=%zu size=%zu\\n\", \
                 offsetof({name}, {field}), sizeof((({name}*)0)->{field}));"
            )
            .unwrap();
        }
    }
    for k in layout::constants() {
        let name = k.name;
        writeln!(
            c,
            "  printf(\"const {name} = %lld\\n\", (long long)({name}));"
        )
        .unwrap();
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// Compiles `source` against the header in `include` into `out` with `cc`
/// and runs it; its standard output.
fn compile_and_run(source: &Path, include: &Path, out: &Path) -> String {
    let compiled = oxla_testing::output_within(
        std::process::Command::new("cc")
            .args(["-std=c11", "-O0"])
            .arg(format!("-I{}", include.display()))
            .arg(source)
            .arg("-o")
            .arg(out),
        oxla_testing::process_timeout(),
    );
    assert!(
        compiled.status.success(),
        "cc failed on the layout program (does the header declare every name \
         oxla_pjrt::ffi does?):\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = oxla_testing::output_within(
        &mut std::process::Command::new(out),
        oxla_testing::process_timeout(),
    );
    assert!(ran.status.success(), "the layout program failed");
    String::from_utf8(ran.stdout).unwrap()
}

#[test]
fn every_declared_struct_field_and_constant_matches_the_pinned_header() {
    let header = pjrt_header();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("layout.c");
    std::fs::write(&source, c_program()).unwrap();
    let printed = compile_and_run(
        &source,
        header.parent().unwrap(),
        &dir.path().join("layout"),
    );
    let from_header: Vec<&str> = printed.lines().collect();
    let declared = rust_facts();
    assert_eq!(
        declared.len(),
        from_header.len(),
        "the C program printed a different number of lines"
    );
    let mismatches: Vec<String> = declared
        .iter()
        .zip(&from_header)
        .filter(|(rust, c)| rust.as_str() != **c)
        .map(|(rust, c)| format!("oxla: {rust}\nhdr:  {c}"))
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} facts differ between oxla_pjrt::ffi and {}:\n{}",
        mismatches.len(),
        declared.len(),
        header.display(),
        mismatches.join("\n")
    );
}

#[test]
fn the_checked_list_covers_the_function_table_and_every_sent_struct() {
    let structs: Vec<_> = layout::structs().collect();
    let api = structs
        .iter()
        .find(|s| s.name == "PJRT_Api")
        .expect("PJRT_Api is declared");
    // struct_size, extension_start, pjrt_api_version, then every entry of
    // C API 0.81's table, so the table's size and every entry's offset are
    // compared.
    assert_eq!(api.fields.len(), 3 + 118);
    assert_eq!(api.struct_size, api.size);
    for s in &structs {
        assert!(!s.fields.is_empty(), "{} declares no field", s.name);
        let last = s.fields.last().unwrap();
        assert_eq!(s.struct_size, last.offset + last.size, "{}", s.name);
    }
    let mut names: Vec<_> = structs.iter().map(|s| s.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), structs.len(), "a struct is listed twice");
    assert!(structs.len() >= 75, "{} structs", structs.len());
    assert!(layout::constants().count() >= 70);
}
