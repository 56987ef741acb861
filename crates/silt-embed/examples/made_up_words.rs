//! What the embedding judge does with lessons of made-up words: one sleep
//! pass, natively, over the generated `families` ledger
//! (`synthetic::lessons`: families of random-letter triggers that share
//! nothing, each lesson its family's trigger, that trigger with one more
//! made-up word, or its action negated), counting the parents that fold
//! lessons of different families and the merges that retire a lesson of
//! another trigger.
//!
//! `cargo run --release -p silt-embed --example made_up_words -- MODEL_DIR
//! [N]` (N lessons, default 20,000; lexical candidates only, as `sleep`
//! finds them without vectors). docs/JUDGES.md quotes its figures.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use silt_core::ledger::events::EventKind;
use silt_core::ledger::ops::Ledger;
use silt_core::ledger::relate::{Lesson, Relation, RelationJudge};
use silt_core::ledger::sleep::sleep;
use silt_core::ledger::{Params, synthetic};
use silt_embed::EmbeddingJudge;

struct Judge(EmbeddingJudge);

impl RelationJudge for Judge {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
        let pairs: Vec<_> = pairs
            .iter()
            .map(|(a, b)| ((a.when, a.prefer), (b.when, b.prefer)))
            .collect();
        self.0.relate(&pairs).map_err(|e| e.to_string())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .get(1)
        .map(|a| a.parse().expect("N is a number of lessons"))
        .unwrap_or(20_000);
    let now = 1_780_000_000.0;
    let entries: Vec<_> = synthetic::lessons(n)
        .into_iter()
        .enumerate()
        .map(|(i, l)| l.entry(format!("{i:08x}"), now))
        .collect();
    // a family is its four first words: the narrower lessons add a fifth
    let family: HashMap<String, String> = entries
        .iter()
        .map(|e| {
            let base: Vec<&str> = e.when.split(' ').take(4).collect();
            (e.id.clone(), base.join(" "))
        })
        .collect();
    let when: HashMap<String, String> = entries
        .iter()
        .map(|e| (e.id.clone(), e.when.clone()))
        .collect();
    let mut ledger = Ledger::new(entries, Params::default());
    let judge = EmbeddingJudge::load(Path::new(&args[0])).unwrap_or_else(|e| panic!("{e}"));
    let mut parents = 0;
    let (report, events) = sleep(
        &mut ledger,
        &mut Judge(judge),
        &mut || {
            parents += 1;
            format!("p{parents:07}")
        },
        now,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{n} lessons: {report:?}");
    let (mut abstracted, mut mixed, mut merges, mut other_trigger) = (0, 0, 0, 0);
    for e in &events {
        match e.kind {
            EventKind::Abstracted => {
                abstracted += 1;
                let families: HashSet<_> = e.others.iter().filter_map(|c| family.get(c)).collect();
                if families.len() > 1 {
                    mixed += 1;
                }
            }
            EventKind::Merged => {
                merges += 1;
                let retired = e.others.first().and_then(|o| when.get(o));
                if retired.is_some_and(|r| when.get(&e.id) != Some(r)) {
                    other_trigger += 1;
                }
            }
            _ => {}
        }
    }
    println!(
        "parents: {abstracted}, {mixed} of them over different families; \
         merges: {merges}, {other_trigger} of them retiring another trigger"
    );
}
