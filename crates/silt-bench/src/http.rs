//! `silt-bench http`: the shared server under load. Starts `silt serve
//! --http` (this binary, a child process with its own ledger and caches in
//! a temporary folder, as a user would run it) and, for each number of
//! concurrent clients, has every client call tools in a loop for a fixed
//! time, mixing `sediment_recall`, `sediment_capture` and `sieve_ask`
//! (lexical judge) on the one ledger. Reports throughput and p50/p99
//! latency per level, and counts errors and lost captures.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

#[derive(Debug, clap::Args)]
pub struct BenchHttpArgs {
    /// Concurrent clients per level.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub clients: Vec<usize>,
    /// Seconds each level runs.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Lessons in the ledger before the first level: generated `agents`
    /// text (as `silt-bench ledger --text agents` makes), marked as slept
    /// through, so every recall ranks them and every capture's pair count
    /// reads them.
    #[arg(long, default_value_t = 0)]
    pub entries: usize,
    /// Serve a ledger in PostgreSQL: a database made on this server
    /// (postgres://USER@HOST/DB; the user may create databases) and
    /// dropped after. Default: a SQLite file.
    #[arg(long)]
    pub postgres: Option<String>,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Where the benchmarked server listens and the token it wants.
struct Target {
    url: String,
    token: String,
}

/// The server child and how to reach it.
async fn start_server(
    dir: &std::path::Path,
    ledger: &std::path::Path,
) -> Result<(tokio::process::Child, Target)> {
    std::fs::write(dir.join("silt.toml"), "judge = \"lexical\"\n")?;
    let mut child = tokio::process::Command::new(crate::silt_binary()?)
        .args(["serve", "--http", "--port", "0"])
        .current_dir(dir)
        .env("SILT_CONFIG", dir.join("silt.toml"))
        .env("SILT_CACHE_DIR", dir.join("cache"))
        .env_remove("SILT_COMPILE_CACHE_DIR")
        .env("SILT_LEDGER_URL", "")
        .env("SILT_LEDGER_PATH", ledger)
        .env("SILT_HTTP_TOKEN_FILE", dir.join("http-token"))
        .env_remove("SILT_HTTP_PORT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start `silt serve --http`")?;
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    while let Some(line) = lines.next_line().await? {
        if let Some(url) = line.strip_prefix("silt: serving MCP at ") {
            let url = url.to_string();
            // drain the rest so the server never blocks on the pipe
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            let token = std::fs::read_to_string(dir.join("http-token"))
                .context("the server made no token file")?
                .trim()
                .to_string();
            return Ok((child, Target { url, token }));
        }
    }
    bail!("`silt serve --http` exited before it served")
}

async fn connect(target: &Target) -> Result<Client> {
    let config = StreamableHttpClientTransportConfig::with_uri(target.url.clone())
        .auth_header(target.token.clone());
    Ok(
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await?,
    )
}

/// One tool call; Err on a transport failure or a tool error.
async fn call(client: &Client, name: &'static str, args: Value) -> Result<Value> {
    let r = client
        .call_tool(
            CallToolRequestParams::new(name)
                .with_arguments(args.as_object().expect("an object").clone()),
        )
        .await?;
    if r.is_error == Some(true) {
        bail!("{name} failed: {:?}", r.content);
    }
    Ok(r.structured_content.unwrap_or(Value::Null))
}

/// What one call of the mix did.
#[derive(Default)]
struct Done {
    /// A capture was acknowledged.
    captured: bool,
    /// Items the answer cache served (the mix's asks never repeat, so any
    /// would mean the ask figures timed the cache).
    cache_hits: u64,
}

/// The `k`-th call of client `c` at the level of `level` clients: recall,
/// capture and ask in turn. Every ask's items are new text (no level
/// repeats another's), so the judge answers each one.
async fn mixed_call(client: &Client, level: usize, c: usize, k: u64) -> Result<Done> {
    match k % 3 {
        0 => call(
            client,
            "sediment_recall",
            json!({"context": format!("deploying service {c} to staging"), "k": 3}),
        )
        .await
        .map(|_| Done::default()),
        1 => call(
            client,
            "sediment_capture",
            json!({"when": format!("deploying service {c} call {k}"),
                   "prefer": format!("run smoke suite {c}-{k} first")}),
        )
        .await
        .map(|_| Done {
            captured: true,
            ..Done::default()
        }),
        _ => call(
            client,
            "sieve_ask",
            json!({"question": "Does the item mention staging?",
                   "yes": "It mentions staging", "no": "It does not",
                   "items": [format!("deploy build {level}-{c}-{k} to staging"),
                             format!("a note about colours, draft {level}-{c}-{k}")],
                   "threshold": 0.0}),
        )
        .await
        .map(|answer| Done {
            cache_hits: answer["cache_hits"].as_u64().unwrap_or(0),
            ..Done::default()
        }),
    }
}

struct Level {
    clients: usize,
    calls: u64,
    errors: u64,
    captures: u64,
    cache_hits: u64,
    /// p50 of recall, capture and ask alone.
    tool_p50_ms: [f64; 3],
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

async fn run_level(target: &Target, clients: usize, seconds: u64) -> Result<Level> {
    let mut connected = Vec::with_capacity(clients);
    for _ in 0..clients {
        connected.push(connect(target).await?);
    }
    let errors = Arc::new(AtomicU64::new(0));
    let captures = Arc::new(AtomicU64::new(0));
    let cache_hits = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for (c, client) in connected.into_iter().enumerate() {
        let (errors, captures, cache_hits) = (errors.clone(), captures.clone(), cache_hits.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut k = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                match mixed_call(&client, clients, c, k).await {
                    Ok(done) => {
                        latencies.push((k % 3, t.elapsed()));
                        if done.captured {
                            captures.fetch_add(1, Ordering::Relaxed);
                        }
                        cache_hits.fetch_add(done.cache_hits, Ordering::Relaxed);
                    }
                    Err(e) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!("{e:#}");
                    }
                }
                k += 1;
            }
            let _ = client.cancel().await;
            latencies
        }));
    }
    let mut tagged = Vec::new();
    for t in tasks {
        tagged.extend(t.await?);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let pct = crate::ledger::percentile_ms;
    let of = |kind: u64| -> Vec<Duration> {
        tagged
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, d)| *d)
            .collect()
    };
    let all: Vec<Duration> = tagged.iter().map(|(_, d)| *d).collect();
    Ok(Level {
        clients,
        calls: all.len() as u64,
        // recall, capture and ask, in the mix's order
        tool_p50_ms: [pct(of(0), 0.5), pct(of(1), 0.5), pct(of(2), 0.5)],
        errors: errors.load(Ordering::Relaxed),
        captures: captures.load(Ordering::Relaxed),
        cache_hits: cache_hits.load(Ordering::Relaxed),
        seconds: elapsed,
        p50_ms: pct(all.clone(), 0.5),
        p99_ms: pct(all.clone(), 0.99),
        max_ms: pct(all, 1.0),
    })
}

/// Fills the benchmark's ledger with `n` generated lessons, in the state a
/// sleep pass leaves (without its changes): auto-sleep's check counts only
/// the pairs of lessons captured from here on.
fn seed(ledger: &std::path::Path, n: usize) -> Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs_f64();
    let entries = silt_core::ledger::synthetic::agent_entries(n, now);
    let mut store = silt_ledger_service::store::Store::open(ledger)?;
    store.import(&entries, "generated", now)?;
    store.begin_write()?;
    store.mark_slept_through(None)?;
    store.commit(&[], &[])?;
    Ok(())
}

pub async fn run(args: BenchHttpArgs) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let scratch = args
        .postgres
        .as_deref()
        .map(|admin| silt_ledger_service::store::Scratch::database(admin, "bench_http"))
        .transpose()?;
    let ledger = match &scratch {
        Some(db) => std::path::PathBuf::from(&db.url),
        None => dir.path().join("ledger.db"),
    };
    if args.entries > 0 {
        seed(&ledger, args.entries)?;
    }
    let (mut server, target) = start_server(dir.path(), &ledger).await?;
    // The server's first call reads the whole ledger into its engine:
    // timed apart, before the clock. Captures are counted from here, since
    // an import logs its lessons as captured.
    let (first_call_ms, logged_before) = {
        let client = connect(&target).await?;
        let t = Instant::now();
        call(
            &client,
            "sediment_recall",
            json!({"context": "warming the engine", "k": 1}),
        )
        .await?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let stats = call(&client, "sediment_stats", json!({"telemetry": true})).await?;
        let _ = client.cancel().await;
        (
            ms,
            stats["telemetry"]["events"]["captured"]
                .as_u64()
                .unwrap_or(0),
        )
    };
    let mut levels = Vec::new();
    let mut captured = 0;
    for &n in &args.clients {
        let level = run_level(&target, n.max(1), args.seconds).await?;
        captured += level.captures;
        if !args.json {
            println!(
                "{:>4} clients: {:>7.1} calls/s, p50 {:>7.1} ms, p99 {:>7.1} ms, {} errors, {} ask items from the cache",
                level.clients,
                level.calls as f64 / level.seconds,
                level.p50_ms,
                level.p99_ms,
                level.errors,
                level.cache_hits
            );
        }
        levels.push(level);
    }
    // every capture the server acknowledged is in the ledger's log (the
    // lesson count can be higher: a scheduled sleep pass adds parents)
    let client = connect(&target).await?;
    let stats = call(&client, "sediment_stats", json!({"telemetry": true})).await?;
    let stored = stats["telemetry"]["events"]["captured"]
        .as_u64()
        .unwrap_or(0)
        .saturating_sub(logged_before);
    // what the auto-sleep passes (run after the captures answered) wrote:
    // none would mean no pass ever landed, and the figures would flatter
    let slept = |kind: &str| stats["telemetry"]["events"][kind].as_u64().unwrap_or(0);
    let (merged, resolved, abstracted) = (slept("merged"), slept("resolved"), slept("abstracted"));
    let _ = client.cancel().await;
    server.start_kill()?;
    let _ = server.wait().await;
    if args.json {
        let out = json!({
            "mix": "sediment_recall, sediment_capture, sieve_ask (lexical, 2 new items) in turn",
            "seconds_per_level": args.seconds,
            "entries_at_start": args.entries,
            "store": if scratch.is_some() { "postgres" } else { "sqlite" },
            "first_call_ms": (first_call_ms * 10.0).round() / 10.0,
            "levels": levels.iter().map(|l| json!({
                "clients": l.clients, "calls": l.calls, "errors": l.errors,
                "ask_items_from_cache": l.cache_hits,
                "p50_ms_recall_capture_ask": l.tool_p50_ms.map(|ms| (ms * 10.0).round() / 10.0),
                "calls_per_s": (l.calls as f64 / l.seconds * 10.0).round() / 10.0,
                "p50_ms": (l.p50_ms * 10.0).round() / 10.0,
                "p99_ms": (l.p99_ms * 10.0).round() / 10.0,
                "max_ms": (l.max_ms * 10.0).round() / 10.0,
            })).collect::<Vec<_>>(),
            "captures_acknowledged": captured,
            "captures_in_ledger": stored,
            "sleep_events": {"merged": merged, "resolved": resolved, "abstracted": abstracted},
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("captures acknowledged {captured}, in the ledger {stored}");
        println!("auto-sleep: {merged} merged, {resolved} resolved, {abstracted} abstracted");
    }
    if stored != captured {
        bail!("{captured} captures were acknowledged but the ledger logged {stored}");
    }
    Ok(())
}
