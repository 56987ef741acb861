//! The ledger's store through the `silt` binary: shared by processes with
//! no lost update, durable across kill -9, never overwriting what it cannot
//! read, and round-tripping Sediment's ledger.json.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use silt_e2e::silt_binary;

fn silt(ledger: &Path, args: &[&str]) -> (bool, String, String) {
    silt_with(ledger, args, "0")
}

/// Runs `silt ledger` with auto-sleep at `pressure` ("0": off, so these
/// store tests see every capture as written).
fn silt_with(ledger: &Path, args: &[&str], pressure: &str) -> (bool, String, String) {
    let out = Command::new(silt_binary())
        .env("SILT_SLEEP_PRESSURE", pressure)
        // the pressures below count the pairs lessons form by their words
        .env("SILT_LEDGER_EMBEDDER", "none")
        .arg("ledger")
        .arg("--ledger")
        .arg(ledger)
        .args(args)
        .env("SILT_CACHE_DIR", ledger.parent().unwrap().join("cache"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn captures_file(dir: &Path, name: &str, n: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    for i in 0..n {
        writeln!(f, r#"{{"when": "task {name} number {i}", "prefer": "do thing {i}", "feedback": "positive"}}"#).unwrap();
    }
    path
}

/// `silt ledger capture --from FILE` as a running child.
fn spawn_capture(ledger: &Path, file: &Path, stdout: Stdio) -> std::process::Child {
    Command::new(silt_binary())
        .args(["ledger", "--ledger"])
        .arg(ledger)
        .args(["capture", "--from"])
        .arg(file)
        .env("SILT_CACHE_DIR", ledger.parent().unwrap().join("cache"))
        .env("SILT_SLEEP_PRESSURE", "0")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn export(ledger: &Path) -> Vec<Value> {
    let (ok, out, err) = silt(ledger, &["export"]);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Eight `silt ledger capture` processes started at once on `ledger`, each
/// capturing `n` lessons from its own file (named `prefix` and its number);
/// every one must finish with success.
fn eight_writers(dir: &Path, ledger: &Path, prefix: &str, n: usize) {
    let children: Vec<_> = (0..8)
        .map(|w| {
            let file = captures_file(dir, &format!("{prefix}{w}"), n);
            spawn_capture(ledger, &file, Stdio::null())
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn eight_writers_lose_no_capture() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    // create it and warm the compile cache first, so the race is about writes
    assert!(silt(&ledger, &["stats"]).0);
    eight_writers(dir.path(), &ledger, "w", 250);
    let entries = export(&ledger);
    assert_eq!(entries.len(), 2000);
    let mut ids: Vec<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 2000, "ids are unique");
}

#[test]
fn kill_9_keeps_every_acknowledged_capture() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    assert!(silt(&ledger, &["stats"]).0);
    let file = captures_file(dir.path(), "many", 5000);
    let mut child = spawn_capture(&ledger, &file, Stdio::piped());
    let mut acked = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while acked.len() < 60 {
        let line = lines
            .next()
            .expect("the writer acknowledges captures")
            .unwrap();
        acked.push(line.trim_start_matches("captured ").to_string());
    }
    // SIGKILL: no destructor, no flush, mid-stream
    child.kill().unwrap();
    child.wait().unwrap();
    let stored: Vec<String> = export(&ledger)
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    for id in &acked {
        assert!(stored.contains(id), "acknowledged capture {id} was lost");
    }
    assert!(stored.len() < 5000, "the writer was stopped part way");
}

#[test]
fn unreadable_ledgers_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // not SQLite at all
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, b"\x00\x01 this is no database").unwrap();
    // a Sediment ledger.json where the silt ledger should be
    let json = dir.path().join("ledger.json");
    std::fs::write(&json, br#"[{"when": "w"}]"#).unwrap();
    // a real ledger, truncated as a crash of the disk might leave it
    let truncated = dir.path().join("truncated.db");
    assert!(silt(&truncated, &["capture", "--when", "w", "--prefer", "p"]).0);
    for _ in 0..30 {
        assert!(
            silt(
                &truncated,
                &[
                    "capture",
                    "--when",
                    "another situation",
                    "--prefer",
                    "another action"
                ]
            )
            .0
        );
    }
    for side in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{side}", truncated.display()));
    }
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2 + 100]).unwrap();

    for (path, needle) in [
        (&garbage, "not a silt ledger"),
        (&json, "silt ledger import"),
        (&truncated, "left untouched"),
    ] {
        let before = std::fs::read(path).unwrap();
        let (ok, _, err) = silt(path, &["stats"]);
        assert!(!ok, "{} was accepted", path.display());
        assert!(err.contains(needle), "{}: {err}", path.display());
        assert_eq!(
            std::fs::read(path).unwrap(),
            before,
            "{} was modified",
            path.display()
        );
        let (ok, _, _) = silt(path, &["capture", "--when", "w", "--prefer", "p"]);
        assert!(!ok);
        assert_eq!(
            std::fs::read(path).unwrap(),
            before,
            "{} was modified by a write",
            path.display()
        );
    }
}

#[test]
fn a_sediment_ledger_round_trips_with_unknown_fields() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("sediment.json");
    let original = r#"[
  {
    "when": "target model is Claude",
    "prefer": "use XML delimiter tags for structure",
    "id": "0a1b2c3d",
    "confidence": 0.6,
    "created": 1700000000.0,
    "last_confirmed": 1700000100.5,
    "last_fired": 1700000200.25,
    "hit_count": 4,
    "confirm_count": 4,
    "contradiction_count": 1,
    "status": "active",
    "note": "",
    "tags": ["prompting"],
    "source": {"agent": "claude-code"}
  },
  {
    "when": "haiku",
    "prefer": "5-7-5",
    "id": "deadbeef",
    "confidence": 0.03,
    "created": 1690000000.0,
    "last_confirmed": 1690000000.0,
    "last_fired": 1690000000.0,
    "hit_count": 1,
    "confirm_count": 1,
    "contradiction_count": 0,
    "status": "retired",
    "note": "faded below floor"
  }
]"#;
    std::fs::write(&source, original).unwrap();
    let ledger = dir.path().join("ledger.db");
    let (ok, out, err) = silt(&ledger, &["import", source.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"imported\": 2"), "{out}");
    let exported = dir.path().join("out.json");
    assert!(silt(&ledger, &["export", exported.to_str().unwrap()]).0);
    let a: Value = serde_json::from_str(original).unwrap();
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(a, b, "every field and unknown field kept");
    // Sediment's field order comes first, as Sediment writes it
    let text = std::fs::read_to_string(&exported).unwrap();
    assert!(text.find("\"when\"").unwrap() < text.find("\"note\"").unwrap());
    assert!(text.find("\"note\"").unwrap() < text.find("\"tags\"").unwrap());

    // importing again would duplicate ids: refused, nothing changed
    let (ok, _, err) = silt(&ledger, &["import", source.to_str().unwrap()]);
    assert!(!ok && err.contains("already in the ledger"), "{err}");
    assert_eq!(export(&ledger).len(), 2);
}

#[test]
fn sleep_runs_itself_when_redundancy_pressure_crosses_the_threshold() {
    let lessons = [
        ("deploying to production", "run the smoke tests first"),
        ("writing release notes", "link the changelog"),
        (
            "non-reasoning GPT target",
            "inject explicit step-by-step CoT",
        ),
        (
            "non-reasoning GPT target",
            "do not inject CoT, keep it terse",
        ),
    ];
    // 1 candidate pair among 4 active lessons: pressure 0.25
    for (threshold, fires) in [("0.3", false), ("0.25", true)] {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.db");
        let mut last = Value::Null;
        for (when, prefer) in lessons {
            let (ok, out, err) = silt_with(
                &ledger,
                &["capture", "--when", when, "--prefer", prefer, "--json"],
                threshold,
            );
            assert!(ok, "{err}");
            last = serde_json::from_str(&out).unwrap();
        }
        if fires {
            assert_eq!(last["auto_sleep"]["pressure"], 0.25, "{last}");
            assert_eq!(last["auto_sleep"]["contradictions_resolved"], 1, "{last}");
        } else {
            assert!(last.get("auto_sleep").is_none(), "{last}");
        }
        let (_, stats, _) = silt_with(&ledger, &["stats", "--json"], "0");
        let stats: Value = serde_json::from_str(&stats).unwrap();
        assert_eq!(stats["active"], if fires { 3 } else { 4 });
    }
}

/// A pair a sleep pass judged and kept is not counted again: the pressure
/// falls to 0 after each pass, so an unrelated capture does not sleep
/// again (it did, on every capture, once kept pairs alone reached the
/// threshold), while a capture that pairs with the kept lessons does.
#[test]
fn pairs_a_sleep_pass_judged_do_not_call_for_another() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    let capture = |when: &str, prefer: &str| -> Value {
        let (ok, out, err) = silt_with(
            &ledger,
            &["capture", "--when", when, "--prefer", prefer, "--json"],
            "0.2",
        );
        assert!(ok, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    capture("deploying to production", "run the smoke tests first");
    capture("writing release notes", "link the changelog");
    capture("editing the parser", "run the focused tests first");
    // one candidate pair among 4: 0.25 >= 0.2, and the pass keeps both
    // lessons (same subject, compatible actions)
    let out = capture("refactoring the parser", "update the changelog entry");
    assert_eq!(out["auto_sleep"]["pressure"], 0.25, "{out}");
    assert_eq!(out["auto_sleep"]["merged"], 0, "{out}");
    assert_eq!(out["auto_sleep"]["contradictions_resolved"], 0, "{out}");
    // the kept pair is 1 of 5 (0.2) but was judged: no pass
    let out = capture("choosing a font for slides", "use a sans serif face");
    assert!(out.get("auto_sleep").is_none(), "{out}");
    // a new parser lesson pairs with both kept ones: 2 unjudged of 6
    let out = capture("reviewing the parser", "keep the change small");
    assert!(
        out["auto_sleep"]["pressure"].as_f64().unwrap() >= 0.2,
        "{out}"
    );
    let (_, stats, _) = silt_with(&ledger, &["stats", "--json"], "0");
    let stats: Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["active"], 6, "{stats}");
    // lessons imported with an old date were never judged against these:
    // after the import the whole ledger counts again, so a capture sleeps
    let old = dir.path().join("old.json");
    std::fs::write(
        &old,
        r#"[{"when": "editing the parser module", "prefer": "read its tests first",
             "id": "0ld00001", "confidence": 0.5, "created": 1700000000.0,
             "last_confirmed": 1700000000.0, "last_fired": 1700000000.0,
             "hit_count": 0, "confirm_count": 0, "contradiction_count": 0,
             "status": "active", "note": ""}]"#,
    )
    .unwrap();
    let (ok, _, err) = silt(&ledger, &["import", old.to_str().unwrap()]);
    assert!(ok, "{err}");
    let out = capture("picking a colour for the logo", "ask the designer");
    assert!(out.get("auto_sleep").is_some(), "{out}");
}

/// A ledger this user may not write is refused with what is wrong and the
/// fix — never called damaged — and left as it was. As root the check runs
/// as uid nobody (root may write anything); otherwise on a file made
/// read-only.
#[test]
fn a_ledger_this_user_cannot_write_is_not_called_damaged() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    assert!(silt(&ledger, &["capture", "--when", "w", "--prefer", "p"]).0);
    let cache = tempfile::tempdir().unwrap();
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = std::fs::read(&ledger).unwrap();
    // SAFETY: geteuid has no preconditions
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(silt_binary());
        c
    } else {
        std::fs::set_permissions(&ledger, std::fs::Permissions::from_mode(0o444)).unwrap();
        Command::new(silt_binary())
    };
    let out = cmd
        .args(["ledger", "--ledger"])
        .arg(&ledger)
        .arg("stats")
        .env("SILT_CACHE_DIR", cache.path())
        .env("HOME", cache.path())
        .env("XDG_DATA_HOME", cache.path())
        .env("XDG_CONFIG_HOME", cache.path())
        .output()
        .expect("setpriv (util-linux) runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("is not writable"), "{err}");
    assert!(err.contains("SILT_LEDGER_PATH"), "{err}");
    assert!(!err.contains("damaged"), "{err}");
    assert_eq!(std::fs::read(&ledger).unwrap(), before);
}

/// A ledger on a read-only file system is refused with that reason and the
/// fix, never called damaged. The mount is a read-only bind of the ledger's
/// folder in a private mount namespace (`unshare`, util-linux; as a normal
/// user it maps itself to root in a new user namespace first).
#[test]
fn a_ledger_on_a_read_only_mount_is_not_called_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    assert!(silt(&ledger, &["capture", "--when", "w", "--prefer", "p"]).0);
    let before = std::fs::read(&ledger).unwrap();
    let cache = tempfile::tempdir().unwrap();
    // SAFETY: geteuid has no preconditions
    let root = unsafe { libc::geteuid() } == 0;
    let script = "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && \
                  exec \"$2\" ledger --ledger \"$1/ledger.db\" stats";
    let out = Command::new("unshare")
        .args(if root {
            &["--mount"][..]
        } else {
            &["--user", "--map-root-user", "--mount"][..]
        })
        .args(["sh", "-c", script, "sh"])
        .arg(dir.path())
        .arg(silt_binary())
        .env("SILT_CACHE_DIR", cache.path())
        .output()
        .expect("unshare (util-linux) runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        !err.contains("mount:") && !err.contains("unshare:"),
        "the read-only mount could not be made: {err}"
    );
    assert!(err.contains("read-only file system"), "{err}");
    assert!(err.contains("SILT_LEDGER_PATH"), "{err}");
    assert!(!err.contains("damaged"), "{err}");
    assert_eq!(std::fs::read(&ledger).unwrap(), before);
}

/// Eight processes capturing into one ledger that does not exist yet: the
/// ledger is created once, whole, and every capture is acknowledged and
/// kept (no process ever sees a half-made file).
#[test]
fn eight_processes_on_one_new_ledger_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // warm the compile cache elsewhere, so the processes race on the file
    assert!(silt(&dir.path().join("warm.db"), &["stats"]).0);
    for round in 0..3 {
        let ledger = dir.path().join(format!("new-{round}.db"));
        eight_writers(dir.path(), &ledger, &format!("r{round}w"), 40);
        assert_eq!(export(&ledger).len(), 320, "round {round}");
    }
    // nothing built aside is left behind
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".new-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A ledger path in a folder that does not exist is an error naming the
/// folder, and nothing is created.
#[test]
fn a_ledger_in_a_missing_folder_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("no/such/dir/l.db");
    let out = Command::new(silt_binary())
        .arg("ledger")
        .arg("--ledger")
        .arg(&ledger)
        .arg("stats")
        .env("SILT_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    let (ok, err) = (out.status.success(), String::from_utf8_lossy(&out.stderr));
    assert!(!ok);
    assert!(err.contains("does not exist"), "{err}");
    assert!(!dir.path().join("no").exists());
}

/// Auto-sleep's unjudged pair count is kept with the store: the process
/// that captures a lesson adds its pairs in the same transaction, so
/// another writer's engine never scans for it. After every step of two
/// writers capturing, confirming, contradicting and sleeping one ledger,
/// the count either is kept and equals a fresh engine's full count, or is
/// stale and recounted to the same.
#[tokio::test(flavor = "multi_thread")]
async fn the_kept_pair_count_stays_right_across_writers() {
    kept_pair_count_stays_right("lexical").await;
}

/// The same with pairs by meaning: the capturing process counts its
/// lesson's near neighbours with the vectors kept in the ledger.
#[tokio::test(flavor = "multi_thread")]
async fn the_kept_pair_count_by_meaning_stays_right_across_writers() {
    kept_pair_count_stays_right("embedding-static").await;
}

async fn kept_pair_count_stays_right(judge: &str) {
    use silt_mcp::tools::sediment_tools::LedgerTools;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let config = silt_config::Config {
        cache_dir: Some(dir.path().join("cache")),
        judge: Some(judge.into()),
        ..Default::default()
    };
    let app = silt_runtime::app::App::with_config(config, true).unwrap();
    let tools = || {
        std::sync::Arc::new(
            LedgerTools::at(
                app.runtime.clone(),
                app.config.clone(),
                path.clone(),
                None,
                None,
            )
            .without_auto_sleep(),
        )
    };
    let (warm, other) = (tools(), tools());
    let args = |v: Value| v.as_object().unwrap().clone();
    // (kept before the check, what redundancy says, a fresh engine's count)
    async fn counts(t: &LedgerTools, fresh: &LedgerTools) -> (bool, u32, u32) {
        let mut service = t.open().await.unwrap();
        let kept = service.store.pressure().unwrap().is_some();
        let said = service.redundancy(0.0).await.unwrap().candidate_pairs;
        let truth = fresh.open().await.unwrap().recount().await.unwrap();
        (kept, said, truth.candidate_pairs)
    }
    let lessons = [
        (
            "editing the parser in repo r1",
            "run the focused tests first",
        ),
        (
            "editing the parser in repo r2",
            "run the focused tests first",
        ),
        ("editing the lexer in repo r1", "keep the change small"),
        ("deploying the API in repo r1", "take a backup first"),
    ];
    let mut ids = Vec::new();
    for (when, prefer) in lessons {
        let out = warm
            .capture(args(serde_json::json!({"when": when, "prefer": prefer})))
            .await
            .unwrap();
        ids.push(out["captured"]["id"].as_str().unwrap().to_string());
    }
    let (kept, said, truth) = counts(&warm, &tools()).await;
    assert!(!kept, "nothing asked for the count yet, so none was kept");
    assert!(truth > 0, "the lessons share phrases");
    assert_eq!(said, truth);
    let mut steps = 0;
    for (when, prefer) in lessons.iter().chain(&[
        (
            "editing the parser in repo r3",
            "run the focused tests first",
        ),
        (
            "testing the parser in repo r1",
            "read the existing tests first",
        ),
    ]) {
        other
            .capture(args(serde_json::json!({"when": when, "prefer": prefer})))
            .await
            .unwrap();
        steps += 1;
        let (kept, said, truth) = counts(&warm, &tools()).await;
        assert!(kept, "capture {steps} did not keep the count");
        assert_eq!(said, truth, "after capture {steps}");
    }
    // a recall and a confirmation change no pair: still kept
    other
        .recall(args(serde_json::json!({"context": "editing the parser"})))
        .await
        .unwrap();
    other
        .feedback(args(serde_json::json!({"id": ids[0]})), false)
        .await
        .unwrap();
    let (kept, said, truth) = counts(&warm, &tools()).await;
    assert!(kept, "a recall or a confirmation lost the count");
    assert_eq!(said, truth, "after a recall and a confirmation");
    // a sleep elsewhere merges the repeated lessons: the count goes stale,
    // and the pairs it judged are no longer counted
    let before = said;
    let slept = other.sleep(args(serde_json::json!({}))).await.unwrap();
    assert!(slept["merged"].as_u64().unwrap() > 0, "{slept}");
    let (kept, after, truth) = counts(&warm, &tools()).await;
    assert!(!kept, "a sleep must leave the count stale");
    assert_eq!(after, truth, "after the sleep");
    assert!(after < before, "{after} of {before} still counted");
    // counted again above, so the next capture keeps it
    warm.capture(args(serde_json::json!({
        "when": "editing the parser in repo r4", "prefer": "run the focused tests first"
    })))
    .await
    .unwrap();
    let (kept, said, truth) = counts(&other, &tools()).await;
    assert!(kept);
    assert_eq!(said, truth, "after a capture that followed the sleep");
}

#[test]
fn lessons_edited_out_of_range_are_named_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    for (when, prefer) in [
        ("editing the parser", "run the parser tests"),
        ("deploying to production", "tag the release first"),
        ("writing the docs", "link the issue"),
    ] {
        let (ok, _, err) = silt(&ledger, &["capture", "--when", when, "--prefer", prefer]);
        assert!(ok, "{err}");
    }
    let ids: Vec<String> = export(&ledger)
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    // one row edited by hand past its range, one damaged
    let db = rusqlite::Connection::open(&ledger).unwrap();
    db.execute(
        "UPDATE entries SET body = json_set(body, '$.confidence', -1) WHERE id = ?1",
        [&ids[0]],
    )
    .unwrap();
    db.execute(
        "UPDATE entries SET body = 'not json' WHERE id = ?1",
        [&ids[1]],
    )
    .unwrap();
    drop(db);
    let rows = || -> (Vec<(String, String, i64)>, i64) {
        let db = rusqlite::Connection::open(&ledger).unwrap();
        let mut q = db
            .prepare("SELECT id, body, version FROM entries ORDER BY seq")
            .unwrap();
        let rows = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let events = db
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
            .unwrap();
        (rows, events)
    };
    let before = rows();
    for args in [
        &["stats"][..],
        &["recall", "editing the parser"],
        &["capture", "--when", "w", "--prefer", "p"],
        &["confirm", &ids[2]],
        &["sleep"],
        &["export"],
    ] {
        let (ok, _, err) = silt(&ledger, args);
        assert!(!ok, "{args:?} worked on a damaged ledger");
        for needle in [
            &ids[0][..],
            "confidence must be a number at or above 0, got -1",
            &ids[1],
            "does not parse",
            "silt ledger forget",
        ] {
            assert!(err.contains(needle), "{args:?}: no '{needle}' in {err}");
        }
        assert_eq!(rows(), before, "{args:?} changed the ledger");
    }
    // the way out the error names
    for id in &ids[..2] {
        let (ok, _, err) = silt(&ledger, &["forget", id]);
        assert!(ok, "{err}");
    }
    let left = export(&ledger);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["id"], ids[2].as_str());
}
