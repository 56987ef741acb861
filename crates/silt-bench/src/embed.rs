//! `silt-bench embed`: the embedding judge inside its sandbox: model load,
//! sentences per second on short and long texts, and peak memory. The
//! native figures for the same texts come from
//! `cargo run --release -p silt-embed --example throughput -- DIR`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use serde_json::json;
use silt_core::ledger::synthetic::bench_texts;

use silt_runtime::LoadReport;
use silt_runtime::app::App;
use silt_runtime::bindings::types::{AnswerSpace, Item, Question, YesNo};
use silt_runtime::judge::LoadedJudge;

#[derive(Debug, clap::Args)]
pub struct BenchEmbedArgs {
    /// The judge to time.
    #[arg(long, default_value = "embedding")]
    pub judge: String,
    /// Texts per measurement.
    #[arg(long, default_value_t = 256)]
    pub texts: usize,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

/// The process's resident high-water mark, in MiB.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(f64::NAN)
}

/// The question the judge benchmarks ask of every text.
pub fn bench_question() -> Question {
    Question {
        text: "Is this lesson about testing?".into(),
        space: AnswerSpace::Judge(YesNo {
            yes: "It is about tests or testing.".into(),
            no: "It is about something else.".into(),
        }),
    }
}

/// `n` generated lessons as items: one lesson each, or ten when `long`.
pub fn bench_items(n: usize, long: bool) -> Vec<Item> {
    bench_texts(n, long)
        .into_iter()
        .enumerate()
        .map(|(i, text)| Item {
            id: i.to_string(),
            text,
        })
        .collect()
}

/// Loads judge `name` as its first call does: compile (or load from the
/// compile cache), instantiate, and `info`, which loads a judge's model.
/// The judge, the milliseconds that took, and the compile cache's report.
pub async fn load_timed(
    app: &App,
    name: &str,
) -> Result<(Arc<LoadedJudge>, f64, Option<LoadReport>)> {
    let started = Instant::now();
    let judge = app.runtime.judge(name).await?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let compile = app
        .runtime
        .load_reports()
        .into_iter()
        .rfind(|r| r.plugin == name);
    Ok((judge, load_ms, compile))
}

pub async fn run(app: &App, args: BenchEmbedArgs) -> Result<()> {
    anyhow::ensure!(args.texts > 0, "--texts must be at least 1");
    let (judge, load_ms, compile) = load_timed(app, &args.judge).await?;
    let question = bench_question();
    let mut out = json!({
        "judge": args.judge, "version": judge.info.version, "texts": args.texts,
        "load_ms": load_ms, "compile": compile,
    });
    for (name, long) in [("short", false), ("long", true)] {
        let items = bench_items(args.texts, long);
        let started = Instant::now();
        for chunk in items.chunks(32) {
            judge
                .ask(&question, chunk)
                .await
                .map_err(|e| anyhow::anyhow!("judge '{}' failed: {e:?}", args.judge))?;
        }
        let secs = started.elapsed().as_secs_f64();
        out[name] = json!({
            "sentences_per_second": args.texts as f64 / secs,
            "seconds": secs,
        });
    }
    out["guest_peak_memory_mib"] = json!(judge.peak_memory() as f64 / (1 << 20) as f64);
    out["process_peak_rss_mib"] = json!(peak_rss_mib());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{} ({}): load {:.0} ms; short {:.1} sentences/s; long {:.1} sentences/s; guest memory peak {:.0} MiB; process RSS peak {:.0} MiB",
            args.judge,
            judge.info.version,
            load_ms,
            out["short"]["sentences_per_second"]
                .as_f64()
                .unwrap_or_default(),
            out["long"]["sentences_per_second"]
                .as_f64()
                .unwrap_or_default(),
            out["guest_peak_memory_mib"].as_f64().unwrap_or_default(),
            out["process_peak_rss_mib"].as_f64().unwrap_or_default(),
        );
    }
    Ok(())
}
