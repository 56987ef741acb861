//! `silt plugins update` as an attacker meets it: a tag moved back to an
//! older signed release is refused unless asked for, and a component that
//! is not one never installs.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::plugin_distribution::{self, keygen, refused, sign, silt};

/// A plugin folder `at` for judge `name`, with component `wasm` and,
/// when given, a `version`.
fn folder(at: &Path, name: &str, wasm: &Path, version: Option<&str>) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    std::fs::copy(wasm, at.join("judge.wasm")).unwrap();
    let version = version.map_or(String::new(), |v| format!("version = \"{v}\"\n"));
    std::fs::write(
        at.join("plugin.toml"),
        format!(
            "[plugin]\nname = \"{name}\"\nkind = \"judge\"\n{version}component = \"judge.wasm\"\n"
        ),
    )
    .unwrap();
    at.to_path_buf()
}

/// Asserts `out` succeeded; what it said on stderr (where silt shows a
/// plugin before installing it).
fn ok(out: &Output) -> String {
    plugin_distribution::ok(out);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn judge_v0_1() -> &'static Path {
    Path::new(env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1"))
}

fn judge_v0_1_1() -> &'static Path {
    Path::new(env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1_1"))
}

#[test]
fn an_older_signed_release_is_refused_unless_asked_for() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "").unwrap();
    let key = home.join("publisher.key");
    let public = keygen(home, &key);
    std::fs::write(
        home.join("silt.toml"),
        format!("[plugins]\ntrusted_keys = [\"{public}\"]\n"),
    )
    .unwrap();
    let signed = |dir: &Path| {
        sign(home, dir, &key);
        dir.to_str().unwrap().to_string()
    };
    let new = signed(&folder(
        &home.join("src/new"),
        "p",
        judge_v0_1(),
        Some("1.2.0"),
    ));
    let old = signed(&folder(
        &home.join("src/old"),
        "p",
        judge_v0_1_1(),
        Some("1.1.0"),
    ));
    let unversioned = signed(&folder(&home.join("src/none"), "p", judge_v0_1_1(), None));
    let lock = || std::fs::read_to_string(home.join("plugins/plugins.lock")).unwrap();

    let shown = ok(&silt(home, &["plugins", "add", &new, "--yes"]));
    assert!(shown.contains("version:   1.2.0"), "{shown}");
    let pinned = lock();

    // both signed by the trusted key: only the version tells them apart
    let err = refused(&silt(
        home,
        &["plugins", "update", "p", "--from", &old, "--yes"],
    ));
    assert!(
        err.contains("plugin 'p' 1.1.0 is older than the installed 1.2.0")
            && err.contains("--allow-downgrade"),
        "{err}"
    );
    assert_eq!(lock(), pinned, "a refused update moved the pin");
    // a release from before versions may be older still
    let err = refused(&silt(
        home,
        &["plugins", "update", "p", "--from", &unversioned, "--yes"],
    ));
    assert!(
        err.contains("states no version, so it may be older than the installed 1.2.0"),
        "{err}"
    );
    assert_eq!(lock(), pinned);

    let note = ok(&silt(
        home,
        &[
            "plugins",
            "update",
            "p",
            "--from",
            &old,
            "--yes",
            "--allow-downgrade",
        ],
    ));
    assert!(note.contains("as --allow-downgrade says"), "{note}");
    assert_ne!(lock(), pinned);

    // an old signed plugin with no version still installs, and says so
    ok(&silt(home, &["plugins", "remove", "p"]));
    let shown = ok(&silt(home, &["plugins", "add", &unversioned, "--yes"]));
    assert!(shown.contains("version:   unknown"), "{shown}");
}

#[test]
fn a_component_that_is_not_one_never_installs() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "").unwrap();
    let junk = folder(&home.join("src/junk"), "junk", judge_v0_1(), None);
    // 64 MB of junk: under the size cap, so only validation stops it
    std::fs::write(junk.join("judge.wasm"), vec![0x5a; 64 << 20]).unwrap();
    let err = refused(&silt(
        home,
        &["plugins", "add", junk.to_str().unwrap(), "--yes"],
    ));
    assert!(
        err.contains("judge.wasm from") && err.contains("not a WebAssembly component"),
        "{err}"
    );
    assert!(!home.join("plugins/junk").exists());
    let lock = std::fs::read_to_string(home.join("plugins/plugins.lock")).unwrap_or_default();
    assert!(!lock.contains("junk"), "{lock}");
}
