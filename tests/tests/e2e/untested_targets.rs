//! A crate whose targets say `test = false` is not built as a test
//! harness: the wasm guests (tested through the host, never natively) and
//! the binaries tested through their executables. That saves the build of
//! about 30 empty harnesses, and this test keeps it honest: a test written
//! in such a crate would never run, so none may be there.

use std::fs;
use std::path::Path;

use super::env_reads::rust_files;
use super::module_cycles::crate_sources;

#[test]
fn no_test_hides_in_a_crate_that_is_not_tested() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut untested = 0;
    let mut hidden = Vec::new();
    for src in crate_sources(root) {
        let manifest = fs::read_to_string(src.parent().unwrap().join("Cargo.toml")).unwrap();
        if !not_tested(&manifest) {
            continue;
        }
        untested += 1;
        for file in rust_files(&src) {
            if has_test(&fs::read_to_string(&file).unwrap()) {
                hidden.push(file.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    assert!(untested >= 25, "only {untested} crates say test = false");
    assert!(
        hidden.is_empty(),
        "tests that never run (their crate says `test = false`; remove it there):\n{}",
        hidden.join("\n")
    );
}

#[test]
fn the_checker_sees_a_test_and_the_switch() {
    assert!(not_tested(
        "[lib]\ncrate-type = [\"cdylib\"]\ntest = false\n"
    ));
    assert!(!not_tested("[lib]\ncrate-type = [\"cdylib\"]\n"));
    assert!(has_test(
        "#[cfg(test)]\nmod t {\n    #[test]\n    fn f() {}\n}\n"
    ));
    assert!(has_test("#[tokio::test]\nasync fn f() {}\n"));
    assert!(!has_test("// #[test] is how a test is marked\nfn f() {}\n"));
}

fn not_tested(manifest: &str) -> bool {
    manifest.lines().any(|l| l.trim() == "test = false")
}

fn has_test(source: &str) -> bool {
    source.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("#[test]") || l.starts_with("#[tokio::test")
    })
}
