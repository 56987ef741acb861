//! A `silt serve` child spoken to over stdio by hand (newline-delimited
//! JSON-RPC), for the benchmarks that time silt as an agent runs it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// A `silt serve` child over stdio, asked one tool call at a time.
pub struct Silt {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Silt {
    /// Starts `silt serve` in `dir` (its ledger `dir/ledger.db` unless
    /// `env` names another) and initializes the session.
    pub async fn start(dir: &Path, env: &[(&str, String)]) -> Result<Silt> {
        let mut cmd = Command::new(crate::silt_binary()?);
        cmd.arg("serve")
            .current_dir(dir)
            .env("SILT_LEDGER_PATH", dir.join("ledger.db"))
            .env_remove("SILT_MODEL_ENDPOINT")
            // the compiled components live in the run's own cache folder,
            // so "no cache of any kind" holds
            .env_remove("SILT_COMPILE_CACHE_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawning silt serve")?;
        let stdin = child.stdin.take().context("stdin")?;
        let lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut silt = Silt {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        silt.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "silt-bench-model", "version": "0"}}),
        )
        .await?;
        silt.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(silt)
    }

    async fn send(&mut self, msg: Value) -> Result<()> {
        self.stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        Ok(self.stdin.flush().await?)
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        while let Some(line) = self.lines.next_line().await? {
            let v: Value = serde_json::from_str(&line).unwrap_or_default();
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    bail!("{method} failed: {e}");
                }
                return Ok(v["result"].clone());
            }
        }
        bail!("silt serve exited before answering {method}")
    }

    /// One tool call: its structured result; Err on a tool error.
    pub async fn call(&mut self, tool: &str, args: &Value) -> Result<Value> {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await?;
        if r["isError"] == true {
            bail!("{tool} failed: {}", r["content"]);
        }
        Ok(r["structuredContent"].clone())
    }

    /// `calls` sequential calls of `tool`, each timed.
    pub async fn time(&mut self, tool: &str, args: &Value, calls: usize) -> Result<Vec<Duration>> {
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            let t = Instant::now();
            self.call(tool, args).await?;
            times.push(t.elapsed());
        }
        Ok(times)
    }

    /// Closes stdin and waits (10 s at most) for the server to exit.
    pub async fn stop(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}
