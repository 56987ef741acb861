//! What recall by meaning costs inside the ledger engine alone, natively,
//! on generated `agents` lessons with a real model's vectors (the
//! `recall_scale` example in silt-core uses made-up vectors, whose
//! cosines do not cluster the way templated text does under a model).
//!
//! `cargo run --release -p silt-embed --example recall_meaning -- --model
//! DIR 10000 100000`: per size, p50 and p90 of 200 recalls (k = 5) after
//! one warm-up, and the mean hits. The contexts' vectors are computed
//! before the clock starts; what is timed is what the engine does per
//! recall (`texts_to_embed`, then `recall_near`).

use std::time::Instant;

use silt_core::ledger::entry::Entry;
use silt_core::ledger::meaning::{Cuts, quantise};
use silt_core::ledger::ops::Ledger;
use silt_core::ledger::{Params, synthetic};
use silt_embed::Encoder;
use silt_embed::calibration::{Calibration, UNRELATED_BELOW_P};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = args
        .iter()
        .position(|a| a == "--model")
        .and_then(|i| args.get(i + 1))
        .expect("--model DIR");
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--") && *a != model)
        .map(|a| a.parse().expect("a size"))
        .collect();
    let dir = std::path::PathBuf::from(model);
    let encoder = Encoder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let calibration =
        Calibration::for_folder(&dir, encoder.kind()).unwrap_or_else(|e| panic!("{e}"));
    let (related, unrelated) = (
        calibration.related.midpoint(),
        calibration.related.at(UNRELATED_BELOW_P),
    );
    let cuts = Cuts::from_calibration(related, unrelated).expect("ordered cut-offs");
    let now = 1.8e9;
    for n in sizes {
        let entries: Vec<Entry> = synthetic::agent_lessons(n)
            .into_iter()
            .enumerate()
            .map(|(i, l)| l.entry(format!("{i:08x}"), now))
            .collect();
        let mut ledger = Ledger::new(entries, Params::default());
        let texts = ledger.texts_to_embed();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = encoder.encode(&refs).expect("encode");
        ledger
            .learn_vectors(&texts, &vectors, cuts)
            .expect("vectors");
        let contexts = synthetic::agent_contexts(201);
        let refs: Vec<&str> = contexts.iter().map(String::as_str).collect();
        let queries: Vec<Vec<i8>> = encoder
            .encode(&refs)
            .expect("encode")
            .iter()
            .map(|v| quantise(v))
            .collect();
        ledger.recall_near(&queries[0], related, unrelated, 5, now);
        let (mut times, mut hits) = (Vec::new(), 0);
        for q in &queries[1..] {
            let started = Instant::now();
            assert!(ledger.texts_to_embed().is_empty());
            let (fired, _) = ledger
                .recall_near(q, related, unrelated, 5, now)
                .expect("every lesson has vectors");
            hits += fired.len();
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{n} agents lessons, by meaning ({}): p50 {:.3} ms, p90 {:.3} ms; {:.1} hits",
            dir.display(),
            times[times.len() / 2],
            times[times.len() * 9 / 10],
            hits as f64 / times.len() as f64
        );
    }
}
