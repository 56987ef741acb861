//! Fits the cut-offs from which two lessons are candidates by meaning
//! (`silt_core::ledger::meaning::NEAR_P`, `NEAR_ACTION_P`) on the dev split
//! of the project's labelled lessons, and reports the held-out split.
//!
//! Usage: `cargo run --release -p silt-embed --example near_lessons -- \
//!     --model DIR [--model DIR ...] [--pairs docs/eval/ledger-pairs.jsonl]
//!     [--clusters docs/eval/ledger-clusters.jsonl] [--view trigger|whole|both]`
//!
//! A cut-off is a probability on each model's calibrated relatedness curve
//! (so one level serves every model), read back as a cosine the way the
//! ledger engine reads it: through `meaning::Cuts::from_calibration`.
//! Per level it prints, for each model and split, how many merge and
//! contradict pairs become candidates (by trigger or whole lesson; what
//! sleep must see) and how many of the other pairs do (the judge's extra
//! work, not a verdict); and for clusters, how many same-action pairs
//! become candidates by action.

use silt_core::ledger::meaning::{Cuts, cosine_at, dot, lesson_vector, quantise};
use silt_embed::Encoder;
use silt_embed::calibration::Calibration;

struct Lesson {
    when: String,
    prefer: String,
}

struct Pair {
    split: String,
    label: String,
    a: Lesson,
    b: Lesson,
}

struct Cluster {
    id: String,
    split: String,
    label: String,
    members: Vec<Lesson>,
}

fn lesson(v: &serde_json::Value) -> Lesson {
    Lesson {
        when: v["when"].as_str().expect("when").to_string(),
        prefer: v["prefer"].as_str().expect("prefer").to_string(),
    }
}

fn lines(path: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A lesson's (trigger, action, whole) rows as the engine stores them.
struct Views {
    trigger: Vec<i8>,
    action: Vec<i8>,
    whole: Vec<i8>,
}

fn views(encoder: &Encoder, l: &Lesson) -> Views {
    let v = encoder
        .encode(&[l.when.as_str(), l.prefer.as_str()])
        .expect("encode");
    let (trigger, action) = (quantise(&v[0]), quantise(&v[1]));
    Views {
        whole: lesson_vector(&trigger, &action),
        trigger,
        action,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let after = |name: &str| -> Vec<String> {
        args.windows(2)
            .filter(|w| w[0] == name)
            .map(|w| w[1].clone())
            .collect()
    };
    let models = after("--model");
    assert!(
        !models.is_empty(),
        "usage: near_lessons --model DIR [--model DIR ...]"
    );
    let pairs_path = after("--pairs")
        .pop()
        .unwrap_or_else(|| "docs/eval/ledger-pairs.jsonl".into());
    let clusters_path = after("--clusters")
        .pop()
        .unwrap_or_else(|| "docs/eval/ledger-clusters.jsonl".into());
    let pairs: Vec<Pair> = lines(&pairs_path)
        .iter()
        .map(|v| Pair {
            split: v["split"].as_str().expect("split").into(),
            label: v["label"].as_str().expect("label").into(),
            a: lesson(&v["a"]),
            b: lesson(&v["b"]),
        })
        .collect();
    let clusters: Vec<Cluster> = lines(&clusters_path)
        .iter()
        .map(|v| Cluster {
            id: v["id"].as_str().expect("id").into(),
            split: v["split"].as_str().expect("split").into(),
            label: v["label"].as_str().expect("label").into(),
            members: v["lessons"]
                .as_array()
                .expect("lessons")
                .iter()
                .map(lesson)
                .collect(),
        })
        .collect();

    let levels = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
    // which view pairs same-situation lessons: trigger, whole or both
    let view = after("--view").pop().unwrap_or_else(|| "both".into());
    for dir in &models {
        let dir = std::path::PathBuf::from(dir);
        let encoder = Encoder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        let calibration =
            Calibration::for_folder(&dir, encoder.kind()).unwrap_or_else(|e| panic!("{e}"));
        let (related, unrelated) = (calibration.related_above(), calibration.unrelated_below());
        println!(
            "model {} (related above {related:.3}, unrelated below {unrelated:.3})",
            dir.display()
        );
        let pair_views: Vec<(Views, Views)> = pairs
            .iter()
            .map(|p| (views(&encoder, &p.a), views(&encoder, &p.b)))
            .collect();
        let cluster_views: Vec<Vec<Views>> = clusters
            .iter()
            .map(|c| c.members.iter().map(|l| views(&encoder, l)).collect())
            .collect();
        // the trigger cosines of each cluster's pairs: what separates one
        // kind of task said of several subjects from unrelated situations
        // that happen to share an action
        for (c, members) in clusters.iter().zip(&cluster_views) {
            let mut cos = vec![];
            for i in 0..members.len() {
                for j in i + 1..members.len() {
                    cos.push(f64::from(dot(&members[i].trigger, &members[j].trigger)));
                }
            }
            let min = cos.iter().copied().fold(f64::INFINITY, f64::min);
            let mean = cos.iter().sum::<f64>() / cos.len() as f64;
            println!(
                "  cluster {} {} {}: trigger cosines min {min:.3} mean {mean:.3}",
                c.split, c.label, c.id
            );
        }
        for p in levels {
            let at = |p| cosine_at(related, unrelated, p).expect("ordered");
            let cuts = Cuts {
                trigger: at(p),
                lesson: at(p),
                action: at(p),
            };
            print!("  P {p:.2} (cosine {:.3}):", cuts.trigger);
            for split in ["dev", "test"] {
                let mut found = std::collections::BTreeMap::<&str, (usize, usize)>::new();
                for (pair, (a, b)) in pairs.iter().zip(&pair_views) {
                    if pair.split != split {
                        continue;
                    }
                    let by_trigger = f64::from(dot(&a.trigger, &b.trigger)) >= cuts.trigger;
                    let by_whole = f64::from(dot(&a.whole, &b.whole)) >= cuts.lesson;
                    let near = match view.as_str() {
                        "trigger" => by_trigger,
                        "whole" => by_whole,
                        _ => by_trigger || by_whole,
                    };
                    let e = found.entry(pair.label.as_str()).or_default();
                    e.0 += usize::from(near);
                    e.1 += 1;
                }
                let mut sibling = (0, 0);
                for (c, members) in clusters.iter().zip(&cluster_views) {
                    if c.split != split || c.label != "abstract" {
                        continue;
                    }
                    for i in 0..members.len() {
                        for j in i + 1..members.len() {
                            let near = f64::from(dot(&members[i].action, &members[j].action))
                                >= cuts.action;
                            sibling.0 += usize::from(near);
                            sibling.1 += 1;
                        }
                    }
                }
                let cell = |l: &str| {
                    found
                        .get(l)
                        .map(|(n, of)| format!("{n}/{of}"))
                        .unwrap_or_default()
                };
                print!(
                    "  {split}: merge {} contradict {} compatible {} unrelated {} siblings-by-action {}/{}",
                    cell("merge"),
                    cell("contradict"),
                    cell("compatible"),
                    cell("unrelated"),
                    sibling.0,
                    sibling.1
                );
            }
            println!();
        }
    }
}
