//! How the sleep pass's candidate pairs scale on generated triggers.
//!
//! `cargo run --release -p silt-core --example candidates_scale -- \
//!     [--dense | --agents] [--strongest M] 10000 100000`
//!
//! The triggers are the generated ledger's (`silt_core::ledger::synthetic`)
//! plus the 40 captures `silt-bench ledger` makes before its sleep pass;
//! with `--dense`, templated triggers that all share a phrase ("editing
//! the parser in repo r3 before the release"), the ledger an agent
//! capturing in a loop builds, where the full pair list is quadratic;
//! with `--agents`, the triggers of `synthetic::agent_lessons` (a Zipf
//! vocabulary: every trigger shares "the", "in" and "repo").
//! `--strongest M` keeps each trigger's M most similar partners, as sleep
//! does (`candidates::MAX_PARTNERS`), instead of every pair. Run it under
//! `/usr/bin/time -v` for the peak memory.

use std::time::Instant;

use silt_core::ledger::Params;
use silt_core::ledger::candidates::{similar_pairs, strongest_pairs};
use silt_core::ledger::synthetic;

fn triggers(n: usize, dense: bool, agents: bool) -> Vec<String> {
    if agents {
        return synthetic::agent_lessons(n)
            .into_iter()
            .map(|l| l.when)
            .collect();
    }
    if dense {
        let verbs = [
            "editing",
            "testing",
            "reviewing",
            "deploying",
            "refactoring",
        ];
        let subjects = [
            "the parser",
            "the lexer",
            "the scheduler",
            "the ledger",
            "the HTTP client",
            "the config loader",
            "the cache",
            "the CLI",
            "the migrations",
            "the test suite",
        ];
        return (0..n)
            .map(|i| {
                format!(
                    "{} {} in repo r{} before the release",
                    verbs[i % verbs.len()],
                    subjects[(i / verbs.len()) % subjects.len()],
                    i / (verbs.len() * subjects.len())
                )
            })
            .collect();
    }
    let mut out: Vec<String> = synthetic::lessons(n).into_iter().map(|l| l.when).collect();
    out.extend((0..20).map(|i| format!("benchmark situation {i}")));
    out.extend((0..20).map(|i| format!("checked situation {i}")));
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dense = args.iter().any(|a| a == "--dense");
    let agents = args.iter().any(|a| a == "--agents");
    let strongest = args
        .iter()
        .position(|a| a == "--strongest")
        .map(|i| args[i + 1].parse::<usize>().expect("--strongest M"));
    // every argument that is neither a flag nor --strongest's value
    let value_of_flag = |i: usize| i > 0 && args[i - 1] == "--strongest";
    let sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !(a.starts_with("--") || value_of_flag(*i)))
        .map(|(_, a)| a.parse().expect("sizes are entry counts"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let threshold = Params::default().candidate_threshold;
    for n in sizes {
        let texts = triggers(n, dense, agents);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let pairs = match strongest {
            Some(m) => strongest_pairs(&refs, threshold, m).len(),
            None => similar_pairs(&refs, threshold).len(),
        };
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{n} entries ({} triggers{}): {pairs} pairs{} in {secs:.3} s",
            refs.len(),
            if dense {
                ", dense"
            } else if agents {
                ", agents"
            } else {
                ""
            },
            strongest.map_or(String::new(), |m| format!(
                " (the {m} strongest per trigger)"
            )),
        );
    }
}
