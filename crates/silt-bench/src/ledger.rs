//! `silt-bench ledger`: the ledger on a generated N-entry ledger, and the
//! Python reference (a checkout of leonwangg1/sendiment, given by path) on
//! the same file, in one run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use silt_ledger_service::sediment_json;
use silt_mcp::tools::sediment_tools::LedgerTools;
use silt_runtime::app::App;

#[derive(Debug, clap::Args)]
pub struct BenchLedgerArgs {
    /// Entries in the generated ledger.
    #[arg(long, default_value_t = 10_000)]
    pub entries: usize,
    /// Timed recalls and captures.
    #[arg(long, default_value_t = 20)]
    pub calls: usize,
    /// A checkout of the Python reference (its sediment.py is imported from there).
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Give up on one reference operation after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub reference_timeout: u64,
    /// The generated text: `families` (made-up words, families share
    /// nothing) or `agents` (a Zipf vocabulary of recurring verbs,
    /// subjects and actions, as agents write lessons).
    #[arg(long, value_enum, default_value_t = Text::Families)]
    pub text: Text,
    /// Also time captures, each followed by a recall, from this many
    /// `silt serve` processes at once on one ledger (e.g. `--writers
    /// 1,8,64`), auto-sleep's check on.
    #[arg(long, value_delimiter = ',')]
    pub writers: Vec<usize>,
    /// Captures per writer process.
    #[arg(long, default_value_t = 40)]
    pub writer_captures: usize,
    /// Run the writers on PostgreSQL: a database made on this server for
    /// each run (postgres://USER@HOST/DB; the user may create databases)
    /// and dropped after. Default: a SQLite file.
    #[arg(long)]
    pub postgres: Option<String>,
    /// Time recall and capture only (no sleep, consolidate or auto-sleep
    /// check): for ledgers too large to sleep in a benchmark's time.
    #[arg(long)]
    pub no_sleep: bool,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Text {
    Families,
    Agents,
}

impl Text {
    fn lessons(self, n: usize) -> Vec<silt_core::ledger::synthetic::Lesson> {
        match self {
            Text::Families => silt_core::ledger::synthetic::lessons(n),
            Text::Agents => silt_core::ledger::synthetic::agent_lessons(n),
        }
    }

    /// The context of the `i`-th timed recall.
    fn contexts(self, n: usize) -> Vec<String> {
        match self {
            Text::Families => (0..n)
                .map(|i| format!("writing a migration with Postgres on production {i}"))
                .collect(),
            Text::Agents => silt_core::ledger::synthetic::agent_contexts(n),
        }
    }
}

/// The generated ledger (`silt_core::ledger::synthetic`) as Sediment's JSON.
fn generate(n: usize, now: f64, text: Text) -> Value {
    let day = 86400.0;
    let rows: Vec<Value> = text
        .lessons(n)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "when": l.when, "prefer": l.prefer, "id": format!("{:08x}", i),
                "confidence": l.confidence, "created": now - l.created_days_ago as f64 * day,
                "last_confirmed": now - l.confirmed_days_ago as f64 * day, "last_fired": now,
                "hit_count": l.hit_count, "confirm_count": l.confirm_count, "contradiction_count": 0,
                "status": "active", "note": "",
            })
        })
        .collect();
    Value::Array(rows)
}

fn p50(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

/// The `p` quantile of `v` in milliseconds (nearest rank; 0 when empty).
pub fn percentile_ms(mut v: Vec<Duration>, p: f64) -> f64 {
    v.sort();
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// The reference driver: our own script, importing the checkout's module.
const DRIVER: &str = r#"
import json, sys, time
sys.path.insert(0, sys.argv[1])
from sediment import Ledger
path, op, calls = sys.argv[2], sys.argv[3], int(sys.argv[4])
times = []
for i in range(calls):
    t = time.perf_counter()
    L = Ledger(path).load()
    if op == "recall":
        L.recall("writing a migration with Postgres on production %d" % i, k=5)
    elif op == "capture":
        L.capture("benchmark situation %d" % i, "benchmark action %d" % i, feedback="neutral")
    elif op == "consolidate":
        L.homeostasis()
    elif op == "sleep":
        L.sleep()
    L.save()
    times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"p50_ms": times[len(times) // 2] * 1000}))
"#;

fn reference(
    checkout: &Path,
    ledger: &Path,
    op: &str,
    calls: usize,
    timeout: u64,
) -> Result<Value> {
    let script = ledger.with_file_name("driver.py");
    std::fs::write(&script, DRIVER)?;
    let mut child = std::process::Command::new("python3")
        .arg(&script)
        .arg(checkout)
        .arg(ledger)
        .arg(op)
        .arg(calls.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("running python3 for the reference")?;
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(timeout) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(json!({"timed_out_after_s": timeout}));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output()?;
    anyhow::ensure!(
        out.status.success(),
        "reference {op} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

pub async fn run(app: &App, args: BenchLedgerArgs) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs_f64();
    let json_path = dir.path().join("ledger.json");
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&generate(args.entries, now, args.text))?,
    )?;
    if let Some(keep) = silt_config::env::path("SILT_BENCH_KEEP") {
        std::fs::copy(&json_path, keep)?;
    }

    let tools = imported(app, &json_path, &dir.path().join("ledger.db"), now).await?;
    let arg = |v: Value| v.as_object().cloned().unwrap_or_default();
    // the first call syncs the whole ledger into a fresh engine instance
    let t = Instant::now();
    tools
        .stats(arg(json!({"limit": 1})))
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    let first_sync_ms = t.elapsed().as_secs_f64() * 1000.0;
    let (recall, recalled) = timed_recalls(&tools, &args).await?;
    let mut capture = Vec::new();
    for i in 0..args.calls {
        let t = Instant::now();
        tools.capture(arg(json!({"when": format!("benchmark situation {i}"), "prefer": format!("benchmark action {i}")}))).await.map_err(|e| anyhow::anyhow!(e))?;
        capture.push(t.elapsed());
    }
    let mut silt = json!({
        "first_sync_ms": first_sync_ms, "recall_p50_ms": p50(recall),
        "recall_mean_hits": recalled as f64 / args.calls.max(1) as f64, "capture_p50_ms": p50(capture),
    });
    let (mut sleep_ms, mut consolidate_ms) = (0.0, 0.0);
    if !args.no_sleep {
        // consolidate on the whole generated ledger, as the reference's
        // runs on its own copy: a ledger of its own, its engine synced
        // first like the other timed calls
        let whole = imported(app, &json_path, &dir.path().join("whole.db"), now).await?;
        let active = whole
            .stats(arg(json!({"limit": 1})))
            .await
            .map_err(|e| anyhow::anyhow!(e))?["active"]
            .clone();
        let t = Instant::now();
        let consolidated = whole
            .consolidate(arg(json!({})))
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        consolidate_ms = t.elapsed().as_secs_f64() * 1000.0;
        drop(whole);
        silt["consolidate_active_before"] = active;
        silt["consolidate"] = consolidated;
        let t = Instant::now();
        let sleep = tools
            .sleep(arg(json!({})))
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        sleep_ms = t.elapsed().as_secs_f64() * 1000.0;
        // the sandboxes' share of the process: the largest ledger engine
        // instance so far (the one that served the recalls and captures
        // above, or the one the sleep pass ran on), the second instance
        // that searched by words for the pass while the first searched by
        // meaning (null where none was started), and the judge
        let mib = |bytes: usize| bytes as f64 / f64::from(1 << 20);
        let judge_name = {
            let service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
            service.judge().to_string()
        };
        let peaks = &app.runtime.ledger_peaks;
        let peak = |p: &std::sync::atomic::AtomicUsize| {
            let bytes = p.load(std::sync::atomic::Ordering::Relaxed);
            (bytes > 0).then(|| mib(bytes))
        };
        silt["engine_peak_memory_mib"] = json!(peak(&peaks.engine));
        silt["engine_second_instance_peak_memory_mib"] = json!(peak(&peaks.second_instance));
        // null for a judge that keeps no warm instance (each call a fresh one)
        let judge_peak = app.runtime.judge(&judge_name).await?.peak_memory();
        silt["judge_peak_memory_mib"] = json!((judge_peak > 0).then(|| mib(judge_peak)));
        // captures with auto-sleep's redundancy check on, after the pass (a
        // threshold never reached, so the check runs and no pass does): the
        // first syncs a fresh engine and counts the pairs no pass judged,
        // the rest add their own
        let mut checking_config = (*app.config).clone();
        checking_config.ledger.sleep_pressure = Some(1e9);
        let checking = std::sync::Arc::new(LedgerTools::at(
            app.runtime.clone(),
            std::sync::Arc::new(checking_config),
            dir.path().join("ledger.db"),
            None,
            // a second after every lesson the pass read: these are new
            Some(now + 1.0),
        ));
        let mut checked = Vec::new();
        for i in 0..args.calls {
            let t = Instant::now();
            checking.capture(arg(json!({"when": format!("checked situation {i}"), "prefer": format!("checked action {i}")}))).await.map_err(|e| anyhow::anyhow!(e))?;
            checked.push(t.elapsed());
        }
        let first_checked_ms = checked[0].as_secs_f64() * 1000.0;
        drop(checking);
        // the same contexts recalled over the slept ledger, where parents
        // are read through the lessons folded under them
        let (after, recalled_after) = timed_recalls(&tools, &args).await?;
        silt["recall_after_sleep_p50_ms"] = json!(p50(after));
        silt["recall_after_sleep_mean_hits"] =
            json!(recalled_after as f64 / args.calls.max(1) as f64);
        silt["capture_with_sleep_check_first_ms"] = json!(first_checked_ms);
        silt["capture_with_sleep_check_p50_ms"] = json!(p50(checked));
        silt["sleep_ms"] = json!(sleep_ms);
        silt["consolidate_ms"] = json!(consolidate_ms);
        silt["sleep"] = sleep;
    }
    let mut out = json!({"entries": args.entries, "text": format!("{:?}", args.text).to_lowercase(), "silt": silt});
    if !args.writers.is_empty() {
        let json_entries = sediment_json::read(&json_path, now)?;
        let mut rows = Vec::new();
        for &w in &args.writers {
            let r = writers(app, &json_entries, now, &args, w).await?;
            if !args.json {
                println!(
                    "{w} writer(s): {:.1} captures/s; capture p50/p99 {}/{} ms, recall p50/p99 {}/{} ms",
                    r["captures_per_s"].as_f64().unwrap_or(0.0),
                    r["capture_p50_ms"],
                    r["capture_p99_ms"],
                    r["recall_p50_ms"],
                    r["recall_p99_ms"]
                );
            }
            rows.push(r);
        }
        out["writers"] = json!(rows);
    }
    if let Some(checkout) = &args.reference {
        let copy = dir.path().join("reference.json");
        let mut rows = Value::Null;
        for (op, calls) in [
            ("recall", args.calls),
            ("capture", args.calls),
            ("sleep", 1),
            ("consolidate", 1),
        ] {
            // recall, sleep and consolidate start from the generated ledger,
            // as silt's did (capture adds to what recall left)
            if op != "capture" {
                std::fs::copy(&json_path, &copy)?;
            }
            let r = reference(checkout, &copy, op, calls, args.reference_timeout)?;
            rows[op] = r;
        }
        let ratio = |silt_ms: f64, r: &Value| {
            r["p50_ms"]
                .as_f64()
                .map(|ms| (ms / silt_ms * 10.0).round() / 10.0)
        };
        out["reference"] = rows.clone();
        out["speedup"] = json!({
            "recall": ratio(out["silt"]["recall_p50_ms"].as_f64().unwrap_or(1.0), &rows["recall"]),
            "capture": ratio(out["silt"]["capture_p50_ms"].as_f64().unwrap_or(1.0), &rows["capture"]),
            "sleep": ratio(sleep_ms, &rows["sleep"]),
            "consolidate": ratio(consolidate_ms, &rows["consolidate"]),
        });
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let s = &out["silt"];
        println!(
            "{} entries: first sync {:.0} ms, recall p50 {:.2} ms, capture p50 {:.2} ms (with the auto-sleep check: first {:.0} ms, p50 {:.2} ms), sleep {:.0} ms, consolidate {:.0} ms",
            args.entries,
            s["first_sync_ms"].as_f64().unwrap_or(0.0),
            s["recall_p50_ms"].as_f64().unwrap_or(0.0),
            s["capture_p50_ms"].as_f64().unwrap_or(0.0),
            s["capture_with_sleep_check_first_ms"]
                .as_f64()
                .unwrap_or(0.0),
            s["capture_with_sleep_check_p50_ms"].as_f64().unwrap_or(0.0),
            sleep_ms,
            consolidate_ms
        );
        if let Some(engine) = s["engine_peak_memory_mib"].as_f64() {
            let judge = match s["judge_peak_memory_mib"].as_f64() {
                Some(mib) => format!("{mib:.1} MiB"),
                None => "a fresh instance each call".into(),
            };
            let second = match s["engine_second_instance_peak_memory_mib"].as_f64() {
                Some(mib) => format!(" (its second instance {mib:.1} MiB)"),
                None => String::new(),
            };
            println!("peak linear memory: ledger engine {engine:.1} MiB{second}, judge {judge}");
        }
        if out.get("reference").is_some() {
            println!("reference: {}", out["reference"]);
            println!("reference time / silt time: {}", out["speedup"]);
        }
    }
    Ok(())
}

/// Recalls each of the text's contexts once: each call's time, and how
/// many lessons they recalled in all.
async fn timed_recalls(
    tools: &LedgerTools,
    args: &BenchLedgerArgs,
) -> Result<(Vec<Duration>, u64)> {
    let mut times = Vec::new();
    let mut recalled = 0;
    for context in args.text.contexts(args.calls) {
        let t = Instant::now();
        let mut call = serde_json::Map::new();
        call.insert("context".into(), json!(context));
        let out = tools.recall(call).await.map_err(|e| anyhow::anyhow!(e))?;
        times.push(t.elapsed());
        recalled += out["count"].as_u64().unwrap_or(0);
    }
    Ok((times, recalled))
}

/// Ledger tools on a new ledger at `db` holding the generated lessons of
/// `json_path`, auto-sleep off.
async fn imported(
    app: &App,
    json_path: &Path,
    db: &Path,
    now: f64,
) -> Result<std::sync::Arc<LedgerTools>> {
    let tools = LedgerTools::at(
        app.runtime.clone(),
        app.config.clone(),
        db.to_path_buf(),
        None,
        Some(now),
    )
    .without_auto_sleep();
    {
        let entries = sediment_json::read(json_path, now)?;
        let mut service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
        service.store.import(&entries, "generated", now)?;
    }
    Ok(std::sync::Arc::new(tools))
}

/// `w` `silt serve` processes capturing `per` lessons each into one ledger
/// holding `entries` at the start (marked as slept through), all at once,
/// with auto-sleep's redundancy check on (a threshold never reached: the
/// check runs, the pass does not). The clock starts when every process has its engine warm
/// and stops at the last answer.
async fn writers(
    app: &App,
    entries: &[silt_core::ledger::Entry],
    now: f64,
    args: &BenchLedgerArgs,
    w: usize,
) -> Result<Value> {
    let (text, n, per) = (args.text, args.entries, args.writer_captures);
    let postgres = args.postgres.as_deref();
    use crate::stdio_client::Silt;
    anyhow::ensure!(
        w > 0 && per > 0,
        "--writers and --writer-captures must be at least 1"
    );
    let dir = tempfile::tempdir()?;
    let scratch = postgres
        .map(|admin| silt_ledger_service::store::Scratch::database(admin, &format!("writers{w}")))
        .transpose()?;
    let ledger = match &scratch {
        Some(db) => std::path::PathBuf::from(&db.url),
        None => dir.path().join("ledger.db"),
    };
    {
        let tools = LedgerTools::at(
            app.runtime.clone(),
            app.config.clone(),
            ledger.clone(),
            None,
            Some(now),
        );
        let mut service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
        service.store.import(entries, "generated", now)?;
        // the state a sleep pass leaves (without its changes): the check
        // counts only the pairs of the lessons captured from here on
        service.store.begin_write()?;
        service.store.mark_slept_through(None)?;
        service.store.commit(&[], &[])?;
    }
    std::fs::write(dir.path().join("silt.toml"), "judge = \"lexical\"\n")?;
    let env = vec![
        match &scratch {
            Some(db) => ("SILT_LEDGER_URL", db.url.clone()),
            None => ("SILT_LEDGER_PATH", ledger.display().to_string()),
        },
        (
            "SILT_CONFIG",
            dir.path().join("silt.toml").display().to_string(),
        ),
        ("SILT_SLEEP_PRESSURE", "1e9".to_string()),
    ];
    // each process's first capture syncs its engine and counts the pairs
    // no pass judged (later ones add their own): timed apart, before the clock
    let mut servers = Vec::with_capacity(w);
    let mut first = Vec::with_capacity(w);
    for k in 0..w {
        let mut s = Silt::start(dir.path(), &env).await?;
        let t = Instant::now();
        s.call(
            "sediment_capture",
            &json!({"when": format!("warming writer {k}"), "prefer": "count the pairs"}),
        )
        .await?;
        first.push(t.elapsed());
        servers.push(s);
    }
    // new lessons drawn like the ledger's own, none of them in it yet
    let fresh = text.lessons(n + w * per);
    let fresh = &fresh[n..];
    let started = Instant::now();
    let mut jobs = tokio::task::JoinSet::new();
    for (k, mut s) in servers.into_iter().enumerate() {
        let lessons: Vec<Value> = fresh[k * per..(k + 1) * per]
            .iter()
            .enumerate()
            .map(|(j, l)| json!({"when": format!("{} ({k}.{j})", l.when), "prefer": l.prefer}))
            .collect();
        // each capture followed by a recall of its situation, as an agent
        // loads what it knows before the next task
        jobs.spawn(async move {
            let (mut captures, mut recalls) = (Vec::new(), Vec::new());
            for args in &lessons {
                let t = Instant::now();
                s.call("sediment_capture", args).await?;
                captures.push(t.elapsed());
                let t = Instant::now();
                s.call("sediment_recall", &json!({"context": args["when"]}))
                    .await?;
                recalls.push(t.elapsed());
            }
            s.stop().await;
            Ok::<_, anyhow::Error>((captures, recalls))
        });
    }
    let (mut captures, mut recalls) = (Vec::new(), Vec::new());
    while let Some(done) = jobs.join_next().await {
        let (c, r) = done??;
        captures.extend(c);
        recalls.extend(r);
    }
    let seconds = started.elapsed().as_secs_f64();
    let kept = {
        let tools = LedgerTools::at(
            app.runtime.clone(),
            app.config.clone(),
            ledger,
            None,
            Some(now),
        );
        let service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
        service.store.all()?.len()
    };
    anyhow::ensure!(
        kept == n + w * (per + 1),
        "{w} writers: the ledger holds {kept} lessons, expected {}",
        n + w * (per + 1)
    );
    let ms = |v: &[Duration], p: f64| (percentile_ms(v.to_vec(), p) * 100.0).round() / 100.0;
    Ok(
        json!({"writers": w, "store": if scratch.is_some() { "postgres" } else { "sqlite" },
              "captures": w * per, "recalls": w * per,
              "seconds": (seconds * 1000.0).round() / 1000.0,
              "first_capture_p50_ms": (p50(first) * 10.0).round() / 10.0,
              "captures_per_s": ((w * per) as f64 / seconds * 10.0).round() / 10.0,
              "calls_per_s": ((2 * w * per) as f64 / seconds * 10.0).round() / 10.0,
              "capture_p50_ms": ms(&captures, 0.5), "capture_p99_ms": ms(&captures, 0.99),
              "recall_p50_ms": ms(&recalls, 0.5), "recall_p99_ms": ms(&recalls, 0.99)}),
    )
}
