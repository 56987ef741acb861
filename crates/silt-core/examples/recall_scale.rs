//! What lexical recall costs inside the ledger engine alone (no store, no
//! component boundary), on generated `agents` lessons, where most lessons
//! share a word with any context (`silt-bench ledger --text agents` times
//! the whole `sediment_recall` path, store write included).
//!
//! `cargo run --release -p silt-core --example recall_scale -- 10000 100000`,
//! or as wasm, as the ledger engine runs it: build with `--target
//! wasm32-wasip2` and `wasmtime run .../recall_scale.wasm 10000 100000`.
//! Reported per size: p50 and p90 of 200 recalls (k = 5) after one warm-up
//! recall (which builds the index), and the mean hits. With `--meaning`,
//! recall by meaning instead (`Ledger::recall_near`, plus the check that
//! every lesson has its vectors, as the engine makes it per recall), on
//! generated vectors: the context's embedding is not in the figure.
//! With `--slept`, the ledger is slept first with the lexical judge, so
//! recall reads parents through the lessons folded under them; add
//! `--unfolded` to time recall on that ledger with the fold's notes
//! cleared, parents read by their own text only.

use std::time::Instant;

use silt_core::ledger::meaning::{Cuts, quantise};
use silt_core::ledger::ops::Ledger;
use silt_core::ledger::relate::LexicalRelations;
use silt_core::ledger::sleep::sleep;
use silt_core::ledger::{Params, synthetic};

/// A unit vector for `text`, the same every time: a hash-seeded random
/// direction leaning on one shared axis, so cosines between texts spread
/// around the floor of an embedding model's "unrelated" (about 0.26 ±
/// 0.05 at 384 dimensions), as sentence vectors of one model do.
fn vector(text: &str, dim: usize) -> Vec<f32> {
    let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v[0] += 0.6;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let meaning = args.iter().any(|a| a == "--meaning");
    let slept = args.iter().any(|a| a == "--slept");
    let unfolded = args.iter().any(|a| a == "--unfolded");
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().expect("a size"))
        .collect();
    let now = 1.8e9;
    for n in sizes {
        let mut ledger = Ledger::new(synthetic::agent_entries(n, now), Params::default());
        if slept {
            let mut parents = 0;
            sleep(
                &mut ledger,
                &mut LexicalRelations(Params::default()),
                &mut || {
                    parents += 1;
                    format!("p{parents:07}")
                },
                now,
            )
            .expect("the lexical judge does not fail");
            if unfolded {
                // the same ledger as if recall could not see under a
                // parent (before 2026-12-06): the fold's notes cleared
                for e in &mut ledger.entries {
                    if e.note.starts_with("folded under ") {
                        e.note.clear();
                    }
                }
            }
        }
        let contexts = synthetic::agent_contexts(201);
        if meaning {
            let texts = ledger.texts_to_embed();
            let vectors: Vec<Vec<f32>> = texts.iter().map(|t| vector(t, 384)).collect();
            let cuts = Cuts {
                trigger: 0.36,
                lesson: 0.36,
                action: 0.36,
            };
            ledger
                .learn_vectors(&texts, &vectors, cuts)
                .expect("vectors");
            let mut times = Vec::new();
            let mut hits = 0;
            for c in &contexts[1..] {
                let query = quantise(&vector(c, 384));
                let started = Instant::now();
                // what the engine does per recall: check every lesson has
                // its vectors, then rank by them
                assert!(ledger.texts_to_embed().is_empty());
                let (fired, _) = ledger
                    .recall_near(&query, 0.45, 0.3, 5, now)
                    .expect("every lesson has vectors");
                hits += fired.len();
                times.push(started.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{n} agents lessons, by meaning: p50 {:.3} ms, p90 {:.3} ms; {:.1} hits",
                times[times.len() / 2],
                times[times.len() * 9 / 10],
                hits as f64 / times.len() as f64
            );
            continue;
        }
        let started = Instant::now();
        ledger.recall(&contexts[0], 5, now);
        let first = started.elapsed();
        let mut times = Vec::new();
        let mut hits = 0;
        for c in &contexts[1..] {
            let started = Instant::now();
            hits += ledger.recall(c, 5, now).0.len();
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{n} agents lessons: first recall {:.1} ms (builds the index); p50 {:.3} ms, p90 {:.3} ms; {:.1} hits",
            first.as_secs_f64() * 1e3,
            times[times.len() / 2],
            times[times.len() * 9 / 10],
            hits as f64 / times.len() as f64
        );
    }
}
