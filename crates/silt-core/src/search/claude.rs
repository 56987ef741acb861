//! Claude Code as a search backend: `claude -p` with only its WebSearch
//! tool, read off `--output-format stream-json`. WebSearch results carry
//! titles and URLs, no snippets.

use serde_json::Value;

use super::cli_turn::{Parsed, Settings, prompt};
use super::pool::Hit;

/// The cheap model searches run on unless `SILT_CLAUDE_SEARCH_MODEL` says.
pub const MODEL: &str = "claude-haiku-4-5-20251001";

/// The arguments after the program: print mode, one streamed JSON object a
/// line (stream-json requires --verbose), only the WebSearch tool,
/// pre-approved and nothing else asked (`dontAsk` refuses a search that is
/// not in --allowedTools), one search and an answer (3 turns), no MCP
/// servers, slash commands or saved session. Not `--bare`: it drops
/// WebSearch (checked on 2.1.332).
pub fn args(query: &str, count: u32, settings: &Settings) -> Vec<String> {
    [
        "-p",
        &prompt(query, count),
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        &settings.model,
        "--tools",
        "WebSearch",
        "--allowedTools",
        "WebSearch",
        "--permission-mode",
        "dontAsk",
        "--max-turns",
        "3",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--no-session-persistence",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Hits from one WebSearch tool result's text: one `Links: [...]` line per
/// search the tool ran (the form the model reads).
fn links_in_text(text: &str) -> Vec<Hit> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Links:"))
        .filter_map(|json| serde_json::from_str::<Vec<Value>>(json.trim()).ok())
        .flatten()
        .filter_map(|l| link_hit(&l))
        .collect()
}

fn link_hit(l: &Value) -> Option<Hit> {
    let url = l.get("url")?.as_str()?.trim();
    if url.is_empty() {
        return None;
    }
    Some(Hit {
        url: url.to_string(),
        title: l
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string(),
        ..Default::default()
    })
}

/// The text of a tool_result's `content` (a string, or text blocks).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Reads a stream-json transcript: WebSearch calls on assistant lines,
/// their results on user lines (the structured `tool_use_result` when
/// present, else the `Links:` lines of the tool_result text), the final
/// `result` line's reply, error flag and cost. Lines that are not JSON
/// (a wrapper's banner) are skipped.
pub fn parse(stdout: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut search_ids: Vec<String> = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let blocks = v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match v.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for b in &blocks {
                    if b.get("type").and_then(Value::as_str) == Some("tool_use")
                        && b.get("name").and_then(Value::as_str) == Some("WebSearch")
                        && let Some(id) = b.get("id").and_then(Value::as_str)
                    {
                        search_ids.push(id.to_string());
                    }
                }
            }
            Some("user") => {
                for b in &blocks {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    if b.get("type").and_then(Value::as_str) != Some("tool_result")
                        || !search_ids.iter().any(|s| s == id)
                    {
                        continue;
                    }
                    out.searches += 1;
                    let text = content_text(b.get("content").unwrap_or(&Value::Null));
                    let structured: Vec<Hit> = v
                        .pointer("/tool_use_result/results")
                        .and_then(Value::as_array)
                        .map(|results| {
                            results
                                .iter()
                                .filter_map(|r| r.get("content").and_then(Value::as_array))
                                .flatten()
                                .filter_map(link_hit)
                                .collect()
                        })
                        .unwrap_or_default();
                    let hits = if structured.is_empty() {
                        links_in_text(&text)
                    } else {
                        structured
                    };
                    if hits.is_empty()
                        && let Some(e) = text
                            .lines()
                            .find_map(|l| l.trim().strip_prefix("Web search error:"))
                            .or_else(|| {
                                (b.get("is_error") == Some(&Value::Bool(true)))
                                    .then_some(text.trim())
                            })
                    {
                        out.search_errors.push(e.trim().to_string());
                    }
                    out.hits.extend(hits);
                }
            }
            Some("result") => {
                let text = v.get("result").and_then(Value::as_str).unwrap_or("");
                out.reply = text.to_string();
                out.cost_usd = v.get("total_cost_usd").and_then(Value::as_f64);
                if v.get("is_error") == Some(&Value::Bool(true)) {
                    let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("error");
                    out.error = Some(if text.trim().is_empty() {
                        subtype.to_string()
                    } else {
                        text.trim().to_string()
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::backend::BackendError;
    use super::super::cli::tests::Script;
    use super::super::cli::{Cli, search};
    use super::*;
    use serde_json::json;

    /// A stream as Claude Code writes it: init, a WebSearch call, its
    /// result (structured and as text), the reply, the result line.
    pub fn stream(links: &[(&str, &str)], reply: &str) -> String {
        let links: Vec<Value> = links
            .iter()
            .map(|(t, u)| json!({"title": t, "url": u}))
            .collect();
        let text = format!(
            "Web search results for query: \"q\"\n\nLinks: {}\n\nA summary.",
            Value::Array(links.clone())
        );
        [
            json!({"type": "system", "subtype": "init", "tools": ["WebSearch"], "model": MODEL}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "toolu_1", "name": "WebSearch", "input": {"query": "q"}}]}}),
            json!({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]},
                   "tool_use_result": {"query": "q", "results": [
                       {"tool_use_id": "srvtoolu_1", "content": links}, "A summary."],
                       "durationSeconds": 2.1}}),
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": reply}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": reply,
                   "total_cost_usd": 0.0123, "usage": {"server_tool_use": {"web_search_requests": 0}}}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
    }

    fn run(
        stdout: String,
        status: i32,
        count: u32,
    ) -> Result<super::super::BackendOutcome, BackendError> {
        let settings = Settings::from_env(Cli::Claude, |_| None).unwrap();
        search(
            &mut Script::printing(stdout, status),
            Cli::Claude,
            &settings,
            "q",
            count,
        )
    }

    #[test]
    fn the_command_line_searches_with_the_cheap_model_and_only_websearch() {
        let a = args(
            "rust wasm",
            7,
            &Settings::from_env(Cli::Claude, |_| None).unwrap(),
        );
        assert_eq!(a[0], "-p");
        assert!(a[1].contains("rust wasm") && a[1].contains("up to 7"));
        let joined = a[2..].join(" ");
        assert!(joined.contains("--output-format stream-json --verbose"));
        assert!(joined.contains(&format!("--model {MODEL}")));
        assert!(joined.contains(
            "--tools WebSearch --allowedTools WebSearch --permission-mode dontAsk --max-turns 3"
        ));
        assert!(!joined.contains("--bare"), "--bare drops WebSearch");
    }

    #[test]
    fn hits_come_from_the_tool_results_and_cited_extras_are_counted() {
        let reply = "- [Install](https://tree-sitter.github.io/install)\n- [Made up](https://nowhere.example/x)";
        let out = run(
            stream(
                &[
                    ("Install", "https://tree-sitter.github.io/install"),
                    ("Crate", "https://crates.io/crates/tree-sitter"),
                    ("Install again", "https://tree-sitter.github.io/install/"),
                ],
                reply,
            ),
            0,
            10,
        )
        .unwrap();
        let urls: Vec<&str> = out.hits.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://tree-sitter.github.io/install",
                "https://crates.io/crates/tree-sitter"
            ]
        );
        assert!(out.hits.iter().all(|h| h.snippet.is_empty()));
        assert_eq!(out.usage.hits_source, "tool_results");
        assert_eq!(out.usage.unobserved_links, 1);
        assert_eq!(out.usage.requests, 1);
        assert_eq!(out.usage.cost_usd, Some(0.0123));
        let two = run(
            stream(
                &[("A", "https://a.example"), ("B", "https://b.example")],
                "",
            ),
            0,
            1,
        )
        .unwrap();
        assert_eq!(two.hits.len(), 1);
    }

    #[test]
    fn the_links_text_is_read_when_the_structured_result_is_missing() {
        let s = stream(&[("A", "https://a.example/1")], "done");
        let stripped: String = s
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                if let Some(o) = v.as_object_mut() {
                    o.remove("tool_use_result");
                }
                v.to_string()
            })
            .collect::<Vec<_>>()
            .join("\n");
        let p = parse(&format!("a wrapper's banner\n{stripped}"));
        assert_eq!(p.hits.len(), 1);
        assert_eq!(p.hits[0].title, "A");
        assert_eq!(p.searches, 1);
    }

    #[test]
    fn recorded_streams_of_claude_code_2_1_332() {
        let ok = parse(include_str!("fixtures/claude-2.1.332-search.jsonl"));
        let got: Vec<(&str, &str)> = ok
            .hits
            .iter()
            .map(|h| (h.title.as_str(), h.url.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("Example Domain", "https://example.com/"),
                ("IANA reserved", "https://www.iana.org/domains/reserved")
            ]
        );
        assert_eq!((ok.searches, ok.error.as_deref()), (1, None));
        assert_eq!(ok.reply, "FINAL ANSWER (mock).");
        assert!(ok.cost_usd.is_some_and(|c| c > 0.0));
        let failed = parse(include_str!("fixtures/claude-2.1.332-search-error.jsonl"));
        assert_eq!(failed.search_errors, ["unavailable"]);
        assert!(failed.hits.is_empty());
        let e = run(
            include_str!("fixtures/claude-2.1.332-search-error.jsonl").into(),
            0,
            5,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("web search failed: unavailable"),
            "{e}"
        );
        let none = parse(include_str!("fixtures/claude-2.1.332-no-links.jsonl"));
        assert_eq!(
            (none.searches, none.hits.len(), none.search_errors.len()),
            (1, 0, 0)
        );
        let empty = run(
            include_str!("fixtures/claude-2.1.332-no-links.jsonl").into(),
            0,
            5,
        )
        .unwrap();
        assert!(empty.hits.is_empty());
    }

    #[test]
    fn failures_are_errors_that_say_why() {
        // no search at all: the model answered from memory
        let no_search = [
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "From memory"}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "- [x](https://x.example)"}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
        let e = run(no_search, 0, 5).unwrap_err();
        assert!(e.to_string().contains("without searching the web"), "{e}");
        // the tool's own error
        let err_text = stream(&[], "").replace(
            "Web search results for query: \\\"q\\\"\\n\\nLinks: []\\n\\nA summary.",
            "Web search error: too_many_requests",
        );
        let e = run(err_text, 0, 5).unwrap_err();
        assert!(e.to_string().contains("too_many_requests"), "{e}");
        // an error result, exit 1
        let login = json!({"type": "result", "subtype": "success", "is_error": true,
                           "result": "Invalid API key · Please run /login"})
        .to_string();
        let e = run(login, 1, 5).unwrap_err();
        assert_eq!(
            e,
            BackendError::Unavailable(
                "claude search exited 1: Invalid API key · Please run /login".into()
            )
        );
    }
}
