//! `silt-bench llm`: the local language-model judge inside its sandbox:
//! model load, items and prompt tokens per second, and peak memory. The
//! native figures for the same question and texts come from
//! `RAYON_NUM_THREADS=1 cargo run --release -p silt-llm --example
//! llm_throughput -- DIR` (docs/BENCHMARKS.md puts the two side by side).
//!
//! What the judge does is set by the environment it is granted:
//! `SILT_LLM_DEBIAS=none` asks each item once (as the native example
//! does); `SILT_LLM_SHARE_HEADS=0` runs every prompt whole, so the prompt
//! tokens read are the tokens run.

use std::time::Instant;

use anyhow::Result;
use serde_json::json;

use crate::embed::{bench_items, bench_question, load_timed, peak_rss_mib};
use silt_runtime::app::App;

#[derive(Debug, clap::Args)]
pub struct BenchLlmArgs {
    /// The judge to time.
    #[arg(long, default_value = "llm")]
    pub judge: String,
    /// Items asked (one lesson each), in batches of 16.
    #[arg(long, default_value_t = 32)]
    pub items: usize,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(app: &App, args: BenchLlmArgs) -> Result<()> {
    anyhow::ensure!(args.items > 0, "--items must be at least 1");
    let (judge, load_ms, compile) = load_timed(app, &args.judge).await?;
    let question = bench_question();
    let items = bench_items(args.items, false);
    let started = Instant::now();
    let mut tokens = 0u64;
    for chunk in items.chunks(16) {
        let response = judge
            .ask(&question, chunk)
            .await
            .map_err(|e| anyhow::anyhow!("judge '{}' failed: {e:?}", args.judge))?;
        tokens += response.usage.input_tokens;
    }
    let secs = started.elapsed().as_secs_f64();
    let env = |k: &str| silt_config::env::var(k).unwrap_or_default();
    let out = json!({
        "judge": args.judge, "version": judge.info.version, "items": args.items,
        "debias": env("SILT_LLM_DEBIAS"), "share_heads": env("SILT_LLM_SHARE_HEADS") != "0",
        "load_ms": load_ms, "compile": compile,
        "seconds": secs,
        "items_per_second": args.items as f64 / secs,
        "prompt_tokens": tokens,
        "prompt_tokens_per_second": tokens as f64 / secs,
        "guest_peak_memory_mib": judge.peak_memory() as f64 / (1 << 20) as f64,
        "process_peak_rss_mib": peak_rss_mib(),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{} ({}): load {:.0} ms; {:.2} items/s; {:.1} prompt tokens read/s{}; guest memory peak {:.0} MiB; process RSS peak {:.0} MiB",
            args.judge,
            judge.info.version,
            load_ms,
            args.items as f64 / secs,
            tokens as f64 / secs,
            if out["share_heads"] == true {
                " (shared heads counted, not run)"
            } else {
                ""
            },
            out["guest_peak_memory_mib"].as_f64().unwrap_or_default(),
            out["process_peak_rss_mib"].as_f64().unwrap_or_default(),
        );
    }
    Ok(())
}
