//! The OpenAI-compatible judge end to end: against a real llama.cpp
//! `llama-server` serving SmolLM2-135M-Instruct (built and installed by
//! `.ci/run`: `SILT_LLAMA_SERVER` names the binary, `silt models install
//! smollm2` the model), and against a loopback fake for the failures a
//! real server does not produce on demand (429 with Retry-After, 500, no
//! log-probabilities, a slow reply, garbage, a legacy-only server).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use silt_e2e::mcp::{Client, call, json_of, serve, text_of};
use silt_e2e::silt_binary;

/// The GGUF model `silt models install smollm2` leaves.
pub(crate) const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// A running llama-server, killed when dropped.
pub(crate) struct LlamaServer {
    _child: tokio::process::Child,
    pub(crate) url: String,
}

pub(crate) fn models_dir() -> PathBuf {
    std::env::var_os("SILT_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".local/share/silt/models")
        })
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts llama-server on a free loopback port and waits until it has
/// loaded the model.
pub(crate) async fn llama_server() -> LlamaServer {
    let bin = std::env::var_os("SILT_LLAMA_SERVER")
        .map(PathBuf::from)
        .expect(
            "SILT_LLAMA_SERVER must name a llama-server binary: `.ci/run` sets it; by hand run \
         `export SILT_LLAMA_SERVER=$(.ci/llama-server)`",
        );
    let model = models_dir().join("smollm2").join(MODEL_FILE);
    assert!(
        model.is_file(),
        "{} is missing: run `silt models install smollm2`",
        model.display()
    );
    let port = free_port();
    let child = tokio::process::Command::new(&bin)
        .arg("-m")
        .arg(&model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "8192", "-np", "4", "-t", "2", "--no-webui"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let url = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..600 {
        if let Ok(r) = client.get(format!("{url}/health")).send().await
            && r.status().is_success()
        {
            return LlamaServer { _child: child, url };
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("llama-server did not become healthy in 120 s");
}

/// The environment that points the judge at `url`.
fn model_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("SILT_MODEL_URL", url.to_string()),
        ("SILT_MODEL", "smollm2".to_string()),
        ("SILT_ANSWER_CACHE", "0".to_string()),
    ]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn sums_to_one(probabilities: &Value) -> bool {
    let total: f64 = probabilities
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_f64().unwrap())
        .sum();
    (total - 1.0).abs() < 0.02
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_answers_all_three_kinds_of_question() {
    let server = llama_server().await;
    let home = tempfile::tempdir().unwrap();
    let env = model_env(&server.url);
    let client = serve(home.path(), home.path(), &as_refs(&env)).await;
    let items = json!([
        "fix: the parser crashed on an empty file",
        "feat: add a --json flag to the export command",
        "docs: spelling in the README",
    ]);
    answers_all_three_kinds(&client, "openai", &items).await;
}

/// `sieve_ask` of each kind on `judge`: one well-formed answer per item,
/// probabilities that differ between items (the model read them), and
/// distributions that sum to one.
pub(crate) async fn answers_all_three_kinds(client: &Client, judge: &str, items: &Value) {
    let n = items.as_array().unwrap().len();
    let judged = json_of(
        &call(
            client,
            "sieve_ask",
            json!({"question": "Does this commit repair a bug?", "kind": "judge",
                   "yes": "It repairs wrong behaviour", "no": "It adds or documents something",
                   "items": items, "judge": judge, "threshold": 0.0}),
        )
        .await,
    );
    let rows = judged["results"].as_array().unwrap();
    assert_eq!(rows.len(), n, "{judged:#}");
    let ps: Vec<f64> = rows
        .iter()
        .map(|r| r["probability"].as_f64().unwrap())
        .collect();
    assert!(ps.iter().all(|p| (0.0..=1.0).contains(p)), "{ps:?}");
    assert!(
        ps.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-6),
        "the model read the items: {ps:?}"
    );
    assert!(judged["input_tokens"].as_u64().unwrap() > 100, "{judged:#}");
    assert_eq!(judged["judge"], judge);

    let chosen = json_of(
        &call(
            client,
            "sieve_ask",
            json!({"question": "What kind of change is this commit?", "kind": "choose",
                   "options": {"fix": "repairs a bug", "feature": "adds a capability",
                               "docs": "changes documentation only"},
                   "items": items, "judge": judge}),
        )
        .await,
    );
    for r in chosen["results"].as_array().unwrap() {
        assert_eq!(r["probabilities"].as_object().unwrap().len(), 3, "{r}");
        assert!(sums_to_one(&r["probabilities"]), "{r}");
    }

    let scored = json_of(
        &call(
            client,
            "sieve_ask",
            json!({"question": "How risky is this change to ship?", "kind": "score",
                   "levels": ["harmless", "some risk", "dangerous"],
                   "items": items, "judge": judge}),
        )
        .await,
    );
    for r in scored["results"].as_array().unwrap() {
        let e = r["expected"].as_f64().unwrap();
        assert!((0.0..=2.0).contains(&e), "{r}");
        assert!(sums_to_one(&r["probabilities"]), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_and_a_sleep_pass_run_on_the_model() {
    let server = llama_server().await;
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("retry.md"),
        "# Retries\n\nThe client retries a failed request three times, waiting twice as long \
         before each attempt. It never retries a request that returned 4xx.\n",
    )
    .unwrap();
    let mut env = model_env(&server.url);
    env.push((
        "SILT_LEDGER_PATH",
        home.path().join("ledger.db").display().to_string(),
    ));
    env.push(("SILT_SLEEP_PRESSURE", "0".to_string()));
    let client = serve(home.path(), &docs, &as_refs(&env)).await;

    let verified = json_of(
        &call(
            &client,
            "sieve_verify",
            json!({"records": [
                {"claim": "The client retries a failed request three times",
                 "citations": [{"locator": "retry.md"}]},
                {"claim": "The client retries requests that returned 404",
                 "citations": [{"locator": "retry.md"}]}],
                   "judge": "openai"}),
        )
        .await,
    );
    let results = verified["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{verified:#}");
    for r in results {
        assert!(
            [
                "supports_fully",
                "partially_supports",
                "contradicts",
                "does_not_address"
            ]
            .contains(&r["verdict"].as_str().unwrap()),
            "{r}"
        );
    }
    assert!(
        verified["input_tokens"].as_u64().unwrap_or(0) > 0,
        "{verified:#}"
    );

    for (when, prefer) in [
        ("indenting Python code", "use four spaces"),
        ("indenting Python code", "use tabs"),
        ("writing a SQL migration", "wrap it in a transaction"),
        (
            "writing an SQL migration",
            "wrap the migration in a transaction",
        ),
    ] {
        let c = json_of(
            &call(
                &client,
                "sediment_capture",
                json!({"when": when, "prefer": prefer}),
            )
            .await,
        );
        assert_eq!(c["ok"], true, "{c:#}");
    }
    let slept = json_of(&call(&client, "sediment_sleep", json!({"judge": "openai"})).await);
    assert_eq!(slept["ok"], true, "{slept:#}");
    let acted = slept["merged"].as_u64().unwrap()
        + slept["contradictions_resolved"].as_u64().unwrap()
        + slept["held_for_review"].as_u64().unwrap();
    assert!(acted <= 4, "{slept:#}");
    let stats = json_of(&call(&client, "sediment_stats", json!({"telemetry": true})).await);
    // whatever the model said, nothing is lost: retired lessons stay in the ledger
    assert_eq!(stats["total"], 4, "{stats:#}");
}

/// `silt ask judge --judge openai` as a shell user runs it, then with the
/// server gone.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_prints_probabilities_and_names_a_server_that_is_down() {
    let server = llama_server().await;
    let home = tempfile::tempdir().unwrap();
    let items = home.path().join("items.json");
    std::fs::write(&items, r#"["fix a crash", "add a flag"]"#).unwrap();
    let run = |url: &str| {
        let mut cmd = std::process::Command::new(silt_e2e::silt_binary());
        cmd.args([
            "ask",
            "judge",
            "Is it a bug fix?",
            "--yes",
            "a fix",
            "--no",
            "not a fix",
        ])
        .arg("--items")
        .arg(&items)
        .args(["--judge", "openai", "--threshold", "0"])
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_PLUGIN_PATH", home.path().join("plugins"))
        .env("SILT_CONFIG", home.path().join("silt.toml"));
        for (k, v) in model_env(url) {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    std::fs::write(home.path().join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let ok = run(&server.url);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let out: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(out["results"].as_array().unwrap().len(), 2, "{out:#}");

    let down = format!("http://127.0.0.1:{}", free_port());
    let failed = run(&down);
    assert!(!failed.status.success());
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        err.contains(&down) || err.contains(down.trim_start_matches("http://")),
        "{err}"
    );
    assert!(
        err.contains("start it") || err.contains("SILT_MODEL_URL"),
        "{err}"
    );

    // inspect reports the model, the server and the endpoint the probe chose
    let mut cmd = std::process::Command::new(silt_e2e::silt_binary());
    cmd.args(["plugins", "inspect", "openai", "--json"])
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_PLUGIN_PATH", home.path().join("plugins"))
        .env("SILT_CONFIG", home.path().join("silt.toml"));
    for (k, v) in model_env(&server.url) {
        cmd.env(k, v);
    }
    let inspected = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&inspected.stdout).unwrap();
    let version = v["version"].as_str().unwrap();
    assert!(version.contains("smollm2@127.0.0.1:"), "{v:#}");
    assert!(
        version.contains("/chat/"),
        "llama-server gives log-probabilities on chat: {v:#}"
    );
}

/// What the fake server does.
#[derive(Clone, Copy, PartialEq)]
enum Fake {
    /// 429 with Retry-After: 1 for the first two requests, then answers.
    RateLimitedFirst,
    /// 500 always.
    Fail,
    /// Answers chat without log-probabilities, 404 elsewhere.
    NoLogprobs,
    /// Waits 5 s before answering.
    Slow,
    /// 200 with HTML.
    Garbage,
    /// Chat without log-probabilities, legacy completions with them.
    LegacyOnly,
    /// Answers every request after 300 ms (a slow relation judge).
    Paced,
    /// 200 with a body of one byte every 300 ms, for a minute.
    Trickle,
    /// 429 with `Retry-After: 100000` always.
    RateLimitedLong,
}

#[derive(Clone)]
struct FakeState {
    fake: Fake,
    requests: Arc<AtomicUsize>,
}

fn chat_reply() -> Value {
    json!({"choices": [{"message": {"content": "A"}, "logprobs": {"content": [
        {"token": "A", "logprob": -0.36, "top_logprobs": [
            {"token": "A", "logprob": (0.7f64).ln()}, {"token": " B", "logprob": (0.2f64).ln()},
            {"token": "C", "logprob": (0.05f64).ln()}, {"token": "D", "logprob": (0.05f64).ln()}]}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 1}})
}

async fn fake_chat(State(s): State<FakeState>) -> Response {
    let n = s.requests.fetch_add(1, Ordering::SeqCst);
    match s.fake {
        Fake::RateLimitedFirst if n < 2 => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            r#"{"error":{"message":"slow down"}}"#,
        )
            .into_response(),
        Fake::RateLimitedFirst => axum::Json(chat_reply()).into_response(),
        Fake::Fail => (StatusCode::INTERNAL_SERVER_ERROR, r#"{"error":"boom"}"#).into_response(),
        Fake::NoLogprobs | Fake::LegacyOnly => {
            axum::Json(json!({"choices": [{"message": {"content": "A"}}]})).into_response()
        }
        Fake::Slow => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            axum::Json(chat_reply()).into_response()
        }
        Fake::Garbage => "<html>hello</html>".into_response(),
        Fake::Paced => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            axum::Json(chat_reply()).into_response()
        }
        Fake::Trickle => {
            let bytes = futures_util::stream::unfold(0u32, |n| async move {
                if n == 200 {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                Some((
                    Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b" ")),
                    n + 1,
                ))
            });
            (
                [("content-type", "application/json")],
                axum::body::Body::from_stream(bytes),
            )
                .into_response()
        }
        Fake::RateLimitedLong => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "100000")],
            r#"{"error":{"message":"come back tomorrow"}}"#,
        )
            .into_response(),
    }
}

async fn fake_completions(State(s): State<FakeState>) -> Response {
    s.requests.fetch_add(1, Ordering::SeqCst);
    match s.fake {
        Fake::LegacyOnly => axum::Json(json!({"choices": [{"text": " A", "logprobs": {
            "tokens": [" A"], "top_logprobs": [{" A": (0.6f64).ln(), " B": (0.4f64).ln()}]}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 1}}))
        .into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn start_fake(fake: Fake) -> (String, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let state = FakeState {
        fake,
        requests: requests.clone(),
    };
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(fake_chat))
        .route("/v1/completions", axum::routing::post(fake_completions))
        .route("/completion", axum::routing::post(fake_completions))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), requests)
}

async fn ask_fake(home: &Path, url: &str, extra: &[(&'static str, &str)]) -> silt_e2e::mcp::Client {
    let mut env = model_env(url);
    env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    serve(home, home, &as_refs(&env)).await
}

fn yes_no(items: Value) -> Value {
    json!({"question": "Is it a fix?", "kind": "judge", "yes": "a fix", "no": "not a fix",
           "items": items, "judge": "openai", "threshold": 0.0})
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limits_are_waited_out_and_failures_named() {
    let home = tempfile::tempdir().unwrap();
    let (url, requests) = start_fake(Fake::RateLimitedFirst).await;
    let client = ask_fake(home.path(), &url, &[("SILT_MODEL_DEBIAS", "none")]).await;
    let started = std::time::Instant::now();
    let out = json_of(&call(&client, "sieve_ask", yes_no(json!(["fix a crash"]))).await);
    assert_eq!(out["results"].as_array().unwrap().len(), 1, "{out:#}");
    // the probe was refused twice, then answered; then the item
    assert_eq!(requests.load(Ordering::SeqCst), 4);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "Retry-After honoured"
    );
    // 0.7 on A (yes) against 0.2 on B: read and renormalised
    let p = out["results"][0]["probability"].as_f64().unwrap();
    assert!((p - 0.7 / 0.9).abs() < 1e-3, "{p} (reported to 4 places)");

    for (fake, env, expected) in [
        (Fake::Fail, vec![], "HTTP 500"),
        (Fake::NoLogprobs, vec![], "no token log-probabilities"),
        (
            Fake::Slow,
            vec![("SILT_MODEL_TIMEOUT_MS", "1000")],
            "cannot reach",
        ),
        (Fake::Garbage, vec![], "not JSON"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let (url, _) = start_fake(fake).await;
        let client = ask_fake(home.path(), &url, &env).await;
        let r = call(&client, "sieve_ask", yes_no(json!(["x"]))).await;
        assert_eq!(r.is_error, Some(true), "{r:?}");
        let text = text_of(&r);
        assert!(text.contains(expected), "{expected}: {text}");
    }
}

/// `SILT_MODEL_TIMEOUT_MS` bounds each request whole: a body trickled a
/// byte at a time (never idle long enough for the between-bytes limit)
/// and a `Retry-After` of a day both end the call within the timeout and
/// its few attempts, not after the trickle's minute or the 30 s wait cap
/// (each took 60 s and more before).
#[tokio::test(flavor = "multi_thread")]
async fn the_model_timeout_bounds_trickled_bodies_and_long_retry_afters() {
    for (fake, expected) in [
        (Fake::Trickle, "cannot reach"),
        (Fake::RateLimitedLong, "HTTP 429"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let (url, _) = start_fake(fake).await;
        let client = ask_fake(home.path(), &url, &[("SILT_MODEL_TIMEOUT_MS", "1500")]).await;
        let started = std::time::Instant::now();
        let r = call(&client, "sieve_ask", yes_no(json!(["x"]))).await;
        let took = started.elapsed();
        assert_eq!(r.is_error, Some(true), "{r:?}");
        let text = text_of(&r);
        assert!(text.contains(expected), "{expected}: {text}");
        // a probe per endpoint (chat, completions, native) at most, each
        // within its 1.5 s, and the item's request
        assert!(took < Duration::from_secs(15), "{took:?}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_log_probabilities_only_on_legacy_completions_is_used_there() {
    let home = tempfile::tempdir().unwrap();
    let (url, _) = start_fake(Fake::LegacyOnly).await;
    let client = ask_fake(home.path(), &url, &[("SILT_MODEL_DEBIAS", "none")]).await;
    let out = json_of(&call(&client, "sieve_ask", yes_no(json!(["fix a crash"]))).await);
    let p = out["results"][0]["probability"].as_f64().unwrap();
    assert!((p - 0.6).abs() < 1e-3, "{out:#}");
    assert_eq!(
        out["input_tokens"], 40,
        "the server's usage is reported: {out:#}"
    );
}

/// A sleep pass whose judge takes its time (300 ms a pair, one at a time)
/// blocks no one: while it runs, recall and capture on the same server
/// answer at once, and another process captures into the same file.
#[tokio::test(flavor = "multi_thread")]
async fn readers_and_writers_never_wait_on_a_sleep() {
    let home = tempfile::tempdir().unwrap();
    let ledger = home.path().join("ledger.db");
    let (url, requests) = start_fake(Fake::Paced).await;
    let ledger_env = ledger.to_str().unwrap().to_string();
    let client = std::sync::Arc::new(
        ask_fake(
            home.path(),
            &url,
            &[
                ("SILT_MODEL_CONCURRENCY", "1"),
                ("SILT_MODEL_DEBIAS", "none"),
                ("SILT_SLEEP_PRESSURE", "0"),
                ("SILT_LEDGER_PATH", &ledger_env),
            ],
        )
        .await,
    );
    for i in 0..8 {
        let args = json!({"when": format!("editing the parser module number {i}"),
                          "prefer": format!("run the parser tests group {}", i % 3)});
        assert_ne!(
            call(&*client, "sediment_capture", args).await.is_error,
            Some(true)
        );
    }
    let sleeper = client.clone();
    let sleep =
        tokio::spawn(
            async move { call(&*sleeper, "sediment_sleep", json!({"judge": "openai"})).await },
        );
    // the sleep is under way once the judge has been asked
    let started = std::time::Instant::now();
    while requests.load(Ordering::SeqCst) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the sleep never asked the judge"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (tool, args) in [
        (
            "sediment_recall",
            json!({"context": "editing the parser", "k": 3}),
        ),
        (
            "sediment_capture",
            json!({"when": "writing a migration", "prefer": "wrap it in a transaction"}),
        ),
        ("sediment_stats", json!({})),
    ] {
        let t = std::time::Instant::now();
        let out = call(&*client, tool, args).await;
        assert_ne!(out.is_error, Some(true), "{tool}: {out:?}");
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "{tool} waited {:?} on the sleep",
            t.elapsed()
        );
    }
    let t = std::time::Instant::now();
    let other = std::process::Command::new(silt_binary())
        .args([
            "ledger",
            "--ledger",
            &ledger_env,
            "capture",
            "--when",
            "deploying on friday",
            "--prefer",
            "wait for monday",
        ])
        .env("SILT_SLEEP_PRESSURE", "0")
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .output()
        .unwrap();
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "another process waited {:?}",
        t.elapsed()
    );
    assert!(
        !sleep.is_finished(),
        "the sleep ended before the checks: make it slower"
    );
    let slept = sleep.await.unwrap();
    assert_ne!(slept.is_error, Some(true), "{slept:?}");
    let stats: Value = serde_json::from_str(&text_of(
        &call(&*client, "sediment_stats", json!({"include_retired": true})).await,
    ))
    .unwrap();
    assert_eq!(stats["total"], 10, "{stats}");
}
