//! Builds silt's guest crates for `wasm32-wasip2` from inside a build
//! script, so an ordinary `cargo build` or `cargo test` of the host also
//! builds every component it runs.
//!
//! The guests are built by a nested cargo into a target directory of their
//! own (`<target>/<dir>`): it cannot share the outer build's directory,
//! whose lock the outer cargo holds. Each build script passes its own
//! `dir`: a build script blocked on another's lock keeps one of the outer
//! cargo's job tokens, so on two cores the other nested build ran on one
//! (the components took 419 s of a fresh CI build, 236 s alone).

#![deny(missing_docs)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";
/// The cargo profile guests are built with (defined in the workspace root).
pub const PROFILE: &str = "guest";

/// Builds `packages` (cargo package names) of the workspace at `workspace`
/// into `<target>/<dir>` and copies each component to
/// `$OUT_DIR/<package>.wasm`. Returns (package, path) pairs. `watch` lists
/// the folders whose changes must rebuild the guests.
pub fn build(
    workspace: &Path,
    dir: &str,
    packages: &[&str],
    watch: &[&str],
) -> Vec<(String, PathBuf)> {
    for dir in watch {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    ensure_target_installed();

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                workspace.join(p)
            }
        })
        .unwrap_or_else(|| workspace.join("target"))
        .join(dir);

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args([
            "build",
            "--locked",
            "--target",
            TARGET,
            "--profile",
            PROFILE,
            "--target-dir",
        ])
        .arg(&target_dir);
    for p in packages {
        cmd.args(["-p", p]);
    }
    // The outer build's flags and wrappers are for the host, not for guests.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .expect("could not run cargo to build the wasm guests");
    assert!(
        status.success(),
        "building the wasm guests failed (see the cargo output above)"
    );

    packages
        .iter()
        .map(|p| {
            // a library is named with underscores, a binary as written
            let dir = target_dir.join(TARGET).join(PROFILE);
            let lib = dir.join(format!("{}.wasm", p.replace('-', "_")));
            let built = if lib.exists() {
                lib
            } else {
                dir.join(format!("{p}.wasm"))
            };
            let copy = out_dir.join(format!("{p}.wasm"));
            std::fs::copy(&built, &copy)
                .unwrap_or_else(|e| panic!("guest {p} was not built at {}: {e}", built.display()));
            (p.to_string(), copy)
        })
        .collect()
}

fn ensure_target_installed() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let libdir = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if !libdir.is_some_and(|d| d.exists()) {
        panic!(
            "the {TARGET} target is not installed; run `rustup target add {TARGET}` and build again"
        );
    }
}
