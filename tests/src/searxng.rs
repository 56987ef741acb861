//! A SearXNG-shaped search server on loopback: the JSON API's result pages,
//! for the tests that run `sieve_search` without the web.

use axum::extract::Query;
use serde_json::{Value, json};
use std::collections::HashMap;

/// `q` with every non-alphanumeric character as `-`, for URLs.
pub fn slug(q: &str) -> String {
    q.chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect()
}

/// Page `page` of `n` results for `q`, as SearXNG's `format=json` gives
/// it. The first result of page 1 is one page every query finds, dressed
/// with a different tracking parameter, so de-duplication has work to do.
pub fn results_page(q: &str, page: u32, n: usize) -> Value {
    let results: Vec<Value> = (0..n)
        .map(|i| {
            let url = if page == 1 && i == 0 {
                format!("https://www.tree-sitter.example/install/?utm_source={}", slug(q))
            } else {
                format!("https://docs.example/{}/{page}-{i}", slug(q))
            };
            json!({"url": url, "title": format!("{q} result {page}-{i}"),
                   "content": format!("How to {q}, part {i}"), "engines": ["duckduckgo"],
                   "publishedDate": if i == 1 { json!("2026-03-01T00:00:00") } else { Value::Null }})
        })
        .collect();
    json!({"query": q, "results": results, "unresponsive_engines": []})
}

/// Starts a server answering every query with 10 results a page; its base
/// URL (for `SILT_SEARXNG_URL`). It runs until the test's runtime ends.
pub async fn start() -> String {
    async fn search(Query(q): Query<HashMap<String, String>>) -> axum::Json<Value> {
        let query = q.get("q").cloned().unwrap_or_default();
        let page = q.get("pageno").and_then(|p| p.parse().ok()).unwrap_or(1);
        axum::Json(results_page(&query, page, 10))
    }
    let app = axum::Router::new().route("/search", axum::routing::get(search));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}
