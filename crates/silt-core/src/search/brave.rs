//! The Brave Search API backend's rules over any transport: up to 20 hits
//! a request, more through `offset` pages (at most 3), the key in the
//! `X-Subscription-Token` header.

use serde_json::Value;

use super::backend::{BackendError, BackendOutcome, BackendUsage, Fetch, FetchError};
use super::pool::Hit;

/// The API endpoint.
pub const ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// Hits per request, and pages per query.
pub const PER_REQUEST: u32 = 20;
/// The most `offset` pages one query reads.
pub const MAX_PAGES: u32 = 3;
/// How long one request may take, in milliseconds.
pub const REQUEST_TIMEOUT_MS: u64 = 12_000;

/// The URL of page `offset` (0-based) of `count` hits.
pub fn page_url(endpoint: &str, query: &str, count: u32, offset: u32) -> String {
    let q: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
    format!("{endpoint}?q={q}&count={count}&offset={offset}")
}

/// Brave marks query words in snippets with HTML; the judge reads text.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

fn parse(body: &[u8]) -> Result<Vec<Hit>, String> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("the reply is not JSON ({e})"))?;
    let Some(results) = v.pointer("/web/results") else {
        // a query with no web results has no `web` section
        return if v.get("type").is_some() {
            Ok(Vec::new())
        } else {
            Err("the reply has no `web.results` list".into())
        };
    };
    let results = results.as_array().ok_or("`web.results` is not a list")?;
    Ok(results
        .iter()
        .filter_map(|r| {
            let text = |k: &str| r.get(k).and_then(Value::as_str).map(strip_tags);
            Some(Hit {
                url: r.get("url")?.as_str()?.to_string(),
                title: text("title").unwrap_or_default(),
                snippet: text("description").unwrap_or_default(),
                engines: Vec::new(),
                published: text("page_age").or_else(|| text("age")),
            })
        })
        .collect())
}

/// Searches `query` for `count` hits with `key`, from page `first`
/// (1-based, in pages of `min(count, 20)`).
pub fn search(
    fetch: &mut dyn Fetch,
    endpoint: &str,
    key: &str,
    query: &str,
    count: u32,
    first: u32,
) -> Result<BackendOutcome, BackendError> {
    let skip = first.max(1) - 1;
    if key.trim().is_empty() {
        return Err(BackendError::NotConfigured(
            "BRAVE_API_KEY is empty; put it in ~/.config/silt/env".into(),
        ));
    }
    let headers = [
        ("accept", "application/json"),
        ("x-subscription-token", key.trim()),
    ];
    let mut usage = BackendUsage::of_results();
    let mut hits: Vec<Hit> = Vec::new();
    let pages = count.div_ceil(PER_REQUEST).clamp(1, MAX_PAGES);
    let per = count.min(PER_REQUEST);
    for n in 0..pages {
        let offset = skip + n;
        let r = fetch.get(
            &page_url(endpoint, query, per, offset),
            &headers,
            REQUEST_TIMEOUT_MS,
        );
        usage.requests += 1;
        let failure = match r {
            Ok(ref f) if f.status == 401 || f.status == 403 => {
                return Err(BackendError::Unauthorized(format!(
                    "HTTP {}; check BRAVE_API_KEY",
                    f.status
                )));
            }
            Ok(ref f) if f.status == 429 => {
                return Err(BackendError::RateLimited("HTTP 429".into()));
            }
            Ok(ref f) if f.status >= 400 => Some(format!("HTTP {}", f.status)),
            Ok(ref f) => match parse(&f.body) {
                Ok(page) => {
                    usage.pages += 1;
                    let got = page.len();
                    hits.extend(page);
                    if got < per as usize || hits.len() >= count as usize {
                        break;
                    }
                    None
                }
                Err(e) => Some(e),
            },
            Err(FetchError::Timeout) => Some("timed out".into()),
            Err(FetchError::Connect(e)) => Some(format!("cannot connect: {e}")),
            Err(FetchError::Denied(e)) => Some(format!("refused by the sandbox: {e}")),
        };
        if let Some(why) = failure {
            if n == 0 {
                return Err(BackendError::Unavailable(format!("Brave: {why}")));
            }
            usage
                .page_errors
                .push(format!("page {}: {why}", offset + 1));
            break;
        }
    }
    hits.truncate(count as usize);
    usage.stopped = if pages == 1 { "single" } else { "count" }.into();
    Ok(BackendOutcome { hits, usage })
}

#[cfg(test)]
mod tests {
    use super::super::backend::Fetched;
    use super::*;
    use serde_json::json;

    struct Replies(
        Vec<Result<Fetched, FetchError>>,
        Vec<(String, Vec<(String, String)>)>,
    );

    impl Fetch for Replies {
        fn get(
            &mut self,
            url: &str,
            headers: &[(&str, &str)],
            _: u64,
        ) -> Result<Fetched, FetchError> {
            self.1.push((
                url.into(),
                headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ));
            self.0.remove(0)
        }
        fn now_ms(&mut self) -> u64 {
            0
        }
    }

    fn page(n: usize) -> Result<Fetched, FetchError> {
        let results: Vec<_> = (0..n)
            .map(|i| json!({"url": format!("https://r{i}.example/"), "title": format!("<strong>R</strong>{i}"),
                            "description": "a &amp; <b>b</b>", "page_age": "2026-05-01T00:00:00"}))
            .collect();
        Ok(Fetched {
            status: 200,
            body: json!({"type": "search", "web": {"results": results}})
                .to_string()
                .into_bytes(),
        })
    }

    #[test]
    fn sends_the_key_and_reads_web_results_as_text() {
        let mut t = Replies(vec![page(3)], vec![]);
        let out = search(&mut t, ENDPOINT, "k3y", "rust wasm", 10, 1).unwrap();
        assert_eq!(out.hits.len(), 3);
        assert_eq!(out.hits[0].title, "R0");
        assert_eq!(out.hits[0].snippet, "a & b");
        assert_eq!(
            out.hits[0].published.as_deref(),
            Some("2026-05-01T00:00:00")
        );
        let (url, headers) = &t.1[0];
        assert_eq!(url, &format!("{ENDPOINT}?q=rust+wasm&count=10&offset=0"));
        assert!(headers.contains(&("x-subscription-token".into(), "k3y".into())));
    }

    #[test]
    fn pages_past_twenty_and_keeps_pages_before_a_failure() {
        let mut t = Replies(vec![page(20), Err(FetchError::Timeout)], vec![]);
        let out = search(&mut t, ENDPOINT, "k", "q", 35, 1).unwrap();
        assert_eq!(out.hits.len(), 20);
        assert_eq!(out.usage.page_errors, ["page 2: timed out"]);
        assert!(t.1[1].0.ends_with("count=20&offset=1"));
        let mut t = Replies(vec![page(5)], vec![]);
        search(&mut t, ENDPOINT, "k", "q", 10, 3).unwrap();
        assert!(t.1[0].0.ends_with("count=10&offset=2"), "{:?}", t.1);
    }

    #[test]
    fn key_and_service_errors_are_typed() {
        let status = |s: u16| {
            Ok(Fetched {
                status: s,
                body: vec![],
            })
        };
        let err = |r, key: &str| {
            search(&mut Replies(vec![r], vec![]), ENDPOINT, key, "q", 10, 1).unwrap_err()
        };
        assert!(matches!(err(page(1), " "), BackendError::NotConfigured(_)));
        assert!(matches!(
            err(status(401), "k"),
            BackendError::Unauthorized(_)
        ));
        assert!(matches!(
            err(status(429), "k"),
            BackendError::RateLimited(_)
        ));
        assert!(matches!(
            err(status(503), "k"),
            BackendError::Unavailable(_)
        ));
        let garbage = Ok(Fetched {
            status: 200,
            body: b"{]".to_vec(),
        });
        assert!(err(garbage, "k").to_string().contains("not JSON"));
        // no web section on a search reply: nothing found
        let empty = Ok(Fetched {
            status: 200,
            body: br#"{"type":"search"}"#.to_vec(),
        });
        let out = search(&mut Replies(vec![empty], vec![]), ENDPOINT, "k", "q", 10, 3).unwrap();
        assert!(out.hits.is_empty());
    }
}
