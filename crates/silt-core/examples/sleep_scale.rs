//! How long one sleep pass takes natively, with the lexical judge, on the
//! generated `agents` ledger (`silt_core::ledger::synthetic`, the text
//! `silt-bench ledger --text agents` writes).
//!
//! `cargo run --release -p silt-core --example sleep_scale -- [N]` (N
//! lessons, default 10,000). The same pass inside the wasm ledger engine
//! is `silt-bench ledger --entries N --text agents`.

use std::time::Instant;

use silt_core::ledger::ops::Ledger;
use silt_core::ledger::relate::LexicalRelations;
use silt_core::ledger::sleep::sleep;
use silt_core::ledger::{Params, synthetic};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("N is a number of lessons"))
        .unwrap_or(10_000);
    let now = 1_780_000_000.0;
    let mut ledger = Ledger::new(synthetic::agent_entries(n, now), Params::default());
    let mut parents = 0;
    let started = Instant::now();
    let (report, _) = sleep(
        &mut ledger,
        &mut LexicalRelations(Params::default()),
        &mut || {
            parents += 1;
            format!("p{parents:07}")
        },
        now,
    )
    .expect("the lexical judge does not fail");
    println!(
        "{n} lessons: {:.2} s, {report:?}",
        started.elapsed().as_secs_f64()
    );
}
