//! Tells the runtime which wasmtime it embeds: the compile cache keys on it.

use std::path::Path;

fn main() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/silt-runtime sits two folders below the workspace root");
    // read from the lock file, the one record of the version built
    let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).expect("Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"wasmtime\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .expect("wasmtime in Cargo.lock");
    println!("cargo:rustc-env=SILT_WASMTIME_VERSION={version}");
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
}
