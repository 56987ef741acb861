//! Native speed of the local model judge, the reference for the
//! component's figures (`silt-bench llm` asks the same question of the
//! same texts inside the sandbox).
//!
//! Usage: `RAYON_NUM_THREADS=1 cargo run --release -p silt-llm --example
//! llm_throughput -- MODEL_DIR_OR_GGUF [N]`
//! Prints JSON: load time, then for N one-lesson items asked a yes/no
//! question without label corrections: prompt tokens run per second and
//! items per second, each prompt run whole and with the shared head.

use std::path::PathBuf;
use std::time::Instant;

use silt_core::closed::Debias;
use silt_core::ledger::synthetic::bench_texts;
use silt_core::types::{AnswerSpace, Item, Judge, Question};
use silt_llm::{LlmJudge, find_gguf};

fn peak_rss_mib() -> f64 {
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = PathBuf::from(args.first().expect("usage: throughput MODEL [N]"));
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let path = if path.is_dir() {
        find_gguf(&path).unwrap()
    } else {
        path
    };
    let started = Instant::now();
    let mut judge = LlmJudge::load(&path, Debias::None).unwrap();
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let question = Question {
        text: "Is this lesson about testing?".into(),
        space: AnswerSpace::Judge {
            yes: "It is about tests or testing.".into(),
            no: "It is about something else.".into(),
        },
    };
    let items: Vec<Item> = bench_texts(n, false)
        .into_iter()
        .enumerate()
        .map(|(i, text)| Item {
            id: i.to_string(),
            text,
        })
        .collect();
    let mut out = serde_json::json!({
        "model": path.file_name().map(|f| f.to_string_lossy().into_owned()),
        "threads": candle_core::utils::get_num_threads(),
        "items": n,
        "load_ms": load_ms,
    });
    for (name, share) in [("whole", false), ("shared_head", true)] {
        judge.runner = silt_llm::runner::Runner::default();
        judge.runner.share = share;
        let started = Instant::now();
        for chunk in items.chunks(16) {
            judge.ask(&question, chunk).unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        let counts = judge.runner.counts;
        out[name] = serde_json::json!({
            "seconds": secs,
            "items_per_second": n as f64 / secs,
            "tokens_run": counts.run,
            "tokens_reused": counts.reused,
            "prompt_tokens_per_second": counts.run as f64 / secs,
        });
    }
    out["peak_rss_mib"] = serde_json::json!(peak_rss_mib());
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
