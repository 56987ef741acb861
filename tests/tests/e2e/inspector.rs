//! silt through the official MCP Inspector's CLI (npm, pinned in
//! tests/js): its strict schema check finds nothing to warn about in any
//! tool, every tool answers a call made from it (sieve_search on a
//! loopback SearXNG), and a call with the string arguments the CLI sends
//! (`top_k=3`) is answered.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use silt_e2e::silt_binary;

/// Runs the Inspector CLI on `silt serve` with the ledger, caches and
/// config under `home`. The Inspector passes the server only a few
/// variables of its own environment (HOME, PATH, ...), so silt's settings
/// go as `-e` arguments.
fn inspector(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("js");
    let program = js.join("node_modules/.bin/mcp-inspector");
    assert!(
        program.is_file(),
        "the MCP Inspector is not installed: run .ci/run, or `npm ci --prefix {}`",
        js.display()
    );
    std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let mut cmd = Command::new(program);
    cmd.arg("--cli");
    let at = |name: &str| home.join(name).display().to_string();
    let mut vars = vec![
        ("SILT_LEDGER_PATH".to_string(), at("ledger.db")),
        ("SILT_CACHE_DIR".to_string(), at("cache")),
        ("SILT_CONFIG".to_string(), at("silt.toml")),
        ("SILT_SLEEP_PRESSURE".to_string(), "0".to_string()),
    ];
    vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    for (k, v) in vars {
        cmd.arg("-e").arg(format!("{k}={v}"));
    }
    let out = cmd
        .arg(silt_binary())
        .arg("serve")
        .args(args)
        .current_dir(home)
        .output()
        .expect("running the MCP Inspector CLI");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `tools/call` of `tool` with `args` as the CLI's `key=value` pairs
/// (strings as they are, anything else as JSON, which the CLI parses);
/// the result's structured content, after checking it is no error.
fn call(home: &Path, env: &[(&str, &str)], tool: &str, args: &Value) -> Value {
    let pairs: Vec<String> = args
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    let mut argv = vec!["--method", "tools/call", "--tool-name", tool];
    if !pairs.is_empty() {
        argv.push("--tool-arg");
        argv.extend(pairs.iter().map(String::as_str));
    }
    let (ok, out, err) = inspector(home, env, &argv);
    assert!(ok, "{tool}: {err}");
    let result: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{tool}: not a tool result ({e}): {out}{err}"));
    assert_ne!(result["isError"], true, "{tool}: {out}");
    assert!(
        result["structuredContent"].is_object(),
        "{tool}: no structured content: {out}"
    );
    result["structuredContent"].clone()
}

#[test]
fn the_inspector_finds_every_schema_portable() {
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = inspector(home.path(), &[], &["--method", "tools/list", "--strict"]);
    assert!(ok, "{err}");
    let tools: Value = serde_json::from_str(&out).unwrap();
    assert!(tools["tools"].as_array().unwrap().len() >= 18, "{out}");
    assert!(
        !err.contains("Warning") && !err.contains("portability"),
        "{err}"
    );
}

#[test]
fn the_inspector_calls_a_tool_with_string_arguments() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("retry.py"),
        "def retry_delay(attempt):\n    return 2\n",
    )
    .unwrap();
    let path = format!("path={}", repo.display());
    let (ok, out, err) = inspector(
        home.path(),
        &[],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "sieve_grep",
            "--tool-arg",
            "question=where is the retry delay",
            &path,
            "top_k=3",
            "threshold=0",
        ],
    );
    assert!(ok, "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_ne!(result["isError"], true, "{out}");
    assert_eq!(
        result["structuredContent"]["results"][0]["path"], "retry.py",
        "{out}"
    );
}

/// A refused call reaches the Inspector as the tool's own error body, not
/// as a failure to match the success's output schema (the TypeScript SDK
/// checks any structured content against it, errors included).
#[test]
fn the_inspector_reads_a_refusal_as_the_tools_error() {
    let home = tempfile::tempdir().unwrap();
    for (tool, args) in [
        ("sieve_rank", vec!["question=q", "candidates=[]"]),
        ("sediment_confirm", vec!["id=no-such-lesson"]),
        // The CLI sends an all-digit id as a number: it still arrives as
        // the id it was (refused as unknown, not as a wrong type).
        ("sediment_contradict", vec!["id=12345678"]),
    ] {
        let mut call = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
        call.extend(args.iter().copied());
        let (_, out, err) = inspector(home.path(), &[], &call);
        let result: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{tool}: not a tool result ({e}): {out}{err}"));
        assert_eq!(result["isError"], true, "{tool}: {out}");
        let body: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body["ok"], false, "{tool}: {body}");
        assert!(body["error"]["code"].is_string(), "{tool}: {body}");
        assert!(body["error"]["message"].is_string(), "{tool}: {body}");
        assert_ne!(body["error"]["code"], "invalid_arguments", "{tool}: {body}");
    }
}

/// Every tool the server lists, called from the Inspector with the
/// documented example the Python SDK test also sends
/// (tests/clients/tool_calls.json); the tools that act on a lesson or an
/// event on ones made by earlier calls.
#[test]
fn the_inspector_drives_every_tool() {
    let web = tokio::runtime::Runtime::new().unwrap();
    let searxng = web.block_on(silt_e2e::searxng::start());
    let env = [("SILT_SEARXNG_URL", searxng.as_str())];
    let home = tempfile::tempdir().unwrap();
    let repo = silt_e2e::clients::example_repo(home.path());
    let (ok, out, err) = inspector(home.path(), &env, &["--method", "tools/list"]);
    assert!(ok, "{err}");
    let listed: BTreeSet<String> = serde_json::from_str::<Value>(&out).unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();

    let calls = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/clients/tool_calls.json"
    ))
    .unwrap()
    .replace("$REPO", &repo.display().to_string());
    let calls: Value = serde_json::from_str(&calls).unwrap();
    let mut called = BTreeSet::new();
    for (tool, args) in calls["calls"].as_object().unwrap() {
        let out = call(home.path(), &env, tool, args);
        if tool.starts_with("sieve_") {
            assert!(out["usage"].is_object(), "{tool}: {out}");
        }
        called.insert(tool.clone());
    }
    let searched = call(
        home.path(),
        &env,
        "sieve_search",
        &calls["calls"]["sieve_search"],
    );
    assert_eq!(searched["backend"], "searxng", "{searched}");
    assert!(
        !searched["results"].as_array().unwrap().is_empty(),
        "{searched}"
    );

    let made = call(
        home.path(),
        &env,
        "sediment_capture",
        &serde_json::json!({"when": "formatting the changelog", "prefer": "keep one line per change"}),
    );
    let id = serde_json::json!({"id": made["captured"]["id"]});
    for tool in ["sediment_confirm", "sediment_contradict"] {
        call(home.path(), &env, tool, &id);
        called.insert(tool.to_string());
    }
    let mut forget = id.clone();
    forget["reason"] = "a test lesson".into();
    call(home.path(), &env, "sediment_forget", &forget);
    called.insert("sediment_forget".into());
    for _ in 0..2 {
        call(
            home.path(),
            &env,
            "sediment_capture",
            &serde_json::json!({"when": "tagging a release build", "prefer": "sign the tag with the release key"}),
        );
    }
    let slept = call(home.path(), &env, "sediment_sleep", &serde_json::json!({}));
    let event = &slept["undoable"][0]["event"];
    assert!(event.is_i64(), "sleep merged the duplicate: {slept}");
    let undone = call(
        home.path(),
        &env,
        "sediment_undo",
        &serde_json::json!({"event": event}),
    );
    assert_eq!(undone["ok"], true, "{undone}");
    called.insert("sediment_undo".into());
    assert_eq!(called, listed, "every listed tool called, nothing else");
}
