//! `silt eval sleep`: the whole sleep pass on one ledger holding every
//! labelled lesson of docs/eval (pairs and clusters, both splits), as a
//! user's ledger would hold them: candidate pairs are found among all of
//! them, the judge relates what is found, and the margin decides. Where
//! `silt eval ledger` shows each labelled pair to the judge directly, this
//! measures what the pipeline around the judge keeps of its answers (run
//! with a judge that is always right, it is the pipeline's ceiling:
//! tests/tests/e2e/pipeline_ceiling.rs).
//!
//! Scored from the event log: a labelled pair is merged when sleep put
//! both lessons in one merge group, resolved when a resolution named both;
//! a cluster formed when one abstraction folded at least two of its
//! lessons.

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;

use crate::ledger::{Formed, LabelledLessons, prf};
use silt_core::ledger::events::{Event, EventKind};
use silt_ledger_service::service::{Done, LedgerService, Op};
use silt_runtime::app::App;
use silt_runtime::bindings::ledger_engine::silt::ledger::types::Feedback;

/// `silt eval sleep`'s options.
#[derive(Debug, Args)]
pub struct EvalSleepArgs {
    /// The judge that relates the pairs sleep finds.
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// The labelled lessons to capture into the one ledger.
    #[command(flatten)]
    pub set: LabelledLessons,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which labelled row each captured lesson came from.
struct Labelled {
    /// Per pair row: the ids of its two lessons.
    pairs: Vec<(String, String)>,
    /// Per cluster row: the ids of its lessons.
    clusters: Vec<Vec<String>>,
}

/// Lessons put in one group by merges (the survivor and everything folded
/// into it, transitively).
fn merge_groups(events: &[Event]) -> HashMap<String, String> {
    let mut parent: HashMap<String, String> = HashMap::new();
    fn root(parent: &HashMap<String, String>, id: &str) -> String {
        let mut at = id.to_string();
        while let Some(p) = parent.get(&at) {
            if *p == at {
                break;
            }
            at = p.clone();
        }
        at
    }
    for e in events.iter().filter(|e| e.kind == EventKind::Merged) {
        let survivor = root(&parent, &e.id);
        for other in &e.others {
            let r = root(&parent, other);
            if r != survivor {
                parent.insert(r, survivor.clone());
            }
        }
    }
    let ids: Vec<String> = parent.keys().cloned().collect();
    ids.into_iter()
        .map(|id| {
            let r = root(&parent, &id);
            (id, r)
        })
        .collect()
}

/// What sleep did to one labelled pair: "merge", "contradict" or "kept".
fn outcome(
    a: &str,
    b: &str,
    groups: &HashMap<String, String>,
    resolved: &[&Event],
) -> &'static str {
    let group = |id: &str| groups.get(id).cloned().unwrap_or_else(|| id.to_string());
    if group(a) == group(b) {
        return "merge";
    }
    let names = |e: &Event, id: &str| e.id == id || e.others.iter().any(|o| o == id);
    if resolved.iter().any(|e| names(e, a) && names(e, b)) {
        return "contradict";
    }
    "kept"
}

/// Captures every labelled lesson into a scratch ledger, sleeps once, and
/// prints what the pass did with each label (or JSON) on stdout.
pub async fn run(app: &App, args: EvalSleepArgs) -> Result<()> {
    let (pairs, clusters) = args.set.read()?;
    let dir = tempfile::tempdir()?;
    let mut service = LedgerService::open(
        app.runtime.clone(),
        &args.judge,
        &dir.path().join("eval.db"),
    )?;
    let mut params = silt_runtime::ledger::default_params();
    params.destructive_margin = app.config.destructive_margin()?;
    service.set_params(params);
    service.set_embedder(app.config.ledger_embedder());
    // one moment for every capture: no lesson decays before the sleep
    let now = 1_800_000_000.0;
    let texts = pairs
        .iter()
        .flat_map(|p| [&p.a, &p.b])
        .chain(clusters.iter().flat_map(|c| c.lessons.iter()));
    let ops: Vec<Op> = texts
        .map(|t| Op::Capture {
            when: t.when.clone(),
            prefer: t.prefer.clone(),
            feedback: Feedback::Neutral,
            now,
        })
        .collect();
    let mut ids = Vec::with_capacity(ops.len());
    for done in service.run_batch(&ops).await? {
        match done {
            Done::Captured(e) => ids.push(e.id),
            Done::Recalled(_) => bail!("a capture answered with a recall"),
        }
    }
    let mut at = ids.into_iter();
    let mut take = |n: usize| at.by_ref().take(n).collect::<Vec<String>>();
    let labelled = Labelled {
        pairs: pairs
            .iter()
            .map(|_| {
                let two = take(2);
                (two[0].clone(), two[1].clone())
            })
            .collect(),
        clusters: clusters.iter().map(|c| take(c.lessons.len())).collect(),
    };
    let offered: HashSet<(String, String)> = service
        .review_candidates()
        .await?
        .into_iter()
        .flat_map(|c| [(c.a_id.clone(), c.b_id.clone()), (c.b_id, c.a_id)])
        .collect();
    let vectors = app
        .runtime
        .ledger_vectors_from(&args.judge, service.embedder())
        .await?
        .describe();
    let (report, events) = service.sleep(now, None).await?;
    let groups = merge_groups(&events);
    let resolved: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EventKind::Resolved)
        .collect();
    let abstractions: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EventKind::Abstracted)
        .collect();

    let mut splits = serde_json::Map::new();
    let mut rows_json = Vec::new();
    for split in ["dev", "test"] {
        let mut rows: Vec<(&str, &str)> = Vec::new();
        let mut candidates = (0, 0);
        for (p, (a, b)) in pairs.iter().zip(&labelled.pairs) {
            if p.split != split {
                continue;
            }
            let did = outcome(a, b, &groups, &resolved);
            let was_candidate = offered.contains(&(a.clone(), b.clone()));
            if matches!(p.label.as_str(), "merge" | "contradict") {
                candidates.1 += 1;
                candidates.0 += usize::from(was_candidate);
            }
            rows.push((p.label.as_str(), did));
            rows_json.push(json!({"id": p.id, "label": p.label, "outcome": did,
                                  "candidate": was_candidate}));
        }
        let apart_retired = rows
            .iter()
            .filter(|(l, d)| matches!(*l, "compatible" | "unrelated") && *d != "kept")
            .count();
        let mut formed = Formed::default();
        for (c, members) in clusters.iter().zip(&labelled.clusters) {
            if c.split == split {
                let folded = abstractions
                    .iter()
                    .any(|e| e.others.iter().filter(|o| members.contains(o)).count() >= 2);
                formed.add(&c.label, folded);
            }
        }
        splits.insert(
            split.into(),
            json!({
                "pairs": rows.len(),
                "merge_and_contradict_candidates": format!("{}/{}", candidates.0, candidates.1),
                "merge": prf(&rows, "merge"),
                "contradict": prf(&rows, "contradict"),
                "keep_apart_retired": apart_retired,
                "abstract_formed": formed.of_abstract(),
                "none_formed": formed.of_none(),
            }),
        );
    }
    let out = json!({
        "judge": args.judge,
        "candidates": vectors,
        "lessons": ops.len(),
        "sleep": {"merged": report.merged, "contradictions_resolved": report.contradictions_resolved,
                  "generalized": report.generalized, "held_for_review": report.held_for_review},
        "splits": splits,
        "pairs": rows_json,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{} on {} lessons; candidates {}",
        args.judge,
        ops.len(),
        out["candidates"].as_str().unwrap_or("")
    );
    for split in ["dev", "test"] {
        let s = &out["splits"][split];
        println!(
            "{split:<5} candidates {}  merge P/R/F1 {}/{}/{}  contradict P/R/F1 {}/{}/{}  keep-apart retired {}  abstract {}  none {}",
            s["merge_and_contradict_candidates"].as_str().unwrap_or(""),
            s["merge"]["precision"],
            s["merge"]["recall"],
            s["merge"]["f1"],
            s["contradict"]["precision"],
            s["contradict"]["recall"],
            s["contradict"]["f1"],
            s["keep_apart_retired"],
            s["abstract_formed"].as_str().unwrap_or(""),
            s["none_formed"].as_str().unwrap_or(""),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(id: &str, others: &[&str]) -> Event {
        Event::new(
            0.0,
            EventKind::Merged,
            id,
            others.iter().map(|s| s.to_string()).collect(),
            "",
        )
    }

    #[test]
    fn merges_group_transitively_and_resolutions_name_both_sides() {
        let events = vec![merged("a", &["b"]), merged("c", &["a"])];
        let groups = merge_groups(&events);
        assert_eq!(outcome("b", "c", &groups, &[]), "merge");
        assert_eq!(outcome("b", "d", &groups, &[]), "kept");
        let r = Event::new(0.0, EventKind::Resolved, "d", vec!["e".into()], "");
        assert_eq!(outcome("e", "d", &groups, &[&r]), "contradict");
        assert_eq!(outcome("e", "b", &groups, &[&r]), "kept");
    }
}
