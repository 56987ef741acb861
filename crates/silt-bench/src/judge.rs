//! `silt-bench judge`: the cost of one judged call through host -> engine ->
//! judge, of instantiation, and of a cold `silt serve` to its first answer.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;

use crate::stdio_client::Silt;
use silt_mcp::tools::ask::{self, AskParams};
use silt_runtime::app::App;

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
    let mut no_cache = Vec::new();
    let mut compiled = Vec::new();
    let mut answered = Vec::new();
    for _ in 0..args.cold_starts {
        no_cache.push(cold_start(work.path(), cache.path(), Start::NoCache).await?);
        compiled.push(cold_start(work.path(), cache.path(), Start::Compiled).await?);
        answered.push(cold_start(work.path(), cache.path(), Start::Answered).await?);
    }
    let out = json!({
        "machine": machine(),
        "judge_call_5_items": stats(call),
        "instantiate_judge": stats(instantiate),
        "cold_start_to_first_call_no_cache": stats(no_cache),
        "cold_start_to_first_call_compiled": stats(compiled),
        "cold_start_to_first_call_answers_cached": stats(answered),
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
        for (key, label) in [
            ("cold_start_to_first_call_no_cache", "no cache of any kind"),
            (
                "cold_start_to_first_call_compiled",
                "components compiled, no answer",
            ),
            (
                "cold_start_to_first_call_answers_cached",
                "compiled and answers cached",
            ),
        ] {
            println!(
                "silt serve start to first tools/call, {label:<31} p50 {:.1} ms",
                us(key, "p50_us") / 1000.0
            );
        }
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

/// What a timed start of `silt serve` finds in its cache folder.
#[derive(Clone, Copy, PartialEq)]
enum Start {
    /// Nothing: both components are compiled, the judge is asked.
    NoCache,
    /// The compiled components, but no answer: the judge is asked.
    Compiled,
    /// The compiled components and the answers of the previous start.
    Answered,
}

/// Spawns `silt serve` (working in `work`, caching in `cache`, emptied as
/// `start` says), initializes it over stdio and times it to the first
/// answered call. Fails if the answer cache served a different number of
/// items than `start` implies, so a figure cannot measure the wrong path.
async fn cold_start(
    work: &std::path::Path,
    cache: &std::path::Path,
    start: Start,
) -> Result<Duration> {
    match start {
        Start::NoCache => {
            let _ = std::fs::remove_dir_all(cache);
        }
        Start::Compiled => {
            for entry in std::fs::read_dir(cache)? {
                let path = entry?.path();
                if path.file_name() != Some("components".as_ref()) {
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
        Start::Answered => {}
    }
    let started = Instant::now();
    let mut silt = Silt::start(work, &[("SILT_CACHE_DIR", cache.display().to_string())]).await?;
    let answer = silt
        .call("sieve_ask", &serde_json::to_value(five_items())?)
        .await?;
    let elapsed = started.elapsed();
    silt.stop().await;
    let hits = answer["cache_hits"].as_u64();
    let expected = if start == Start::Answered { 5 } else { 0 };
    anyhow::ensure!(
        hits == Some(expected),
        "a timed start found {hits:?} answers cached, expected {expected}"
    );
    Ok(elapsed)
}
