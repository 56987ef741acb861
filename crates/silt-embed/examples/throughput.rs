//! Native encoder throughput, the reference for the component's figures
//! (`silt-bench embed` runs the same texts through the wasm judge).
//!
//! Usage: `cargo run --release -p silt-embed --example throughput -- DIR [N]`
//! Prints JSON: load time, sentences per second for short texts (one
//! lesson) and long ones (past the 256-token cut), and peak RSS.

use std::time::Instant;

use silt_core::ledger::synthetic::bench_texts;
use silt_embed::Encoder;

fn peak_rss_mib() -> f64 {
    // VmHWM: the resident high-water mark
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
    let dir = args.first().expect("usage: throughput DIR [N]");
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(256);
    let started = Instant::now();
    let encoder = Encoder::load(std::path::Path::new(dir)).unwrap_or_else(|e| panic!("{e}"));
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut out = serde_json::json!({
        "model": dir, "kind": encoder.kind(), "texts": n, "load_ms": load_ms,
    });
    for (name, long) in [("short", false), ("long", true)] {
        let texts = bench_texts(n, long);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let tokens: usize = refs.iter().map(|t| encoder.count_tokens(t)).sum();
        let started = Instant::now();
        // in chunks of 32, as the judge is asked
        for chunk in refs.chunks(32) {
            encoder.encode(chunk).unwrap_or_else(|e| panic!("{e}"));
        }
        let secs = started.elapsed().as_secs_f64();
        out[name] = serde_json::json!({
            "sentences_per_second": n as f64 / secs,
            "mean_tokens": tokens as f64 / n as f64,
            "seconds": secs,
        });
    }
    out["peak_rss_mib"] = serde_json::json!(peak_rss_mib());
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}
