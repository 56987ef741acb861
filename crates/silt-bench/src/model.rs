//! `silt-bench model`: `sieve_ask` and `sieve_verify` on the HTTP model
//! judge, beside the same requests sent to the same server with curl.
//!
//! The overhead silt adds is the figure to keep small, so both sides send
//! byte-identical requests: one untimed pass through a recording proxy
//! captures what the judge sends for one ask call and one verify call, and
//! the curl side replays exactly those bodies. Each side then runs with the
//! same number of requests in flight (the judge's `SILT_MODEL_CONCURRENCY`,
//! curl workers). silt is a real `silt serve` child spoken to over stdio,
//! so MCP, the engines, the sandbox and the judge are all in the figure.
//! The answer cache is off; the model server's own prompt cache is on for
//! both sides alike.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::stdio_client::Silt;

#[derive(Debug, clap::Args)]
pub struct BenchModelArgs {
    /// An OpenAI-compatible server already running. Without it the bench
    /// starts llama-server itself (`--llama-server`, `--gguf`).
    #[arg(long)]
    pub url: Option<String>,
    /// The model name sent to the server.
    #[arg(long, default_value = "smollm2")]
    pub model: String,
    /// The llama-server binary (default `$SILT_LLAMA_SERVER`).
    #[arg(long)]
    pub llama_server: Option<PathBuf>,
    /// The GGUF file to serve (default: the installed smollm2 model).
    #[arg(long)]
    pub gguf: Option<PathBuf>,
    /// Requests in flight, one measurement each.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 4, 8])]
    pub concurrency: Vec<usize>,
    /// Timed calls per tool and concurrency.
    #[arg(long, default_value_t = 3)]
    pub calls: usize,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

/// Sixteen short changelog lines for a yes/no question.
const ASK_ITEMS: [&str; 16] = [
    "fix crash when the config file is empty",
    "add a dark theme to the settings page",
    "error 500 when uploading a file over 2 GB",
    "support exporting reports to PDF",
    "wrong totals in the monthly invoice summary",
    "document the new retry options",
    "memory leak in the websocket reconnect loop",
    "bump the minimum Python version to 3.10",
    "timestamps shown in UTC instead of local time",
    "add keyboard shortcuts for navigation",
    "search ignores results on the second page",
    "rename the --fast flag to --quick",
    "login fails when the password contains a colon",
    "new command to list archived projects",
    "progress bar stops at 99 percent",
    "translate the help pages into German",
];

/// The source the verify claims cite, and the claims (true and altered).
const DOC: &str = "# Retries\n\nThe client retries a failed request three times, waiting twice \
as long before each attempt. It never retries a request that returned a 4xx status.\n\n\
# Timeouts\n\nEach request times out after 30 seconds. A timed-out request counts as failed \
and is retried like any other failure.\n\n# Caching\n\nResponses with an ETag are cached on \
disk for one hour. The cache holds at most 500 entries and drops the oldest first.\n";
const CLAIMS: [&str; 4] = [
    "The client retries a failed request three times",
    "Requests that returned 404 are retried",
    "A request times out after 30 seconds",
    "The cache keeps responses for one day",
];

pub async fn run(args: BenchModelArgs) -> Result<()> {
    ensure!(
        args.calls > 0 && !args.concurrency.is_empty() && args.concurrency.iter().all(|&c| c > 0),
        "--calls and every --concurrency must be at least 1"
    );
    let max_c = *args.concurrency.iter().max().expect("non-empty");
    let (_server, url) = match &args.url {
        Some(url) => (None, url.trim_end_matches('/').to_string()),
        None => {
            let (child, url) = start_llama_server(&args, max_c).await?;
            (Some(child), url)
        }
    };
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("doc.md"), DOC)?;
    let ask = ask_args();
    let verify = verify_args();

    eprintln!("silt-bench model: recording the requests silt sends (one untimed pass)");
    let recorded = record(dir.path(), &url, &args.model, &ask, &verify).await?;
    eprintln!(
        "silt-bench model: one ask call sends {} requests, one verify call {}",
        recorded.ask.len(),
        recorded.verify.len()
    );

    let curl = (
        on_disk(&url, &recorded.ask)?,
        on_disk(&url, &recorded.verify)?,
    );
    let mut rows = Vec::new();
    for &c in &args.concurrency {
        eprintln!("silt-bench model: concurrency {c}: silt");
        let mut silt = Silt::start(dir.path(), &model_env(&url, &args.model, c)).await?;
        silt.call("sieve_ask", &ask).await?; // warm: compile, probe
        let silt_ask = silt.time("sieve_ask", &ask, args.calls).await?;
        let silt_verify = silt.time("sieve_verify", &verify, args.calls).await?;
        silt.stop().await;
        eprintln!("silt-bench model: concurrency {c}: curl");
        let curl_ask = time_calls(args.calls, || replay(&curl.0, c)).await?;
        let curl_verify = time_calls(args.calls, || replay(&curl.1, c)).await?;
        let row =
            |tool: &str, items: usize, requests: usize, silt: &[Duration], curl: &[Duration]| {
                json!({"tool": tool, "concurrency": c, "items_per_call": items,
                   "requests_per_call": requests,
                   "silt": figures(items, silt), "curl": figures(items, curl),
                   "silt_over_curl_p50": ratio(p50(silt), p50(curl))})
            };
        rows.push(row(
            "sieve_ask",
            ASK_ITEMS.len(),
            recorded.ask.len(),
            &silt_ask,
            &curl_ask,
        ));
        rows.push(row(
            "sieve_verify",
            CLAIMS.len(),
            recorded.verify.len(),
            &silt_verify,
            &curl_verify,
        ));
    }
    let out = json!({"machine": crate::judge::machine(), "server": url, "model": args.model,
                     "calls": args.calls, "rows": rows});
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("tool          c  items/s silt  items/s curl  p50 silt  p50 curl  silt/curl");
    for r in &rows {
        println!(
            "{:<12} {:>2}  {:>12.2}  {:>12.2}  {:>7.2}s  {:>7.2}s  {:>8.2}",
            r["tool"].as_str().unwrap_or(""),
            r["concurrency"],
            r["silt"]["items_per_s"].as_f64().unwrap_or(f64::NAN),
            r["curl"]["items_per_s"].as_f64().unwrap_or(f64::NAN),
            r["silt"]["p50_s"].as_f64().unwrap_or(f64::NAN),
            r["curl"]["p50_s"].as_f64().unwrap_or(f64::NAN),
            r["silt_over_curl_p50"].as_f64().unwrap_or(f64::NAN),
        );
    }
    Ok(())
}

/// The judge's settings for a server at `url`, answer cache off.
fn model_env(url: &str, model: &str, concurrency: usize) -> Vec<(&'static str, String)> {
    vec![
        ("SILT_MODEL_URL", url.to_string()),
        ("SILT_MODEL", model.to_string()),
        ("SILT_MODEL_CONCURRENCY", concurrency.to_string()),
        ("SILT_ANSWER_CACHE", "0".to_string()),
    ]
}

fn ask_args() -> Value {
    json!({"question": "Does the item describe a bug?",
           "yes": "It reports broken or incorrect behaviour: a crash, an error, wrong output.",
           "no": "It asks for new behaviour, documentation or a change that is not a fix.",
           "items": ASK_ITEMS, "judge": "openai"})
}

fn verify_args() -> Value {
    let records: Vec<Value> = CLAIMS
        .iter()
        .map(|c| json!({"claim": c, "citations": [{"locator": "doc.md"}]}))
        .collect();
    json!({"records": records, "judge": "openai"})
}

/// `calls` sequential runs of `f`, each timed.
async fn time_calls<F, Fut>(calls: usize, mut f: F) -> Result<Vec<Duration>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        f().await?;
        times.push(t.elapsed());
    }
    Ok(times)
}

fn p50(times: &[Duration]) -> f64 {
    let mut s: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    s.sort_by(f64::total_cmp);
    s[(s.len() - 1) / 2]
}

fn ratio(a: f64, b: f64) -> f64 {
    (a / b * 100.0).round() / 100.0
}

fn figures(items: usize, times: &[Duration]) -> Value {
    let total: f64 = times.iter().map(Duration::as_secs_f64).sum();
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    json!({"items_per_s": r3((items * times.len()) as f64 / total), "p50_s": r3(p50(times))})
}

/// The bodies the judge sent for one call of each tool.
struct Recorded {
    ask: Vec<Request>,
    verify: Vec<Request>,
}

#[derive(Clone)]
struct Request {
    path: String,
    body: Arc<Vec<u8>>,
}

type Log = Arc<Mutex<Vec<Request>>>;

/// One untimed pass of silt through a loopback proxy that logs every
/// request and forwards it to the model server.
async fn record(
    dir: &Path,
    url: &str,
    model: &str,
    ask: &Value,
    verify: &Value,
) -> Result<Recorded> {
    let log: Log = Arc::default();
    let upstream = url.to_string();
    let state = (log.clone(), upstream, reqwest::Client::new());
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(Arc::new(state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let proxy = format!("http://{}", listener.local_addr()?);
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut silt = Silt::start(dir, &model_env(&proxy, model, 1)).await?;
    silt.call("sieve_ask", ask).await?; // the probe and the warm-up
    log.lock().expect("log").clear();
    silt.call("sieve_ask", ask).await?;
    let ask_requests = std::mem::take(&mut *log.lock().expect("log"));
    silt.call("sieve_verify", verify).await?;
    let verify_requests = std::mem::take(&mut *log.lock().expect("log"));
    silt.stop().await;
    server.abort();
    ensure!(
        !ask_requests.is_empty() && !verify_requests.is_empty(),
        "the judge sent no requests to the model server"
    );
    Ok(Recorded {
        ask: ask_requests,
        verify: verify_requests,
    })
}

type ProxyState = Arc<(Log, String, reqwest::Client)>;

async fn forward(
    axum::extract::State(state): axum::extract::State<ProxyState>,
    uri: axum::http::Uri,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (log, upstream, client) = &*state;
    let path = uri.path().to_string();
    log.lock().expect("log").push(Request {
        path: path.clone(),
        body: Arc::new(body.to_vec()),
    });
    let reply = client
        .post(format!("{upstream}{path}"))
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await;
    match reply {
        Ok(r) => {
            let status = r.status().as_u16();
            let bytes = r.bytes().await.unwrap_or_default();
            (
                axum::http::StatusCode::from_u16(status)
                    .unwrap_or(axum::http::StatusCode::BAD_GATEWAY),
                [("content-type", "application/json")],
                bytes,
            )
                .into_response()
        }
        Err(e) => (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

/// Recorded requests written out as curl's `--data-binary @FILE` bodies,
/// once, so the timed replays spend nothing on the files.
struct CurlJobs {
    _files: tempfile::TempDir,
    /// (URL, body file) per request.
    jobs: Vec<(String, PathBuf)>,
}

fn on_disk(url: &str, requests: &[Request]) -> Result<CurlJobs> {
    let files = tempfile::tempdir()?;
    let mut jobs = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let file = files.path().join(format!("{i}.json"));
        std::fs::write(&file, &*r.body)?;
        jobs.push((format!("{url}{}", r.path), file));
    }
    Ok(CurlJobs {
        _files: files,
        jobs,
    })
}

/// Sends the requests with curl, `concurrency` at a time, each a curl
/// process as a person timing the server by hand would run it.
async fn replay(requests: &CurlJobs, concurrency: usize) -> Result<()> {
    let jobs = requests.jobs.clone();
    let queue = Arc::new(Mutex::new(jobs));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let queue = queue.clone();
        workers.spawn(async move {
            loop {
                let Some((target, file)) = queue.lock().expect("queue").pop() else {
                    return Ok::<(), anyhow::Error>(());
                };
                let out = Command::new("curl")
                    .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
                    .args(["-H", "Content-Type: application/json", "--data-binary"])
                    .arg(format!("@{}", file.display()))
                    .arg(&target)
                    .output()
                    .await
                    .context("running curl (is it installed?)")?;
                let code = String::from_utf8_lossy(&out.stdout);
                ensure!(
                    code == "200",
                    "curl {target}: HTTP {code} {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }
    Ok(())
}

/// llama-server on a free loopback port with a slot per request in flight.
async fn start_llama_server(args: &BenchModelArgs, slots: usize) -> Result<(Child, String)> {
    let bin = args
        .llama_server
        .clone()
        .or_else(|| silt_config::env::path("SILT_LLAMA_SERVER"))
        .context(
            "no model server: pass --url, or --llama-server (or export \
             SILT_LLAMA_SERVER=$(.ci/llama-server))",
        )?;
    let gguf = args.gguf.clone().unwrap_or_else(|| {
        silt_plugins::models::models_dir()
            .join("smollm2")
            .join("SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    ensure!(
        gguf.is_file(),
        "{} is missing: run `silt models install smollm2` or pass --gguf",
        gguf.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    // 1024 tokens of context per slot is over any prompt the bench sends
    let context = (1024 * slots).to_string();
    let child = Command::new(&bin)
        .arg("-m")
        .arg(&gguf)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", &context, "-np", &slots.to_string(), "--no-webui"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let url = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..600 {
        if let Ok(r) = client.get(format!("{url}/health")).send().await
            && r.status().is_success()
        {
            return Ok((child, url));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("llama-server at {url} did not become healthy in 120 s")
}
