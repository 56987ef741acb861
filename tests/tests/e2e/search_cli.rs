//! The `claude` and `codex` search backends end to end, with fake `claude`
//! and `codex` programs on PATH printing the streams the real CLIs print:
//! the backend component in its sandbox asks the host to run its one
//! granted program; the host gives it empty stdin, a fresh folder, an
//! environment without routing variables, and kills it at the limit.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, serve, text_of};
use silt_e2e::search_chain;

/// One fake CLI for both names: records what it was given under
/// `$FAKE_RECORD/<name>.<pid>.*`, then prints `$FAKE_<NAME>_STREAM` and
/// exits `$FAKE_<NAME>_EXIT`; `$FAKE_<NAME>_SLEEP` makes it hang with a
/// grandchild (its pid recorded in `$FAKE_RECORD/<name>.grandchild` before
/// the CLI hangs) that would leave a mark if it outlived the kill.
const FAKE: &str = r#"#!/bin/sh
name=$(basename "$0")
upper=$(echo "$name" | tr a-z A-Z)
# start time first, so records sort in the order the runs began
rec="$FAKE_RECORD/$name.$(date +%s%N).$$"
printf '%s\n' "$@" > "$rec.args"
env > "$rec.env"
pwd > "$rec.cwd"
cat > "$rec.stdin"
eval sleep_for=\$FAKE_${upper}_SLEEP
if [ -n "$sleep_for" ]; then
  sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; sleep 2; touch "$2"' grandchild \
    "$FAKE_RECORD/$name.grandchild" "$FAKE_RECORD/$name.survived" &
  while [ ! -e "$FAKE_RECORD/$name.grandchild" ]; do :; done
  sleep "$sleep_for"
fi
eval stream=\$FAKE_${upper}_STREAM
[ -n "$stream" ] && cat "$stream"
eval code=\$FAKE_${upper}_EXIT
exit "${code:-0}"
"#;

struct Fakes {
    dir: tempfile::TempDir,
}

impl Fakes {
    fn new() -> Fakes {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "record", "streams"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        for name in ["claude", "codex"] {
            let p = dir.path().join("bin").join(name);
            std::fs::write(&p, FAKE).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Fakes { dir }
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    fn record(&self) -> PathBuf {
        self.dir.path().join("record")
    }

    /// PATH with the fakes first (or without them).
    fn path(&self, with_fakes: bool) -> String {
        let system = std::env::var("PATH").unwrap_or_default();
        if with_fakes {
            format!("{}:{system}", self.bin().display())
        } else {
            system
        }
    }

    fn stream(&self, name: &str, lines: &[Value]) -> String {
        let p = self.dir.path().join("streams").join(name);
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&p, text.join("\n") + "\n").unwrap();
        p.display().to_string()
    }

    /// Every recorded run of `name`: (args, env, cwd, stdin).
    fn runs(&self, name: &str) -> Vec<(Vec<String>, String, String, String)> {
        let mut pids: Vec<String> = std::fs::read_dir(self.record())
            .unwrap()
            .filter_map(|e| {
                let f = e.unwrap().file_name().to_string_lossy().to_string();
                f.strip_prefix(&format!("{name}."))
                    .and_then(|r| r.strip_suffix(".args"))
                    .map(str::to_string)
            })
            .collect();
        pids.sort();
        let read = |pid: &str, ext: &str| {
            std::fs::read_to_string(self.record().join(format!("{name}.{pid}.{ext}")))
                .unwrap_or_default()
        };
        pids.iter()
            .map(|pid| {
                (
                    read(pid, "args").lines().map(str::to_string).collect(),
                    read(pid, "env"),
                    read(pid, "cwd"),
                    read(pid, "stdin"),
                )
            })
            .collect()
    }
}

/// Claude Code's stream-json for one WebSearch returning `links`.
fn claude_stream(links: &[(&str, &str)], reply: &str) -> Vec<Value> {
    let links: Vec<Value> = links
        .iter()
        .map(|(t, u)| json!({"title": t, "url": u}))
        .collect();
    let text = format!(
        "Web search results for query: \"q\"\n\nLinks: {}\n\nSummary.",
        Value::Array(links.clone())
    );
    vec![
        json!({"type": "system", "subtype": "init", "tools": ["WebSearch"]}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "toolu_9", "name": "WebSearch", "input": {"query": "q"}}]}}),
        json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": text}]},
               "tool_use_result": {"query": "q", "results": [{"tool_use_id": "srv", "content": links}],
                                   "durationSeconds": 1.5}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": reply,
               "total_cost_usd": 0.02}),
    ]
}

/// `codex exec --json` with one web_search item carrying `results` (or,
/// as releases before 0.156.1, only its query).
fn codex_stream(results: Option<Value>, reply: &str) -> Vec<Value> {
    let mut item = json!({"id": "item_0", "type": "web_search", "query": "q",
                          "action": {"type": "search", "query": "q"}});
    if let Some(r) = results {
        item["results"] = r;
    }
    vec![
        json!({"type": "thread.started", "thread_id": "th"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": item}),
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": reply}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}),
    ]
}

const QUERY: &str = "sourdough hydration ratio";

#[tokio::test(flavor = "multi_thread")]
async fn claude_is_the_default_and_runs_sandboxed_from_routing_variables() {
    let fakes = Fakes::new();
    let home = tempfile::tempdir().unwrap();
    let stream = fakes.stream(
        "claude",
        &claude_stream(
            &[
                ("Hydration guide", "https://bread.example/hydration"),
                ("Ratios", "https://bakers.example/ratios?utm_source=x"),
                ("Starter FAQ", "https://bread.example/starter"),
            ],
            "- [Hydration guide](https://bread.example/hydration)\n- [Elsewhere](https://invented.example/)",
        ),
    );
    let record = fakes.record().display().to_string();
    let path = fakes.path(true);
    let client = serve(
        home.path(),
        home.path(),
        &[
            ("PATH", path.as_str()),
            ("FAKE_RECORD", record.as_str()),
            ("FAKE_CLAUDE_STREAM", stream.as_str()),
            // a session routed elsewhere must not route the search
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy"),
            ("ANTHROPIC_API_KEY", "sk-not-for-the-child"),
            ("CLAUDE_CODE_USE_BEDROCK", "1"),
            ("CLAUDECODE", "1"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_API_KEY", "sk-openai-not-for-the-child"),
            ("API_TIMEOUT_MS", "1"),
            ("CLAUDE_CODE_SUBAGENT_MODEL", "elsewhere"),
            ("SILT_STRIP_ENV_PREFIXES", "MYWRAP_"),
            ("MYWRAP_TOKEN", "secret"),
            ("KEEP_ME", "kept"),
        ],
    )
    .await;
    let out = json_of(&call(&client, "sieve_search", json!({"query": QUERY, "top_k": 3})).await);
    assert_eq!(out["backend"], "claude", "{out:#}");
    let calls = out["backend_calls"].as_array().unwrap();
    assert_eq!(calls.len(), out["variants"].as_array().unwrap().len());
    let usage = &calls[0]["usage"];
    assert_eq!(usage["hits_source"], "tool_results", "{out:#}");
    assert_eq!(usage["unobserved_links"], 1);
    assert_eq!(usage["cost_usd"], 0.02);
    assert_eq!(out["hits_deduped"], 3, "every variant found the same three");
    let urls: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls.len(), 3);
    assert!(
        urls.contains(&"https://bread.example/hydration"),
        "{urls:?}"
    );

    let runs = fakes.runs("claude");
    assert_eq!(runs.len(), calls.len(), "one run per variant");
    for (args, env, cwd, stdin) in &runs {
        assert_eq!(args[0], "-p");
        assert!(args[1].contains("Search the web for:"), "{args:?}");
        let line = args.join(" ");
        assert!(
            line.contains("--output-format stream-json --verbose"),
            "{line}"
        );
        assert!(line.contains("--model claude-haiku-4-5-20251001"), "{line}");
        assert!(stdin.is_empty(), "stdin is empty, not the MCP pipe");
        assert!(cwd.contains("silt-exec-"), "a fresh folder: {cwd}");
        for gone in [
            "ANTHROPIC_BASE_URL=",
            "ANTHROPIC_API_KEY=",
            "CLAUDE_CODE_USE_BEDROCK=",
            "CLAUDECODE=",
            "OPENAI_BASE_URL=",
            "OPENAI_API_KEY=",
            "API_TIMEOUT_MS=",
            "CLAUDE_CODE_SUBAGENT_MODEL=",
            "MYWRAP_TOKEN=",
        ] {
            assert!(
                !env.lines().any(|l| l.starts_with(gone)),
                "{gone} reached the child"
            );
        }
        assert!(
            env.lines().any(|l| l == "KEEP_ME=kept"),
            "the rest of the environment stays"
        );
    }
    // the folders were removed afterwards
    assert!(!Path::new(runs[0].2.trim()).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_reads_its_events_and_the_override_replaces_its_command_line() {
    let fakes = Fakes::new();
    let home = tempfile::tempdir().unwrap();
    let stream = fakes.stream(
        "codex",
        &codex_stream(
            Some(json!([
                {"url": "https://docs.example/hydration", "title": "Hydration", "snippet": "Water to flour", "ref_id": "turn0search0"},
                {"url": "https://docs.example/opened", "title": "Opened", "snippet": "Total lines: 80", "ref_id": "turn0view1"},
                {"title": "no url", "ref_id": "turn0search2"}
            ])),
            "- [Hydration](https://docs.example/hydration)",
        ),
    );
    let record = fakes.record().display().to_string();
    // the override: the fake, renamed, with fixed leading arguments
    let tools = fakes.dir.path().join("my tools");
    std::fs::create_dir(&tools).unwrap();
    let renamed = tools.join("wrapcodex");
    std::fs::copy(fakes.bin().join("codex"), &renamed).unwrap();
    let line = format!("'{}' --profile search", renamed.display());
    let client = serve(
        home.path(),
        home.path(),
        &[
            ("PATH", &fakes.path(false)),
            ("FAKE_RECORD", &record),
            ("FAKE_WRAPCODEX_STREAM", &stream),
            ("SILT_SEARCH_BACKEND", "codex"),
            ("SILT_SEARCH_CMD_CODEX", &line),
            ("SILT_CODEX_SEARCH_EFFORT", "minimal"),
        ],
    )
    .await;
    let out = json_of(&call(&client, "sieve_search", json!({"query": QUERY})).await);
    assert_eq!(out["backend"], "codex", "{out:#}");
    assert_eq!(out["backend_calls"][0]["usage"]["hits_source"], "events");
    let results = out["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        2,
        "the result without a url is skipped: {out:#}"
    );
    let snippet = |url: &str| {
        results
            .iter()
            .find(|r| r["url"] == url)
            .map(|r| r["snippet"].as_str().unwrap().to_string())
    };
    assert_eq!(
        snippet("https://docs.example/hydration").as_deref(),
        Some("Water to flour")
    );
    assert_eq!(
        snippet("https://docs.example/opened").as_deref(),
        Some(""),
        "placeholder dropped"
    );
    let runs = fakes.runs("wrapcodex");
    assert!(!runs.is_empty(), "the override ran, not a codex on PATH");
    let args = &runs[0].0;
    assert_eq!(&args[..3], ["--profile", "search", "exec"]);
    let joined = args.join(" ");
    assert!(
        joined.contains("--json --skip-git-repo-check --ephemeral --sandbox read-only"),
        "{joined}"
    );
    assert!(
        joined.contains("model_reasoning_effort=\"minimal\""),
        "{joined}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_slow_or_failing_cli_is_a_clear_error() {
    let fakes = Fakes::new();
    let home = tempfile::tempdir().unwrap();
    let record = fakes.record().display().to_string();
    // not installed
    let empty = fakes.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let text = search_error(home.path(), &[("PATH", &empty.display().to_string())]).await;
    assert!(
        text.contains("claude is not on PATH") && text.contains("installed and logged in"),
        "{text}"
    );

    // hung: killed at SILT_SEARCH_TIMEOUT with everything it started
    let path = fakes.path(true);
    let started = std::time::Instant::now();
    let text = search_error(
        home.path(),
        &[
            ("PATH", &path),
            ("FAKE_RECORD", &record),
            ("FAKE_CLAUDE_SLEEP", "30"),
            ("SILT_SEARCH_TIMEOUT", "1"),
        ],
    )
    .await;
    assert!(text.contains("timed out after 1 s"), "{text}");
    assert!(started.elapsed().as_secs() < 20);
    // the grandchild had started (its pid is on record) and died with the
    // CLI: gone, or a zombie waiting for its reaper
    let pid = std::fs::read_to_string(fakes.record().join("claude.grandchild"))
        .expect("the hung CLI started its grandchild")
        .trim()
        .to_string();
    let dead = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while !process_gone(&pid) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(dead.is_ok(), "the CLI's grandchild {pid} outlived the kill");
    assert!(
        !fakes.record().join("claude.survived").exists(),
        "the CLI's own children die with it"
    );

    // exits 1
    let text = search_error(
        home.path(),
        &[
            ("PATH", &path),
            ("FAKE_RECORD", &record),
            ("SILT_SEARCH_BACKEND", "codex"),
            ("FAKE_CODEX_EXIT", "1"),
        ],
    )
    .await;
    assert!(text.contains("codex search exited 1"), "{text}");

    // SILT_SEARCH_CMD replaces any CLI's command line for sieve_search
    let text = search_error(
        home.path(),
        &[
            ("PATH", &path),
            ("FAKE_RECORD", &record),
            ("SILT_SEARCH_CMD", "/bin/false"),
        ],
    )
    .await;
    assert!(text.contains("claude search exited 1"), "{text}");
    assert!(
        text.contains("claude is the backend when nothing is chosen"),
        "the default is explained: {text}"
    );
}

/// A `sieve_search` that must fail under `env`: its error text.
async fn search_error(home: &Path, env: &[(&str, &str)]) -> String {
    let client = serve(home, home, env).await;
    let r = call(&client, "sieve_search", json!({"query": QUERY})).await;
    assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
    text_of(&r)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_chain_degrades_after_a_hosted_route_and_never_trusts_a_transcript() {
    let fakes = Fakes::new();
    let home = tempfile::tempdir().unwrap();
    let record = fakes.record().display().to_string();
    let claude = fakes.stream(
        "claude",
        &claude_stream(&[("Hydration", "https://bread.example/h")], ""),
    );
    let old_codex = fakes.stream(
        "codex",
        &codex_stream(
            None,
            "- [Hydration](https://bread.example/h)\n- [Ratios](https://bread.example/r)",
        ),
    );
    let path = fakes.path(true);
    let failing: Vec<(&str, &str)> = vec![
        ("PATH", &path),
        ("FAKE_RECORD", &record),
        ("FAKE_CLAUDE_STREAM", &claude),
        ("FAKE_CODEX_EXIT", "2"),
        // the chain reads only each route's own command variable
        ("SILT_SEARCH_CMD", "/bin/false"),
    ];
    let old: Vec<(&str, &str)> = vec![
        ("PATH", &path),
        ("FAKE_RECORD", &record),
        ("FAKE_CLAUDE_STREAM", &claude),
        ("FAKE_CODEX_STREAM", &old_codex),
    ];
    // codex fails: claude answers, degraded
    let (code, out) = search_chain(
        home.path(),
        &failing,
        &["search", "--routes", "codex,claude", "--count", "5", QUERY],
    )
    .await;
    assert_eq!(code, 0, "{out:#}");
    assert_eq!(out["route"], "claude");
    assert_eq!(out["fallback_from"], "codex");
    assert_eq!(out["degraded"], true);
    assert_eq!(out["observed"], true);
    assert_eq!(out["transcribed"], false);
    assert!(
        out["errors"]["codex"]
            .as_str()
            .unwrap()
            .contains("codex search exited 2"),
        "{out:#}"
    );
    assert_eq!(out["config"]["model"], "claude-haiku-4-5-20251001");

    // an older codex: its links are the model's transcript, served but not
    // observed, and preflight does not pass it
    let (code, out) = search_chain(
        home.path(),
        &old,
        &["search", "--routes", "codex", "--count", "5", "rye"],
    )
    .await;
    assert_eq!(code, 0, "{out:#}");
    assert_eq!(
        (out["transcribed"].clone(), out["observed"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(out["hits"].as_array().unwrap().len(), 2);
    assert_eq!(out["config"]["effort"], "low");
    let (_, pre) = search_chain(
        home.path(),
        &old,
        &[
            "preflight",
            "--routes",
            "codex,claude",
            "--count",
            "5",
            "spelt",
        ],
    )
    .await;
    assert_eq!(pre["routes"]["codex"]["ok"], false, "{pre:#}");
    assert_eq!(pre["routes"]["codex"]["transcribed"], true);
    assert_eq!(pre["routes"]["claude"]["ok"], true);
}

/// Whether process `pid` has ended: no longer listed, or a zombie.
fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // the state follows the command name, which is in parentheses
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}
