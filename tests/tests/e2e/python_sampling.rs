//! The `sampling` judge answered by the official MCP Python SDK's
//! sampling callback (`tests/clients/sampling.py`), a perfect model that
//! answers from labels: sieve_ask, sieve_verify and a sleep pass get the
//! labelled answers; a client without sampling, and a model that answers
//! prose, an error, a reply cut at maxTokens or no reply in time, get a
//! clear error and nothing confident. Over stdio and over the shared HTTP
//! server.

use serde_json::{Value, json};
use silt_e2e::silt_binary;

fn python() -> std::ffi::OsString {
    std::env::var_os("SILT_MCP_PYTHON").expect(
        "SILT_MCP_PYTHON must name a Python with the MCP SDK: `.ci/run` sets it; by hand run \
         `export SILT_MCP_PYTHON=$(.ci/mcp-python)`",
    )
}

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/clients/sampling.py");

/// Runs the script with `args` and reads its report.
async fn report(home: &std::path::Path, args: &[&str]) -> Value {
    let out = tokio::process::Command::new(python())
        .arg(SCRIPT)
        .args(args)
        .envs(silt_e2e::home_env(home))
        .output()
        .await
        .expect("running the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "no report from the Python client:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// Each answer the perfect model gave, as silt read it back.
fn check_answers(report: &Value) {
    let ask = &report["ask"]["ok"];
    let p: std::collections::BTreeMap<&str, f64> = ask["results"]
        .as_array()
        .unwrap_or_else(|| panic!("sieve_ask failed: {report:#}"))
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["probability"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(p.len(), 4, "{ask:#}");
    for fruit in ["0", "1"] {
        assert!(p[fruit] > 0.99, "{ask:#}");
    }
    for tool in ["2", "3"] {
        assert!(p[tool] < 0.01, "{ask:#}");
    }
    assert_eq!(ask["usage"]["cache_hits"], 0, "{ask:#}");
    assert_eq!(
        (&ask["usage"]["judge"], &ask["usage"]["model"]),
        (&json!("sampling"), &json!("the MCP client's model")),
        "{ask:#}"
    );
    // at the stated $100 per million tokens: one request's estimate
    let cost = ask["usage"]["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.01 && cost < 0.1, "{ask:#}");
    let budget = &report["budget"]["ok"];
    assert_eq!(budget["usage"]["budget_exhausted"], true, "{report:#}");
    assert_eq!(budget["usage"]["requests"], 0, "{report:#}");
    let verdicts: Vec<&str> = report["verify"]["ok"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("sieve_verify failed: {report:#}"))
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["supports_fully", "contradicts"], "{report:#}");
    let sleep = &report["sleep"]["ok"];
    assert_eq!(sleep["merged"], 1, "{report:#}");
    assert_eq!(sleep["contradictions_resolved"], 1, "{report:#}");
    // the model was asked for a fast, cheap one, within a token budget
    let seen = report["seen"].as_array().unwrap();
    assert!(!seen.is_empty());
    for s in seen {
        assert_eq!(s["hints"], serde_json::json!(["haiku", "mini", "flash"]));
        assert!(s["speed"].as_f64().unwrap() >= 0.8, "{s}");
        assert!(s["cost"].as_f64().unwrap() >= 0.8, "{s}");
        assert!(s["intelligence"].as_f64().unwrap() <= 0.5, "{s}");
        let max = s["max_tokens"].as_u64().unwrap();
        assert!((64..=2048).contains(&max), "{s}");
        assert_eq!(s["system"], true);
    }
}

/// The refusals: each an error that says why, no answer at all.
fn check_failures(report: &Value) {
    let error = |case: &str| -> String {
        report[case]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{case} answered: {report:#}"))
            .to_string()
    };
    let none = error("no_sampling");
    assert!(none.contains("judge_failed"), "{none}");
    assert!(
        none.contains("did not declare the sampling capability"),
        "{none}"
    );
    assert!(
        none.contains("lexical") && none.contains("openai"),
        "{none}"
    );
    let garbage = error("garbage");
    assert!(garbage.contains("did not answer validly"), "{garbage}");
    assert!(garbage.contains("perfect-labels"), "{garbage}");
    assert!(garbage.contains("4 of 4 items"), "{garbage}");
    let refused = error("error");
    assert!(
        refused.contains("the user declined this sampling request"),
        "{refused}"
    );
    let cut = error("maxtokens");
    assert!(cut.contains("max tokens"), "{cut}");
    let slow = error("slow");
    assert!(slow.contains("did not answer in time"), "{slow}");
    assert!(slow.contains("no reply in 3 s"), "{slow}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sampling_judge_answers_from_the_python_sdk_client_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let binary = silt_binary();
    let report = report(
        home.path(),
        &[
            "stdio",
            binary.to_str().unwrap(),
            home.path().to_str().unwrap(),
        ],
    )
    .await;
    check_answers(&report);
    check_failures(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sampling_judge_answers_from_the_python_sdk_client_over_http() {
    let home = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let config = format!("[server]\nroots = [{:?}]\n", root.to_str().unwrap());
    let served = silt_e2e::http::serve_http(
        home.path(),
        &config,
        &[
            ("SILT_SLEEP_PRESSURE", "0"),
            ("SILT_LEDGER_EMBEDDER", "none"),
            ("SILT_SAMPLING_TIMEOUT_MS", "3000"),
            ("SILT_SAMPLING_PRICE_IN", "100"),
            ("SILT_SAMPLING_PRICE_OUT", "100"),
        ],
    )
    .await;
    let report = report(
        home.path(),
        &["http", &served.url, &served.token, root.to_str().unwrap()],
    )
    .await;
    check_answers(&report);
    check_failures(&report);
}

#[test]
fn the_command_line_has_no_client_to_sample_and_says_which_judges_work() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("silt.toml"), "").unwrap();
    let items = home.path().join("items.json");
    std::fs::write(&items, r#"["apple", "hammer"]"#).unwrap();
    let out = silt_e2e::silt_in(
        home.path(),
        &[
            "ask",
            "judge",
            "--judge",
            "sampling",
            "Is this a fruit?",
            "--yes",
            "a fruit",
            "--no",
            "not a fruit",
            "--items",
            items.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("no MCP client is asking"), "{said}");
    assert!(
        said.contains("lexical") && said.contains("openai"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_client_that_samples_does_not_hold_the_http_server_past_its_calls() {
    use tokio::io::AsyncBufReadExt;
    let home = tempfile::tempdir().unwrap();
    let mut served = silt_e2e::http::serve_http(home.path(), "", &[]).await;
    let mut client = tokio::process::Command::new(python())
        .arg(SCRIPT)
        .args(["idle", &served.url, &served.token])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client.stdout.take().unwrap()).lines();
    assert_eq!(
        lines.next_line().await.unwrap().as_deref(),
        Some("connected")
    );
    let pid = served.child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    // its session's event stream is closed once no call runs, not after
    // the 120 s drain
    let exited = tokio::time::timeout(std::time::Duration::from_secs(30), served.child.wait())
        .await
        .unwrap_or_else(|_| panic!("still serving: {}", served.log.lock().unwrap()))
        .unwrap();
    assert!(exited.success(), "{}", served.log.lock().unwrap());
}
