//! silt reads its environment in one module, `silt_config::env`, once per
//! run: a setting read at call time in some file nobody looks at is a
//! setting the docs miss and a value that can change mid-run.
//!
//! Left out: build scripts and `guest-build` (they read cargo's variables),
//! the wasm guests (their environment is the plugin's grant, read inside
//! the sandbox), and test code.

use std::fs;
use std::path::{Path, PathBuf};

use super::module_cycles::crate_sources;

/// The one file allowed to read the process environment.
const THE_MODULE: &str = "crates/silt-config/src/env.rs";

/// Crate folders whose code is not the native host's.
const NOT_THE_HOST: &[&str] = &[
    "crates/guest-build",
    "crates/silt-guest",
    "crates/search-guest",
    "components/",
    "judges/",
    "tests",
    "examples/",
];

#[test]
fn only_one_module_reads_the_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut checked = 0;
    let mut found = Vec::new();
    for src in crate_sources(root) {
        let krate = src.parent().unwrap().strip_prefix(root).unwrap();
        let krate = krate.to_string_lossy();
        if NOT_THE_HOST.iter().any(|p| krate.starts_with(p)) {
            continue;
        }
        for file in rust_files(&src) {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if rel == THE_MODULE {
                continue;
            }
            checked += 1;
            let text = fs::read_to_string(&file).unwrap();
            for (line, at) in reads(&text) {
                found.push(format!("{rel}:{line}: {at}"));
            }
        }
    }
    assert!(checked > 100, "read only {checked} files of the host");
    assert!(
        found.is_empty(),
        "the environment read outside {THE_MODULE} (use silt_config::env):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_each_way_to_read_a_variable() {
    let text = "use std::env;\n\
                fn a() { let _ = std::env::var(\"X\"); }\n\
                fn b() { let _ = std::env::var_os(\"X\"); }\n\
                fn c() { for _ in std::env::vars_os() {} }\n\
                fn d() { let _ = std::env::current_dir(); } // not a variable\n\
                fn e() { let _ = silt_config::env::var(\"X\"); }\n";
    let lines: Vec<usize> = reads(text).into_iter().map(|(l, _)| l).collect();
    assert_eq!(lines, [1, 2, 3, 4]);
}

/// (line, text) of each place `text` reads the process environment.
fn reads(text: &str) -> Vec<(usize, String)> {
    const WAYS: &[&str] = &[
        "std::env::var(",
        "std::env::var_os(",
        "std::env::vars(",
        "std::env::vars_os(",
        "use std::env;",
        "use std::env::",
        "EnvFilter::from_env(",
        "EnvFilter::try_from_env(",
    ];
    text.lines()
        .enumerate()
        .filter(|(_, l)| WAYS.iter().any(|w| l.contains(w)))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

/// Every `.rs` file under `dir`, in order.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
