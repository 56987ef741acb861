//! The SearXNG backend's rules, over any transport: pages of the JSON API
//! until enough hits, a page with no new URL, the page limit or the
//! query's deadline; page 1 retried once on a connection error, a timeout
//! or a 5xx; a later page's failure keeps the pages before it.
//!
//! The backend component runs this over `wasi:http`; tests run it over a
//! scripted transport.

use serde_json::Value;

use super::backend::{BackendError, BackendOutcome, BackendUsage, Fetch, FetchError};
use super::canonical::canonical_url;
use super::pool::Hit;

/// Pages asked per query by default, and at most.
pub const DEFAULT_PAGES: u32 = 3;
/// The most pages a query reads, whatever [`Settings::max_pages`] says.
pub const MAX_PAGES: u32 = 5;
/// Per request and per query (all pages), in milliseconds.
pub const REQUEST_TIMEOUT_MS: u64 = 12_000;
/// How long one query may take over all its pages and retries, in milliseconds.
pub const QUERY_DEADLINE_MS: u64 = 30_000;

/// Where and how hard to ask.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The instance, e.g. `http://127.0.0.1:8888` (a path prefix is kept).
    pub base_url: String,
    /// Pages read at most per query, clamped to 1..=[`MAX_PAGES`].
    pub max_pages: u32,
    /// How long one request may take, in milliseconds.
    pub request_timeout_ms: u64,
    /// How long the whole query may take, in milliseconds.
    pub deadline_ms: u64,
}

impl Settings {
    /// The defaults for the instance at `base_url` (trimmed, trailing `/`
    /// dropped).
    pub fn new(base_url: &str) -> Settings {
        Settings {
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            max_pages: DEFAULT_PAGES,
            request_timeout_ms: REQUEST_TIMEOUT_MS,
            deadline_ms: QUERY_DEADLINE_MS,
        }
    }
}

/// The URL of one page of results.
pub fn page_url(base: &str, query: &str, page: u32) -> String {
    let q: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
    format!("{base}/search?q={q}&format=json&pageno={page}")
}

/// One page's hits and the engines it reported unresponsive.
fn parse_page(body: &[u8]) -> Result<(Vec<Hit>, Vec<String>), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        format!("the reply is not JSON ({e}); is format=json enabled in settings.yml?")
    })?;
    let results = v
        .get("results")
        .and_then(Value::as_array)
        .ok_or("the reply has no `results` list")?;
    let hits = results
        .iter()
        .filter_map(|r| {
            let url = r.get("url")?.as_str()?.to_string();
            let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            Some(Hit {
                url,
                title: text("title"),
                snippet: text("content"),
                engines: r
                    .get("engines")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|e| e.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                published: r
                    .get("publishedDate")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            })
        })
        .collect();
    // [[engine, reason], ...]
    let unresponsive = v
        .get("unresponsive_engines")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| match e {
                    Value::Array(pair) => pair.first()?.as_str().map(str::to_string),
                    Value::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((hits, unresponsive))
}

/// Why one request failed, and whether page 1 may retry it.
fn request_failure(
    fetch_result: &Result<super::backend::Fetched, FetchError>,
) -> Option<(String, bool)> {
    match fetch_result {
        Ok(r) if r.status >= 500 => Some((format!("HTTP {}", r.status), true)),
        Ok(r) if r.status >= 400 => Some((
            format!(
                "HTTP {} (is the JSON API enabled and the limiter off?)",
                r.status
            ),
            false,
        )),
        Ok(_) => None,
        Err(FetchError::Timeout) => Some(("timed out".into(), true)),
        Err(FetchError::Connect(e)) => Some((format!("cannot connect: {e}"), true)),
        Err(FetchError::Denied(e)) => Some((format!("refused by the sandbox: {e}"), false)),
    }
}

/// Searches `query` for `count` hits, reading from page `first` (1-based).
pub fn search(
    fetch: &mut dyn Fetch,
    settings: &Settings,
    query: &str,
    count: u32,
    first: u32,
) -> Result<BackendOutcome, BackendError> {
    let max_pages = settings.max_pages.clamp(1, MAX_PAGES);
    let first = first.max(1);
    let start = fetch.now_ms();
    let mut usage = BackendUsage::of_results();
    let mut hits: Vec<Hit> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut stopped = "pages";
    for page in first..first + max_pages {
        let elapsed = fetch.now_ms().saturating_sub(start);
        if elapsed >= settings.deadline_ms {
            stopped = "deadline";
            break;
        }
        let url = page_url(&settings.base_url, query, page);
        let attempts = if page == first { 2 } else { 1 };
        let mut outcome = None;
        for attempt in 0..attempts {
            let left = settings
                .deadline_ms
                .saturating_sub(fetch.now_ms().saturating_sub(start));
            if left == 0 {
                break;
            }
            let r = fetch.get(&url, &[], settings.request_timeout_ms.min(left));
            usage.requests += 1;
            match request_failure(&r) {
                None => {
                    outcome = Some(Ok(r.expect("not a failure")));
                    break;
                }
                Some((why, retry)) => {
                    outcome = Some(Err(why));
                    if !retry || attempt + 1 == attempts {
                        break;
                    }
                }
            }
        }
        let parsed = match outcome {
            None => {
                stopped = "deadline";
                break;
            }
            Some(Ok(r)) => parse_page(&r.body),
            Some(Err(why)) => Err(why),
        };
        match parsed {
            Ok((page_hits, unresponsive)) => {
                usage.pages += 1;
                for e in unresponsive {
                    if !usage.unresponsive_engines.contains(&e) {
                        usage.unresponsive_engines.push(e);
                    }
                }
                let mut new = 0;
                for h in page_hits {
                    let Some(key) = canonical_url(&h.url) else {
                        continue;
                    };
                    if !seen.contains(&key) {
                        seen.push(key);
                        hits.push(h);
                        new += 1;
                    }
                }
                if hits.len() >= count as usize {
                    stopped = "count";
                    break;
                }
                if new == 0 {
                    stopped = "no_new";
                    break;
                }
            }
            Err(why) if page == first => {
                return Err(BackendError::Unavailable(format!(
                    "SearXNG at {}: {why}",
                    settings.base_url
                )));
            }
            Err(why) => {
                usage.page_errors.push(format!("page {page}: {why}"));
                stopped = "page_error";
                break;
            }
        }
    }
    if hits.is_empty() && !usage.unresponsive_engines.is_empty() {
        return Err(BackendError::Unavailable(format!(
            "no SearXNG engine answered (unresponsive: {})",
            usage.unresponsive_engines.join(", ")
        )));
    }
    hits.truncate(count as usize);
    usage.stopped = stopped.to_string();
    Ok(BackendOutcome { hits, usage })
}

#[cfg(test)]
mod tests {
    use super::super::backend::Fetched;
    use super::*;
    use serde_json::json;

    /// Replies from a script, one per request, advancing a clock.
    struct Script {
        replies: Vec<(u64, Result<Fetched, FetchError>)>,
        asked: Vec<(String, u64)>,
        now: u64,
    }

    impl Script {
        fn new(replies: Vec<(u64, Result<Fetched, FetchError>)>) -> Script {
            Script {
                replies,
                asked: vec![],
                now: 0,
            }
        }
    }

    impl Fetch for Script {
        fn get(
            &mut self,
            url: &str,
            _headers: &[(&str, &str)],
            timeout_ms: u64,
        ) -> Result<Fetched, FetchError> {
            self.asked.push((url.to_string(), timeout_ms));
            let (took, reply) = self.replies.remove(0);
            self.now += took;
            reply
        }
        fn now_ms(&mut self) -> u64 {
            self.now
        }
    }

    fn page(urls: &[&str], unresponsive: &[&str]) -> Result<Fetched, FetchError> {
        let results: Vec<Value> = urls
            .iter()
            .map(|u| json!({"url": u, "title": format!("t {u}"), "content": "c", "engines": ["google"]}))
            .collect();
        let unresponsive: Vec<Value> = unresponsive.iter().map(|e| json!([e, "CAPTCHA"])).collect();
        Ok(Fetched {
            status: 200,
            body: json!({"results": results, "unresponsive_engines": unresponsive})
                .to_string()
                .into_bytes(),
        })
    }

    fn status(code: u16) -> Result<Fetched, FetchError> {
        Ok(Fetched {
            status: code,
            body: b"oops".to_vec(),
        })
    }

    fn urls(n: std::ops::Range<u32>) -> Vec<String> {
        n.map(|i| format!("https://e{i}.example/")).collect()
    }

    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    const BASE: &str = "http://127.0.0.1:8888/";

    #[test]
    fn pages_until_it_has_enough_hits_from_the_page_asked() {
        let (a, b) = (urls(0..10), urls(10..20));
        let mut t = Script::new(vec![(5, page(&refs(&a), &[])), (5, page(&refs(&b), &[]))]);
        let out = search(&mut t, &Settings::new(BASE), "rust wasm", 15, 1).unwrap();
        assert_eq!(out.hits.len(), 15);
        assert_eq!(out.usage.stopped, "count");
        assert_eq!((out.usage.pages, out.usage.requests), (2, 2));
        assert_eq!(
            t.asked[1].0,
            "http://127.0.0.1:8888/search?q=rust+wasm&format=json&pageno=2"
        );
        assert_eq!(out.hits[0].engines, ["google"]);
        let mut t = Script::new(vec![(5, page(&refs(&b), &[]))]);
        search(&mut t, &Settings::new(BASE), "q", 10, 4).unwrap();
        assert!(t.asked[0].0.ends_with("pageno=4"), "{:?}", t.asked);
    }

    #[test]
    fn stops_at_the_page_limit_or_a_page_with_nothing_new() {
        let pages: Vec<_> = (0..5)
            .map(|p| (1, page(&refs(&urls(p * 10..p * 10 + 10)), &[])))
            .collect();
        let mut t = Script::new(pages);
        let out = search(&mut t, &Settings::new(BASE), "q", 100, 1).unwrap();
        assert_eq!((out.usage.pages, out.usage.stopped.as_str()), (3, "pages"));
        let mut five = Settings::new(BASE);
        five.max_pages = 9; // capped at 5
        let pages: Vec<_> = (0..6)
            .map(|p| (1, page(&refs(&urls(p * 10..p * 10 + 10)), &[])))
            .collect();
        let out = search(&mut Script::new(pages), &five, "q", 100, 1).unwrap();
        assert_eq!(out.usage.pages, 5);
        let same = urls(0..10);
        let mut t = Script::new(vec![
            (1, page(&refs(&same), &[])),
            (1, page(&refs(&same), &[])),
        ]);
        let out = search(&mut t, &Settings::new(BASE), "q", 50, 1).unwrap();
        assert_eq!((out.hits.len(), out.usage.stopped.as_str()), (10, "no_new"));
    }

    #[test]
    fn page_one_is_retried_once_and_a_later_failure_keeps_earlier_pages() {
        let ok = urls(0..10);
        let mut t = Script::new(vec![
            (1, status(502)),
            (1, page(&refs(&ok), &[])),
            (1, Err(FetchError::Timeout)),
        ]);
        let out = search(&mut t, &Settings::new(BASE), "q", 30, 1).unwrap();
        assert_eq!(out.hits.len(), 10);
        assert_eq!(out.usage.requests, 3);
        assert_eq!(out.usage.stopped, "page_error");
        assert_eq!(out.usage.page_errors, ["page 2: timed out"]);

        let mut t = Script::new(vec![
            (1, Err(FetchError::Connect("refused".into()))),
            (1, Err(FetchError::Connect("refused".into()))),
        ]);
        let err = search(&mut t, &Settings::new(BASE), "q", 30, 1).unwrap_err();
        assert!(err.to_string().contains("cannot connect: refused"), "{err}");
        assert_eq!(t.asked.len(), 2, "one retry, no more");

        // a 4xx is not retried
        let mut t = Script::new(vec![(1, status(403))]);
        let err = search(&mut t, &Settings::new(BASE), "q", 30, 1).unwrap_err();
        assert!(err.to_string().contains("HTTP 403"), "{err}");
    }

    #[test]
    fn garbage_and_silent_engines_fail_clearly() {
        let garbage = Ok(Fetched {
            status: 200,
            body: b"<html>not json</html>".to_vec(),
        });
        let err = search(
            &mut Script::new(vec![(1, garbage)]),
            &Settings::new(BASE),
            "q",
            10,
            1,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
        let mut t = Script::new(vec![(1, page(&[], &["google", "bing"]))]);
        let err = search(&mut t, &Settings::new(BASE), "q", 10, 1).unwrap_err();
        assert!(err.to_string().contains("google, bing"), "{err}");
        // a sparse query with engines answering is an empty result
        let mut t = Script::new(vec![(1, page(&[], &[]))]);
        let out = search(&mut t, &Settings::new(BASE), "q", 10, 1).unwrap();
        assert!(out.hits.is_empty());
    }

    #[test]
    fn unresponsive_engines_are_reported_and_the_deadline_bounds_the_query() {
        let mut t = Script::new(vec![
            (20_000, page(&refs(&urls(0..10)), &["google"])),
            (9_000, page(&refs(&urls(10..20)), &["google", "yahoo"])),
            (1, page(&refs(&urls(20..30)), &[])),
        ]);
        let out = search(&mut t, &Settings::new(BASE), "q", 100, 1).unwrap();
        assert_eq!(out.usage.unresponsive_engines, ["google", "yahoo"]);
        // 29 s spent after two pages: the third asks with the 1 s left
        assert_eq!(t.asked[2].1, 1_000);
        assert_eq!(t.asked[0].1, REQUEST_TIMEOUT_MS);
        let mut t = Script::new(vec![(30_000, page(&refs(&urls(0..10)), &[]))]);
        let out = search(&mut t, &Settings::new(BASE), "q", 100, 1).unwrap();
        assert_eq!(
            (out.hits.len(), out.usage.stopped.as_str()),
            (10, "deadline")
        );
    }
}
