//! Native speed of the embedding judge's lesson relations, the reference
//! for what a sleep pass pays per pair inside the judge component.
//!
//! Usage: `cargo run --release -p silt-embed --example relate_speed -- DIR
//! [LESSONS] [PARTNERS]`
//!
//! Each of `LESSONS` generated lessons (both generators of `silt-bench
//! ledger`) is related to its next `PARTNERS` in a shuffled order,
//! in batches of 256 as the ledger sends them: once with an empty cache
//! (the texts embedded) and again warm. Prints JSON: microseconds a pair
//! cold and warm, and the sum of each relation's probabilities over the
//! pairs, which a change to the judge's speed must leave as it was.

use std::time::Instant;

use silt_core::ledger::synthetic::{Lesson, agent_lessons, lessons};
use silt_embed::judge::{EmbeddingJudge, LessonText};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .expect("usage: relate_speed DIR [LESSONS] [PARTNERS]");
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let partners: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(16);
    let mut out = serde_json::json!({"model": dir, "lessons": n, "partners": partners});
    for (name, generated) in [("families", lessons(n)), ("agents", agent_lessons(n))] {
        let mut judge =
            EmbeddingJudge::load(std::path::Path::new(dir)).unwrap_or_else(|e| panic!("{e}"));
        let pairs = pairs_of(&generated, partners);
        let timed = |judge: &mut EmbeddingJudge| {
            let started = Instant::now();
            let mut sums = [0f64; 4];
            for batch in pairs.chunks(256) {
                for r in judge.relate(batch).unwrap_or_else(|e| panic!("{e}")) {
                    sums.iter_mut().zip(r).for_each(|(s, p)| *s += p);
                }
            }
            (
                started.elapsed().as_secs_f64() * 1e6 / pairs.len() as f64,
                sums,
            )
        };
        let (cold, sums) = timed(&mut judge);
        let (warm, again) = timed(&mut judge);
        assert_eq!(sums, again, "a warm cache changed the relations");
        out[name] = serde_json::json!({
            "pairs": pairs.len(),
            "cold_us_per_pair": cold,
            "warm_us_per_pair": warm,
            "sums": {"merge": sums[0], "contradict": sums[1], "sibling": sums[2], "distinct": sums[3]},
        });
    }
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}

/// Each lesson with its next `partners` in an order shuffled by a fixed
/// seed, so a lesson's partners are not its neighbours in generation.
fn pairs_of(lessons: &[Lesson], partners: usize) -> Vec<(LessonText<'_>, LessonText<'_>)> {
    let mut order: Vec<usize> = (0..lessons.len()).collect();
    let mut seed = 0x5eed_u64;
    for i in (1..order.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        order.swap(i, (seed >> 33) as usize % (i + 1));
    }
    let text = |i: usize| (lessons[i].when.as_str(), lessons[i].prefer.as_str());
    let mut pairs = Vec::new();
    for k in 0..order.len() {
        for d in (1..=partners).filter(|d| k + d < order.len()) {
            pairs.push((text(order[k]), text(order[k + d])));
        }
    }
    pairs
}
