//! How `similar_pairs` scales on the triggers `silt bench-ledger` generates.
//!
//! `cargo run --release -p silt-core --example candidates_scale -- 10000 100000`
//!
//! The triggers are the generated ledger's (`silt_core::ledger::synthetic`)
//! plus the 40 captures the benchmark makes before its sleep pass: the
//! strings the sleep pass hands to `similar_pairs`.

use std::time::Instant;

use silt_core::ledger::Params;
use silt_core::ledger::candidates::similar_pairs;
use silt_core::ledger::synthetic;

fn triggers(n: usize) -> Vec<String> {
    let mut out: Vec<String> = synthetic::lessons(n).into_iter().map(|l| l.when).collect();
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
