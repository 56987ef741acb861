//! `sieve_search` end to end against SearXNG- and Brave-shaped servers on
//! loopback: the backend components in their sandbox, reaching only the
//! host their manifest grants; variants, pooling, de-duplication, the
//! cache, partial and total failure, slow pages and garbage.

use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, serve, text_of};
use silt_e2e::search_chain;
use silt_e2e::searxng::{results_page, slug};

/// What the fake answers to (query, page).
#[derive(Clone, Copy)]
enum Behaviour {
    /// 10 results a page, the first shared by every query (with tracking).
    Normal,
    /// Like Normal, but 500 for queries ending in " docs".
    FailDocs,
    /// 500 always.
    Fail,
    /// Page 2 and later answer after 3 s.
    SlowLaterPages,
    /// Pages after the first send their headers and half the body at once,
    /// then stall longer than the per-request limit.
    StallingBodies,
    /// HTML instead of JSON.
    Garbage,
    /// Page 1 has 3 results and reports google unresponsive; no page 2.
    Sparse,
    /// No results for the first request, then Normal.
    EmptyFirst,
}

#[derive(Clone)]
struct Fake {
    behaviour: Behaviour,
    /// (q, pageno) of every request.
    log: Arc<Mutex<Vec<(String, u32)>>>,
}

async fn searxng(State(fake): State<Fake>, Query(q): Query<HashMap<String, String>>) -> Response {
    let query = q.get("q").cloned().unwrap_or_default();
    let page: u32 = q.get("pageno").and_then(|p| p.parse().ok()).unwrap_or(1);
    assert_eq!(q.get("format").map(String::as_str), Some("json"));
    fake.log.lock().unwrap().push((query.clone(), page));
    match fake.behaviour {
        Behaviour::Normal => axum::Json(results_page(&query, page, 10)).into_response(),
        Behaviour::FailDocs if query.ends_with(" docs") => {
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        Behaviour::FailDocs => axum::Json(results_page(&query, page, 10)).into_response(),
        Behaviour::Fail => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Behaviour::SlowLaterPages => {
            if page > 1 {
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
            axum::Json(results_page(&query, page, 10)).into_response()
        }
        Behaviour::StallingBodies if page > 1 => {
            let text = results_page(&query, page, 10).to_string();
            let (head, rest) = text.split_at(text.len() / 2);
            let chunks = vec![
                (Duration::ZERO, head.to_string()),
                (Duration::from_secs(3), rest.to_string()),
            ];
            let body = futures_util::stream::iter(chunks).then(|(wait, chunk)| async move {
                tokio::time::sleep(wait).await;
                Ok::<_, std::io::Error>(chunk)
            });
            (
                [("content-type", "application/json")],
                axum::body::Body::from_stream(body),
            )
                .into_response()
        }
        Behaviour::StallingBodies => axum::Json(results_page(&query, page, 10)).into_response(),
        Behaviour::Garbage => "<html><body>rate limited</body></html>".into_response(),
        Behaviour::EmptyFirst if fake.log.lock().unwrap().len() == 1 => {
            axum::Json(results_page(&query, page, 0)).into_response()
        }
        Behaviour::EmptyFirst => axum::Json(results_page(&query, page, 10)).into_response(),
        Behaviour::Sparse => {
            let mut v = results_page(&query, page, if page == 1 { 3 } else { 0 });
            v["unresponsive_engines"] = json!([["google", "CAPTCHA"]]);
            axum::Json(v).into_response()
        }
    }
}

async fn brave(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let query = q.get("q").cloned().unwrap_or_default();
    fake.log.lock().unwrap().push((query.clone(), 0));
    if headers.get("x-subscription-token").map(|v| v.as_bytes()) != Some(b"good-key") {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let count: usize = q.get("count").and_then(|c| c.parse().ok()).unwrap_or(10);
    let results: Vec<Value> = (0..count.min(12))
        .map(|i| {
            json!({"url": format!("https://brave.example/{}/{i}", slug(&query)),
                   "title": format!("<strong>{query}</strong> {i}"),
                   "description": format!("About {query} &amp; more, part {i}")})
        })
        .collect();
    axum::Json(json!({"type": "search", "web": {"results": results}})).into_response()
}

/// A fake on a free loopback port; its base URL and request log.
async fn start_fake(behaviour: Behaviour) -> (String, Arc<Mutex<Vec<(String, u32)>>>) {
    let fake = Fake {
        behaviour,
        log: Arc::default(),
    };
    let log = fake.log.clone();
    let app = axum::Router::new()
        .route("/search", axum::routing::get(searxng))
        .route("/res/v1/web/search", axum::routing::get(brave))
        .with_state(fake);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), log)
}

/// Installs a built-in backend's component under another name with
/// `grants`, as a user installing a third-party backend would.
fn install_backend(home: &Path, builtin: &str, name: &str, grants: &str) {
    let registry = silt_plugins::registry::Registry::discover(&[], &Default::default()).unwrap();
    let bytes = registry.get(builtin).unwrap().bytes().unwrap();
    let dir = home.join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.wasm")), &bytes[..]).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!(
            "[plugin]\nname = \"{name}\"\nkind = \"search\"\ndescription = \"test backend\"\n\n\
             [grants]\n{grants}\n\n[limits]\nmemory_mib = 64\ncpu_ms = 5000\nwall_ms = 30000\noutput_kib = 1024\n"
        ),
    )
    .unwrap();
}

/// The Brave backend as `brave-local`, granted the fake on `port` and the
/// endpoint variable that points it there.
fn install_brave_local(home: &Path, port: &str) {
    install_backend(
        home,
        "brave",
        "brave-local",
        &format!(
            "http = [\"127.0.0.1:{port}\"]\nenv = [\"BRAVE_API_KEY\", \"SILT_BRAVE_ENDPOINT\"]"
        ),
    );
}

const QUERY: &str = "install tree-sitter-language-pack";

#[tokio::test(flavor = "multi_thread")]
async fn searxng_end_to_end_pools_dedupes_reranks_and_caches() {
    let (base, log) = start_fake(Behaviour::Normal).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let out = json_of(&call(&client, "sieve_search", json!({"query": QUERY})).await);
    assert_eq!(out["backend"], "searxng", "{out:#}");
    assert_eq!(
        out["variants"],
        json!([QUERY, format!("{QUERY} docs"), format!("{QUERY} github")]),
        "two words are not reordered, and the query names software"
    );
    // a paging backend asks the original query for the whole pool
    assert_eq!(out["depth"], 30);
    assert_eq!(out["hits_requested"], json!([30, 10, 10]));
    assert_eq!(out["backend_requests"], 5, "3 pages + 1 + 1: {out:#}");
    assert_eq!(out["hits_found"], 50);
    assert_eq!(out["hits_deduped"], 48, "the shared page counted once");
    assert_eq!(out["candidates_scored"], 30);
    assert_eq!(out["backend_calls"][0]["usage"]["stopped"], "count");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 10);
    let p: Vec<f64> = results
        .iter()
        .map(|r| r["probability"].as_f64().unwrap())
        .collect();
    assert!(p.windows(2).all(|w| w[0] >= w[1]), "{p:?}");
    let shared: Vec<&Value> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["url"].as_str().unwrap().contains("tree-sitter.example"))
        .collect();
    assert!(shared.len() <= 1, "{out:#}");
    assert_eq!(results[0]["engines"], json!(["duckduckgo"]));
    assert!(out.get("backend_errors").is_none());
    let asked = log.lock().unwrap().len();
    assert_eq!(asked, 5);

    // the same search again comes from the cache
    let again = json_of(&call(&client, "sieve_search", json!({"query": QUERY})).await);
    assert_eq!(again["backend_requests"], 0, "{again:#}");
    assert!(
        again["backend_calls"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["cached"] == true)
    );
    assert_eq!(again["results"], out["results"]);
    assert_eq!(
        log.lock().unwrap().len(),
        asked,
        "no request reached the server"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = home.path().join("cache/search");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("backend.sqlite")), 0o600);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_variant_is_reported_and_all_failing_is_an_error() {
    let (base, log) = start_fake(Behaviour::FailDocs).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let out = json_of(&call(&client, "sieve_search", json!({"query": QUERY})).await);
    let errors = out["backend_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{out:#}");
    assert_eq!(errors[0]["query"], format!("{QUERY} docs"));
    assert!(errors[0]["error"].as_str().unwrap().contains("HTTP 500"));
    assert!(!out["results"].as_array().unwrap().is_empty());
    let docs_asks = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(q, _)| q.ends_with(" docs"))
        .count();
    assert_eq!(docs_asks, 2, "page 1 is retried once");

    let (base, _) = start_fake(Behaviour::Fail).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let r = call(&client, "sieve_search", json!({"query": QUERY})).await;
    assert_eq!(r.is_error, Some(true));
    let text = text_of(&r);
    assert!(
        text.contains("every search variant failed") && text.contains("HTTP 500"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_results_are_not_cached() {
    let (base, log) = start_fake(Behaviour::EmptyFirst).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let first = json_of(&call(&client, "sieve_search", json!({"query": "sourdough"})).await);
    assert_eq!(first["results"], json!([]), "{first:#}");
    assert_eq!(first["pool_short"], true);
    let second = json_of(&call(&client, "sieve_search", json!({"query": "sourdough"})).await);
    assert_eq!(second["backend_calls"][0]["cached"], false, "{second:#}");
    assert!(second["backend_requests"].as_u64().unwrap() > 0);
    assert_eq!(second["results"].as_array().unwrap().len(), 10);
    assert!(log.lock().unwrap().len() >= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_pages_garbage_and_sparse_results() {
    // a page slower than the per-request limit keeps the pages before it;
    // a body that stops arriving is the same timeout as headers that never
    // come (the host's error code says so, not its wording)
    for behaviour in [Behaviour::SlowLaterPages, Behaviour::StallingBodies] {
        let (base, _) = start_fake(behaviour).await;
        let home = tempfile::tempdir().unwrap();
        let client = serve(
            home.path(),
            home.path(),
            &[("SILT_SEARXNG_URL", &base), ("SILT_SEARXNG_TIMEOUT", "1")],
        )
        .await;
        let out = json_of(
            &call(
                &client,
                "sieve_search",
                json!({"query": "sourdough", "variants": 2}),
            )
            .await,
        );
        let first = &out["backend_calls"][0];
        assert_eq!(first["usage"]["stopped"], "page_error", "{out:#}");
        assert_eq!(first["usage"]["page_errors"], json!(["page 2: timed out"]));
        assert_eq!(first["hits"], 10);
    }

    let (base, _) = start_fake(Behaviour::Garbage).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let r = call(&client, "sieve_search", json!({"query": "sourdough"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("not JSON"), "{}", text_of(&r));

    let (base, _) = start_fake(Behaviour::Sparse).await;
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_SEARXNG_URL", &base)]).await;
    let out = json_of(&call(&client, "sieve_search", json!({"query": "sourdough"})).await);
    assert_eq!(out["pool_short"], true, "{out:#}");
    assert_eq!(
        out["backend_calls"][0]["usage"]["unresponsive_engines"],
        json!(["google"])
    );
    assert_eq!(out["results"].as_array().unwrap().len(), 3);
    assert!(out["results"][0]["url"].as_str().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backend_reaches_only_the_host_it_was_granted() {
    let (base, log) = start_fake(Behaviour::Normal).await;
    let home = tempfile::tempdir().unwrap();
    // granted another port than the server it is pointed at
    install_backend(
        home.path(),
        "searxng",
        "searxng-narrow",
        "http = [\"127.0.0.1:9\"]\nenv = [\"SILT_SEARXNG_URL\"]",
    );
    let client = serve(
        home.path(),
        home.path(),
        &[
            ("SILT_SEARXNG_URL", &base),
            ("SILT_SEARCH_BACKEND", "searxng-narrow"),
        ],
    )
    .await;
    let r = call(&client, "sieve_search", json!({"query": "sourdough"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text_of(&r).contains("refused by the sandbox"),
        "{}",
        text_of(&r)
    );
    assert!(
        log.lock().unwrap().is_empty(),
        "no request left the sandbox"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn brave_sends_its_key_and_a_wrong_key_is_an_error() {
    let (base, log) = start_fake(Behaviour::Normal).await;
    let port = base.rsplit(':').next().unwrap().to_string();
    let home = tempfile::tempdir().unwrap();
    install_brave_local(home.path(), &port);
    let endpoint = format!("{base}/res/v1/web/search");
    let env = |key: &'static str| {
        vec![
            ("SILT_SEARCH_BACKEND", "brave-local".to_string()),
            ("BRAVE_API_KEY", key.to_string()),
            ("SILT_BRAVE_ENDPOINT", endpoint.clone()),
        ]
    };
    let good = env("good-key");
    let good: Vec<(&str, &str)> = good.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let client = serve(home.path(), home.path(), &good).await;
    let out = json_of(
        &call(
            &client,
            "sieve_search",
            json!({"query": "what does FastMCP do", "top_k": 5}),
        )
        .await,
    );
    assert_eq!(out["backend"], "brave-local", "{out:#}");
    // Brave does not page: every variant asks for an even share
    assert_eq!(out["hits_requested"], json!([10, 10, 10]));
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    let title = results[0]["title"].as_str().unwrap();
    assert!(!title.contains("<strong>"), "tags stripped: {title}");
    assert!(
        results[0]["snippet"].as_str().unwrap().contains("& more"),
        "{out:#}"
    );
    assert_eq!(log.lock().unwrap().len(), 3);

    let bad = env("wrong-key");
    let bad: Vec<(&str, &str)> = bad.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let home2 = tempfile::tempdir().unwrap();
    install_brave_local(home2.path(), &port);
    let client = serve(home2.path(), home2.path(), &bad).await;
    let r = call(
        &client,
        "sieve_search",
        json!({"query": "what does FastMCP do"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("unauthorized"), "{}", text_of(&r));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_search_chain_falls_back_in_order_and_preflight_checks_every_route() {
    let (base, log) = start_fake(Behaviour::Normal).await;
    let port = base.rsplit(':').next().unwrap().to_string();
    let home = tempfile::tempdir().unwrap();
    install_brave_local(home.path(), &port);
    let endpoint = format!("{base}/res/v1/web/search");
    let env = [
        ("SILT_SEARXNG_URL", base.as_str()),
        ("BRAVE_API_KEY", "wrong-key"),
        ("SILT_BRAVE_ENDPOINT", endpoint.as_str()),
    ];
    let args = [
        "search",
        "--routes",
        "brave-local,searxng",
        "--count",
        "5",
        "sourdough starter",
    ];
    let (code, out) = search_chain(home.path(), &env, &args).await;
    assert_eq!(code, 0, "{out:#}");
    assert_eq!(out["route"], "searxng", "{out:#}");
    assert_eq!(out["fallback_from"], "brave-local");
    assert!(
        out["errors"]["brave-local"]
            .as_str()
            .unwrap()
            .contains("unauthorized")
    );
    assert_eq!(out["degraded"], false, "brave is not a hosted route");
    assert_eq!(out["observed"], true);
    assert_eq!(out["cache"], "miss");
    assert_eq!(out["hits"].as_array().unwrap().len(), 5);
    assert_eq!(out["hits"][0]["rank"], 1);
    let asked = log.lock().unwrap().len();
    // the same search again: the failing route is tried live again, the
    // working one answers from its cache
    let (_, again) = search_chain(home.path(), &env, &args).await;
    assert_eq!(again["cache"], "hit", "{again:#}");
    assert_eq!(again["route"], "searxng");
    let searxng_asks = |log: &Arc<Mutex<Vec<(String, u32)>>>| {
        log.lock().unwrap().iter().filter(|(_, p)| *p > 0).count()
    };
    assert_eq!(
        log.lock().unwrap().len(),
        asked + 1,
        "only brave was asked again"
    );
    assert_eq!(searxng_asks(&log), 1);

    // every route failing: no hits, no route, exit 1
    let (code, out) = search_chain(
        home.path(),
        &env,
        &["search", "--routes", "brave-local", "q"],
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        out["route"].is_null() && out["hits"] == json!([]),
        "{out:#}"
    );

    // preflight calls both live, at once, and caches the passing one
    let (code, out) = search_chain(
        home.path(),
        &env,
        &[
            "preflight",
            "--routes",
            "brave-local,searxng",
            "--count",
            "3",
            "rye bread",
        ],
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(out["routes"]["brave-local"]["ok"], false, "{out:#}");
    assert_eq!(out["routes"]["searxng"]["ok"], true);
    assert_eq!(out["routes"]["searxng"]["results"], 3);
    let (_, after) = search_chain(
        home.path(),
        &env,
        &["search", "--routes", "searxng", "--count", "3", "rye bread"],
    )
    .await;
    assert_eq!(after["cache"], "hit", "{after:#}");
}

/// A backend built against `silt:search@0.1.0` (tests/compat) still loads
/// and answers: its results reach `sieve_search` through the 0.1.0
/// bindings, converted to the current contract.
#[tokio::test(flavor = "multi_thread")]
async fn a_backend_built_against_the_previous_contract_still_answers() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("plugins").join("old-search");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        env!("SILT_TEST_WASM_COMPAT_SEARCH_V0_1"),
        dir.join("old-search.wasm"),
    )
    .unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        "[plugin]\nname = \"old-search\"\nkind = \"search\"\ndescription = \"a silt:search@0.1.0 backend\"\n",
    )
    .unwrap();
    let client = serve(
        home.path(),
        home.path(),
        &[("SILT_SEARCH_BACKEND", "old-search")],
    )
    .await;
    let r = call(
        &client,
        "sieve_search",
        json!({"query": "sourdough starter"}),
    )
    .await;
    let out = json_of(&r);
    assert_eq!(out["backend"], "old-search", "{out:#}");
    let mut urls: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["url"].as_str().unwrap())
        .collect();
    urls.sort();
    urls.dedup();
    assert_eq!(
        urls,
        ["https://old.example/1", "https://old.example/2"],
        "{out:#}"
    );
    assert_eq!(
        out["backend_calls"][0]["usage"]["stopped"], "single",
        "{out:#}"
    );
}
