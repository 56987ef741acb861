//! silt through the official MCP Inspector's CLI (npm, pinned in
//! tests/js): its strict schema check finds nothing to warn about in any
//! tool, and a call with the string arguments the CLI sends (`top_k=3`)
//! is answered.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use silt_e2e::silt_binary;

fn inspector(home: &Path, args: &[&str]) -> (bool, String, String) {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("js");
    let program = js.join("node_modules/.bin/mcp-inspector");
    assert!(
        program.is_file(),
        "the MCP Inspector is not installed: run .ci/run, or `npm ci --prefix {}`",
        js.display()
    );
    std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let out = Command::new(program)
        .arg("--cli")
        .arg(silt_binary())
        .arg("serve")
        .args(args)
        .env("SILT_LEDGER_PATH", home.join("ledger.db"))
        .env("SILT_CACHE_DIR", home.join("cache"))
        .env("SILT_CONFIG", home.join("silt.toml"))
        .current_dir(home)
        .output()
        .expect("running the MCP Inspector CLI");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn the_inspector_finds_every_schema_portable() {
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = inspector(home.path(), &["--method", "tools/list", "--strict"]);
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
    ] {
        let mut call = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
        call.extend(args.iter().copied());
        let (_, out, err) = inspector(home.path(), &call);
        let result: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{tool}: not a tool result ({e}): {out}{err}"));
        assert_eq!(result["isError"], true, "{tool}: {out}");
        let body: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body["ok"], false, "{tool}: {body}");
        assert!(body["error"]["code"].is_string(), "{tool}: {body}");
        assert!(body["error"]["message"].is_string(), "{tool}: {body}");
    }
}
