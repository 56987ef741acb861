//! `silt bench`: the cost of one judged call through host -> engine ->
//! judge, of instantiation, and of a cold `silt serve` to its first answer.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;

use super::stdio_client::Silt;
use crate::app::App;
use crate::tools::ask::{self, AskParams};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Calls per measurement.
    #[arg(long, default_value_t = 2000)]
    pub iterations: u32,
    /// Cold starts of `silt serve` per case.
    #[arg(long, default_value_t = 5)]
    pub cold_starts: u32,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

fn five_items() -> AskParams {
    serde_json::from_value(json!({
        "question": "Does the item describe a bug?",
        "yes": "It reports broken or incorrect behaviour: a crash, an error, wrong output.",
        "no": "It asks for new behaviour or is not about behaviour.",
        "items": ["fix crash on launch", "add dark mode", "error when saving a file",
                  "support exporting to PDF", "wrong totals in the monthly report"],
    }))
    .expect("bench params")
}

/// Median and p99 of `samples`, in microseconds.
fn stats(mut samples: Vec<Duration>) -> serde_json::Value {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    let mean = samples.iter().map(Duration::as_secs_f64).sum::<f64>() / samples.len() as f64 * 1e6;
    json!({"n": samples.len(), "mean_us": round(mean), "p50_us": round(at(0.5)), "p99_us": round(at(0.99))})
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub async fn run(app: &App, args: BenchArgs) -> Result<()> {
    let params = five_items();
    let request = params.to_request()?;
    // warm: components compiled, judge info read
    ask::run(&app.runtime, &app.config, &params).await?;

    let mut call = Vec::new();
    for _ in 0..args.iterations {
        let t = Instant::now();
        app.runtime.ask("lexical", &request).await?;
        call.push(t.elapsed());
    }
    let mut instantiate = Vec::new();
    for _ in 0..args.iterations {
        instantiate.push(app.runtime.instantiate_only("lexical").await?);
    }
    let work = tempfile::tempdir()?;
    let cache = tempfile::tempdir()?;
    let mut cold_uncached = Vec::new();
    let mut cold_cached = Vec::new();
    for _ in 0..args.cold_starts {
        cold_uncached.push(cold_start(work.path(), cache.path(), true).await?);
        cold_cached.push(cold_start(work.path(), cache.path(), false).await?);
    }
    let out = json!({
        "machine": machine(),
        "judge_call_5_items": stats(call),
        "instantiate_judge": stats(instantiate),
        "cold_start_to_first_call_no_cache": stats(cold_uncached),
        "cold_start_to_first_call_cached": stats(cold_cached),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let us = |k: &str, f: &str| out[k][f].as_f64().unwrap_or(f64::NAN);
        println!(
            "judge call, 5 items (host -> ask engine -> lexical judge): p50 {:.1} µs, p99 {:.1} µs",
            us("judge_call_5_items", "p50_us"),
            us("judge_call_5_items", "p99_us")
        );
        println!(
            "instantiate the judge (fresh store):                    p50 {:.1} µs, p99 {:.1} µs",
            us("instantiate_judge", "p50_us"),
            us("instantiate_judge", "p99_us")
        );
        println!(
            "silt serve cold start to first tools/call, no cache:    p50 {:.1} ms",
            us("cold_start_to_first_call_no_cache", "p50_us") / 1000.0
        );
        println!(
            "silt serve cold start to first tools/call, cached:      p50 {:.1} ms",
            us("cold_start_to_first_call_cached", "p50_us") / 1000.0
        );
    }
    Ok(())
}

pub(crate) fn machine() -> serde_json::Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|c| {
        c.lines()
            .find(|l| l.starts_with("model name"))
            .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
    });
    json!({"cpu": cpu, "cores": std::thread::available_parallelism().map(|n| n.get()).ok()})
}

/// Spawns `silt serve` (working in `work`, compiling into `cache`),
/// initializes it over stdio and times it to the first answered call.
async fn cold_start(
    work: &std::path::Path,
    cache: &std::path::Path,
    wipe: bool,
) -> Result<Duration> {
    if wipe {
        let _ = std::fs::remove_dir_all(cache);
    }
    let started = Instant::now();
    let mut silt = Silt::start(work, &[("SILT_CACHE_DIR", cache.display().to_string())]).await?;
    silt.call("sieve_ask", &serde_json::to_value(five_items())?)
        .await?;
    let elapsed = started.elapsed();
    silt.stop().await;
    Ok(elapsed)
}
