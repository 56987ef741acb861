//! How `similar_pairs` scales on the triggers `silt bench-ledger` generates.
//!
//! `cargo run --release -p silt-core --example candidates_scale -- 10000 100000`
//!
//! The generator is `host/src/cli/bench_ledger.rs`'s `generate`, ported
//! draw for draw (the other fields' draws included, so the same seed gives
//! the same triggers), plus the 40 captures the benchmark makes before its
//! sleep pass: the strings the sleep pass hands to `similar_pairs`.

use std::time::Instant;

use silt_core::ledger::Params;
use silt_core::ledger::candidates::similar_pairs;

fn triggers(n: usize) -> Vec<String> {
    const ACTIONS: usize = 16;
    let mut seed = 0x5eed_u64;
    let mut next = move |m: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % m
    };
    let word = |next: &mut dyn FnMut(usize) -> usize| -> String {
        (0..4 + next(4))
            .map(|_| (b'a' + next(26) as u8) as char)
            .collect()
    };
    let families = (n / 4).max(1);
    let bases: Vec<String> = (0..families)
        .map(|_| {
            let when = (0..4)
                .map(|_| word(&mut next))
                .collect::<Vec<_>>()
                .join(" ");
            next(ACTIONS);
            when
        })
        .collect();
    let mut out: Vec<String> = (0..n)
        .map(|_| {
            let base = &bases[next(families)];
            let when = match next(4) {
                2 => format!("{base} {}", word(&mut next)),
                _ => base.clone(),
            };
            // confirms, confidence, created, last_confirmed, hit_count
            for m in [4, 50, 60, 30, 10] {
                next(m);
            }
            when
        })
        .collect();
    out.extend((0..20).map(|i| format!("benchmark situation {i}")));
    out.extend((0..20).map(|i| format!("checked situation {i}")));
    out
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are entry counts"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    for n in sizes {
        let texts = triggers(n);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let pairs = similar_pairs(&refs, Params::default().candidate_threshold);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{n} entries ({} triggers): {} pairs in {secs:.3} s",
            refs.len(),
            pairs.len()
        );
    }
}
