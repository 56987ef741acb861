//! A team's ledger in PostgreSQL, on the throwaway server `.ci/run`
//! starts: many writer processes at once, the same state as SQLite for
//! the same operations, a copy there and back, and the errors a user
//! meets (a server that is down, a database of something else). The nine
//! tools over MCP are in `mcp_sediment`, a writer killed with SIGKILL in
//! `http_server`.

use std::process::Command;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use silt_e2e::postgres::{count, database, sql};
use silt_e2e::silt_binary;

/// `silt ARGS` with `env`, run with no ledger settings but these; its
/// exit status, JSON stdout (Null if none) and stderr.
fn silt(env: &[(&str, &str)], args: &[&str]) -> (bool, Value, String) {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let mut cmd = Command::new(silt_binary());
    cmd.args(args)
        .env_remove("SILT_LEDGER_URL")
        .env_remove("SILT_LEDGER_PATH")
        .env_remove("SEDIMENT_LEDGER_PATH")
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("SILT_SLEEP_PRESSURE", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.success(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `silt ledger --ledger LEDGER ARGS --json`, which must succeed.
fn ledger(at: &str, args: &[&str]) -> Value {
    let mut all = vec!["ledger", "--ledger", at, "--json"];
    all.extend_from_slice(args);
    let (ok, json, stderr) = silt(&[], &all);
    assert!(ok, "silt {all:?}: {stderr}");
    json
}

/// Eight `silt serve` processes, one per agent, capture 250 lessons each
/// into one PostgreSQL ledger at once: exactly 2000 rows, each
/// acknowledged id once, and every commit its own version.
#[tokio::test(flavor = "multi_thread")]
async fn eight_writers_leave_exactly_two_thousand_rows() {
    let db = database();
    let home = tempfile::tempdir().unwrap();
    let mut writers = Vec::new();
    for w in 0..8 {
        let dir = home.path().join(format!("agent{w}"));
        std::fs::create_dir_all(&dir).unwrap();
        let url = db.url.clone();
        writers.push(tokio::spawn(async move {
            let client = silt_e2e::mcp::serve(
                &dir,
                &dir,
                &[("SILT_LEDGER_URL", &url), ("SILT_SLEEP_PRESSURE", "0")],
            )
            .await;
            let mut ids = Vec::new();
            for i in 0..250 {
                let args = json!({"when": format!("agent {w} editing module {i}"),
                                  "prefer": format!("run test suite {w}-{i} first")});
                let out = client
                    .call_tool(
                        CallToolRequestParams::new("sediment_capture")
                            .with_arguments(args.as_object().unwrap().clone()),
                    )
                    .await
                    .unwrap();
                let out = silt_e2e::mcp::json_of(&out);
                assert_eq!(out["ok"], true, "{out}");
                ids.push(out["captured"]["id"].as_str().unwrap().to_string());
            }
            client.cancel().await.unwrap();
            ids
        }));
    }
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    assert_eq!(acked.len(), 2000);
    assert_eq!(count(&db.url, "SELECT COUNT(*) FROM entries"), 2000);
    assert_eq!(
        count(&db.url, "SELECT COUNT(DISTINCT id) FROM entries"),
        2000
    );
    let stored: std::collections::HashSet<String> = sql(&db.url, "SELECT id FROM entries")
        .iter()
        .map(|r| r.get(0))
        .collect();
    for id in &acked {
        assert!(stored.contains(id), "acknowledged capture {id} is missing");
    }
    assert_eq!(
        count(
            &db.url,
            "SELECT COUNT(*) FROM events WHERE kind = 'captured'"
        ),
        2000
    );
}

/// Replaces every id in `v` by its order of first appearance, so two
/// ledgers given the same operations (with ids drawn at random) compare.
fn without_ids(v: &Value, ids: &[String]) -> String {
    let mut text = v.to_string();
    for (n, id) in ids.iter().enumerate() {
        text = text.replace(id.as_str(), &format!("#{n}"));
    }
    text
}

/// The same operations, at the same times, on a SQLite file and on a
/// PostgreSQL database: the same lessons, statuses, counters and log.
#[test]
fn sqlite_and_postgres_given_the_same_operations_end_in_the_same_state() {
    let db = database();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.db").display().to_string();
    let t0 = 1_760_000_000.0_f64;
    let mut states = Vec::new();
    for at in [file.as_str(), db.url.as_str()] {
        let now = |step: f64| format!("{}", t0 + step * 3600.0);
        let mut ids = Vec::new();
        let lessons = [
            (
                "deploying the api service on friday",
                "take a database backup first",
            ),
            (
                "deploying the api service on friday",
                "take a database backup first",
            ),
            (
                "formatting python code in this repo",
                "use tabs for indentation",
            ),
            (
                "formatting python code in this repo",
                "use spaces for indentation",
            ),
            ("writing a parser for the config", "add fuzz tests first"),
            ("writing a lexer for the config", "add fuzz tests first"),
            ("writing a printer for the config", "add fuzz tests first"),
        ];
        for (i, (when, prefer)) in lessons.iter().enumerate() {
            let out = ledger(
                at,
                &[
                    "--now",
                    &now(i as f64),
                    "capture",
                    "--when",
                    when,
                    "--prefer",
                    prefer,
                ],
            );
            ids.push(out["captured"]["id"].as_str().unwrap().to_string());
        }
        ledger(at, &["--now", &now(8.0), "confirm", &ids[0]]);
        ledger(at, &["--now", &now(9.0), "contradict", &ids[2]]);
        ledger(
            at,
            &["--now", &now(10.0), "recall", "deploying the api on friday"],
        );
        let mut slept = ledger(at, &["--now", &now(11.0), "sleep"]);
        // how candidates were found names this run's own (temporary) models
        // folder; both stores found them the same way
        let candidates = slept["candidates"].take();
        assert!(
            candidates.as_str().unwrap().starts_with("by words only"),
            "{candidates}"
        );
        ledger(at, &["--now", &now(12.0), "consolidate"]);
        ledger(
            at,
            &["--now", &now(13.0), "forget", &ids[4], "--reason", "wrong"],
        );
        let export = ledger(at, &["export"]);
        let history = ledger(at, &["history"]);
        // the parent sleep made, in stored order, is numbered too
        for e in export.as_array().unwrap() {
            let id = e["id"].as_str().unwrap().to_string();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        states.push((
            without_ids(&export, &ids),
            without_ids(&history, &ids),
            without_ids(&slept, &ids),
        ));
    }
    assert_eq!(states[0].2, states[1].2, "the sleep reports differ");
    assert_eq!(states[0].0, states[1].0, "the lessons differ");
    assert_eq!(states[0].1, states[1].1, "the logs differ");
    // the run did reach every kind of change
    for kind in [
        "captured",
        "confirmed",
        "contradicted",
        "merged",
        "forgotten",
    ] {
        assert!(
            states[0].1.contains(kind),
            "no {kind} event: {}",
            states[0].1
        );
    }
}

/// `silt ledger migrate --to` copies a SQLite ledger (lessons, log with
/// undo records, vectors) to PostgreSQL and back, with the counts checked;
/// an undo of a step made before the copy still works after it; a copy
/// into a ledger that is not empty is refused and changes nothing.
#[test]
fn migrate_copies_a_ledger_to_postgres_and_back() {
    let db = database();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db").display().to_string();
    let b = dir.path().join("b.db").display().to_string();
    for (i, prefer) in [
        "rerun the flaky test",
        "rerun the flaky test",
        "quarantine it",
    ]
    .iter()
    .enumerate()
    {
        ledger(
            &a,
            &[
                "--now",
                &format!("{}", 1_760_000_000 + i * 60),
                "capture",
                "--when",
                "a test fails only on ci",
                "--prefer",
                prefer,
                "--feedback",
                "positive",
            ],
        );
    }
    ledger(&a, &["--now", "1760001000", "sleep"]);
    let there = ledger(&a, &["migrate", "--to", &db.url]);
    assert_eq!(there["verified"], true, "{there}");
    let events = there["events"].as_i64().unwrap();
    assert!(
        there["entries"].as_i64().unwrap() >= 3 && events >= 4,
        "{there}"
    );
    assert_eq!(count(&db.url, "SELECT COUNT(*) FROM events"), events);
    assert!(
        !there["to"].as_str().unwrap().contains("password"),
        "{there}"
    );
    let back = ledger(&db.url, &["migrate", "--to", &b]);
    assert_eq!(back["entries"], there["entries"]);
    assert_eq!(back["events"], there["events"]);
    assert_eq!(ledger(&a, &["export"]), ledger(&b, &["export"]));
    assert_eq!(ledger(&a, &["history"]), ledger(&db.url, &["history"]));
    assert_eq!(ledger(&a, &["history"]), ledger(&b, &["history"]));
    // a merge made in the file is undone in the database, by its number
    let history = ledger(&db.url, &["history"]);
    let merge = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "merged")
        .unwrap_or_else(|| panic!("no merge to undo: {history}"));
    let undone = ledger(
        &db.url,
        &["--now", "1760002000", "undo", &merge["seq"].to_string()],
    );
    assert_eq!(undone["ok"], true, "{undone}");
    // new events number on from the copied ones
    let after = ledger(&db.url, &["history"]);
    let seqs: Vec<i64> = after["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_i64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // into a ledger that holds lessons: refused, nothing written
    let before = count(&db.url, "SELECT COUNT(*) FROM events");
    let (ok, _, stderr) = silt(&[], &["ledger", "--ledger", &a, "migrate", "--to", &db.url]);
    assert!(!ok);
    assert!(stderr.contains("not empty"), "{stderr}");
    assert_eq!(count(&db.url, "SELECT COUNT(*) FROM events"), before);
}

/// A server that is not there is an error naming it, with what to check;
/// silt never falls back to a local file.
#[test]
fn an_unreachable_server_is_an_error_naming_the_host() {
    // a port nothing listens on: bound, then closed
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://silt:secret@127.0.0.1:{port}/team");
    let data = tempfile::tempdir().unwrap();
    let data_home = data.path().display().to_string();
    for args in [
        vec!["ledger", "--json", "stats"],
        vec!["ledger", "--json", "recall", "anything"],
    ] {
        let (ok, _, stderr) = silt(
            &[("SILT_LEDGER_URL", &url), ("XDG_DATA_HOME", &data_home)],
            &args,
        );
        assert!(!ok, "{args:?} succeeded");
        assert!(
            stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains("cannot reach"),
            "{stderr}"
        );
        assert!(
            !stderr.contains("secret"),
            "the password is shown: {stderr}"
        );
    }
    let left: Vec<_> = walk(data.path());
    assert!(left.is_empty(), "a local ledger was made: {left:?}");
    // a URL of another kind is not taken for a file name
    let (ok, _, stderr) = silt(
        &[
            ("SILT_LEDGER_URL", "mysql://silt@127.0.0.1/team"),
            ("XDG_DATA_HOME", &data_home),
        ],
        &["ledger", "--json", "stats"],
    );
    assert!(!ok && stderr.contains("postgres:// URL"), "{stderr}");
    assert!(walk(data.path()).is_empty());
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// A database that holds another program's tables is not taken over: an
/// error that says so, and not one table or row added.
#[test]
fn a_database_of_something_else_is_refused_untouched() {
    let db = database();
    sql(&db.url, "CREATE TABLE invoices (id INT PRIMARY KEY)");
    let (ok, _, stderr) = silt(
        &[("SILT_LEDGER_URL", &db.url)],
        &["ledger", "--json", "stats"],
    );
    assert!(!ok);
    assert!(
        stderr.contains("not a silt ledger") && stderr.contains("invoices"),
        "{stderr}"
    );
    assert_eq!(
        count(
            &db.url,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ),
        1
    );
}

/// `silt demo` on a team's server gives what the embedded default gives,
/// and leaves the database as it found it (the demo works in a schema of
/// its own, dropped after).
#[test]
fn the_demo_on_postgres_matches_the_embedded_default() {
    let db = database();
    let now = "1760000000";
    let (ok, embedded, stderr) = silt(&[], &["demo", "--json", "--now", now]);
    assert!(ok, "{stderr}");
    let (ok, on_postgres, stderr) = silt(
        &[("SILT_LEDGER_URL", &db.url)],
        &["demo", "--json", "--now", now],
    );
    assert!(ok, "{stderr}");
    assert_eq!(on_postgres["after"]["active"], 6, "{on_postgres}");
    assert_eq!(
        crate::standalone::normalise_ids(&on_postgres),
        crate::standalone::normalise_ids(&embedded)
    );
    assert_eq!(
        count(
            &db.url,
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'silt_%'"
        ),
        0,
        "the demo's schema was left behind"
    );
    assert_eq!(
        count(
            &db.url,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ),
        0
    );
}

/// A write that cannot get the ledger's lock in time fails with a clear
/// error, and the server's connection is usable again once the lock is
/// free: the failed BEGIN left no aborted transaction behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_lock_wait_that_times_out_leaves_the_connection_usable() {
    let db = database();
    let home = tempfile::tempdir().unwrap();
    // statements give up after 300 ms, so the lock wait below does
    let url = format!("{}?options=-c%20statement_timeout%3D300", db.url);
    let client = silt_e2e::mcp::serve(
        home.path(),
        home.path(),
        &[("SILT_LEDGER_URL", &url), ("SILT_SLEEP_PRESSURE", "0")],
    )
    .await;
    let capture = |n: u32| {
        let args = json!({"when": format!("step {n} of the release"), "prefer": "tag it first"});
        CallToolRequestParams::new("sediment_capture")
            .with_arguments(args.as_object().unwrap().clone())
    };
    let first = silt_e2e::mcp::json_of(&client.call_tool(capture(1)).await.unwrap());
    assert_eq!(first["ok"], true, "{first}");
    // another session holds the ledger's lock (the key the store takes)
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let (held, is_held) = std::sync::mpsc::channel::<()>();
    let holder_url = db.url.clone();
    let holder = std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&holder_url, postgres::NoTls).unwrap();
        c.batch_execute(
            "SELECT pg_advisory_lock(hashtext('silt-ledger:' || coalesce(current_schema(), '')))",
        )
        .unwrap();
        held.send(()).unwrap();
        let _ = release.recv();
    });
    is_held.recv().unwrap();
    let blocked: Value = serde_json::from_str(&silt_e2e::mcp::text_of(
        &client.call_tool(capture(2)).await.unwrap(),
    ))
    .unwrap();
    assert_eq!(blocked["ok"], false, "{blocked}");
    assert!(
        blocked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("statement timeout"),
        "{blocked}"
    );
    hold.send(()).unwrap();
    holder.join().unwrap();
    let third = silt_e2e::mcp::json_of(&client.call_tool(capture(3)).await.unwrap());
    assert_eq!(third["ok"], true, "{third}");
    client.cancel().await.unwrap();
    assert_eq!(count(&db.url, "SELECT COUNT(*) FROM entries"), 2);
}

/// The event log finds a lesson by its exact id on PostgreSQL too (an id
/// holding `_` or `%` picks up no other lesson's events, and undo's check
/// for later steps is not fooled), the same check SQLite's unit test runs.
#[test]
fn the_event_log_matches_ids_exactly() {
    let db = database();
    let mut store = silt_ledger_service::store::Store::open(std::path::Path::new(&db.url)).unwrap();
    silt_ledger_service::store::check_events_match_ids_exactly(&mut store);
}
