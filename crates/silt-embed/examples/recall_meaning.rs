//! What recall by meaning costs inside the ledger engine alone, natively,
//! on generated `agents` lessons with a real model's vectors (the
//! `recall_scale` example in silt-core uses made-up vectors, whose
//! cosines do not cluster the way templated text does under a model).
//!
//! `cargo run --release -p silt-embed --example recall_meaning -- --model
//! DIR 10000 100000`: per size, p50 and p90 of 200 recalls (k = 5) after
//! one warm-up, and the mean hits. The contexts' vectors are computed
//! before the clock starts; what is timed is what the engine does per
//! recall (`texts_to_embed`, then `recall_near`). `--clusters` adds a
//! probe of how much of the ledger a cluster index would read.

use std::time::Instant;

use silt_core::ledger::entry::Entry;
use silt_core::ledger::meaning::{Cuts, quantise};
use silt_core::ledger::ops::Ledger;
use silt_core::ledger::{Params, synthetic};
use silt_embed::Encoder;
use silt_embed::calibration::Calibration;

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
    let (related, unrelated) = (calibration.related_above(), calibration.unrelated_below());
    let cuts = Cuts::from_calibration(related, unrelated).expect("ordered cut-offs");
    let now = 1.8e9;
    for n in sizes {
        let mut ledger = Ledger::new(synthetic::agent_entries(n, now), Params::default());
        let texts = ledger.texts_to_embed();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = encoder.encode(&refs).expect("encode");
        ledger
            .learn_vectors(&texts, &vectors, cuts)
            .expect("vectors");
        let contexts = synthetic::agent_contexts(201);
        let refs: Vec<&str> = contexts.iter().map(String::as_str).collect();
        let float_queries = encoder.encode(&refs).expect("encode");
        let queries: Vec<Vec<i8>> = float_queries.iter().map(|v| quantise(v)).collect();
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
        if args.iter().any(|a| a == "--clusters") {
            let by_text: std::collections::HashMap<&str, &Vec<f32>> =
                texts.iter().map(String::as_str).zip(&vectors).collect();
            let triggers: Vec<Vec<f32>> = ledger
                .entries
                .iter()
                .map(|e| by_text[e.when.as_str()].clone())
                .collect();
            cluster_probe(&ledger.entries, &triggers, &float_queries[1..], 5, now);
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

/// How much of the ledger an index of trigger clusters would have to read
/// for the same top k (`--clusters`): lessons are grouped around
/// √n centroids (3 rounds of k-means), and a cluster can be skipped once
/// its best possible score, (q·c + radius) × its best effective
/// confidence (|q| = |x| = 1, so q·x ≤ q·c + |x − c|), falls under the
/// k-th best score found. Duplicates are ignored, and the k-th best is
/// taken at 4k to leave them room. Prints the share of lessons read,
/// p50 and p90 over the contexts.
fn cluster_probe(
    entries: &[Entry],
    triggers: &[Vec<f32>],
    queries: &[Vec<f32>],
    k: usize,
    now: f64,
) {
    let n = triggers.len();
    let c = ((n as f64).sqrt() as usize).max(1);
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let mut centroids: Vec<Vec<f32>> = (0..c).map(|i| triggers[i * n / c].clone()).collect();
    let mut assign = vec![0usize; n];
    for _ in 0..3 {
        for (i, t) in triggers.iter().enumerate() {
            assign[i] = (0..c)
                .max_by(|&a, &b| dot(t, &centroids[a]).total_cmp(&dot(t, &centroids[b])))
                .unwrap_or(0);
        }
        let dim = triggers[0].len();
        let mut sums = vec![vec![0f32; dim]; c];
        let mut counts = vec![0usize; c];
        for (i, t) in triggers.iter().enumerate() {
            counts[assign[i]] += 1;
            sums[assign[i]].iter_mut().zip(t).for_each(|(s, x)| *s += x);
        }
        for j in 0..c {
            if counts[j] > 0 {
                centroids[j] = sums[j].iter().map(|s| s / counts[j] as f32).collect();
            }
        }
    }
    let mut radius = vec![0f32; c];
    let mut best_effective = vec![0f64; c];
    let mut members = vec![Vec::new(); c];
    for (i, t) in triggers.iter().enumerate() {
        let j = assign[i];
        let d = t
            .iter()
            .zip(&centroids[j])
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f32>()
            .sqrt();
        radius[j] = radius[j].max(d);
        best_effective[j] = best_effective[j].max(entries[i].effective(now));
        members[j].push(i);
    }
    let mut shares = Vec::new();
    for q in queries {
        let mut order: Vec<(usize, f64)> = (0..c)
            .map(|j| {
                let bound = f64::from(dot(q, &centroids[j]) + radius[j]).max(0.0);
                (j, bound * best_effective[j])
            })
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut scores: Vec<f64> = Vec::new();
        let mut read = 0;
        for (j, bound) in order {
            scores.sort_by(|a, b| b.total_cmp(a));
            if scores.len() >= 4 * k && bound < scores[4 * k - 1] {
                break;
            }
            for &i in &members[j] {
                read += 1;
                let r = f64::from(dot(q, &triggers[i])).max(0.0);
                scores.push(r * entries[i].effective(now));
            }
        }
        shares.push(read as f64 / n as f64);
    }
    shares.sort_by(f64::total_cmp);
    println!(
        "  clusters ({c}): share of lessons read p50 {:.3}, p90 {:.3}",
        shares[shares.len() / 2],
        shares[shares.len() * 9 / 10]
    );
}
