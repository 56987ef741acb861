//! Builds the test components: the hostile judges (tests/hostile/*) and
//! plugins built against earlier contract versions (tests/compat/*).

use std::path::Path;

const HOSTILE: &[&str] = &[
    "read-outside",
    "net-escape",
    "spin",
    "alloc-bomb",
    "trap",
    "bad-probs",
    "flood",
];

/// Plugins built against the previous version of a contract.
const COMPAT: &[&str] = &[
    "compat-search-v0-1",
    "compat-judge-v0-1",
    "compat-judge-v0-1-1",
];

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = here.parent().expect("tests/ sits in the workspace root");
    let packages: Vec<String> = HOSTILE
        .iter()
        .map(|h| format!("hostile-{h}"))
        .chain(COMPAT.iter().map(|c| c.to_string()))
        .collect();
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    // a folder of their own, so this build never waits on the host's
    let built = guest_build::build(
        workspace,
        "guest-fixtures",
        &packages,
        &["Cargo.toml", "wit", "tests/hostile", "tests/compat"],
    );
    for (package, path) in built {
        let var = format!(
            "SILT_TEST_WASM_{}",
            package.to_uppercase().replace('-', "_")
        );
        println!("cargo:rustc-env={var}={}", path.display());
    }
}
