//! Hostile judges: each misbehaves in one way. Each must cost its caller
//! one clear error within its limits, and the next call to a healthy judge
//! in the same runtime must succeed.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use silt_e2e::{app_with_plugins, install_hostile};
use silt_mcp::tools::ask::{self, AskParams};
use silt_runtime::app::App;

fn params(judge: &str, question: &str) -> AskParams {
    serde_json::from_value(json!({
        "question": question,
        "kind": "choose",
        "options": {"bug": "broken behaviour, a crash", "feature": "new behaviour"},
        "items": ["the app crashes on launch", "add dark mode"],
        "judge": judge,
    }))
    .unwrap()
}

/// Calls hostile `judge` (expecting an error), then the lexical judge in
/// the same runtime (expecting an answer). Returns the error and how long
/// the hostile call took.
async fn contained(app: &App, judge: &str, question: &str) -> (String, Duration) {
    let started = Instant::now();
    let err = ask::run(&app.runtime, &app.config, &params(judge, question))
        .await
        .expect_err("a hostile judge must not produce an answer")
        .to_string();
    let took = started.elapsed();
    let healthy = ask::run(
        &app.runtime,
        &app.config,
        &params("lexical", "Which kind of ticket?"),
    )
    .await
    .expect("the healthy judge answers after a hostile one");
    assert_eq!(healthy["results"].as_array().unwrap().len(), 2);
    assert_eq!(healthy["results"][0]["choice"], "bug");
    (err, took)
}

const LIMITS: &str = "memory_mib = 32\ncpu_ms = 300\nwall_ms = 5000";

#[tokio::test]
async fn reading_outside_the_grant_is_denied() {
    let plugins = tempfile::tempdir().unwrap();
    let granted = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP SECRET").unwrap();
    std::fs::write(granted.path().join("inside.txt"), "fine").unwrap();
    let grants = format!("read = [{:?}]", granted.path());
    install_hostile(plugins.path(), "read-outside", &grants, LIMITS);
    let app = app_with_plugins(plugins.path());

    let question = format!(
        "{}|{}",
        secret.display(),
        granted.path().join("inside.txt").display()
    );
    let (err, _) = contained(&app, "read-outside", &question).await;
    assert!(
        !err.contains("TOP SECRET") && !err.contains("LEAKED"),
        "{err}"
    );
    assert!(err.contains("could not read any of"), "{err}");
    // the grant itself works: the same plugin read the file inside it
    assert!(err.contains("inside the grant: fine"), "{err}");
}

/// A loopback HTTP server that counts connections and answers each.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nsecret",
            );
        }
    });
    (port, count)
}

#[tokio::test]
async fn connecting_to_an_ungranted_host_is_refused() {
    let (port, connections) = counting_server();
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(
        plugins.path(),
        "net-escape",
        "http = [\"api.example.com\"]",
        LIMITS,
    );
    let app = app_with_plugins(plugins.path());

    let (err, _) = contained(&app, "net-escape", &format!("http://127.0.0.1:{port}/")).await;
    assert!(err.contains("HttpRequestDenied"), "{err}");
    assert!(!err.contains("REACHED"), "{err}");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the server must see no connection"
    );
}

#[tokio::test]
async fn a_host_granted_by_address_is_reachable() {
    // The control for the test above: the same component, granted the
    // server by its literal address, does reach it.
    let (port, connections) = counting_server();
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(
        plugins.path(),
        "net-escape",
        &format!("http = [\"127.0.0.1:{port}\"]"),
        LIMITS,
    );
    let app = app_with_plugins(plugins.path());

    let (err, _) = contained(&app, "net-escape", &format!("http://127.0.0.1:{port}/")).await;
    assert!(err.contains("REACHED") && err.contains("secret"), "{err}");
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_spinning_judge_is_stopped_at_its_cpu_limit() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "spin", "", LIMITS);
    let app = app_with_plugins(plugins.path());
    let (err, took) = contained(&app, "spin", "anything").await;
    assert!(err.contains("ran past its CPU limit of 300 ms"), "{err}");
    // before its 5 s wall clock could stop it: `took` also holds compiling
    // both components, and on 2 cores loaded by the other tests the whole
    // call once took 4.5 s, so a tighter bound measured the machine
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
}

#[tokio::test]
async fn a_spinning_judge_is_stopped_at_its_wall_clock_limit() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "spin", "", "cpu_ms = 600000\nwall_ms = 400");
    let app = app_with_plugins(plugins.path());
    let (err, took) = contained(&app, "spin", "anything").await;
    assert!(err.contains("wall-clock limit of 400 ms"), "{err}");
    assert!(took < Duration::from_secs(3), "stopped after {took:?}");
}

#[tokio::test]
async fn a_judge_allocating_without_bound_hits_its_memory_cap() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(
        plugins.path(),
        "alloc-bomb",
        "",
        "memory_mib = 16\ncpu_ms = 5000\nwall_ms = 10000",
    );
    let app = app_with_plugins(plugins.path());
    let (err, _) = contained(&app, "alloc-bomb", "anything").await;
    assert!(err.contains("over its memory limit of 16 MiB"), "{err}");
}

#[tokio::test]
async fn a_trapping_judge_is_reported_with_its_panic() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "trap", "", LIMITS);
    let app = app_with_plugins(plugins.path());
    let (err, _) = contained(&app, "trap", "anything").await;
    assert!(err.contains("plugin 'trap' crashed"), "{err}");
    assert!(err.contains("hostile judge gave up"), "{err}");
}

#[tokio::test]
async fn probabilities_summing_to_two_are_refused() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "bad-probs", "", LIMITS);
    let app = app_with_plugins(plugins.path());
    let (err, _) = contained(&app, "bad-probs", "anything").await;
    assert!(
        err.contains("judge 'bad-probs' gave an invalid answer"),
        "{err}"
    );
    assert!(err.contains("sum to 2.0000"), "{err}");
}

#[tokio::test]
async fn a_flood_of_answers_hits_the_output_cap() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(
        plugins.path(),
        "flood",
        "",
        "memory_mib = 128\ncpu_ms = 5000\nwall_ms = 10000\noutput_kib = 1024",
    );
    let app = app_with_plugins(plugins.path());
    let (err, _) = contained(&app, "flood", "anything").await;
    assert!(err.contains("over its output limit of 1024 KiB"), "{err}");
}

/// A judge that fails during a ledger operation reaches the agent with
/// the kind of its failure: the lexical judge installed again under a
/// memory cap it cannot start in fails every relation as a plugin
/// failure (`plugin_failed`), not as a broken ledger (`ledger_failed`),
/// and the ledger is left as it was.
#[tokio::test]
async fn a_judge_failing_in_a_sleep_pass_is_plugin_failed() {
    use silt_mcp::tools::sediment_tools::LedgerTools;
    let plugins = tempfile::tempdir().unwrap();
    let dir = plugins.path().join("cramped");
    std::fs::create_dir_all(&dir).unwrap();
    let wasm = silt_plugins::registry::builtin_component("lexical").unwrap();
    std::fs::write(dir.join("cramped.wasm"), wasm).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        "[plugin]\nname = \"cramped\"\nkind = \"judge\"\n\n[grants]\n\n[limits]\nmemory_mib = 1\n",
    )
    .unwrap();
    let app = app_with_plugins(plugins.path());
    let home = tempfile::tempdir().unwrap();
    let tools = Arc::new(
        LedgerTools::at(
            app.runtime.clone(),
            app.config.clone(),
            home.path().join("ledger.db"),
            None,
            None,
        )
        .without_auto_sleep(),
    );
    let args = |v: serde_json::Value| v.as_object().unwrap().clone();
    for prefer in ["wrap it in a transaction", "never wrap it in a transaction"] {
        let captured = tools
            .capture(args(
                json!({"when": "writing a SQL migration", "prefer": prefer}),
            ))
            .await;
        assert!(captured.is_ok(), "{captured:?}");
    }
    let err = tools
        .sleep(args(json!({"judge": "cramped"})))
        .await
        .expect_err("a judge that cannot start relates nothing");
    assert_eq!(err.code.as_str(), "plugin_failed", "{err:?}");
    let stats = tools.stats(args(json!({}))).await.unwrap();
    assert_eq!(stats["active"], 2, "nothing changed: {stats}");
}
