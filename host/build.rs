//! Builds the wasm components the `silt` binary embeds.

use std::path::Path;

fn main() {
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = host.parent().expect("host/ sits in the workspace root");
    let built = guest_build::build(
        workspace,
        "guests",
        &[
            "silt-ask",
            "silt-verify",
            "silt-judge-lexical",
            "silt-judge-embedding",
            "silt-judge-openai",
            "silt-judge-llm",
            "silt-judge-sampling",
            "silt-judge-agent",
            "silt-ledger",
            "silt-ledger-cli",
            "silt-host-over-wasi",
            "silt-search-searxng",
            "silt-search-brave",
            "silt-search-cli",
        ],
        &[
            "Cargo.toml",
            "wit",
            "crates/silt-core",
            "crates/silt-guest",
            "crates/silt-embed",
            "crates/silt-llm",
            "crates/search-guest",
            ".cargo",
            "components",
            "judges",
        ],
    );
    // The compile cache keys on the wasmtime version; read it from the lock file.
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
    for (package, path) in built {
        let var = format!("SILT_WASM_{}", package.to_uppercase().replace('-', "_"));
        println!("cargo:rustc-env={var}={}", path.display());
    }
}
