//! `silt plugins update` as an attacker or a busy server meets it: a tag
//! moved back to an older signed release is refused unless asked for, a
//! component that is not one never installs, and back-to-back updates
//! under a stream of calls fail none of them.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use silt_e2e::mcp::{call, text_of};

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
    // inspect names the release now installed, the manifest's version
    let inspected: serde_json::Value = serde_json::from_str(&plugin_distribution::ok(&silt(
        home,
        &["plugins", "inspect", "p", "--json"],
    )))
    .unwrap();
    assert_eq!(inspected["version"], "1.1.0", "{inspected:#}");

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

/// The probe's race: `silt plugins update` back to back while a server
/// answers a stream of calls on that judge; before, a call that loaded
/// the plugin mid-update failed with "component is not the one
/// installed" or "No such file". Every call now runs on the old plugin or
/// the new one. (A failed load is not kept, so a race lost shows as a
/// burst of failed calls until the next reload.)
#[tokio::test(flavor = "multi_thread")]
async fn back_to_back_updates_under_load_fail_no_call() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let sources = [
        folder(&home.join("src/a"), "swappable", judge_v0_1(), None),
        folder(&home.join("src/b"), "swappable", judge_v0_1_1(), None),
    ];
    std::fs::write(home.join("silt.toml"), "").unwrap();
    ok(&silt(
        home,
        &["plugins", "add", sources[0].to_str().unwrap(), "--yes"],
    ));
    let served = silt_e2e::http::serve_http(home, "answer_cache = false\n", &[]).await;
    let stop = Arc::new(AtomicBool::new(false));
    let (calls, failures) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let first_failure = Arc::new(std::sync::Mutex::new(None::<String>));
    let mut callers = Vec::new();
    for _ in 0..4 {
        let client = served.client().await;
        let (stop, calls, failures, first) = (
            stop.clone(),
            calls.clone(),
            failures.clone(),
            first_failure.clone(),
        );
        callers.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let args = json!({"question": "Is it a bug report?", "kind": "judge",
                    "yes": "a crash or an error", "no": "a new feature",
                    "items": [{"id": "bug", "text": "fix the crash"}],
                    "judge": "swappable", "threshold": 0.0});
                let answer = call(&client, "sieve_ask", args).await;
                calls.fetch_add(1, Ordering::SeqCst);
                if answer.is_error == Some(true) {
                    failures.fetch_add(1, Ordering::SeqCst);
                    first.lock().unwrap().get_or_insert(text_of(&answer));
                }
            }
            client.cancel().await.unwrap();
        }));
    }
    let server = served.child.id().unwrap() as libc::pid_t;
    for i in 0..60 {
        let from = sources[(i + 1) % 2].to_str().unwrap().to_string();
        let at = home.to_path_buf();
        let out = tokio::task::spawn_blocking(move || {
            silt(
                &at,
                &["plugins", "update", "swappable", "--from", &from, "--yes"],
            )
        })
        .await
        .unwrap();
        ok(&out);
        // reload now, not at the next poll: more reloads, more loads, each
        // racing the next update
        if i % 2 == 0 {
            // SAFETY: kill(2) on our own child's pid, with a signal it handles
            unsafe { libc::kill(server, libc::SIGHUP) };
        }
    }
    // the last update is reloaded too, under the same load
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    for caller in callers {
        caller.await.unwrap();
    }
    let (calls, failures) = (
        calls.load(Ordering::SeqCst),
        failures.load(Ordering::SeqCst),
    );
    assert!(calls >= 100, "only {calls} calls ran");
    assert_eq!(
        failures,
        0,
        "{failures} of {calls} calls failed; the first: {:?}",
        first_failure.lock().unwrap()
    );
}
