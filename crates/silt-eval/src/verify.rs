//! `silt eval verify`: how `sieve_verify`'s verdicts fare on labelled claims
//! (docs/eval/verify: true claims and claims altered in one way — negation,
//! figure, scope, actor, fabricated quote — over third-party documentation
//! copied with its licence). The bar a judge must clear: no altered claim
//! called `supports_fully`. Reported per split (dev, and the held-out test
//! split) and per alteration.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde::Deserialize;
use serde_json::json;

use silt_mcp::tools::verify::{CitationParam, KindParam, RecordParam, VerifyParams};
use silt_runtime::app::App;

/// `silt eval verify`'s options.
#[derive(Debug, Args)]
pub struct EvalVerifyArgs {
    /// The judge plugin to measure.
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// The labelled set's folder (claims.jsonl and the sources it cites).
    #[arg(long, default_value = "docs/eval/verify")]
    pub set: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Claims sent in one verify call.
const CLAIMS_PER_CALL: usize = 8;

/// One labelled claim.
#[derive(Debug, Deserialize)]
struct Row {
    id: String,
    source: String,
    claim: String,
    quote: Option<String>,
    label: String,
    alteration: Option<String>,
    split: String,
}

/// Verdict counts for one group of claims.
#[derive(Debug, Default, serde::Serialize)]
struct Tally {
    claims: u32,
    verdicts: BTreeMap<String, u32>,
}

impl Tally {
    fn add(&mut self, verdict: &str) {
        self.claims += 1;
        *self.verdicts.entry(verdict.to_string()).or_default() += 1;
    }

    fn share(&self, verdict: &str) -> f64 {
        let n = self.verdicts.get(verdict).copied().unwrap_or(0);
        if self.claims == 0 {
            0.0
        } else {
            f64::from(n) / f64::from(self.claims)
        }
    }
}

/// The tallies by split, then group ("true", or the alteration's name).
fn tally(rows: &[Row], verdicts: &[String]) -> BTreeMap<String, BTreeMap<String, Tally>> {
    let mut out: BTreeMap<String, BTreeMap<String, Tally>> = BTreeMap::new();
    for (row, verdict) in rows.iter().zip(verdicts) {
        let group = match row.label.as_str() {
            "true" => "true".to_string(),
            _ => row
                .alteration
                .clone()
                .unwrap_or_else(|| "altered".to_string()),
        };
        let split = out.entry(row.split.clone()).or_default();
        split.entry(group).or_default().add(verdict);
        if row.label != "true" {
            split
                .entry("altered (all)".into())
                .or_default()
                .add(verdict);
        }
    }
    out
}

/// What the detail checks did where the judge's support cleared the
/// threshold: the altered claims they caught, and the true claims they
/// flagged (the cost of the caution), per split.
#[derive(Debug, Default, PartialEq, serde::Serialize)]
struct DetailTally {
    altered_cleared: u32,
    altered_caught: u32,
    true_cleared: u32,
    true_flagged: u32,
}

fn detail_tally(rows: &[Row], results: &[serde_json::Value]) -> BTreeMap<String, DetailTally> {
    let mut out: BTreeMap<String, DetailTally> = BTreeMap::new();
    for (row, r) in rows.iter().zip(results) {
        let flags: Vec<&str> = r["flags"]
            .as_array()
            .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
            .unwrap_or_default();
        let cleared = r["verdict"].is_string()
            && r["verdict"] != "contradicts"
            && !flags.contains(&"support_below_threshold")
            && !flags.contains(&"quote_not_found");
        if !cleared {
            continue;
        }
        // the flags of verify's judge-independent detail checks
        let caught = flags
            .iter()
            .any(|f| silt_core::verify::details::FLAGS.contains(f));
        let t = out.entry(row.split.clone()).or_default();
        if row.label == "true" {
            t.true_cleared += 1;
            t.true_flagged += u32::from(caught);
        } else {
            t.altered_cleared += 1;
            t.altered_caught += u32::from(caught);
        }
    }
    out
}

/// Checks every labelled claim with `sieve_verify` and prints the verdicts
/// per split and alteration (or JSON) on stdout.
pub async fn run(app: &App, args: EvalVerifyArgs) -> Result<()> {
    let rows: Vec<Row> = crate::ledger::read_lines(&args.set.join("claims.jsonl"))?;
    let base = std::fs::canonicalize(&args.set)
        .with_context(|| format!("cannot open {}", args.set.display()))?;
    // a few claims a call: a slow judge (a small model on a CPU) then
    // stays inside the verify engine's wall-clock limit
    let mut results: Vec<serde_json::Value> = Vec::new();
    for chunk in rows.chunks(CLAIMS_PER_CALL) {
        let params = VerifyParams {
            records: Some(
                chunk
                    .iter()
                    .map(|r| RecordParam {
                        claim: r.claim.clone(),
                        claim_context: None,
                        kind: KindParam::Fact,
                        premises: vec![],
                        citations: vec![CitationParam {
                            locator: r.source.clone(),
                            quote: r.quote.clone(),
                        }],
                    })
                    .collect(),
            ),
            judge: Some(args.judge.clone()),
            // every claim judged: the default budget would stop a paid judge
            budget_usd: Some(1_000.0),
            ..VerifyParams::default()
        };
        let out = silt_mcp::tools::verify::run(
            &app.runtime,
            &app.config,
            &params,
            &silt_runtime::folders::Folders::local(Some(&base)),
            None,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e.to_string()))?;
        results.extend(out["results"].as_array().cloned().unwrap_or_default());
        if !args.json {
            eprintln!("{} of {} claims checked", results.len(), rows.len());
        }
    }
    let out = json!({ "results": results });
    let verdicts: Vec<String> = out["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["verdict"].as_str().unwrap_or("unverified").to_string())
                .collect()
        })
        .unwrap_or_default();
    anyhow::ensure!(
        verdicts.len() == rows.len(),
        "verify answered {} of {} claims",
        verdicts.len(),
        rows.len()
    );
    let tallies = tally(&rows, &verdicts);
    let details = detail_tally(
        &rows,
        out["results"].as_array().map(Vec::as_slice).unwrap_or(&[]),
    );
    let accepted_altered: Vec<&str> = rows
        .iter()
        .zip(&verdicts)
        .filter(|(r, v)| r.label != "true" && *v == "supports_fully")
        .map(|(r, _)| r.id.as_str())
        .collect();
    let per_claim: Vec<serde_json::Value> = rows
        .iter()
        .zip(out["results"].as_array().map(Vec::as_slice).unwrap_or(&[]))
        .map(|(row, r)| {
            json!({"id": row.id, "label": row.label, "alteration": row.alteration,
                   "split": row.split, "verdict": r["verdict"], "flags": r["flags"]})
        })
        .collect();
    let report = json!({
        "judge": args.judge,
        "claims": rows.len(),
        "results": per_claim,
        "splits": tallies,
        "altered_called_supports_fully": accepted_altered,
        "detail_checks": details,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "judge {} on {} claims ({})",
        args.judge,
        rows.len(),
        args.set.display()
    );
    for (split, groups) in &tallies {
        println!("{split}:");
        for (group, t) in groups {
            println!(
                "  {group:<16} {:>3} claims  supports_fully {:>5.1}%  contradicts {:>5.1}%  partially {:>5.1}%  does_not_address {:>5.1}%",
                t.claims,
                100.0 * t.share("supports_fully"),
                100.0 * t.share("contradicts"),
                100.0 * t.share("partially_supports"),
                100.0 * t.share("does_not_address"),
            );
        }
    }
    for (split, d) in &details {
        println!(
            "{split}: support cleared the threshold for {} altered claims, the detail checks caught {}; for {} true claims, they flagged {}",
            d.altered_cleared, d.altered_caught, d.true_cleared, d.true_flagged
        );
    }
    println!(
        "altered claims called supports_fully: {} (the bar is 0)",
        accepted_altered.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, alteration: Option<&str>, split: &str) -> Row {
        Row {
            id: "x".into(),
            source: "s".into(),
            claim: "c".into(),
            quote: None,
            label: label.into(),
            alteration: alteration.map(String::from),
            split: split.into(),
        }
    }

    #[test]
    fn claims_are_tallied_by_split_and_alteration() {
        let rows = vec![
            row("true", None, "dev"),
            row("altered", Some("negation"), "dev"),
            row("altered", Some("figure"), "dev"),
            row("altered", Some("negation"), "test"),
        ];
        let verdicts: Vec<String> = [
            "supports_fully",
            "supports_fully",
            "contradicts",
            "does_not_address",
        ]
        .map(String::from)
        .to_vec();
        let t = tally(&rows, &verdicts);
        assert_eq!(t["dev"]["true"].share("supports_fully"), 1.0);
        assert_eq!(t["dev"]["altered (all)"].claims, 2);
        assert_eq!(t["dev"]["altered (all)"].share("supports_fully"), 0.5);
        assert_eq!(t["dev"]["figure"].share("contradicts"), 1.0);
        assert_eq!(t["test"]["negation"].share("does_not_address"), 1.0);
        assert!(!t["test"].contains_key("true"));
    }

    #[test]
    fn the_detail_checks_are_counted_where_support_cleared() {
        let rows = vec![
            row("altered", Some("figure"), "dev"),
            row("altered", Some("negation"), "dev"),
            row("true", None, "dev"),
            row("true", None, "dev"),
        ];
        let results = vec![
            json!({"verdict": "partially_supports", "flags": ["figure_not_in_passage"]}),
            json!({"verdict": "partially_supports", "flags": ["support_below_threshold"]}),
            json!({"verdict": "supports_fully", "flags": []}),
            json!({"verdict": "unverified", "flags": ["judge_cannot_confirm", "scope_differs"]}),
        ];
        let d = detail_tally(&rows, &results);
        assert_eq!(
            d["dev"],
            DetailTally {
                altered_cleared: 1,
                altered_caught: 1,
                true_cleared: 2,
                true_flagged: 1,
            }
        );
    }
}
