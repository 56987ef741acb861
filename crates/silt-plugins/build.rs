//! Builds the wasm components silt embeds as its built-in plugins.

use std::path::Path;

fn main() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/silt-plugins sits two folders below the workspace root");
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
    for (package, path) in built {
        let var = format!("SILT_WASM_{}", package.to_uppercase().replace('-', "_"));
        println!("cargo:rustc-env={var}={}", path.display());
    }
}
