//! The search chain: for callers that want one route first and a logged
//! fallback after it. Routes are search backend plugins tried in order;
//! each has its own cache, read before it is called live, and a later
//! route's cached answer is never served while an earlier route works.
//! Separate from `sieve_search`, which uses one backend.

use std::time::Instant;

use futures::future::join_all;
use serde_json::{Map, Value, json};

use super::search_cache::{SearchCache, ttl_from};
use silt_config::{Config, env};
use silt_core::search::HitsSource;
use silt_core::search::cli::{Cli, Settings};
use silt_runtime::bindings::search_backend::silt::search::types::{SearchRequest, SearchResult};
use silt_runtime::search::LoadedBackend;
use silt_runtime::{CallError, Runtime};

/// Routes whose failure makes a later route's answer `degraded`: hosted
/// searches a caller chose first on purpose.
const HOSTED: [&str; 2] = ["codex", "claude"];

/// The most hits a chain call asks for.
pub const MAX_COUNT: u32 = 50;

/// The routes as the caller listed them: comma-separated names, trimmed,
/// none empty, none twice.
pub fn parse_routes(list: &str) -> Result<Vec<String>, CallError> {
    let routes: Vec<String> = list
        .split(',')
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect();
    if routes.is_empty() {
        return Err(CallError::InvalidRequest(
            "no routes: pass --routes as a comma-separated list of search backends, e.g. searxng,brave".into(),
        ));
    }
    for (i, r) in routes.iter().enumerate() {
        if routes[..i].contains(r) {
            return Err(CallError::InvalidRequest(format!(
                "route '{r}' is listed twice"
            )));
        }
    }
    Ok(routes)
}

fn check(query: &str, count: u32) -> Result<String, CallError> {
    let query = query.split_whitespace().collect::<Vec<_>>().join(" ");
    if query.is_empty() {
        return Err(CallError::InvalidRequest("the query is empty".into()));
    }
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(CallError::InvalidRequest(format!(
            "count is {count}, it must be 1 to {MAX_COUNT}"
        )));
    }
    Ok(query)
}

/// A route's effective configuration: its granted environment and command
/// overrides (values hashed into cache keys, never shown), the SearXNG URL,
/// and a CLI route's model and effort.
fn config_of(backend: &LoadedBackend) -> (String, Value) {
    // the chain reads only each route's own command variable
    let fingerprint = backend.config_fingerprint(None);
    let grants = &backend.manifest.grants;
    let url =
        env::var("SILT_SEARXNG_URL").filter(|_| grants.env.iter().any(|k| k == "SILT_SEARXNG_URL"));
    let programs: Vec<String> = grants.exec.keys().cloned().collect();
    let cli = Cli::from_granted(&programs)
        .ok()
        .and_then(|cli| Settings::from_env(cli, env::var).ok());
    let digest = SearchCache::key(&backend.manifest.plugin.name, &fingerprint, "", 0, 0);
    (
        fingerprint,
        json!({"route": backend.manifest.plugin.name,
               "model": cli.as_ref().map(|s| &s.model),
               "effort": cli.as_ref().and_then(|s| s.effort.as_ref()),
               "config_fingerprint": &digest[..12], "url": url}),
    )
}

fn hits_json(r: &SearchResult) -> Vec<Value> {
    r.hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut v = json!({"rank": i + 1, "title": h.title, "url": h.url,
                               "snippet": h.snippet, "engines": h.engines});
            if let Some(p) = &h.published {
                v["published"] = json!(p);
            }
            v
        })
        .collect()
}

/// What a route found, as cached.
struct Found {
    hits: Vec<Value>,
    /// Parsed from a model's reply rather than the service's results.
    transcribed: bool,
}

impl Found {
    fn of(r: &SearchResult) -> Found {
        Found {
            hits: hits_json(r),
            transcribed: r.usage.hits_source == HitsSource::Transcript.as_str(),
        }
    }

    fn to_json(&self) -> String {
        json!({"hits": self.hits, "transcribed": self.transcribed}).to_string()
    }

    /// A cache entry (a bare list is an entry from before `transcribed`).
    fn from_json(text: &str) -> Option<Found> {
        match serde_json::from_str::<Value>(text).ok()? {
            Value::Array(hits) => Some(Found {
                hits,
                transcribed: false,
            }),
            v => Some(Found {
                hits: v["hits"].as_array()?.clone(),
                transcribed: v["transcribed"].as_bool().unwrap_or(false),
            }),
        }
    }

    /// Whether the hits came from the service's own results and look like
    /// pages: not transcribed, and at least one http(s) URL with a title.
    fn observed(&self) -> bool {
        !self.transcribed
            && self.hits.iter().any(|h| {
                let url = h["url"].as_str().unwrap_or("");
                (url.starts_with("https://") || url.starts_with("http://"))
                    && !h["title"].as_str().unwrap_or("").trim().is_empty()
            })
    }
}

/// The chain's cache (None: turned off, or unusable, which is logged).
fn cache_of(config: &Config) -> Result<Option<SearchCache>, CallError> {
    let ttl = ttl_from(env::var("SILT_SEARCH_CACHE_TTL").as_deref())
        .map_err(CallError::InvalidRequest)?;
    Ok(
        SearchCache::open(&config.cache_dir().join("search-chain"), ttl)
            .map_err(|e| tracing::warn!("search chain cache off: {e:#}"))
            .ok()
            .flatten(),
    )
}

/// A cached entry, or None (a read error is logged and counts as a miss).
fn cached(cache: Option<&SearchCache>, key: &str) -> Option<String> {
    cache?
        .get(key)
        .map_err(|e| tracing::warn!("search cache not read: {e:#}"))
        .ok()
        .flatten()
}

/// One live call of a route (the chain reads only the route's own command
/// variable, never `SILT_SEARCH_CMD`).
async fn live(
    backend: &LoadedBackend,
    query: &str,
    count: u32,
) -> Result<SearchResult, silt_runtime::search::BackendFailure> {
    let request = SearchRequest {
        query: query.to_string(),
        count,
        page: 1,
    };
    backend.search(&request, None).await
}

/// Tries `routes` in order for `count` hits of `query`.
pub async fn search(
    runtime: &Runtime,
    config: &Config,
    query: &str,
    count: u32,
    routes: &[String],
) -> Result<Value, CallError> {
    let started = Instant::now();
    let query = check(query, count)?;
    let cache = cache_of(config)?;
    let mut errors = Map::new();
    let mut fallback_from: Option<String> = None;
    for route in routes {
        let mut fail = |why: String| {
            fallback_from.get_or_insert_with(|| route.clone());
            errors.insert(route.clone(), json!(why));
        };
        let backend = match runtime.search_backend(route).await {
            Ok(b) => b,
            Err(e) => {
                fail(e.to_string());
                continue;
            }
        };
        let (fingerprint, config_json) = config_of(&backend);
        let key = SearchCache::key(route, &fingerprint, &query, count, 1);
        let stored = cached(cache.as_ref(), &key).and_then(|c| Found::from_json(&c));
        let (found, cache_state) = match stored {
            Some(found) if !found.hits.is_empty() => (found, "hit"),
            _ => {
                let live = live(&backend, &query, count).await;
                match live {
                    Ok(r) if !r.hits.is_empty() => {
                        let found = Found::of(&r);
                        // a transcript is served once, never kept: the route
                        // may give real results next time
                        if let Some(c) = cache.as_ref().filter(|_| !found.transcribed)
                            && let Err(e) = c.put(&key, &found.to_json())
                        {
                            tracing::warn!("search chain cache not written: {e:#}");
                        }
                        (found, "miss")
                    }
                    Ok(_) => {
                        fail("no results".into());
                        continue;
                    }
                    Err(e) => {
                        fail(e.to_string());
                        continue;
                    }
                }
            }
        };
        let degraded = errors.keys().any(|r| HOSTED.contains(&r.as_str()));
        return Ok(json!({
            "hits": found.hits,
            "route": route,
            "fallback_from": fallback_from,
            "errors": errors,
            "degraded": degraded,
            "observed": found.observed(),
            "transcribed": found.transcribed,
            "config": config_json,
            "cache": cache_state,
            "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        }));
    }
    Ok(json!({
        "hits": [],
        "route": null,
        "fallback_from": fallback_from,
        "errors": errors,
        "degraded": errors.keys().any(|r| HOSTED.contains(&r.as_str())),
        "observed": false,
        "transcribed": false,
        "config": null,
        "cache": null,
        "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    }))
}

/// Calls every route live and at once (no cache read); a route is `ok`
/// when its hits are observed. A passing result is cached, so the next
/// `search` for the same query and count costs nothing.
pub async fn preflight(
    runtime: &Runtime,
    config: &Config,
    query: &str,
    count: u32,
    routes: &[String],
) -> Result<Value, CallError> {
    let query = check(query, count)?;
    let cache = cache_of(config)?;
    let checks = routes.iter().map(|route| {
        let query = query.clone();
        let cache = cache.as_ref();
        async move {
            let started = Instant::now();
            let seconds = |s: Instant| (s.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
            let backend = match runtime.search_backend(route).await {
                Ok(b) => b,
                Err(e) => {
                    return (
                        route.clone(),
                        json!({"ok": false, "results": 0, "observed": false,
                               "error": e.to_string(), "seconds": seconds(started), "config": null}),
                    );
                }
            };
            let (fingerprint, config_json) = config_of(&backend);
            let live = live(&backend, &query, count).await;
            let report = match live {
                Ok(r) => {
                    let found = Found::of(&r);
                    let ok = found.observed();
                    if ok && let Some(c) = cache {
                        let key = SearchCache::key(route, &fingerprint, &query, count, 1);
                        if let Err(e) = c.put(&key, &found.to_json()) {
                            tracing::warn!("preflight result not cached: {e:#}");
                        }
                    }
                    json!({"ok": ok, "results": found.hits.len(), "observed": ok,
                           "transcribed": found.transcribed,
                           "error": if ok { Value::Null } else { json!("no observed result with an http(s) URL and a title") },
                           "seconds": seconds(started), "config": config_json})
                }
                Err(e) => json!({"ok": false, "results": 0, "observed": false,
                                 "error": e.to_string(), "seconds": seconds(started), "config": config_json}),
            };
            (route.clone(), report)
        }
    });
    let reports: Map<String, Value> = join_all(checks).await.into_iter().collect();
    Ok(json!({"query": query, "count": count, "routes": reports}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_a_list_without_blanks_or_repeats() {
        assert_eq!(
            parse_routes(" searxng, brave ,").unwrap(),
            ["searxng", "brave"]
        );
        assert!(parse_routes(" , ").is_err());
        let err = parse_routes("brave,brave").unwrap_err().to_string();
        assert!(err.contains("listed twice"), "{err}");
        assert!(check("  ", 10).is_err());
        assert!(check("q", 0).is_err());
        assert_eq!(check(" a  b ", 10).unwrap(), "a b");
    }

    #[test]
    fn observed_needs_a_web_url_a_title_and_no_transcription() {
        let found = |hits: Vec<Value>, transcribed| Found { hits, transcribed };
        let page = json!({"url": "https://x.example", "title": "X"});
        assert!(found(vec![page.clone()], false).observed());
        assert!(!found(vec![page.clone()], true).observed());
        assert!(!found(vec![json!({"url": "ftp://x.example", "title": "X"})], false).observed());
        assert!(
            !found(
                vec![json!({"url": "https://x.example", "title": " "})],
                false
            )
            .observed()
        );
        assert!(!found(vec![], false).observed());
    }

    #[test]
    fn cache_entries_keep_whether_they_were_transcribed() {
        let f = Found {
            hits: vec![json!({"url": "https://x.example", "title": "X"})],
            transcribed: true,
        };
        let back = Found::from_json(&f.to_json()).unwrap();
        assert_eq!((back.hits, back.transcribed), (f.hits.clone(), true));
        // an entry written before the flag existed is a bare list
        let old = Found::from_json(&Value::Array(f.hits.clone()).to_string()).unwrap();
        assert!(!old.transcribed && old.observed());
        assert!(Found::from_json("not json").is_none());
    }
}
