//! The ledger composed with the lexical judge into one component (`silt
//! ledger standalone`) runs outside silt — under the `wasmtime` CLI and
//! under Node through jco — and gives the native host's results.
//!
//! Both runners are installed by `.ci/run` (`cargo install wasmtime-cli`,
//! `npm ci --prefix tests/js`); a missing one fails these tests with the
//! command that installs it.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use silt_e2e::silt_binary;
use silt_ledger_service::values::{entry_from_wit, entry_to_wit, event_from_wit};
use silt_runtime::bindings::ledger_engine::silt::ledger::types::{Entry, Feedback};
use silt_runtime::ledger::default_params;

const NOW: f64 = 1_764_000_000.0;

/// A runner of WASI command components: its program and the arguments
/// that come before the component's path.
struct Runner {
    name: &'static str,
    program: PathBuf,
    before: Vec<String>,
}

fn wasmtime() -> Runner {
    let program = std::env::var_os("SILT_TEST_WASMTIME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "wasmtime".into());
    let found = Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "the wasmtime CLI is not installed: run .ci/run, or `cargo install wasmtime-cli --version 48.0.8 --locked --no-default-features --features run,cranelift,component-model` (or set SILT_TEST_WASMTIME)"
    );
    Runner {
        name: "wasmtime",
        program,
        before: vec!["run".into()],
    }
}

fn jco() -> Runner {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("js");
    let program = js.join("node_modules/.bin/jco");
    assert!(
        program.is_file(),
        "jco is not installed: run .ci/run, or `npm ci --prefix {}`",
        js.display()
    );
    Runner {
        name: "jco",
        program,
        before: vec!["run".into()],
    }
}

/// Writes the standalone command component with `silt ledger standalone`.
fn standalone(dir: &Path) -> PathBuf {
    let out = dir.join("silt-ledger.wasm");
    let status = Command::new(silt_binary())
        .args(["ledger", "standalone", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "silt ledger standalone failed");
    out
}

/// Runs the component under `runner` with `args` and `stdin`; its stdout as JSON.
fn run(runner: &Runner, component: &Path, args: &[&str], stdin: &str) -> Value {
    let mut child = Command::new(&runner.program)
        .args(&runner.before)
        .arg(component)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", runner.name));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} failed: {}\n{}",
        runner.name,
        String::from_utf8_lossy(&out.stderr),
        stdout
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{} printed no JSON ({e}): {stdout}", runner.name))
}

/// `v` with every entry id (in `id` and `others`, and where notes and
/// reasons name them) replaced by its order of first appearance, so runs
/// that name new entries (abstracted parents) differently compare.
pub(crate) fn normalise_ids(v: &Value) -> Value {
    fn collect(v: &Value, key: Option<&str>, ids: &mut Vec<String>) {
        match v {
            Value::String(s) if matches!(key, Some("id" | "others")) && !ids.contains(s) => {
                ids.push(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|x| collect(x, key, ids)),
            Value::Object(o) => o.iter().for_each(|(k, x)| collect(x, Some(k), ids)),
            _ => {}
        }
    }
    fn replace(v: &Value, ids: &HashMap<&str, String>) -> Value {
        match v {
            Value::String(s) => {
                Value::String(ids.iter().fold(s.clone(), |s, (id, n)| s.replace(id, n)))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| replace(x, ids)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), replace(x, ids)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let mut order = vec![];
    collect(v, None, &mut order);
    let ids = order
        .iter()
        .enumerate()
        .map(|(n, id)| (id.as_str(), format!("#{n}")))
        .collect();
    replace(v, &ids)
}

#[test]
fn the_demo_under_wasmtime_and_jco_matches_the_native_host() {
    let dir = tempfile::tempdir().unwrap();
    let component = standalone(dir.path());
    let now = NOW.to_string();

    let native = Command::new(silt_binary())
        .args(["demo", "--json", "--now", &now])
        .output()
        .unwrap();
    assert!(native.status.success());
    let mut native: Value = serde_json::from_slice(&native.stdout).unwrap();
    native["judge"] = json!("composed");
    assert_eq!(native["before"]["active"], 10);
    assert_eq!(native["after"]["active"], 6);

    for runner in [wasmtime(), jco()] {
        let out = run(&runner, &component, &["demo", "--now", &now], "");
        assert_eq!(out["before"]["active"], 10, "{}", runner.name);
        assert_eq!(out["after"]["active"], 6, "{}", runner.name);
        assert_eq!(
            normalise_ids(&out),
            normalise_ids(&native),
            "{} differs from the native host",
            runner.name
        );
    }
}

/// Captures, recalls, a confirm, the sleep pass and stats over the seed's
/// entries.
fn script() -> Value {
    let t = |days: f64| NOW + days * 86_400.0;
    json!({
        "entries": silt_core::ledger::demo::entries(NOW),
        "steps": [
            {"op": "capture", "id": "c0000001", "when": "prompt targets a Claude model",
             "prefer": "use XML tags to delimit sections", "feedback": "positive", "now": t(0.1)},
            {"op": "capture", "id": "c0000002", "when": "parsing dates from user input in python",
             "prefer": "use dateutil.parser with dayfirst set explicitly", "feedback": "neutral", "now": t(0.2)},
            {"op": "capture", "id": "c0000003", "when": "parsing dates from user input in python",
             "prefer": "use dateutil.parser with dayfirst set explicitly", "feedback": "positive", "now": t(0.3)},
            {"op": "recall", "context": "write a prompt for a Claude model with sections", "k": 3, "now": t(1.0)},
            {"op": "confirm", "id": "c0000002", "now": t(1.5)},
            {"op": "consolidate", "now": t(2.0)},
            {"op": "sleep", "now": t(2.0)},
            {"op": "recall", "context": "trading strategy for a volatile market", "k": 5, "now": t(3.0)},
            {"op": "stats", "include_retired": true, "now": t(3.0)},
        ],
    })
}

/// The script run natively: the same engine component in silt's own
/// runtime, results in the shapes `silt-ledger-cli script` prints.
async fn native_script(script: &Value) -> Value {
    let app = silt_runtime::app::App::open(false).unwrap();
    let mut ledger = app
        .runtime
        .open_ledger("lexical", &default_params(), None, None)
        .await
        .unwrap();
    let seed: Vec<silt_core::ledger::Entry> =
        serde_json::from_value(script["entries"].clone()).unwrap();
    ledger
        .sync(&seed.iter().map(entry_to_wit).collect::<Vec<_>>())
        .await
        .unwrap();
    let views = |entries: &[Entry], now: f64| -> Vec<Value> {
        entries
            .iter()
            .map(|e| entry_from_wit(e).view(now))
            .collect()
    };
    let events =
        |events: &[silt_runtime::bindings::ledger_engine::silt::ledger::types::Event]| {
            events.iter().map(event_from_wit).collect::<Vec<_>>()
        };
    let mut results = vec![];
    for step in script["steps"].as_array().unwrap() {
        let now = step["now"].as_f64().unwrap();
        let s = |k: &str| step[k].as_str().unwrap().to_string();
        results.push(match step["op"].as_str().unwrap() {
            "capture" => {
                let feedback = match step["feedback"].as_str().unwrap() {
                    "positive" => Feedback::Positive,
                    "negative" => Feedback::Negative,
                    _ => Feedback::Neutral,
                };
                let change = ledger
                    .capture(&s("id"), &s("when"), &s("prefer"), feedback, now)
                    .await
                    .unwrap();
                json!({"entries": views(&change.entries, now), "events": events(&change.events)})
            }
            "recall" => {
                let k = step["k"].as_u64().unwrap() as u32;
                let (hits, change) = ledger.recall(&s("context"), k, now).await.unwrap();
                json!({"hits": views(&hits, now), "events": events(&change.events)})
            }
            "confirm" => {
                let change = ledger.confirm(&s("id"), now).await.unwrap();
                json!({"entries": views(&change.entries, now), "events": events(&change.events)})
            }
            "consolidate" => {
                let (r, change) = ledger.homeostasis(now).await.unwrap();
                json!({"retired": r.retired, "evicted": r.evicted, "active": r.active,
                       "events": events(&change.events)})
            }
            "sleep" => {
                let (r, change) = ledger.sleep(now, None).await.unwrap();
                json!({"merged": r.merged, "contradictions_resolved": r.contradictions_resolved,
                       "generalized": r.generalized, "events": events(&change.events)})
            }
            "stats" => {
                let entries = ledger.stats(true, 500, now).await.unwrap();
                json!({"entries": views(&entries, now)})
            }
            other => panic!("the test script has an op '{other}' this oracle does not run"),
        });
    }
    json!({"results": results})
}

#[tokio::test]
async fn captures_recalls_and_sleep_under_wasmtime_and_jco_match_the_native_host() {
    let dir = tempfile::tempdir().unwrap();
    let component = standalone(dir.path());
    let script = script();
    let native = native_script(&script).await;
    let results = native["results"].as_array().unwrap();
    // the script exercises what it claims to: a recall that finds, a sleep that acts
    assert!(!results[3]["hits"].as_array().unwrap().is_empty());
    let sleep = &results[6];
    assert!(
        sleep["merged"].as_u64().unwrap()
            + sleep["contradictions_resolved"].as_u64().unwrap()
            + sleep["generalized"].as_u64().unwrap()
            > 0,
        "{sleep}"
    );

    let input = script.to_string();
    for runner in [wasmtime(), jco()] {
        let out = run(&runner, &component, &["script"], &input);
        assert_eq!(
            normalise_ids(&out),
            normalise_ids(&native),
            "{} differs from the native host",
            runner.name
        );
    }
}

#[test]
fn a_judge_without_relate_cannot_be_composed() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(silt_binary())
        .args(["ledger", "standalone", "--judge", "ask", "--out"])
        .arg(dir.path().join("x.wasm"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must export silt:judge/relations"), "{err}");
    assert!(!dir.path().join("x.wasm").exists());
}
