//! Builds the hostile test components (tests/hostile/*).

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

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = here.parent().expect("tests/ sits in the workspace root");
    let packages: Vec<String> = HOSTILE.iter().map(|h| format!("hostile-{h}")).collect();
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let built = guest_build::build(
        workspace,
        &packages,
        &["Cargo.toml", "wit", "tests/hostile"],
    );
    for (package, path) in built {
        let var = format!(
            "SILT_TEST_WASM_{}",
            package.to_uppercase().replace('-', "_")
        );
        println!("cargo:rustc-env={var}={}", path.display());
    }
}
