//! Plugins distributed through a real OCI registry (Debian's
//! docker-registry, started by `.ci/registry`) and over http: publish,
//! inspect before anything runs, add by digest after the grants are
//! accepted, the pin checked on every load, signatures required by
//! trusted keys, update and remove.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use silt_e2e::{example_plugins, silt_binary};

fn registry() -> String {
    std::env::var("SILT_TEST_REGISTRY").expect(
        "SILT_TEST_REGISTRY is not set: start a registry with `eval \"$(.ci/registry start)\"` \
         (as .ci/run does)",
    )
}

/// `silt ARGS` with its config, cache and plugins under `home`, stdin
/// closed (so nothing can be confirmed but by --yes).
pub(crate) fn silt(home: &Path, args: &[&str]) -> Output {
    silt_e2e::silt_in(home, args).output().unwrap()
}

pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap()
}

/// A new signing key at `path`; its public key.
pub(crate) fn keygen(home: &Path, path: &Path) -> String {
    let out = ok(&silt(
        home,
        &["plugins", "keygen", "--out", path.to_str().unwrap()],
    ));
    out.lines().next().unwrap().to_string()
}

/// Signs plugin folder `dir` with the key at `key`.
pub(crate) fn sign(home: &Path, dir: &Path, key: &Path) {
    ok(&silt(
        home,
        &[
            "plugins",
            "sign",
            dir.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
    ));
}

/// A copy of the JavaScript example plugin, to publish from.
fn plugin_copy(at: &Path) -> PathBuf {
    let from = example_plugins().join("words-js");
    std::fs::create_dir_all(at).unwrap();
    for f in ["plugin.toml", "words-js.wasm"] {
        std::fs::copy(from.join(f), at.join(f)).unwrap();
    }
    at.to_path_buf()
}

fn sha256_of(path: &Path) -> String {
    silt_plugins::lock::digest(&std::fs::read(path).unwrap())
}

/// `silt ask judge` on the installed words-js: its answer for one item.
fn ask(home: &Path) -> Output {
    let args = [
        "ask",
        "judge",
        "Is it a bug report?",
        "--yes",
        "a crash or an error",
        "--no",
        "a new feature",
        "--judge",
        "words-js",
        "--threshold",
        "0",
    ];
    fed(&mut silt_e2e::silt_in(home, &args), br#"["fix the crash"]"#)
}

/// Runs `cmd` with `input` on its stdin, its output kept.
fn fed(cmd: &mut std::process::Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn nothing_installed(home: &Path) {
    let plugins = home.join("plugins");
    let lock = std::fs::read_to_string(plugins.join("plugins.lock")).unwrap_or_default();
    assert!(!lock.contains("[plugins.words-js]"), "{lock}");
    assert!(!plugins.join("words-js").exists());
    // no staging folder left behind either
    let left: Vec<_> = std::fs::read_dir(&plugins)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with(".staging")),
        "{left:?}"
    );
}

#[test]
fn plugins_are_published_pinned_signed_and_refused_when_changed() {
    let registry = registry();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "").unwrap();

    // a publisher's key, and the plugin signed with it
    let key = home.join("publisher.key");
    let public = keygen(home, &key);
    assert!(public.starts_with("ed25519:"), "{public}");
    let signed = plugin_copy(&home.join("publish/signed"));
    sign(home, &signed, &key);
    let tag = format!("{registry}/silt/words-js:0.1.0");
    let pushed = json(&silt(
        home,
        &[
            "plugins",
            "publish",
            signed.to_str().unwrap(),
            &tag,
            "--json",
        ],
    ));
    let digest = pushed["digest"].as_str().unwrap().to_string();
    let by_digest = format!("{registry}/silt/words-js@{digest}");
    assert_eq!(pushed["add"], by_digest.as_str());

    // only the publisher's key is trusted from here on
    std::fs::write(
        home.join("silt.toml"),
        // every ask reaches the plugin, so a changed one is seen at once
        format!("answer_cache = false\n\n[plugins]\ntrusted_keys = [\"{public}\"]\n"),
    )
    .unwrap();

    // inspect shows what it is before anything is installed or run
    let seen = json(&silt(home, &["plugins", "inspect", &by_digest, "--json"]));
    assert_eq!(seen["name"], "words-js");
    assert_eq!(seen["resolved"], digest.as_str());
    assert_eq!(
        seen["component_digest"],
        sha256_of(&signed.join("words-js.wasm")).as_str()
    );
    assert_eq!(seen["signer"]["key"], public.as_str());
    assert_eq!(seen["signer"]["trusted"], true);
    nothing_installed(home);

    // without a terminal, nothing is installed unless the grants are accepted
    let err = refused(&silt(home, &["plugins", "add", &by_digest]));
    assert!(err.contains("grants:") && err.contains("--yes"), "{err}");
    nothing_installed(home);

    let added = json(&silt(
        home,
        &["plugins", "add", &by_digest, "--yes", "--json"],
    ));
    assert_eq!(added["changed"], true);
    let lock = std::fs::read_to_string(home.join("plugins/plugins.lock")).unwrap();
    assert!(lock.contains(&digest) && lock.contains(&public), "{lock}");
    let answer: Value = serde_json::from_str(&ok(&ask(home))).unwrap();
    // "crash" is the one shared yes-word: 0.5 + 0.3·1/2
    let p = answer["results"][0]["probability"].as_f64().unwrap();
    assert!((p - 0.65).abs() < 1e-9, "{answer:#}");
    let inspected = json(&silt(home, &["plugins", "inspect", "words-js", "--json"]));
    assert_eq!(inspected["pinned"], true);

    // a component changed after install is refused on load, and so is a
    // manifest whose grants were widened
    let installed = home.join("plugins/words-js");
    let component = installed.join("words-js.wasm");
    let original = std::fs::read(&component).unwrap();
    let mut changed = original.clone();
    changed.push(0);
    std::fs::write(&component, &changed).unwrap();
    let err = refused(&ask(home));
    assert!(
        err.contains("component is not the one installed")
            && err.contains("silt plugins update words-js"),
        "{err}"
    );
    std::fs::write(&component, &original).unwrap();
    let manifest = std::fs::read_to_string(installed.join("plugin.toml")).unwrap();
    std::fs::write(
        installed.join("plugin.toml"),
        format!("{manifest}\n[grants]\nenv = [\"HOME\"]\n"),
    )
    .unwrap();
    let err = refused(&ask(home));
    assert!(
        err.contains("manifest (plugin.toml) is not the one installed"),
        "{err}"
    );
    std::fs::write(installed.join("plugin.toml"), &manifest).unwrap();
    ok(&ask(home));

    // signed by a key nobody trusts; signed but changed after; unsigned
    let other_key = home.join("other.key");
    keygen(home, &other_key);
    let stranger = plugin_copy(&home.join("publish/stranger"));
    sign(home, &stranger, &other_key);
    let tampered = plugin_copy(&home.join("publish/tampered"));
    sign(home, &tampered, &key);
    std::fs::write(tampered.join("words-js.wasm"), &changed).unwrap();
    let unsigned = plugin_copy(&home.join("publish/unsigned"));
    ok(&silt(home, &["plugins", "remove", "words-js"]));
    nothing_installed(home);
    for (dir, tag, why) in [
        (
            &stranger,
            "stranger",
            "not in silt.toml's [plugins] trusted_keys",
        ),
        (&tampered, "tampered", "does not match these bytes"),
        (&unsigned, "unsigned", "is not signed"),
    ] {
        let reference = format!("{registry}/silt/words-js:{tag}");
        ok(&silt(
            home,
            &["plugins", "publish", dir.to_str().unwrap(), &reference],
        ));
        let err = refused(&silt(home, &["plugins", "add", &reference, "--yes"]));
        assert!(err.contains(why), "{tag}: {err}");
        nothing_installed(home);
    }

    // update moves the pin, explicitly: a republished tag with a new
    // description is a new manifest digest
    ok(&silt(home, &["plugins", "add", &tag, "--yes"]));
    let again = json(&silt(
        home,
        &["plugins", "update", "words-js", "--yes", "--json"],
    ));
    assert_eq!(again["changed"], false, "same bytes: {again:#}");
    let manifest = std::fs::read_to_string(signed.join("plugin.toml")).unwrap();
    std::fs::write(
        signed.join("plugin.toml"),
        manifest.replace("Shared words", "Words shared"),
    )
    .unwrap();
    sign(home, &signed, &key);
    ok(&silt(
        home,
        &["plugins", "publish", signed.to_str().unwrap(), &tag],
    ));
    let before = std::fs::read_to_string(home.join("plugins/plugins.lock")).unwrap();
    let moved = json(&silt(
        home,
        &["plugins", "update", "words-js", "--yes", "--json"],
    ));
    assert_eq!(moved["changed"], true);
    let after = std::fs::read_to_string(home.join("plugins/plugins.lock")).unwrap();
    assert_ne!(before, after);
    assert!(
        after.contains(moved["manifest_digest"].as_str().unwrap()),
        "{after}"
    );
    ok(&ask(home));
    ok(&silt(home, &["plugins", "remove", "words-js"]));
    nothing_installed(home);
}

#[tokio::test]
async fn a_plugin_is_added_over_http_from_beside_its_manifest() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "").unwrap();
    let site = home.join("site");
    plugin_copy(&site.join("words-js"));
    let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = server.local_addr().unwrap().port();
    let root = site.clone();
    // a static file server: GET /<dir>/<file>, 404 for anything missing
    tokio::spawn(async move {
        loop {
            let (mut s, _) = server.accept().await.unwrap();
            let root = root.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buf = vec![0u8; 4096];
                let n = s.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let file = root.join(path.trim_start_matches('/'));
                let reply = match std::fs::read(&file) {
                    Ok(body) if !path.contains("..") => {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend(body);
                        r
                    }
                    _ => {
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                            .to_vec()
                    }
                };
                let _ = s.write_all(&reply).await;
            });
        }
    });
    let url = format!("http://127.0.0.1:{port}/words-js/plugin.toml");
    let home_owned = home.to_path_buf();
    let added = tokio::task::spawn_blocking(move || {
        silt(&home_owned, &["plugins", "add", &url, "--yes", "--json"])
    })
    .await
    .unwrap();
    let added = json(&added);
    assert_eq!(added["signer"], Value::Null);
    assert_eq!(
        added["component_digest"],
        sha256_of(&site.join("words-js/words-js.wasm")).as_str()
    );
    let home_owned = home.to_path_buf();
    let answer = tokio::task::spawn_blocking(move || ask(&home_owned))
        .await
        .unwrap();
    ok(&answer);
    // a missing file is a clear error, and plain http elsewhere is refused
    let missing = format!("http://127.0.0.1:{port}/nothing/plugin.toml");
    let home_owned = home.to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        silt(&home_owned, &["plugins", "add", &missing, "--yes"])
    })
    .await
    .unwrap();
    assert!(refused(&out).contains("was not found (404)"));
    let out = silt(
        home,
        &[
            "plugins",
            "add",
            "http://example.com/p/plugin.toml",
            "--yes",
        ],
    );
    assert!(refused(&out).contains("loopback only"));
}

/// On a terminal, `add` shows the grants (an interpreter flagged as full
/// power) and installs only on a yes. util-linux's `script` gives silt a
/// terminal and types the answer.
#[test]
fn on_a_terminal_add_asks_before_installing() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "").unwrap();
    // a search backend granted a shell through exec: full power
    let dir = home.join("src/shell-search");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        example_plugins().join("words-js/words-js.wasm"),
        dir.join("shell-search.wasm"),
    )
    .unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        "[plugin]\nname = \"shell-search\"\nkind = \"search\"\n\n[grants.exec]\nsh = {}\n\n\
         [limits]\nwall_ms = 20000\n",
    )
    .unwrap();
    let typed = |answer: &str| {
        let command = format!("{} plugins add {}", silt_binary().display(), dir.display());
        let mut script = std::process::Command::new("script");
        script
            .args(["-qec", &command, "/dev/null"])
            .envs(silt_e2e::home_env(home));
        fed(&mut script, format!("{answer}\n").as_bytes())
    };
    let declined = typed("n");
    let shown = String::from_utf8_lossy(&declined.stdout).into_owned();
    assert!(!declined.status.success(), "{shown}");
    assert!(shown.contains("FULL POWER: runs sh"), "{shown}");
    assert!(
        shown.contains("Install shell-search with these grants? [y/N]"),
        "{shown}"
    );
    assert!(shown.contains("you declined"), "{shown}");
    assert!(!home.join("plugins/shell-search").exists());

    let accepted = typed("y");
    let shown = String::from_utf8_lossy(&accepted.stdout).into_owned();
    assert!(accepted.status.success(), "{shown}");
    assert!(shown.contains("installed shell-search"), "{shown}");
    assert!(
        home.join("plugins/shell-search/shell-search.wasm")
            .is_file()
    );
}
