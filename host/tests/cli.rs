//! The `silt` binary from a shell: `ask` and `plugins`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

fn silt(args: &[&str], stdin: &str) -> (bool, Value, String) {
    let cache = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_silt"))
        .args(args)
        .env("SILT_CACHE_DIR", cache.path())
        .env("SILT_PLUGIN_PATH", cache.path().join("none"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    (
        out.status.success(),
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn ask_judge_from_stdin() {
    let (ok, out, err) = silt(
        &[
            "ask",
            "judge",
            "Does the ticket concern the database?",
            "--yes",
            "database queries, tables, migrations, indexes",
            "--no",
            "user interface, styling, layout",
            "--top-k",
            "1",
        ],
        r#"["button styling in the layout", {"id": "db", "text": "slow queries on the orders table"}]"#,
    );
    assert!(ok, "{err}");
    assert_eq!(out["results"].as_array().unwrap().len(), 1);
    assert_eq!(out["results"][0]["id"], "db");
    assert_eq!(out["items_scored"], 2);
}

#[test]
fn ask_choose_and_score_take_repeated_flags() {
    let (ok, out, err) = silt(
        &[
            "ask",
            "choose",
            "Which team?",
            "--option",
            "web=browser UI and CSS",
            "--option",
            "api=HTTP endpoints and auth",
        ],
        r#"["CSS overflow in the browser"]"#,
    );
    assert!(ok, "{err}");
    assert_eq!(out["results"][0]["choice"], "web");
    let (ok, out, err) = silt(
        &[
            "ask",
            "score",
            "How bad?",
            "--level",
            "cosmetic",
            "--level",
            "crash and data loss",
        ],
        r#"["crash"]"#,
    );
    assert!(ok, "{err}");
    assert_eq!(out["results"][0]["level"], 1);
}

#[test]
fn bad_items_are_refused_with_a_hint() {
    let (ok, _, err) = silt(
        &["ask", "judge", "q", "--yes", "y", "--no", "n"],
        "not json",
    );
    assert!(!ok);
    assert!(err.contains("must be a JSON list of strings"), "{err}");
}

#[test]
fn inspect_embedding_shows_its_model_grant_and_vectors() {
    // the embedding judge is granted its model, by name, and nothing else
    let (ok, out, err) = silt(&["plugins", "inspect", "embedding", "--json"], "");
    assert!(ok, "{err}");
    assert_eq!(
        out["grants"],
        serde_json::json!({"read": [], "http": [], "env": [], "models": ["minilm"], "exec": {}})
    );
    assert_eq!(
        out["exports"],
        serde_json::json!([
            "silt:judge/judge@0.1.2",
            "silt:judge/relations@0.1.2",
            "silt:judge/relations-by-index@0.1.2",
            "silt:embed/embed@0.2.2"
        ])
    );
}

#[test]
fn inspect_lexical_shows_no_grants() {
    let (ok, out, err) = silt(&["plugins", "inspect", "lexical", "--json"], "");
    assert!(ok, "{err}");
    assert_eq!(
        out["grants"],
        serde_json::json!({"read": [], "http": [], "env": [], "models": [], "exec": {}})
    );
    assert_eq!(
        out["exports"],
        serde_json::json!([
            "silt:judge/judge@0.1.2",
            "silt:judge/relations@0.1.2",
            "silt:judge/relations-by-index@0.1.2"
        ])
    );
    assert_eq!(out["info"]["deterministic"], true);
    // a similarity judge is never trusted to confirm a claim
    assert_eq!(out["entailment"], false);
    assert!(
        out["imports"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| !i.as_str().unwrap().starts_with("wasi:http"))
    );
}

#[test]
fn demo_consolidates_ten_lessons_into_six() {
    let (ok, out, err) = silt(&["demo", "--json", "--now", "1750000000"], "");
    assert!(ok, "{err}");
    assert_eq!(out["before"]["active"], 10);
    assert_eq!(
        out["consolidate"],
        serde_json::json!({"retired": 1, "evicted": 0, "active": 9})
    );
    assert_eq!(
        out["sleep"],
        serde_json::json!({"merged": 0, "contradictions_resolved": 1, "generalized": 1, "held_for_review": 0})
    );
    assert_eq!(out["after"]["active"], 6);
    let parent = out["after"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["note"] == "abstracted parent")
        .unwrap();
    assert_eq!(
        parent["when"],
        "trading prompt for XAUUSD, crypto perps or futures"
    );
    let dormant = out["after"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == "dormant")
        .count();
    assert_eq!(dormant, 3);
}

/// `silt grep` as a person reads it: one line per hit and a summary whose
/// counts are numbers (they once printed "null").
#[test]
fn grep_prints_hits_and_a_summary_with_counts() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("config.py"), "def parse_config(): pass\n").unwrap();
    std::fs::write(repo.path().join("page.py"), "def render(): pass\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_silt"))
        .args(["grep", "--threshold", "0", "where is the config parsed"])
        .arg(repo.path())
        .env("SILT_CACHE_DIR", cache.path())
        .env("SILT_PLUGIN_PATH", cache.path().join("none"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.lines().next().unwrap().contains("config.py"), "{text}");
    assert!(text.contains("(0 judge requests, 0 cached)"), "{text}");
    assert!(!text.contains("null"), "{text}");
}

/// `silt verify` with no claims names both ways to give them.
#[test]
fn verify_without_claims_names_report_and_records() {
    let (ok, _, err) = silt(&["verify"], "");
    assert!(!ok);
    assert!(
        err.contains("--report") && err.contains("--records"),
        "{err}"
    );
}

/// Logs carry no colour codes when stderr is not a terminal.
#[test]
fn logs_off_a_terminal_have_no_colour_codes() {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_silt"))
        .args(["plugins", "list"])
        .env("SILT_CACHE_DIR", cache.path())
        .env("SILT_PLUGIN_PATH", cache.path().join("none"))
        .env("SILT_LOG", "debug")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.is_empty(), "debug logging printed nothing");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// `silt eval verify` over the committed labelled set: every claim gets a
/// verdict and is counted once, per split and alteration.
#[test]
fn eval_verify_counts_every_labelled_claim() {
    let set = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/eval/verify");
    let (ok, out, err) = silt(
        &[
            "eval", "verify", "--judge", "lexical", "--set", set, "--json",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert_eq!(out["claims"], 72, "{out:#}");
    let mut counted = 0;
    for split in ["dev", "test"] {
        let groups = out["splits"][split].as_object().unwrap();
        for (group, t) in groups {
            if group != "altered (all)" {
                counted += t["claims"].as_u64().unwrap();
            }
        }
        assert!(
            groups.contains_key("true") && groups.contains_key("negation"),
            "{out:#}"
        );
    }
    assert_eq!(counted, 72, "{out:#}");
    // the bar: no altered claim is confirmed (lexical confirms none at all)
    assert_eq!(
        out["altered_called_supports_fully"],
        serde_json::json!([]),
        "{out:#}"
    );
}

/// An error about the ledger names the command a shell user runs.
#[test]
fn a_missing_lesson_points_at_silt_ledger_stats() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("l.db");
    let ledger = ledger.to_str().unwrap();
    let (ok, _, err) = silt(&["ledger", "--ledger", ledger, "confirm", "nope"], "");
    assert!(!ok);
    assert!(err.contains("silt ledger stats"), "{err}");
}
