//! `sieve_verify` end to end: `silt serve` over stdio and `silt verify` on
//! the command line, against files under a base path, a loopback web
//! server, and PDFs (text, scanned, encrypted, broken).

use std::path::Path;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use silt_e2e::mcp::{Client, json_of, text_of};
use silt_e2e::silt_binary;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const NOTES: &str = "# Ledger notes\n\n\
    The ledger keeps lessons as WHEN and PREFER pairs.\n\n\
    Sleep merges duplicate lessons and turns contradictions into boundary rules.\n\n\
    A budget caps the active set at 2000 entries, evicting the weakest first.\n";

/// A folder with `base/notes.md` and, outside the base, `secret.txt`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    std::fs::write(dir.path().join("base/notes.md"), NOTES).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "the secret").unwrap();
    dir
}

async fn serve(home: &Path, env: &[(&str, &str)]) -> Client {
    silt_e2e::mcp::serve(home, &home.join("base"), env).await
}

async fn verify(client: &Client, args: Value) -> CallToolResult {
    silt_e2e::mcp::call(client, "sieve_verify", args).await
}

/// A loopback server answering every request with `body` as HTML; counts requests.
async fn web(body: &'static str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/page", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 2048];
            let _ = sock.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_over_stdio_checks_files_quotes_and_confinement() {
    let home = workspace();
    let client = serve(home.path(), &[]).await;
    let out = json_of(
        &verify(
            &client,
            json!({"records": [
                {"claim": "A budget caps the active set at 2000 entries",
                 "citations": [{"locator": "notes.md", "quote": "caps the active set at 2000 entries."}]},
                {"claim": "The secret is told", "citations": [{"locator": "../secret.txt"}]},
                {"claim": "Use silt", "kind": "recommendation",
                 "premises": ["Sleep merges duplicate lessons"],
                 "citations": [{"locator": "notes.md"}]},
            ]}),
        )
        .await,
    );
    let r = &out["results"];
    // found and matched, but the lexical judge cannot assess a claim
    assert_eq!(r[0]["verdict"], "unverified", "{out:#}");
    assert_eq!(r[0]["citations"][0]["quote_found"], true);
    assert_eq!(r[0]["best_passage"]["via"], "quote");
    assert_eq!(r[0]["flags"], json!(["judge_cannot_confirm"]), "{out:#}");
    // outside the base path: refused, flagged, and the claim blocks relay
    assert_eq!(r[1]["flags"], json!(["fetch_failed", "no_evidence"]));
    let refused = out["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["locator"] == "../secret.txt")
        .unwrap();
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("outside the base path")
    );
    assert_eq!(out["unqualified_factual_relay_blocked"], true);
    assert_eq!(r[2]["kind"], "recommendation");
    assert_eq!(r[2]["verdict"], Value::Null);
    assert_eq!(r[3]["premise_of"], 2);
    assert_eq!(r[3]["kind"], "fact");
    // the fact the lexical judge could not assess, the refused one and the
    // premise
    assert_eq!(out["counts"]["unverified"], 3);
    let notes = out["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["locator"] == "notes.md")
        .unwrap();
    assert_eq!(notes["source_version"].as_str().unwrap().len(), 64);
    for field in [
        "tokens",
        "requests",
        "cache_hits",
        "cost_usd",
        "budget_exhausted",
    ] {
        assert!(out.get(field).is_some(), "usage field {field} missing");
    }
    assert_eq!(out["requests"], 2);

    // the same call again: every answer comes from the cache
    let again = json_of(
        &verify(
            &client,
            json!({"records": [{"claim": "A budget caps the active set at 2000 entries",
                "citations": [{"locator": "notes.md", "quote": "caps the active set at 2000 entries."}]}]}),
        )
        .await,
    );
    assert_eq!(
        (again["requests"].clone(), again["cache_hits"].clone()),
        (json!(0), json!(1))
    );

    // a report
    let out = json_of(
        &verify(
            &client,
            json!({"report": "# Findings\n\n- The budget caps the active set at 2000 entries (`notes.md`).\n",
                   "base_path": home.path().join("base").to_str().unwrap()}),
        )
        .await,
    );
    assert_eq!(out["results"][0]["extraction_uncertain"], true);
    assert_eq!(out["results"][0]["claim_context"], "Findings");
    assert_eq!(out["results"][0]["citations"][0]["fetched"], true);

    // bad input: a clear error
    for (args, needle) in [
        (json!({"records": [], "report": "x"}), "exactly one"),
        (json!({}), "exactly one"),
        (
            json!({"records": [{"claim": "x"}], "support_threshold": 2}),
            "support_threshold",
        ),
        (
            json!({"records": [{"claim": "", "citations": []}]}),
            "claim is empty",
        ),
        (
            json!({"report": "x", "base_path": "/no/such/folder"}),
            "cannot open",
        ),
    ] {
        let r = verify(&client, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args} should fail");
        assert!(
            text_of(&r).contains(needle),
            "{args}: {} lacks {needle}",
            text_of(&r)
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn web_sources_on_internal_addresses_need_a_grant() {
    let (url, seen) =
        web("<html><body><p>The ledger keeps 2000 entries.</p><script>x()</script></body></html>")
            .await;
    let home = workspace();
    let records = json!({"records": [{"claim": "The ledger keeps 2000 entries",
        "citations": [{"locator": url, "quote": "keeps 2000 entries"}]}]});

    let client = serve(home.path(), &[]).await;
    let out = json_of(&verify(&client, records.clone()).await);
    let err = out["sources"][0]["error"].as_str().unwrap().to_string();
    assert!(err.contains("internal address"), "{err}");
    assert_eq!(
        out["results"][0]["flags"],
        json!(["fetch_failed", "no_evidence"])
    );
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    client.cancel().await.unwrap();

    let client = serve(home.path(), &[("SILT_FETCH_ALLOW_HOSTS", "127.0.0.1")]).await;
    let out = json_of(&verify(&client, records).await);
    assert_eq!(out["sources"][0]["error"], Value::Null, "{out:#}");
    assert_eq!(out["results"][0]["citations"][0]["quote_found"], true);
    let text = out["results"][0]["best_passage"]["text"].as_str().unwrap();
    assert_eq!(text, "The ledger keeps 2000 entries.", "HTML became text");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
}

/// A one-page PDF showing `text` in a standard font (None: a page with
/// no text, as a scan without OCR has), optionally marked encrypted.
fn pdf(text: Option<&str>, encrypted: bool) -> Vec<u8> {
    use lopdf::Object;
    use lopdf::content::{Content, Operation};
    let operations = match text {
        Some(t) => vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
            Operation::new("Td", vec![72.into(), 700.into()]),
            Operation::new("Tj", vec![Object::string_literal(t)]),
            Operation::new("ET", vec![]),
        ],
        None => vec![
            Operation::new("re", vec![72.into(), 600.into(), 200.into(), 100.into()]),
            Operation::new("f", vec![]),
        ],
    };
    let content = Content { operations }.encode().unwrap();
    silt_e2e::pdf::one_page(&content, encrypted)
}

#[test]
fn silt_verify_reads_pdfs_in_a_child_and_reports_why_one_cannot_be_read() {
    let home = workspace();
    let base = home.path().join("base");
    std::fs::write(
        base.join("paper.pdf"),
        pdf(Some("Ledgers fade lessons after ninety days."), false),
    )
    .unwrap();
    std::fs::write(base.join("scan.pdf"), pdf(None, false)).unwrap();
    std::fs::write(base.join("locked.pdf"), pdf(Some("secret"), true)).unwrap();
    std::fs::write(
        base.join("broken.pdf"),
        b"%PDF-1.4\nthis is not a PDF body\n",
    )
    .unwrap();
    let records = json!([
        {"claim": "Ledgers fade lessons after ninety days",
         "citations": [{"locator": "paper.pdf", "quote": "fade lessons after ninety days."}]},
        {"claim": "A scan", "citations": [{"locator": "scan.pdf"}]},
        {"claim": "A locked file", "citations": [{"locator": "locked.pdf"}]},
        {"claim": "A broken file", "citations": [{"locator": "broken.pdf"}]},
    ]);
    std::fs::write(home.path().join("records.json"), records.to_string()).unwrap();
    std::fs::write(home.path().join("silt.toml"), "").unwrap();
    let out = std::process::Command::new(silt_binary())
        .current_dir(&base)
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .args(["verify", "--json", "--records"])
        .arg(home.path().join("records.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let error_of = |loc: &str| -> String {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["locator"] == loc)
            .unwrap()["error"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(error_of("paper.pdf"), "", "{v:#}");
    assert_eq!(
        v["results"][0]["citations"][0]["quote_found"], true,
        "{v:#}"
    );
    assert!(
        error_of("scan.pdf").contains("no text layer"),
        "{}",
        error_of("scan.pdf")
    );
    assert!(
        error_of("locked.pdf").contains("encrypt"),
        "{}",
        error_of("locked.pdf")
    );
    assert!(
        error_of("broken.pdf").contains("cannot be parsed"),
        "{}",
        error_of("broken.pdf")
    );
    for i in 1..4 {
        assert_eq!(
            v["results"][i]["flags"],
            json!(["fetch_failed", "no_evidence"])
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_and_verify_report_progress_when_asked() {
    let home = workspace();
    let base = home.path().join("base");
    let (client, recorder) = silt_e2e::mcp::serve_recording(home.path(), &base).await;
    let out = json_of(
        &silt_e2e::mcp::call(
            &client,
            "sieve_verify",
            json!({"records": [{"claim": "A budget caps the active set",
                                "citations": [{"locator": "notes.md"}]}]}),
        )
        .await,
    );
    assert_eq!(out["sources"][0]["error"], Value::Null);
    let seen = recorder.seen(2).await;
    assert_eq!(seen[0].message.as_deref(), Some("started"));
    let last = seen.last().unwrap();
    // one source fetched and its passages judged
    assert!(last.progress >= 2.0, "{last:?}");
    // the last stage is named, with its size, and the total is the count
    assert!(
        last.message
            .as_deref()
            .unwrap()
            .starts_with("done: judging passages: "),
        "{last:?}"
    );
    assert_eq!(last.total, Some(last.progress), "{last:?}");

    recorder.0.lock().unwrap().clear();
    let out = json_of(
        &silt_e2e::mcp::call(
            &client,
            "sieve_grep",
            json!({"question": "ledger budget", "path": "."}),
        )
        .await,
    );
    assert!(out["units_scored"].as_u64().unwrap() >= 1);
    let seen = recorder.seen(2).await;
    let last = seen.last().unwrap();
    assert!(last.progress >= 1.0, "a file was read: {last:?}");
    // the lexical judge is not asked: reading the files is the last stage
    let files = out["files_walked"].as_u64().unwrap_or(0);
    assert!(
        last.message
            .as_deref()
            .unwrap()
            .starts_with("done: reading files: "),
        "{last:?} ({files} files)"
    );
    assert_eq!(last.total, Some(last.progress), "{last:?}");
    client.cancel().await.unwrap();
}
