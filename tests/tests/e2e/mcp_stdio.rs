//! `silt serve` as a child process, spoken to over stdio by rmcp's client:
//! initialize, tools/list, and tools/call `sieve_ask` for each kind; and in
//! raw lines: batches, other JSON-RPC versions, a SIGTERM mid-call.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use silt_e2e::silt_binary;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn start() -> (Client, tempfile::TempDir) {
    start_in(tempfile::tempdir().unwrap()).await
}

/// `silt serve` with its config, caches and plugins under `home`.
async fn start_in(home: tempfile::TempDir) -> (Client, tempfile::TempDir) {
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve")
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_PLUGIN_PATH", home.path().join("plugins"))
        .env("SILT_CONFIG", home.path().join("silt.toml"));
    std::fs::write(home.path().join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let transport = TokioChildProcess::new(cmd).expect("spawning silt serve");
    let client = ().serve(transport).await.expect("MCP initialize");
    (client, home)
}

async fn call(client: &Client, args: Value) -> CallToolResult {
    let args = args.as_object().unwrap().clone();
    client
        .call_tool(CallToolRequestParams::new("sieve_ask").with_arguments(args))
        .await
        .expect("tools/call")
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

fn structured(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "tool error: {result:?}");
    serde_json::from_str(&text_of(result)).expect("the tool answers JSON")
}

/// The seed's usage fields, at the result's top level.
/// Every tool's result carries the same `usage` object.
fn assert_usage_fields(result: &Value) {
    let result = &result["usage"];
    for field in [
        "tokens",
        "input_tokens",
        "output_tokens",
        "requests",
        "cache_hits",
        "cost_usd",
        "budget_exhausted",
        "judge",
        "judge_reads_meaning",
    ] {
        assert!(result.get(field).is_some(), "usage lacks {field}: {result}");
    }
    // the lexical judge counts words: no model, and it says so
    if result["judge"] == "lexical" {
        assert_eq!(result["judge_reads_meaning"], false, "{result}");
        assert!(result.get("model").is_none(), "{result}");
    }
}

fn assert_distribution(d: &Value, labels: &[&str]) {
    let map = d.as_object().unwrap();
    assert_eq!(map.keys().map(String::as_str).collect::<Vec<_>>(), labels);
    let sum: f64 = map.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 0.02, "sum {sum}");
}

#[tokio::test]
async fn serve_answers_all_three_kinds_over_stdio() {
    let (client, _home) = start().await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("silt")
    );

    let tools = client.list_all_tools().await.unwrap();
    let ask = tools
        .iter()
        .find(|t| t.name == "sieve_ask")
        .expect("sieve_ask is listed");
    assert_eq!(
        ask.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    let schema = serde_json::to_value(&ask.input_schema).unwrap();
    for field in ["question", "items", "kind", "judge", "top_k", "budget_usd"] {
        assert!(
            schema["properties"].get(field).is_some(),
            "schema lacks {field}"
        );
    }

    let judged = structured(
        &call(&client, json!({
            "question": "Does the ticket concern the database?",
            "yes": "It is about database queries, tables, migrations or indexes.",
            "no": "It is about the user interface, styling or layout.",
            "items": [{"id": "ui", "text": "button styling broken in the settings layout"},
                      {"id": "db", "text": "slow queries after the migration dropped an index"}],
        }))
        .await,
    );
    assert_eq!(judged["kind"], "judge");
    assert_eq!(judged["items_scored"], 2);
    assert_eq!(judged["judge"], "lexical");
    assert_eq!(
        judged["results"][0]["id"], "db",
        "sorted by probability: {judged}"
    );
    assert!(judged["results"][0]["probability"].as_f64().unwrap() > 0.8);
    assert!(judged["results"][1]["probability"].as_f64().unwrap() < 0.2);
    assert_usage_fields(&judged);

    let chosen = structured(
        &call(&client, json!({
            "question": "Which team owns this ticket?", "kind": "choose",
            "options": {"web": "browser UI, CSS, React components", "api": "HTTP endpoints, authentication, database",
                        "none": "no listed team fits"},
            "items": ["the CSS of the React login form overflows", "the endpoint rejects valid authentication tokens"],
        }))
        .await,
    );
    assert_eq!(chosen["results"][0]["choice"], "web");
    assert_eq!(chosen["results"][1]["choice"], "api");
    assert_distribution(
        &chosen["results"][0]["probabilities"],
        &["web", "api", "none"],
    );

    let scored = structured(
        &call(&client, json!({
            "question": "How badly does this hurt someone using the product today?", "kind": "score",
            "levels": ["a cosmetic blemish", "an annoyance with a workaround", "a crash or data loss"],
            "items": ["the app crashes and we lose data"],
        }))
        .await,
    );
    let row = &scored["results"][0];
    assert_eq!(
        (row["level"].as_u64(), row["label"].as_str()),
        (Some(2), Some("a crash or data loss"))
    );
    assert!(row["expected"].as_f64().unwrap() > 1.0);
    assert_distribution(
        &row["probabilities"],
        &[
            "a cosmetic blemish",
            "an annoyance with a workaround",
            "a crash or data loss",
        ],
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_get_a_clear_tool_error() {
    let (client, _home) = start().await;
    let result = call(
        &client,
        json!({"question": "q", "items": ["a"], "kind": "choose"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.contains("kind 'choose' needs `options`"), "{text}");

    let result = call(
        &client,
        json!({"question": "q", "items": ["a"], "yes": "y", "no": "n", "judge": "nope"}),
    )
    .await;
    let text = text_of(&result);
    assert_eq!(result.is_error, Some(true));
    assert!(
        text.contains("no plugin named 'nope'") && text.contains("lexical"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn more_concurrent_calls_than_the_pool_holds_queue_and_all_answer() {
    let (client, _home) = start().await;
    // long items keep each call's two instances alive across many epoch
    // yields, so 300 calls in flight would need more than the pool's 128
    let items: Vec<String> = (0..48)
        .map(|i| {
            format!(
                "item {i}: {}",
                "a report of a crash when saving files ".repeat(60)
            )
        })
        .collect();
    let calls = (0..300).map(|n| {
        call(
            &client,
            json!({"question": format!("Does the item describe a bug? ({n})"),
                   "yes": "It reports a crash", "no": "It does not",
                   "items": items, "threshold": 0.0}),
        )
    });
    let results = futures_util::future::join_all(calls).await;
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.is_error == Some(true))
        .map(text_of)
        .collect();
    assert!(
        failed.is_empty(),
        "{} of 300 calls failed, first: {:?}",
        failed.len(),
        failed.first()
    );
    client.cancel().await.unwrap();
}

async fn call_tool(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().unwrap().clone();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("tools/call")
}

#[tokio::test]
async fn rank_and_route_over_stdio() {
    let (client, _home) = start().await;
    let tools = client.list_all_tools().await.unwrap();
    for name in ["sieve_rank", "sieve_route"] {
        let t = tools.iter().find(|t| t.name == name).expect(name);
        assert_eq!(
            t.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(true)
        );
    }

    let ranked = structured(
        &call_tool(
            &client,
            "sieve_rank",
            json!({"question": "which database supports transactions",
                   "candidates": [
                       {"id": "css", "text": "CSS grid lays out web pages"},
                       {"id": "pg", "text": "PostgreSQL is a relational database with transactions"},
                       {"text": "Redis is an in-memory key value cache"}],
                   "top_k": 2}),
        )
        .await,
    );
    assert_eq!(ranked["results"][0]["id"], "pg", "{ranked}");
    assert_eq!(ranked["results"].as_array().unwrap().len(), 2);
    assert_eq!(ranked["candidates_scored"], 3);
    assert_usage_fields(&ranked);

    // 25 routes: two stages, three groups
    let mut routes: Vec<Value> = (0..25)
        .map(|i| json!({"id": format!("team{i}"), "description": format!("owns the service number {i}")}))
        .collect();
    routes[17] = json!({"id": "billing", "description": "payments, invoices, refunds and card charges", "aliases": ["finance"]});
    let routed = structured(
        &call_tool(
            &client,
            "sieve_route",
            json!({"ask": "I was charged twice on my card for one invoice", "routes": routes}),
        )
        .await,
    );
    assert_eq!(routed["choice"], "billing", "{routed}");
    assert_usage_fields(&routed);
    assert_eq!(routed["usage"]["stages"], 2);
    assert_eq!(routed["usage"]["batches"], 3);
    assert_eq!(routed["usage"]["requests"], 4);
    let probabilities = routed["probabilities"].as_object().unwrap();
    assert_eq!(probabilities.len(), 7, "six survivors and none: {routed}");
    assert!(probabilities.contains_key("none"));

    for (tool, args, needle) in [
        (
            "sieve_route",
            json!({"ask": "x", "routes": [{"id": "none", "description": "d"}]}),
            "reserved",
        ),
        (
            "sieve_route",
            json!({"ask": "x", "routes": [{"id": "a", "description": "d"}, {"id": "a", "description": "e"}]}),
            "appears twice",
        ),
        (
            "sieve_route",
            json!({"ask": "x", "routes": []}),
            "routes is empty",
        ),
        (
            "sieve_route",
            json!({"ask": "x", "routes": [{"id": "a", "description": "d", "colour": 1}]}),
            "colour",
        ),
        (
            "sieve_rank",
            json!({"question": "q", "candidates": []}),
            "candidates is empty",
        ),
        (
            "sieve_rank",
            json!({"question": " ", "candidates": ["a"]}),
            "question is empty",
        ),
        (
            "sieve_rank",
            json!({"question": "q", "candidates": ["a"], "top_k": 0}),
            "top_k",
        ),
    ] {
        let r = client
            .call_tool(
                CallToolRequestParams::new(tool.to_string())
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await;
        // one shape for every tool's refusal: a tool error whose body is
        // {ok: false, error: {code, message, hint?}}, never a protocol error
        let r = r.unwrap_or_else(|e| panic!("{tool} {args}: a protocol error: {e}"));
        assert_eq!(r.is_error, Some(true), "{tool} {args}: {r:?}");
        // as text: structured content would be checked against the
        // success's output schema by TypeScript clients
        assert!(r.structured_content.is_none(), "{tool} {args}: {r:?}");
        let body: Value = serde_json::from_str(&text_of(&r)).unwrap_or_default();
        assert_eq!(body["ok"], false, "{tool} {args}: {body}");
        let code = body["error"]["code"].as_str().unwrap_or_default();
        assert!(
            ["invalid_arguments", "invalid_request", "unknown_plugin"].contains(&code),
            "{tool} {args}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{tool} {args}: {message}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_repeated_question_is_answered_from_the_cache() {
    let (client, home) = start().await;
    let args = json!({"question": "Does the ticket concern the database?",
        "yes": "database, SQL, queries, migrations", "no": "user interface, CSS, layout",
        "items": [{"id": "a", "text": "slow SQL query on the orders table"},
                  {"id": "b", "text": "button colour is wrong on the settings page"}]});
    let first = structured(&call(&client, args.clone()).await);
    assert_eq!(
        (first["requests"].as_u64(), first["cache_hits"].as_u64()),
        (Some(1), Some(0)),
        "{first}"
    );
    let again = structured(&call(&client, args.clone()).await);
    assert_eq!(
        (again["requests"].as_u64(), again["cache_hits"].as_u64()),
        (Some(0), Some(2)),
        "{again}"
    );
    assert_eq!(again["results"], first["results"]);

    // one new item: one judge request for it alone, the other from the cache
    let mut more = args.clone();
    more["items"][1]["text"] = json!("login page layout breaks on mobile");
    let mixed = structured(&call(&client, more).await);
    assert_eq!(
        (mixed["requests"].as_u64(), mixed["cache_hits"].as_u64()),
        (Some(1), Some(1)),
        "{mixed}"
    );
    assert_eq!(mixed["results"].as_array().unwrap().len(), 2);
    client.cancel().await.unwrap();

    // a second process sees the same cache
    assert!(home.path().join("cache/answers.sqlite").is_file());
    let (client, _home2) = start_in(home).await;
    let later = structured(&call(&client, args).await);
    assert_eq!(later["cache_hits"], 2, "{later}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn grep_over_stdio_walks_as_git_would_and_ranks_files() {
    let (client, home) = start().await;
    let repo = home.path().join("repo");
    for (path, body) in [
        (".gitignore", "build/\n*.log\n"),
        (
            "a.py",
            "def parse_config(path):\n    return toml.load(path)\n",
        ),
        ("pkg/b.py", "def render_page(html):\n    return html\n"),
        ("build/parse_config.py", "def parse_config(): pass\n"),
        ("debug.log", "parse config failed\n"),
    ] {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    std::os::unix::fs::symlink(home.path().join("silt.toml"), repo.join("link.toml")).unwrap();
    let before = tree_snapshot(&repo);
    let out = structured(
        &call_tool(
            &client,
            "sieve_grep",
            json!({"question": "where is the config file parsed", "path": repo.to_str().unwrap(), "threshold": 0.0}),
        )
        .await,
    );
    let paths: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    // ignored files and the symlink are never scored
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(sorted, [".gitignore", "a.py", "pkg/b.py"], "{out}");
    assert_eq!(paths[0], "a.py", "{out}");
    assert_eq!(out["units_scored"], 3);
    assert_eq!(out["results"][0]["kind"], "file");
    assert_eq!(out["results"][0]["line_end"], 2);
    assert_usage_fields(&out);

    // asked again over unchanged files: the same results. The lexical judge
    // is never called by grep (the engine scores files with the
    // repository's statistics, silt_core::grep::evidence), so there is
    // nothing to cache
    assert_eq!(out["requests"].as_u64(), Some(0), "{out}");
    let again = structured(
        &call_tool(
            &client,
            "sieve_grep",
            json!({"question": "where is the config file parsed", "path": repo.to_str().unwrap(), "threshold": 0.0}),
        )
        .await,
    );
    assert_eq!(
        (again["requests"].as_u64(), again["cache_hits"].as_u64()),
        (Some(0), Some(0)),
        "{again}"
    );
    assert_eq!(again["results"], out["results"]);

    let functions = structured(
        &call_tool(
            &client,
            "sieve_grep",
            json!({"question": "where is the config file parsed", "path": repo.to_str().unwrap(),
                   "mode": "functions", "threshold": 0.0, "top_k": 1}),
        )
        .await,
    );
    // the host's parser splits a.py into its one function
    assert_eq!(functions["results"][0]["kind"], "function", "{functions}");
    assert_eq!(functions["results"][0]["path"], "a.py");
    assert_eq!(
        (
            &functions["results"][0]["line_start"],
            &functions["results"][0]["line_end"]
        ),
        (&json!(1), &json!(2)),
        "{functions}"
    );
    // the other read-only tools that read the repository: verify its files
    for args in [
        json!({"base_path": repo.to_str().unwrap(), "records": [{"claim": "a.py parses the config",
               "citations": [{"locator": "a.py", "quote": "toml.load"}]}]}),
        json!({"base_path": repo.to_str().unwrap(), "report": "# Notes\n\nThe config is parsed in `a.py`.\n"}),
    ] {
        assert_ne!(
            call_tool(&client, "sieve_verify", args).await.is_error,
            Some(true)
        );
    }
    // read-only means read-only: the repository is byte for byte as it was
    assert_eq!(
        tree_snapshot(&repo),
        before,
        "a read-only tool wrote into the repository"
    );

    for (args, needle) in [
        (
            json!({"question": "q", "path": home.path().join("nope").to_str().unwrap()}),
            "cannot open",
        ),
        (
            json!({"question": "q", "path": repo.join("a.py").to_str().unwrap()}),
            "not a folder",
        ),
        (
            json!({"question": "q", "path": repo.to_str().unwrap(), "top_k": 500}),
            "top_k",
        ),
        (
            json!({"question": " ", "path": repo.to_str().unwrap()}),
            "question is empty",
        ),
    ] {
        let r = call_tool(&client, "sieve_grep", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args}: {r:?}");
        assert!(text_of(&r).contains(needle), "{args}: {}", text_of(&r));
    }
    client.cancel().await.unwrap();
}

/// A repository with a folder this user may not read and a 3 MB log:
/// grep ranks the rest, lists the folder under `skipped` with its reason
/// and the log under `read_in_part`. As root the call runs as uid nobody
/// (root reads everything); otherwise the folder is made unreadable.
#[test]
fn grep_ranks_what_it_can_read_and_lists_the_rest() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join("locked")).unwrap();
    std::fs::write(repo.join("retry.md"), "The client retries with backoff.\n").unwrap();
    std::fs::write(repo.join("locked/retry.md"), "secret retry notes\n").unwrap();
    std::fs::write(
        repo.join("big.log"),
        "retry attempt failed\n".repeat(150_000),
    )
    .unwrap();
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    mode(home.path(), 0o755);
    mode(&repo, 0o755);
    mode(&repo.join("locked"), 0o700);
    let cache = tempfile::tempdir().unwrap();
    mode(cache.path(), 0o777);
    // SAFETY: geteuid has no preconditions
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(silt_binary());
        c
    } else {
        mode(&repo.join("locked"), 0o000);
        std::process::Command::new(silt_binary())
    };
    let out = cmd
        .args(["grep", "--json", "--threshold", "0", "client retries"])
        .arg(&repo)
        .env("SILT_CACHE_DIR", cache.path())
        .env("HOME", cache.path())
        .env("XDG_CONFIG_HOME", cache.path())
        .env("XDG_DATA_HOME", cache.path())
        .env("XDG_CACHE_HOME", cache.path())
        .env_remove("SILT_CONFIG")
        .output()
        .expect("setpriv (util-linux) runs");
    mode(&repo.join("locked"), 0o755);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"retry.md"), "{v:#}");
    assert!(!paths.contains(&"locked/retry.md"), "{v:#}");
    assert_eq!(v["skipped"][0]["path"], "locked", "{v:#}");
    assert!(
        v["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("ermission denied"),
        "{v:#}"
    );
    assert_eq!(v["read_in_part"]["paths"][0], "big.log", "{v:#}");
}

/// Every path under `dir` with its bytes (a symlink: its target), for
/// checking that nothing was written.
fn tree_snapshot(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, target.to_string_lossy().into_owned().into_bytes());
            } else if kind.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// `silt serve` under `home` (its plugins in `home/plugins`), spoken to in
/// raw lines.
async fn raw_server(home: &std::path::Path) -> silt_e2e::raw_stdio::RawServer {
    std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve").envs(silt_e2e::home_env(home));
    silt_e2e::raw_stdio::RawServer::start(cmd).await
}

/// A JSON-RPC batch, a `jsonrpc` other than "2.0", one without it and a
/// request rmcp cannot type are answered with invalid-request errors
/// under their ids (rmcp gave none, or a null id the client could not
/// match, and the client waited for ever); the session goes on after.
#[tokio::test]
async fn batches_and_other_versions_are_answered_over_raw_stdio() {
    let home = tempfile::tempdir().unwrap();
    let mut server = raw_server(home.path()).await;
    let within = std::time::Duration::from_secs(10);
    let ping = |id: Value| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});

    server
        .send(&json!([ping(json!(1)), {"jsonrpc": "2.0", "method": "notifications/x"}, 5]))
        .await;
    let batch = server.next(within).await.expect("the batch is answered");
    let answers = batch.as_array().unwrap_or_else(|| panic!("{batch}"));
    assert_eq!(answers.len(), 2, "{batch}");
    assert_eq!(
        (&answers[0]["id"], &answers[1]["id"]),
        (&json!(1), &Value::Null)
    );
    for a in answers {
        assert_eq!(a["error"]["code"], -32600, "{batch}");
        assert!(a["error"]["message"].as_str().unwrap().contains("batch"));
    }
    // each answered alone, with the request's id (null for none)
    for (line, id, says) in [
        ("[]".to_string(), Value::Null, "batch"),
        (
            json!({"jsonrpc": "1.0", "id": "old", "method": "ping"}).to_string(),
            json!("old"),
            "2.0",
        ),
        (
            json!({"id": 8, "method": "ping"}).to_string(),
            json!(8),
            "2.0",
        ),
        // rmcp answered one it cannot type with a null id
        (
            json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": 42}).to_string(),
            json!(10),
            "invalid request",
        ),
    ] {
        server.send_line(&line).await;
        let a = server.next(within).await.expect(&line);
        assert_eq!(
            (&a["id"], &a["error"]["code"]),
            (&id, &json!(-32600)),
            "{line}"
        );
        assert!(
            a["error"]["message"].as_str().unwrap().contains(says),
            "{a}"
        );
    }

    server.send(&ping(json!(9))).await;
    let pong = server.next(within).await.expect("ping after them");
    assert_eq!(
        (&pong["id"], pong.get("error")),
        (&json!(9), None),
        "{pong}"
    );
    server.kill().await;
}

/// SIGTERM with a call in flight: the call is answered before silt stops,
/// a request sent meanwhile is told silt is stopping, and silt exits 0.
/// (silt used to die at once: the client read EOF where its answer was.)
#[tokio::test]
async fn sigterm_on_stdio_answers_the_calls_in_flight_first() {
    let home = tempfile::tempdir().unwrap();
    // a judge that runs until its 3 s wall-clock limit: a slow call
    silt_e2e::install_hostile(
        &home.path().join("plugins"),
        "spin",
        "",
        "cpu_ms = 600000\nwall_ms = 3000",
    );
    let mut server = raw_server(home.path()).await;
    server
        .call(
            1,
            "sieve_ask",
            json!({"question": "Is it slow?", "yes": "slow", "no": "fast", "judge": "spin",
                   "items": [{"id": "a", "text": "anything"}]}),
        )
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    server.signal("TERM");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    server
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let mut answers = Vec::new();
    while let Some(a) = server.next(std::time::Duration::from_secs(30)).await {
        answers.push(a);
    }
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id);
    let slow = by_id(1).unwrap_or_else(|| panic!("the call in flight got no answer: {answers:?}"));
    assert!(slow.get("result").is_some(), "{slow}");
    assert!(
        slow.to_string().contains("wall-clock limit"),
        "the call ran to its end: {slow}"
    );
    let late = by_id(2).unwrap_or_else(|| panic!("the late ping got no answer: {answers:?}"));
    assert_eq!(late["error"]["code"], -32000, "{late}");
    assert!(
        late["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stopping")
    );
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), server.child.wait())
        .await
        .expect("silt stops after the drain")
        .unwrap();
    assert!(status.success(), "{status:?}");
}
