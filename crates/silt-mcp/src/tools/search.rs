//! `sieve_search`: arguments and result shape as the seed's `jev_search`,
//! plus `judge`. Query variants run concurrently through the one chosen
//! backend component (each call a fresh sandboxed instance, cached by
//! query), the hits are pooled by the rules in `silt_core::search::pool`,
//! and the pool is reranked against the original query by `sieve_rank`'s
//! path with the chosen judge.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use silt_core::search::pool::{self, Hit};
use silt_core::search::variants::variants;

use super::search_cache::{SearchCache, ttl_from};
use crate::tools::ask::usage_json;
use silt_config::{Config, env};
use silt_runtime::bindings::ask_engine::exports::silt::sieve::rank::RankRequest;
use silt_runtime::bindings::search_backend::silt::search::types::{SearchRequest, SearchResult};
use silt_runtime::bindings::types::Item;
use silt_runtime::search::{GENERIC_COMMAND_VAR, LoadedBackend};
use silt_runtime::{CallError, Runtime};

/// Arguments of `sieve_search`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to search the web for.
    pub query: String,
    /// Results returned (default 10, at most 50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<u32>,
    /// Query variants to run (default 3; 2 to 4, fewer when rewrites coincide).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 2, max = 4))]
    pub variants: Option<u32>,
    /// Deduplicated hits reranked (default 30; at most 50, never below top_k).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 1, max = 50))]
    pub depth: Option<u32>,
    /// The judge plugin that reranks (default: silt.toml's choice for sieve_search, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

/// The backend to use: `$SILT_SEARCH_BACKEND` (or silt.toml's
/// `[search] backend`), else `searxng` when `$SILT_SEARXNG_URL` is set,
/// else `brave` when `$BRAVE_API_KEY` is set, else `claude`; and whether
/// it was that last fallback (nothing chose it).
fn backend_choice(config: &Config, env: impl Fn(&str) -> Option<String>) -> (String, bool) {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(named) = set("SILT_SEARCH_BACKEND")
        .map(|v| v.trim().to_string())
        .or_else(|| config.search.backend.clone())
    {
        (named, false)
    } else if set("SILT_SEARXNG_URL").is_some() {
        ("searxng".into(), false)
    } else if set("BRAVE_API_KEY").is_some() {
        ("brave".into(), false)
    } else {
        ("claude".into(), true)
    }
}

/// The backend to use (see [`backend_choice`]).
pub fn choose_backend(config: &Config, env: impl Fn(&str) -> Option<String>) -> String {
    backend_choice(config, env).0
}

/// Whether nothing chose the backend, so it is `claude` by default.
fn chosen_by_default(config: &Config, env: impl Fn(&str) -> Option<String>) -> bool {
    backend_choice(config, env).1
}

/// What one backend call gave.
struct Call {
    query: String,
    requested: u32,
    outcome: Result<SearchResult, String>,
    cached: bool,
    seconds: f64,
}

async fn call_backend(
    backend: &LoadedBackend,
    cache: Option<&SearchCache>,
    query: String,
    count: u32,
) -> Call {
    let started = Instant::now();
    let key = SearchCache::key(
        &backend.manifest.plugin.name,
        &backend.config_fingerprint(Some(GENERIC_COMMAND_VAR)),
        &query,
        count,
        1,
    );
    let stored = cache.and_then(|c| {
        c.get(&key)
            .map_err(|e| tracing::warn!("search cache not read: {e:#}"))
            .ok()
            .flatten()
    });
    if let Some(hit) = stored
        && let Ok(result) = serde_json::from_str::<Value>(&hit).map(from_json)
    {
        return Call {
            query,
            requested: count,
            outcome: Ok(result),
            cached: true,
            seconds: started.elapsed().as_secs_f64(),
        };
    }
    let outcome = backend
        .search(
            &SearchRequest {
                query: query.clone(),
                count,
                page: 1,
            },
            Some(GENERIC_COMMAND_VAR),
        )
        .await
        .map_err(|e| e.to_string());
    if let (Ok(result), Some(cache)) = (&outcome, cache)
        && !result.hits.is_empty()
        && let Err(e) = cache.put(&key, &to_json(result).to_string())
    {
        tracing::warn!("search cache not written: {e:#}");
    }
    Call {
        query,
        requested: count,
        outcome,
        cached: false,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn to_json(r: &SearchResult) -> Value {
    json!({
        "hits": r.hits.iter().map(|h| json!({
            "url": h.url, "title": h.title, "snippet": h.snippet,
            "engines": h.engines, "published": h.published,
        })).collect::<Vec<_>>(),
        "usage": usage_of(r),
    })
}

fn usage_of(r: &SearchResult) -> Value {
    json!({
        "requests": r.usage.requests, "pages": r.usage.pages, "stopped": r.usage.stopped,
        "unresponsive_engines": r.usage.unresponsive_engines,
        "page_errors": r.usage.page_errors,
        "hits_source": r.usage.hits_source,
        "unobserved_links": r.usage.unobserved_links,
        "cost_usd": r.usage.cost_usd,
    })
}

fn from_json(v: Value) -> SearchResult {
    use silt_runtime::bindings::search_backend::silt::search::types::{
        BackendUsage, Hit as WitHit,
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
    SearchResult {
        hits: v["hits"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|h| WitHit {
                        url: text(h, "url"),
                        title: text(h, "title"),
                        snippet: text(h, "snippet"),
                        engines: strings(&h["engines"]),
                        published: h["published"].as_str().map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        usage: BackendUsage {
            requests: 0,
            pages: 0,
            stopped: text(&v["usage"], "stopped"),
            unresponsive_engines: strings(&v["usage"]["unresponsive_engines"]),
            page_errors: strings(&v["usage"]["page_errors"]),
            // entries from before hits_source were all service results
            hits_source: v["usage"]["hits_source"]
                .as_str()
                .unwrap_or("results")
                .to_string(),
            unobserved_links: v["usage"]["unobserved_links"].as_u64().unwrap_or(0) as u32,
            // a cached answer costs nothing again
            cost_usd: None,
        },
    }
}

fn core_hit(h: &silt_runtime::bindings::search_backend::silt::search::types::Hit) -> Hit {
    Hit {
        url: h.url.clone(),
        title: h.title.clone(),
        snippet: h.snippet.clone(),
        engines: h.engines.clone(),
        published: h.published.clone(),
    }
}

/// Runs `sieve_search`.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &SearchParams,
) -> Result<Value, CallError> {
    let started = Instant::now();
    let query = params
        .query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if query.is_empty() {
        return Err(CallError::InvalidRequest(
            "query is empty: say what to search for".into(),
        ));
    }
    let top_k = params.top_k.unwrap_or(10);
    if !(1..=pool::MAX_DEPTH).contains(&top_k) {
        return Err(CallError::InvalidRequest(format!(
            "top_k is {top_k}, it must be 1 to {}",
            pool::MAX_DEPTH
        )));
    }
    let depth = pool::pool_depth(params.depth.unwrap_or(30), top_k);
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_search"));
    let backend_name = choose_backend(config, env::var);
    let backend = runtime.search_backend(&backend_name).await?;
    let ttl = ttl_from(env::var("SILT_SEARCH_CACHE_TTL").as_deref())
        .map_err(CallError::InvalidRequest)?;
    let cache = match SearchCache::open(&config.cache_dir().join("search"), ttl) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("search cache off for this call: {e:#}");
            None
        }
    };

    let queries = variants(&query, params.variants.unwrap_or(3) as usize);
    let requested = pool::hits_requested(depth, queries.len(), backend.info.pages);
    let calls: Vec<Call> = futures::future::join_all(
        queries
            .iter()
            .zip(&requested)
            .map(|(q, &n)| call_backend(&backend, cache.as_ref(), q.clone(), n)),
    )
    .await;

    let errors: Vec<Value> = calls
        .iter()
        .filter_map(|c| {
            c.outcome
                .as_ref()
                .err()
                .map(|e| json!({"query": c.query, "error": e}))
        })
        .collect();
    if errors.len() == calls.len() {
        // one reason each: a backend that is not set up fails every
        // variant the same way
        let mut reasons: Vec<String> = Vec::new();
        for why in calls.iter().filter_map(|c| c.outcome.as_ref().err()) {
            if !reasons.contains(why) {
                reasons.push(why.clone());
            }
        }
        let hint = if chosen_by_default(config, env::var) {
            " (claude is the backend when nothing is chosen: set SILT_SEARXNG_URL to a SearXNG \
             instance or BRAVE_API_KEY in ~/.config/silt/env, or SILT_SEARCH_BACKEND)"
        } else {
            ""
        };
        return Err(CallError::JudgeFailed(format!(
            "every search variant failed on backend '{backend_name}': {}{hint}",
            reasons.join("; ")
        )));
    }
    let lists: Vec<Vec<Hit>> = calls
        .iter()
        .map(|c| {
            c.outcome
                .as_ref()
                .map(|r| r.hits.iter().map(core_hit).collect())
                .unwrap_or_default()
        })
        .collect();
    let pooled = pool::interleave(&lists, depth);

    let request = RankRequest {
        question: query.clone(),
        candidates: pooled
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| Item {
                id: i.to_string(),
                text: h.candidate_text(),
            })
            .collect(),
        top_k: Some(top_k),
        threshold: 0.0,
    };
    let ranked = if pooled.hits.is_empty() {
        None
    } else {
        Some(runtime.rank(judge, &request).await?)
    };
    let results: Vec<Value> = ranked
        .as_ref()
        .map(|r| {
            r.results
                .iter()
                .filter_map(|row| {
                    let h = pooled.hits.get(row.id.parse::<usize>().ok()?)?;
                    let mut v = json!({
                        "url": h.url, "title": h.title, "snippet": h.snippet,
                        "probability": row.probability, "engines": h.engines,
                    });
                    if let Some(p) = &h.published {
                        v["published"] = json!(p);
                    }
                    Some(v)
                })
                .collect()
        })
        .unwrap_or_default();
    let usage = ranked
        .as_ref()
        .map(|r| Value::Object(usage_json(&r.usage)))
        .unwrap_or_else(|| {
            // nothing to rerank: no judge call
            Value::Object(usage_json(
                &silt_runtime::bindings::ask_engine::silt::sieve::types::AskUsage {
                    tokens: 0,
                    input_tokens: 0,
                    output_tokens: 0,
                    requests: 0,
                    cache_hits: 0,
                    cost_usd: 0.0,
                    budget_exhausted: false,
                },
            ))
        });
    let backend_requests: u32 = calls
        .iter()
        .filter(|c| !c.cached)
        .filter_map(|c| c.outcome.as_ref().ok())
        .map(|r| r.usage.requests)
        .sum();
    let mut out = json!({
        "results": results,
        "variants": queries,
        "backend": backend_name,
        "usage": usage,
        "depth": depth,
        "hits_requested": requested,
        "hits_found": pooled.found,
        "hits_deduped": pooled.deduped,
        "candidates_scored": ranked.as_ref().map_or(0, |r| r.candidates_scored),
        "backend_requests": backend_requests,
        "backend_calls": calls.iter().map(|c| {
            let mut v = json!({
                "query": c.query, "hits_requested": c.requested,
                "wall_seconds": (c.seconds * 1000.0).round() / 1000.0,
                "cached": c.cached,
            });
            match &c.outcome {
                Ok(r) => {
                    v["hits"] = json!(r.hits.len());
                    v["usage"] = usage_of(r);
                }
                Err(e) => v["error"] = json!(e),
            }
            v
        }).collect::<Vec<_>>(),
        "wall_seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    });
    runtime.judged_by(judge)?.stamp(&mut out);
    if (pooled.hits.len() as u32) < depth {
        out["pool_short"] = json!(true);
    }
    if !errors.is_empty() {
        out["backend_errors"] = json!(errors);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backend_is_chosen_as_the_reference_chooses() {
        let config = Config::default();
        let pick = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            choose_backend(&config, move |k| {
                vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
            })
        };
        assert_eq!(
            pick(&[
                ("SILT_SEARXNG_URL", "http://127.0.0.1:8888"),
                ("BRAVE_API_KEY", "k")
            ]),
            "searxng"
        );
        assert_eq!(pick(&[("BRAVE_API_KEY", "k")]), "brave");
        assert_eq!(
            pick(&[
                ("SILT_SEARCH_BACKEND", "brave"),
                ("SILT_SEARXNG_URL", "http://x")
            ]),
            "brave"
        );
        assert_eq!(pick(&[("SILT_SEARCH_BACKEND", "my-backend")]), "my-backend");
        assert_eq!(pick(&[]), "claude");
        assert!(chosen_by_default(&config, |_| None));
        assert!(!chosen_by_default(&config, |k| {
            (k == "SILT_SEARCH_BACKEND").then(|| "claude".to_string())
        }));
        assert_eq!(pick(&[("SILT_SEARCH_BACKEND", " codex ")]), "codex");
        let mut with_config = Config::default();
        with_config.search.backend = Some("brave".into());
        assert_eq!(choose_backend(&with_config, |_| None), "brave");
    }
}
