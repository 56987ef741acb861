//! `silt eval ledger`: how a judge's lesson relations serve the sleep pass,
//! on the labelled pairs and clusters committed under docs/eval (written
//! for silt, not taken from any dataset; docs/eval/README.md).
//!
//! Pairs are labelled merge (the same lesson reworded), contradict (the
//! same situation, incompatible actions), compatible (the same situation
//! or topic, an action that can be followed alongside) or unrelated. Each
//! pair is related by the judge and the destructive margin applied, as
//! sleep does: what it would merge, resolve or leave. Clusters of three
//! lessons are labelled abstract (one action across related situations)
//! or none; each is slept on its own with the judge's relations and the
//! outcome is whether a parent was formed. Reported per split (dev, and
//! the held-out test split).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};

use silt_core::ledger::relate::{self, Decision, Relation, RelationJudge, Verdict};
use silt_runtime::app::App;
use silt_runtime::bindings::ledger_engine::silt::judge::relations::{Lesson, LessonPair};

/// Where the labelled lessons are.
#[derive(Debug, Args)]
pub struct LabelledLessons {
    /// Labelled pairs (JSON lines).
    #[arg(long, default_value = "docs/eval/ledger-pairs.jsonl")]
    pub pairs: PathBuf,
    /// Labelled clusters (JSON lines).
    #[arg(long, default_value = "docs/eval/ledger-clusters.jsonl")]
    pub clusters: PathBuf,
}

impl LabelledLessons {
    /// The pairs and the clusters; an error when there are no pairs.
    pub(crate) fn read(&self) -> Result<(Vec<PairRow>, Vec<ClusterRow>)> {
        let pairs: Vec<PairRow> = read_lines(&self.pairs)?;
        anyhow::ensure!(
            !pairs.is_empty(),
            "{} holds no labelled pairs",
            self.pairs.display()
        );
        Ok((pairs, read_lines(&self.clusters)?))
    }
}

/// `silt eval ledger`'s options.
#[derive(Debug, Args)]
pub struct EvalLedgerArgs {
    /// The judge plugin to measure (it must relate lessons).
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// The labelled pairs and clusters to measure on.
    #[command(flatten)]
    pub set: LabelledLessons,
    /// The destructive margin (default: silt.toml's, else 0.8).
    #[arg(long)]
    pub margin: Option<f64>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Text {
    pub when: String,
    pub prefer: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct PairRow {
    pub id: String,
    pub split: String,
    pub label: String,
    pub a: Text,
    pub b: Text,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ClusterRow {
    pub id: String,
    pub split: String,
    pub label: String,
    pub lessons: Vec<Text>,
}

/// The rows of a JSON-lines file (blank lines skipped), each error naming
/// its line.
pub(crate) fn read_lines<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{} line {}: not a labelled row", path.display(), i + 1))
        })
        .collect()
}

/// The judge's relations for `pairs`, in order.
async fn relations(app: &App, judge: &str, pairs: &[(&Text, &Text)]) -> Result<Vec<Relation>> {
    let loaded = app.runtime.judge(judge).await?;
    let lesson = |t: &Text| Lesson {
        when: t.when.clone(),
        prefer: t.prefer.clone(),
    };
    // a count redrawn in place means something on a terminal only; in a
    // log it ran into the next line
    let on_terminal = std::io::stderr().is_terminal();
    let mut out = Vec::with_capacity(pairs.len());
    for chunk in pairs.chunks(64) {
        let batch: Vec<LessonPair> = chunk
            .iter()
            .map(|(a, b)| LessonPair {
                a: lesson(a),
                b: lesson(b),
            })
            .collect();
        let answers = loaded
            .relate(batch)
            .await
            .map_err(|e| anyhow::anyhow!("judge '{judge}' could not relate lessons: {e:?}"))?;
        out.extend(
            answers
                .into_iter()
                .map(|r| [r.merge, r.contradict, r.sibling, r.distinct]),
        );
        if on_terminal {
            eprint!("\rrelated {}/{} pairs", out.len(), pairs.len());
        }
    }
    if on_terminal {
        eprintln!();
    }
    Ok(out)
}

/// What sleep would do with a pair: "merge", "contradict" (acted on),
/// "held" (a destructive lean under the margin), "sibling" or "distinct".
fn action(r: &Relation, margin: f64) -> &'static str {
    match relate::decide(r, margin) {
        Decision::Apply(Verdict::Merge) => "merge",
        Decision::Apply(Verdict::Contradict) => "contradict",
        Decision::Apply(Verdict::Sibling) => "sibling",
        Decision::Apply(Verdict::Distinct) => "distinct",
        Decision::Hold { .. } => "held",
    }
}

/// Clusters a parent formed over, of those labelled abstract and of the
/// others.
#[derive(Default)]
pub(crate) struct Formed {
    abstract_formed: usize,
    abstract_all: usize,
    none_formed: usize,
    none_all: usize,
}

impl Formed {
    pub(crate) fn add(&mut self, label: &str, formed: bool) {
        if label == "abstract" {
            self.abstract_formed += usize::from(formed);
            self.abstract_all += 1;
        } else {
            self.none_formed += usize::from(formed);
            self.none_all += 1;
        }
    }

    /// "formed/all" of the abstract clusters.
    pub(crate) fn of_abstract(&self) -> String {
        format!("{}/{}", self.abstract_formed, self.abstract_all)
    }

    /// "formed/all" of the clusters that should form none.
    pub(crate) fn of_none(&self) -> String {
        format!("{}/{}", self.none_formed, self.none_all)
    }
}

/// Precision, recall and F1 of predicting `class`.
pub(crate) fn prf(rows: &[(&str, &str)], class: &str) -> Value {
    let tp = rows
        .iter()
        .filter(|(l, a)| *l == class && *a == class)
        .count() as f64;
    let predicted = rows.iter().filter(|(_, a)| *a == class).count() as f64;
    let actual = rows.iter().filter(|(l, _)| *l == class).count() as f64;
    let p = if predicted > 0.0 { tp / predicted } else { 0.0 };
    let r = if actual > 0.0 { tp / actual } else { 0.0 };
    let f1 = if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    json!({"precision": round(p), "recall": round(r), "f1": round(f1)})
}

pub(crate) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Relations looked up from answers computed beforehand (the judge is
/// async, sleep is not).
struct Known(HashMap<(String, String, String, String), Relation>);

impl RelationJudge for Known {
    fn relate(
        &mut self,
        pairs: &[(relate::Lesson<'_>, relate::Lesson<'_>)],
    ) -> std::result::Result<Vec<Relation>, String> {
        pairs
            .iter()
            .map(|(a, b)| {
                let key = (
                    a.when.into(),
                    a.prefer.into(),
                    b.when.into(),
                    b.prefer.into(),
                );
                self.0
                    .get(&key)
                    .copied()
                    .ok_or_else(|| format!("no relation computed for {key:?}"))
            })
            .collect()
    }
}

/// Whether sleeping `lessons` alone, with the judge's relations, forms a
/// parent (every ordered pair's relation is computed first).
async fn abstracts(app: &App, judge: &str, lessons: &[Text], margin: f64) -> Result<bool> {
    let mut ordered = Vec::new();
    for (i, a) in lessons.iter().enumerate() {
        for (j, b) in lessons.iter().enumerate() {
            if i != j {
                ordered.push((a, b));
            }
        }
    }
    let answers = relations(app, judge, &ordered).await?;
    let known = Known(
        ordered
            .iter()
            .zip(answers)
            .map(|((a, b), r)| {
                (
                    (
                        a.when.clone(),
                        a.prefer.clone(),
                        b.when.clone(),
                        b.prefer.clone(),
                    ),
                    r,
                )
            })
            .collect(),
    );
    let params = silt_core::ledger::Params {
        destructive_margin: margin,
        ..Default::default()
    };
    let now = 1_750_000_000.0;
    let entries = lessons
        .iter()
        .enumerate()
        .map(|(i, l)| {
            silt_core::ledger::Entry::new(
                format!("{i:08x}"),
                l.when.clone(),
                l.prefer.clone(),
                0.5,
                1,
                now,
            )
        })
        .collect();
    let mut ledger = silt_core::ledger::ops::Ledger::new(entries, params);
    // as the engine does: a judge with vectors adds candidates by meaning
    let texts = ledger.texts_to_embed();
    if let Ok(e) = app.runtime.judge(judge).await?.embed(texts.clone()).await
        && let Some(cuts) =
            silt_core::ledger::meaning::Cuts::from_calibration(e.related_above, e.unrelated_below)
    {
        ledger
            .learn_vectors(&texts, &e.vectors, cuts)
            .map_err(|e| anyhow::anyhow!("judge '{judge}': {e}"))?;
    }
    let mut n = 0;
    let (report, _) = silt_core::ledger::sleep::sleep(
        &mut ledger,
        &mut { known },
        &mut || {
            n += 1;
            format!("p{n:07}")
        },
        now,
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    Ok(report.generalized > 0)
}

/// Relates every labelled pair, sleeps on every cluster, and prints the
/// results per split (or JSON) on stdout.
pub async fn run(app: &App, args: EvalLedgerArgs) -> Result<()> {
    let margin = match args.margin {
        Some(m) => m,
        None => app.config.destructive_margin()?,
    };
    let (pairs, clusters) = args.set.read()?;
    let info = app.runtime.judge(&args.judge).await?.info.clone();
    let texts: Vec<(&Text, &Text)> = pairs.iter().map(|p| (&p.a, &p.b)).collect();
    let rels = relations(app, &args.judge, &texts).await?;
    let mut by_split: serde_json::Map<String, Value> = serde_json::Map::new();
    let mut rows_json = Vec::new();
    let mut clusters_json = Vec::new();
    for split in ["dev", "test"] {
        let rows: Vec<(&str, &str)> = pairs
            .iter()
            .zip(&rels)
            .filter(|(p, _)| p.split == split)
            .map(|(p, r)| (p.label.as_str(), action(r, margin)))
            .collect();
        let apart: Vec<&(&str, &str)> = rows
            .iter()
            .filter(|(l, _)| matches!(*l, "compatible" | "unrelated"))
            .collect();
        let destroyed = apart
            .iter()
            .filter(|(_, a)| matches!(*a, "merge" | "contradict"))
            .count();
        let mut cluster_hits = Formed::default();
        for c in clusters.iter().filter(|c| c.split == split) {
            let formed = abstracts(app, &args.judge, &c.lessons, margin).await?;
            clusters_json.push(json!({"id": c.id, "label": c.label, "formed": formed}));
            cluster_hits.add(&c.label, formed);
        }
        by_split.insert(
            split.into(),
            json!({
                "pairs": rows.len(),
                "merge": prf(&rows, "merge"),
                "contradict": prf(&rows, "contradict"),
                "held": rows.iter().filter(|(_, a)| *a == "held").count(),
                "destructive_on_apart": round(destroyed as f64 / apart.len().max(1) as f64),
                "destructive_wrong": wrong_destructive(&rows),
                "abstract_formed": cluster_hits.of_abstract(),
                "none_formed": cluster_hits.of_none(),
            }),
        );
    }
    for (p, r) in pairs.iter().zip(&rels) {
        rows_json.push(
            json!({"id": p.id, "label": p.label, "action": action(r, margin),
                              "relation": r.iter().map(|x| round(*x)).collect::<Vec<_>>()}),
        );
    }
    let out = json!({"judge": args.judge, "version": info.version, "margin": margin,
                     "splits": by_split, "pairs": rows_json, "clusters": clusters_json});
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("{} ({}), margin {margin}", args.judge, info.version);
    for split in ["dev", "test"] {
        let s = &out["splits"][split];
        println!(
            "{split:<5} pairs {:>3}  merge P/R/F1 {}/{}/{}  contradict P/R/F1 {}/{}/{}  held {}  destructive on apart {}  wrong destructive {}  abstract {}  none {}",
            s["pairs"],
            s["merge"]["precision"],
            s["merge"]["recall"],
            s["merge"]["f1"],
            s["contradict"]["precision"],
            s["contradict"]["recall"],
            s["contradict"]["f1"],
            s["held"],
            s["destructive_on_apart"],
            s["destructive_wrong"],
            s["abstract_formed"].as_str().unwrap_or(""),
            s["none_formed"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

/// Pairs (label, action) that sleep would retire a lesson of on a verdict
/// other than their label: a merged contradiction loses one side of a
/// choice, which the precision and recall columns only dent.
fn wrong_destructive(rows: &[(&str, &str)]) -> usize {
    rows.iter()
        .filter(|(label, action)| matches!(*action, "merge" | "contradict") && label != action)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_contradiction_is_a_wrong_destructive_verdict() {
        let rows = [
            ("contradict", "merge"),
            ("merge", "merge"),
            ("compatible", "contradict"),
            ("merge", "held"),
            ("contradict", "contradict"),
        ];
        assert_eq!(wrong_destructive(&rows), 2);
    }

    #[test]
    fn precision_recall_and_f1_of_one_class() {
        let rows = [
            ("merge", "merge"),
            ("merge", "held"),
            ("unrelated", "merge"),
            ("contradict", "contradict"),
        ];
        let m = prf(&rows, "merge");
        assert_eq!(
            (m["precision"].clone(), m["recall"].clone(), m["f1"].clone()),
            (json!(0.5), json!(0.5), json!(0.5))
        );
        assert_eq!(prf(&rows, "contradict")["f1"], 1.0);
        assert_eq!(prf(&[("merge", "held")], "merge")["f1"], 0.0);
    }

    #[test]
    fn the_committed_sets_parse_with_120_pairs_and_20_clusters() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let pairs: Vec<PairRow> = read_lines(&root.join("docs/eval/ledger-pairs.jsonl")).unwrap();
        let clusters: Vec<ClusterRow> =
            read_lines(&root.join("docs/eval/ledger-clusters.jsonl")).unwrap();
        assert_eq!(pairs.len(), 120);
        assert_eq!(clusters.len(), 20);
        for label in ["merge", "contradict", "compatible", "unrelated"] {
            assert_eq!(
                pairs.iter().filter(|p| p.label == label).count(),
                30,
                "{label}"
            );
        }
        assert!(
            pairs.iter().any(|p| p.split == "test")
                && clusters.iter().all(|c| c.lessons.len() >= 3)
        );
        let mut ids: Vec<&str> = pairs
            .iter()
            .map(|p| p.id.as_str())
            .chain(clusters.iter().map(|c| c.id.as_str()))
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 140, "ids are unique");
    }
}
