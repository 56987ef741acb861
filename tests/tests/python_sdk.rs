//! Every tool through the official MCP Python SDK (`tests/python/
//! every_tool.py`, run by the Python `.ci/mcp-python` prepares): portable
//! input schemas, each tool's example valid against its schema and
//! answered without error, every answer valid against the tool's output
//! schema (the SDK checks it), numbers sent as numeric strings accepted.

use serde_json::Value;
use silt_e2e::silt_binary;

#[test]
fn every_tool_answers_the_official_python_sdk() {
    let python = std::env::var_os("SILT_MCP_PYTHON").expect(
        "SILT_MCP_PYTHON must name a Python with the MCP SDK: `.ci/run` sets it; by hand run \
         `export SILT_MCP_PYTHON=$(.ci/mcp-python)`",
    );
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("notes.md"), "The client retries with backoff.\n").unwrap();
    std::fs::write(
        repo.join("retry.py"),
        "MAX_RETRIES = 5\n\ndef retry_delay(attempt):\n    return 2 ** attempt\n",
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/every_tool.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(silt_binary())
        .arg(home.path())
        .arg(&repo)
        .output()
        .expect("running the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "no report from the Python client:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert_eq!(report["problems"], serde_json::json!([]), "{report:#}");
    assert!(out.status.success(), "{report:#}");
    assert!(report["tools"].as_u64().unwrap() >= 18, "{report:#}");
    // every tool but sieve_search (it needs a web backend), each answer
    // checked by the SDK against the tool's output schema
    let called: std::collections::BTreeSet<&str> = report["called"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(called.len(), 17, "{called:?}");
    assert!(!called.contains("sieve_search"));
}
