//! Every tool through the official MCP Python SDK (`tests/clients/
//! every_tool.py`, run by the Python `.ci/mcp-python` prepares): portable
//! input schemas, each tool's example valid against its schema and
//! answered without error, every answer valid against the tool's output
//! schema (the SDK checks it), numbers sent as numeric strings accepted.

use serde_json::Value;
use silt_e2e::silt_binary;

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_answers_the_official_python_sdk() {
    let searxng = silt_e2e::searxng::start().await;
    let python = std::env::var_os("SILT_MCP_PYTHON").expect(
        "SILT_MCP_PYTHON must name a Python with the MCP SDK: `.ci/run` sets it; by hand run \
         `export SILT_MCP_PYTHON=$(.ci/mcp-python)`",
    );
    let home = tempfile::tempdir().unwrap();
    let repo = silt_e2e::clients::example_repo(home.path());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/clients/every_tool.py");
    let mut cmd = tokio::process::Command::new(python);
    silt_e2e::clear_search_settings(&mut cmd);
    let out = cmd
        .arg(script)
        .arg(silt_binary())
        .arg(home.path())
        .arg(&repo)
        .env("SILT_SEARXNG_URL", &searxng)
        .output()
        .await
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
    // every tool (sieve_search on the loopback SearXNG), each answer
    // checked by the SDK against the tool's output schema
    let called: std::collections::BTreeSet<&str> = report["called"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(called.len(), 18, "{called:?}");
    assert!(called.contains("sieve_search"));
}
