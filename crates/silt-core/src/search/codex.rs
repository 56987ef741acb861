//! Codex as a search backend: `codex exec --json` with live web search,
//! read-only and ephemeral. Hits come from completed `web_search` items'
//! `results` (codex-cli 0.156.1 and later: url, title, snippet, ref_id);
//! an older release's items carry only the query, and then the model's
//! own markdown list is all there is (transcribed).

use serde_json::Value;

use super::cli_turn::{Parsed, Settings, prompt};
use super::pool::Hit;

/// The cheap model and effort searches run on unless
/// `SILT_CODEX_SEARCH_MODEL` / `SILT_CODEX_SEARCH_EFFORT` say.
pub const MODEL: &str = "gpt-6-luna";
/// The reasoning effort searches run at unless `SILT_CODEX_SEARCH_EFFORT` says.
pub const EFFORT: &str = "low";

/// The arguments after the program: JSONL events, no git check, nothing
/// saved, a read-only sandbox, neither the user's config.toml (its MCP
/// servers and provider; the login stays) nor exec-policy rules, live
/// search (`codex exec` takes no `--search`), the cheap model.
pub fn args(query: &str, count: u32, settings: &Settings) -> Vec<String> {
    let effort = settings.effort.as_deref().unwrap_or(EFFORT);
    vec![
        "exec".into(),
        "--json".into(),
        "--skip-git-repo-check".into(),
        "--ephemeral".into(),
        "--sandbox".into(),
        "read-only".into(),
        "--ignore-user-config".into(),
        "--ignore-rules".into(),
        "--color".into(),
        "never".into(),
        "--model".into(),
        settings.model.clone(),
        "-c".into(),
        format!("model_reasoning_effort=\"{effort}\""),
        "-c".into(),
        "web_search=\"live\"".into(),
        prompt(query, count),
    ]
}

/// An opened page's (`turnNviewM`) placeholder snippet says only how long
/// the page is; its url and title stay.
fn placeholder(snippet: &str) -> bool {
    snippet.trim_start().starts_with("Total lines:")
}

fn result_hit(r: &Value) -> Option<Hit> {
    let text = |k: &str| {
        r.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let url = text("url");
    if url.is_empty() {
        return None;
    }
    let snippet = text("snippet");
    Some(Hit {
        url,
        title: text("title"),
        snippet: if placeholder(&snippet) {
            String::new()
        } else {
            snippet
        },
        ..Default::default()
    })
}

/// Reads a `codex exec --json` event stream. Lines that are not JSON are
/// skipped (Codex prints warnings to stderr, a wrapper may print more).
pub fn parse(stdout: &str) -> Parsed {
    let mut out = Parsed::default();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let message = |v: &Value| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("failed")
                .to_string()
        };
        match v.get("type").and_then(Value::as_str) {
            Some("item.completed") => {
                let item = v.get("item").unwrap_or(&Value::Null);
                match item.get("type").and_then(Value::as_str) {
                    Some("web_search") => {
                        out.searches += 1;
                        if let Some(results) = item.get("results").and_then(Value::as_array) {
                            out.results_seen = true;
                            out.hits.extend(results.iter().filter_map(result_hit));
                        }
                    }
                    Some("agent_message") => {
                        if let Some(text) = item.get("text").and_then(Value::as_str) {
                            out.reply = text.to_string();
                        }
                    }
                    _ => {}
                }
            }
            // `error` events and items are warnings (a reconnect, a
            // transport fallback, missing model metadata); a turn that
            // failed says so itself
            Some("turn.failed") => out.error = Some(message(&v)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::cli::tests::Script;
    use super::super::cli::{Cli, search};
    use super::*;
    use serde_json::json;

    fn lines(events: &[Value]) -> String {
        events
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A stream as codex-cli 0.156.1 and later writes it.
    fn stream(results: Value, reply: &str) -> String {
        lines(&[
            json!({"type": "thread.started", "thread_id": "t1"}),
            json!({"type": "turn.started"}),
            json!({"type": "item.started", "item": {"id": "item_0", "type": "web_search", "query": "q",
                   "action": {"type": "search", "query": "q"}}}),
            json!({"type": "item.completed", "item": {"id": "item_0", "type": "web_search", "query": "q",
                   "action": {"type": "search", "query": "q"}, "results": results}}),
            json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": reply}}),
            json!({"type": "turn.completed", "usage": {"input_tokens": 9000, "cached_input_tokens": 0, "output_tokens": 120}}),
        ])
    }

    fn run(
        stdout: String,
        count: u32,
    ) -> Result<super::super::BackendOutcome, super::super::BackendError> {
        let settings = Settings::from_env(Cli::Codex, |_| None).unwrap();
        search(
            &mut Script::printing(stdout, 0),
            Cli::Codex,
            &settings,
            "q",
            count,
        )
    }

    #[test]
    fn the_command_line_is_read_only_ephemeral_live_search_on_the_cheap_model() {
        let settings = Settings::from_env(Cli::Codex, |k| {
            (k == "SILT_CODEX_SEARCH_EFFORT").then(|| "minimal".to_string())
        })
        .unwrap();
        let a = args("q", 5, &settings).join(" ");
        for want in [
            "exec --json --skip-git-repo-check --ephemeral --sandbox read-only \
             --ignore-user-config --ignore-rules",
            "--model gpt-6-luna",
            "-c model_reasoning_effort=\"minimal\"",
            "-c web_search=\"live\"",
        ] {
            assert!(a.contains(want), "{a} lacks {want}");
        }
    }

    #[test]
    fn hits_come_from_web_search_events_with_placeholders_dropped() {
        let results = json!([
            {"url": "https://docs.rs/wasmtime", "title": "wasmtime - Rust", "snippet": "A runtime", "ref_id": "turn0search0"},
            {"url": "https://wasmtime.dev/", "title": "Wasmtime", "snippet": "Total lines: 210", "ref_id": "turn0view1"},
            {"title": "no url", "snippet": "x", "ref_id": "turn0search2"},
            {"url": "https://github.com/bytecodealliance/wasmtime", "title": "GitHub", "snippet": "Standalone", "ref_id": "turn0search3"}
        ]);
        let reply = "- [wasmtime - Rust](https://docs.rs/wasmtime)\n- [Invented](https://invented.example/)";
        let out = run(stream(results, reply), 10).unwrap();
        let got: Vec<(&str, &str)> = out
            .hits
            .iter()
            .map(|h| (h.url.as_str(), h.snippet.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("https://docs.rs/wasmtime", "A runtime"),
                ("https://wasmtime.dev/", ""),
                ("https://github.com/bytecodealliance/wasmtime", "Standalone"),
            ]
        );
        assert_eq!(out.usage.hits_source, "events");
        assert_eq!(out.usage.unobserved_links, 1);
        assert_eq!(out.usage.cost_usd, None);
    }

    #[test]
    fn empty_results_are_nothing_found_not_a_reason_to_read_the_reply() {
        let out = run(
            stream(json!([]), "- [Invented](https://invented.example/)"),
            10,
        )
        .unwrap();
        assert!(out.hits.is_empty());
        assert_eq!(out.usage.hits_source, "events");
    }

    #[test]
    fn an_older_codex_is_read_from_the_model_list_and_marked_transcribed() {
        let old = stream(
            Value::Null,
            "Found:\n\n- [Wasmtime](https://wasmtime.dev)\n- [Docs](https://docs.wasmtime.dev/)\n",
        );
        let out = run(old, 10).unwrap();
        assert_eq!(out.usage.hits_source, "transcript");
        assert_eq!(out.hits.len(), 2);
        assert_eq!(
            (out.hits[0].title.as_str(), out.hits[0].snippet.as_str()),
            ("Wasmtime", "")
        );
    }

    #[test]
    fn recorded_streams_of_codex_0_171_0() {
        let ok = run(
            include_str!("fixtures/codex-0.171.0-results.jsonl").into(),
            10,
        )
        .unwrap();
        let got: Vec<(&str, &str)> = ok
            .hits
            .iter()
            .map(|h| (h.url.as_str(), h.snippet.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "https://example.com/",
                    "This domain is for use in illustrative examples in documents."
                ),
                ("https://www.iana.org/domains/reserved", "Reserved domains.")
            ],
            "reconnect warnings before the results do not fail the call"
        );
        assert_eq!(ok.usage.hits_source, "events");
        // the hosted tool's items carry no results and the reply no links
        let hosted = parse(include_str!("fixtures/codex-0.171.0-hosted-tool.jsonl"));
        assert_eq!(
            (hosted.searches, hosted.hits.len(), hosted.error.as_deref()),
            (3, 0, None)
        );
        let out = run(
            include_str!("fixtures/codex-0.171.0-hosted-tool.jsonl").into(),
            10,
        )
        .unwrap();
        assert_eq!(
            (out.hits.len(), out.usage.hits_source.as_str()),
            (0, "transcript")
        );
        let failed = parse(include_str!("fixtures/codex-0.171.0-turn-failed.jsonl"));
        assert!(failed.error.unwrap().contains("mock bad request"));
    }

    #[test]
    fn a_failed_turn_is_an_error_and_no_search_is_not_transcribed() {
        let failed = lines(&[
            json!({"type": "thread.started", "thread_id": "t1"}),
            json!({"type": "error", "message": "Reconnecting... 2/5"}),
            json!({"type": "turn.failed", "error": {"message": "model gpt-6-luna does not exist"}}),
        ]);
        let settings = Settings::from_env(Cli::Codex, |_| None).unwrap();
        let mut once = Script::printing(failed, 1);
        let e = search(&mut once, Cli::Codex, &settings, "q", 5).unwrap_err();
        assert_eq!(once.1[0].0, "codex", "the granted program runs");
        assert_eq!(&once.1[0].1[..2], ["exec", "--json"]);
        assert!(
            e.to_string()
                .contains("codex search exited 1: model gpt-6-luna does not exist"),
            "{e}"
        );
        let no_search = lines(&[
            json!({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
                                       "text": "- [x](https://x.example)"}}),
        ]);
        let e = run(no_search, 5).unwrap_err();
        assert!(e.to_string().contains("without searching"), "{e}");
    }
}
