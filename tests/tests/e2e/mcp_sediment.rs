//! The nine sediment_* tools over stdio with rmcp's client, including the
//! error paths: each bad input is `{ok: false, error}` and changes nothing.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use silt_e2e::silt_binary;

pub(crate) type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A tool result's text content, parsed as JSON.
fn result_json(r: &CallToolResult) -> Value {
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    serde_json::from_str(&text).expect("JSON result")
}

pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> (bool, Value) {
    let r: CallToolResult = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .expect("tools/call");
    let v = result_json(&r);
    assert_eq!(
        v["ok"] == true,
        r.is_error != Some(true),
        "ok and isError agree: {v}"
    );
    (v["ok"] == true, v)
}

#[tokio::test]
async fn the_nine_tools_and_their_errors() {
    let home = tempfile::tempdir().unwrap();
    let ledger = home.path().join("ledger.db").display().to_string();
    the_tools_on(home.path(), ("SILT_LEDGER_PATH", &ledger)).await;
}

/// The same calls on a team's ledger in PostgreSQL.
#[tokio::test]
async fn the_nine_tools_and_their_errors_on_postgres() {
    let home = tempfile::tempdir().unwrap();
    let db = silt_e2e::postgres::database();
    the_tools_on(home.path(), ("SILT_LEDGER_URL", &db.url)).await;
    // the rows are in the database, not in a file somewhere
    assert!(silt_e2e::postgres::count(&db.url, "SELECT COUNT(*) FROM entries") >= 2);
    assert!(!home.path().join("ledger.db").exists());
}

/// Every tool and its errors on the ledger `ledger` names (a variable
/// and its value).
async fn the_tools_on(home: &std::path::Path, ledger: (&str, &str)) {
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve")
        .env("SILT_CACHE_DIR", home.join("cache"))
        .env_remove("SILT_LEDGER_PATH")
        .env_remove("SILT_LEDGER_URL")
        .env(ledger.0, ledger.1)
        .env("SILT_CONFIG", home.join("silt.toml"));
    std::fs::write(home.join("silt.toml"), "").unwrap();
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    for (name, read_only) in [
        ("sediment_recall", false),
        ("sediment_capture", false),
        ("sediment_confirm", false),
        ("sediment_contradict", false),
        ("sediment_consolidate", false),
        ("sediment_sleep", false),
        ("sediment_review_candidates", true),
        ("sediment_apply_judgments", false),
        ("sediment_stats", true),
        ("sediment_undo", false),
        ("sediment_forget", false),
    ] {
        let t = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        assert_eq!(
            t.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(read_only),
            "{name}"
        );
        assert!(
            serde_json::to_value(&t.input_schema).unwrap()["properties"].is_object()
                || name.ends_with("consolidate")
                || name.ends_with("candidates"),
            "{name} has a schema"
        );
    }

    let (ok, a) = call(&client, "sediment_capture", json!({"when": "  non-reasoning GPT target ", "prefer": "inject explicit step-by-step CoT", "feedback": "positive"})).await;
    assert!(ok, "{a}");
    assert_eq!(
        a["captured"]["when"], "non-reasoning GPT target",
        "strings are trimmed"
    );
    assert_eq!(a["captured"]["confidence"], 0.55);
    let a_id = a["captured"]["id"].as_str().unwrap().to_string();
    let (_, b) = call(
        &client,
        "sediment_capture",
        json!({"when": "non-reasoning GPT target", "prefer": "do not inject CoT, keep it terse"}),
    )
    .await;
    let b_id = b["captured"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{b}"))
        .to_string();

    let (ok, r) = call(
        &client,
        "sediment_recall",
        json!({"context": "writing a prompt for a non-reasoning GPT target", "k": 1}),
    )
    .await;
    assert!(ok && r["count"] == 1, "{r}");
    assert_eq!(r["heuristics"][0]["hits"], 1);

    let (ok, c) = call(&client, "sediment_confirm", json!({"id": a_id})).await;
    assert!(ok && c["updated"]["confirmations"] == 2, "{c}");
    let (ok, c) = call(&client, "sediment_contradict", json!({"id": b_id})).await;
    assert!(ok && c["updated"]["confidence"] == 0.15, "{c}");

    let (ok, review) = call(&client, "sediment_review_candidates", json!({})).await;
    assert!(
        ok && review["count"] == 1 && review["remaining"] == 0,
        "{review}"
    );
    assert!(review["pairs"][0]["suspected"].is_string(), "{review}");
    assert!(
        review["pairs"][0]["a"]
            .as_str()
            .unwrap()
            .contains(" → PREFER "),
        "{review}"
    );

    let (ok, applied) = call(
        &client,
        "sediment_apply_judgments",
        json!({"judgments": [
        {"a_id": a_id, "b_id": b_id, "verdict": "contradict"},
        {"a_id": a_id, "b_id": "nope", "verdict": "merge"}]}),
    )
    .await;
    assert!(ok, "{applied}");
    assert_eq!(
        (
            applied["contradictions_resolved"].as_u64(),
            applied["skipped"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert!(
        applied["skipped_judgments"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("no entry with id 'nope'")
    );

    let (ok, h) = call(&client, "sediment_consolidate", json!({})).await;
    assert!(ok && h["active"] == 1, "{h}");
    let (ok, s) = call(&client, "sediment_sleep", json!({})).await;
    assert!(ok && s["merged"] == 0, "{s}");
    let (ok, stats) = call(
        &client,
        "sediment_stats",
        json!({"include_retired": true, "telemetry": true}),
    )
    .await;
    assert!(ok, "{stats}");
    assert_eq!(
        (stats["total"].as_u64(), stats["active"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(stats["telemetry"]["events"]["resolved"], 1);
    // the ledger started empty, so the days' net changes add up to the active count
    let drift = stats["telemetry"]["drift"].as_array().unwrap();
    assert!(!drift.is_empty(), "{stats}");
    let net: i64 = drift
        .iter()
        .map(|d| d["net_active"].as_i64().unwrap())
        .sum();
    assert_eq!(net, 1, "{drift:?}");
    assert_eq!(drift[0]["events"]["captured"], 2, "{drift:?}");

    // every bad input: {ok: false, error}, nothing changed
    for (tool, args, needle) in [
        (
            "sediment_capture",
            json!({"when": "   ", "prefer": "p"}),
            "when must be 1 to 300",
        ),
        (
            "sediment_capture",
            json!({"when": "w", "prefer": "x".repeat(301)}),
            "prefer must be 1 to 300",
        ),
        (
            "sediment_capture",
            json!({"when": "w", "prefer": "p", "feedback": "great"}),
            "invalid arguments",
        ),
        (
            "sediment_capture",
            json!({"when": "w", "prefer": "p", "colour": "red"}),
            "unknown field",
        ),
        (
            "sediment_recall",
            json!({"context": "x", "k": 0}),
            "k must be between 1 and 20",
        ),
        (
            "sediment_recall",
            json!({"context": ""}),
            "context must be 1 to 2000",
        ),
        (
            "sediment_confirm",
            json!({"id": "00000000"}),
            "sediment_stats",
        ),
        (
            "sediment_contradict",
            json!({"id": "x".repeat(33)}),
            "id must be 1 to 32",
        ),
        (
            "sediment_apply_judgments",
            json!({"judgments": []}),
            "1 to 100",
        ),
        (
            "sediment_apply_judgments",
            json!({"judgments": [{"a_id": "a", "b_id": "b", "verdict": "maybe"}]}),
            "invalid arguments",
        ),
        (
            "sediment_stats",
            json!({"limit": 501}),
            "limit must be between 1 and 500",
        ),
        (
            "sediment_sleep",
            json!({"judge": "nope"}),
            "no plugin named 'nope'",
        ),
        (
            "sediment_consolidate",
            json!({"force": true}),
            "unknown field",
        ),
    ] {
        let (ok, v) = call(&client, tool, args).await;
        assert!(!ok, "{tool} accepted bad input");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{tool}: {v}"
        );
        assert!(v["error"]["code"].is_string(), "{tool}: {v}");
    }
    let (_, after) = call(&client, "sediment_stats", json!({"include_retired": true})).await;
    assert_eq!(after["total"], 2, "bad inputs changed nothing");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn sleep_reports_progress_as_it_judges_pairs() {
    let home = tempfile::tempdir().unwrap();
    // a ledger with pairs to judge: ten lessons, five duplicated triggers
    let ledger = home.path().join("ledger.db");
    let lines: String = (0..10)
        .map(|i| {
            format!(
                "{}\n",
                json!({"when": format!("deploying service number {} on friday", i % 5), "prefer": "take a backup first", "feedback": "positive"})
            )
        })
        .collect();
    std::fs::write(home.path().join("lessons.jsonl"), lines).unwrap();
    let out = std::process::Command::new(silt_binary())
        .env("SILT_SLEEP_PRESSURE", "0")
        .args(["ledger", "--ledger"])
        .arg(&ledger)
        .args(["capture", "--from"])
        .arg(home.path().join("lessons.jsonl"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve")
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_LEDGER_PATH", &ledger)
        .env("SILT_CONFIG", home.path().join("silt.toml"));
    std::fs::write(home.path().join("silt.toml"), "").unwrap();
    let recorder = silt_e2e::mcp::ProgressRecorder::default();
    let client = recorder
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let r: CallToolResult = client
        .call_tool(CallToolRequestParams::new("sediment_sleep".to_string()))
        .await
        .expect("tools/call");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let result = result_json(&r);
    assert!(result["merged"].as_u64().unwrap() >= 5, "{result}");
    let seen = recorder.seen(2).await;
    assert!(seen.len() >= 2, "{seen:?}");
    assert_eq!(seen[0].message.as_deref(), Some("started"));
    let last = seen.last().unwrap();
    assert!(last.progress >= 5.0, "{last:?}");
    assert!(
        last.message.as_deref().unwrap().starts_with("done: "),
        "{last:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0].progress <= w[1].progress),
        "{seen:?}"
    );
    client.cancel().await.unwrap();
}

/// `silt serve` on the ledger, caches and (empty) config under `home`,
/// with auto-sleep off so the tests see every capture as written.
fn quiet_server(home: &std::path::Path) -> TokioChildProcess {
    std::fs::write(home.join("silt.toml"), "").unwrap();
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve")
        .env("SILT_CACHE_DIR", home.join("cache"))
        .env("SILT_LEDGER_PATH", home.join("ledger.db"))
        .env("SILT_SLEEP_PRESSURE", "0")
        .env("SILT_CONFIG", home.join("silt.toml"));
    TokioChildProcess::new(cmd).unwrap()
}

/// A merge made by sleep is listed with its log number and taken back by
/// `sediment_undo`: both lessons active again, as they were, and the undo
/// logged; a second undo of the same step is refused and changes nothing.
#[tokio::test]
async fn a_merge_is_undone_from_the_log() {
    let home = tempfile::tempdir().unwrap();
    let client = ().serve(quiet_server(home.path())).await.unwrap();
    let (_, a) = call(&client, "sediment_capture", json!({"when": "writing a SQL migration", "prefer": "wrap it in a transaction", "feedback": "positive"})).await;
    let (_, b) = call(&client, "sediment_capture", json!({"when": "writing an SQL migration", "prefer": "wrap the migration in a transaction"})).await;
    let before = |v: &Value| v["captured"].clone();
    let (a, b) = (before(&a), before(&b));

    let (ok, slept) = call(&client, "sediment_sleep", json!({})).await;
    assert!(ok, "{slept}");
    assert_eq!(slept["merged"], 1, "{slept}");
    let step = &slept["undoable"][0];
    assert_eq!(step["kind"], "merged", "{slept}");
    let event = step["event"].as_i64().unwrap();
    let (_, stats) = call(&client, "sediment_stats", json!({})).await;
    assert_eq!(stats["active"], 1, "{stats}");

    let (ok, undone) = call(&client, "sediment_undo", json!({"event": event})).await;
    assert!(ok, "{undone}");
    assert_eq!(undone["partial"], false);
    let (_, stats) = call(&client, "sediment_stats", json!({})).await;
    assert_eq!(stats["active"], 2, "{stats}");
    for original in [&a, &b] {
        let now = stats["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == original["id"])
            .unwrap();
        for field in [
            "when",
            "prefer",
            "confidence",
            "hit_count",
            "confirm_count",
            "status",
        ] {
            assert_eq!(now[field], original[field], "{field}: {now} vs {original}");
        }
    }
    let (ok, again) = call(&client, "sediment_undo", json!({"event": event})).await;
    assert!(!ok);
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already undone"),
        "{again}"
    );
    let (ok, missing) = call(&client, "sediment_undo", json!({"event": 9999})).await;
    assert!(!ok);
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no event 9999"),
        "{missing}"
    );
    let (_, stats) = call(&client, "sediment_stats", json!({"telemetry": true})).await;
    assert_eq!(stats["telemetry"]["events"]["undone"], 1, "{stats}");
    client.cancel().await.unwrap();
}

/// `sediment_forget` deletes a lesson for good: a warm engine in another
/// server process stops recalling it, the log keeps only the id and the
/// reason, and an unknown id is an error that changes nothing.
#[tokio::test]
async fn a_forgotten_lesson_is_gone_from_every_process() {
    let home = tempfile::tempdir().unwrap();
    let one = ().serve(quiet_server(home.path())).await.unwrap();
    let two = ().serve(quiet_server(home.path())).await.unwrap();
    let (_, keep) = call(
        &one,
        "sediment_capture",
        json!({"when": "editing the release script", "prefer": "dry-run it first"}),
    )
    .await;
    let (_, gone) = call(
        &one,
        "sediment_capture",
        json!({"when": "editing the release notes", "prefer": "paste the private token here"}),
    )
    .await;
    let gone_id = gone["captured"]["id"].as_str().unwrap().to_string();
    // the second process's engine is warm and holds both
    let (_, recalled) = call(
        &two,
        "sediment_recall",
        json!({"context": "editing the release notes", "k": 5}),
    )
    .await;
    assert_eq!(recalled["count"], 2, "{recalled}");

    let (ok, forgot) = call(
        &one,
        "sediment_forget",
        json!({"id": gone_id, "reason": "holds a secret"}),
    )
    .await;
    assert!(ok, "{forgot}");
    assert_eq!(forgot["was"]["prefer"], "paste the private token here");
    let (_, recalled) = call(
        &two,
        "sediment_recall",
        json!({"context": "editing the release notes", "k": 5}),
    )
    .await;
    assert_eq!(recalled["count"], 1, "{recalled}");
    assert_eq!(recalled["heuristics"][0]["id"], keep["captured"]["id"]);
    let (_, stats) = call(
        &two,
        "sediment_stats",
        json!({"include_retired": true, "telemetry": true}),
    )
    .await;
    assert_eq!(stats["total"], 1, "{stats}");
    assert_eq!(stats["telemetry"]["events"]["forgotten"], 1, "{stats}");

    let (ok, again) = call(&one, "sediment_forget", json!({"id": gone_id})).await;
    assert!(!ok);
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no entry"),
        "{again}"
    );
    let db = std::fs::read(home.path().join("ledger.db")).unwrap();
    let wal = std::fs::read(home.path().join("ledger.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(13).any(|w| w == b"private token"),
            "the text is still in the file"
        );
    }
    one.cancel().await.unwrap();
    two.cancel().await.unwrap();
}

/// A capture whose scheduled sleep pass fails (here: the sleep judge's
/// model server is down) is still `ok: true`, stored once, with the
/// failure as a warning, so an agent never retries a stored lesson.
#[tokio::test]
async fn a_failed_auto_sleep_is_a_warning_beside_a_stored_capture() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("silt.toml"),
        "[tools.sediment_sleep]\njudge = \"openai\"\n",
    )
    .unwrap();
    // a port nothing listens on
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve")
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_LEDGER_PATH", home.path().join("ledger.db"))
        .env("SILT_SLEEP_PRESSURE", "0.01")
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_MODEL_URL", format!("http://127.0.0.1:{dead}"));
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let lessons = [
        ("running the parser tests", "use the focused test target"),
        (
            "running the parser tests in CI",
            "use the focused test target first",
        ),
        (
            "running the parser tests locally",
            "use the focused test target",
        ),
    ];
    let mut last = Value::Null;
    let mut captured = 0;
    for (when, prefer) in lessons {
        let (ok, v) = call(
            &client,
            "sediment_capture",
            json!({"when": when, "prefer": prefer}),
        )
        .await;
        assert!(ok, "a stored capture is ok whatever its sleep did: {v}");
        captured += 1;
        last = v;
    }
    // the server sleeps after answering: a later capture reports the
    // failure of the pass an earlier one started
    let started = std::time::Instant::now();
    while last.get("warning").is_none() && started.elapsed().as_secs() < 60 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let (ok, v) = call(
            &client,
            "sediment_capture",
            json!({"when": format!("running the parser tests, take {captured}"),
                   "prefer": "use the focused test target"}),
        )
        .await;
        assert!(ok, "a stored capture is ok whatever its sleep did: {v}");
        captured += 1;
        last = v;
    }
    let warning = last["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("the sleep pass an earlier capture started failed")
            && warning.contains(&format!("127.0.0.1:{dead}")),
        "the failed pass is a warning naming the server: {last}"
    );
    let (_, stats) = call(&client, "sediment_stats", json!({})).await;
    assert_eq!(
        stats["active"], captured,
        "every capture stored once: {stats}"
    );
    // asked directly, the judge's failure keeps its kind: the agent reads
    // judge_failed (retry or pick another judge), not a broken ledger
    for (tool, args) in [
        ("sediment_sleep", json!({})),
        ("sediment_review_candidates", json!({})),
    ] {
        let (ok, v) = call(&client, tool, args).await;
        assert!(!ok, "{tool}: {v}");
        assert_eq!(v["error"]["code"], "judge_failed", "{tool}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("127.0.0.1:{dead}")),
            "{tool}: {v}"
        );
    }
    let (_, after) = call(&client, "sediment_stats", json!({})).await;
    assert_eq!(after["active"], captured, "nothing changed: {after}");
    client.cancel().await.unwrap();
}
