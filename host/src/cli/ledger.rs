//! `silt ledger …`: every Sediment operation from a shell.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::app::App;
use crate::bindings::ledger_engine::silt::ledger::types::{Feedback, Judgment, Verdict};
use crate::ledger::sediment_json;
use crate::ledger::service::LedgerService;
use crate::ledger::store::Store;
use crate::tools::sediment::view;

#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// The ledger file (default: $SILT_LEDGER_PATH, beside $SEDIMENT_LEDGER_PATH, or the data dir).
    #[arg(long, global = true)]
    pub ledger: Option<PathBuf>,
    /// The time to act at, in unix seconds, to replay a run (default: now).
    #[arg(long, global = true)]
    pub now: Option<f64>,
    /// JSON out.
    #[arg(long, global = true)]
    pub json: bool,
    /// The judge for the sleep pass.
    #[arg(long, global = true, default_value = "lexical")]
    pub judge: String,
    #[command(subcommand)]
    pub command: LedgerCommand,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FeedbackArg {
    Positive,
    Negative,
    Neutral,
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// The top lessons for a task (each returned fires).
    Recall {
        context: String,
        #[arg(short, long, default_value_t = 5)]
        k: u32,
    },
    /// Distil an outcome into a lesson; or many, one per line of --from.
    Capture {
        #[arg(long, required_unless_present = "from")]
        when: Option<String>,
        #[arg(long, required_unless_present = "from")]
        prefer: Option<String>,
        #[arg(long, value_enum, default_value = "neutral")]
        feedback: FeedbackArg,
        /// JSON lines of {when, prefer, feedback?}, each committed on its own.
        #[arg(long, conflicts_with_all = ["when", "prefer"])]
        from: Option<PathBuf>,
    },
    /// That lesson worked.
    Confirm { id: String },
    /// That lesson failed.
    Contradict { id: String },
    /// Decay, fade and evict (cheap; every run).
    Consolidate,
    /// Merge, resolve contradictions, abstract (periodic).
    Sleep,
    /// Pairs for an agent to judge.
    Review,
    /// Apply an agent's verdicts: a JSON list of {a_id, b_id, verdict} (a file, or - for stdin).
    Apply { file: PathBuf },
    /// Entries by effective confidence.
    Stats {
        #[arg(long)]
        include_retired: bool,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// The event log, for one entry or all.
    History {
        id: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Read a Sediment ledger.json into this ledger (unknown fields kept).
    Import { file: PathBuf },
    /// Write the ledger as a Sediment ledger.json (to FILE, or stdout).
    Export { file: Option<PathBuf> },
}

fn now_or(now: Option<f64>) -> f64 {
    now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    })
}

fn feedback(f: FeedbackArg) -> Feedback {
    match f {
        FeedbackArg::Positive => Feedback::Positive,
        FeedbackArg::Negative => Feedback::Negative,
        FeedbackArg::Neutral => Feedback::Neutral,
    }
}

fn print(json_out: bool, value: Value, human: impl FnOnce(&Value) -> String) -> Result<()> {
    if json_out {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{}", human(&value));
    }
    Ok(())
}

fn lines(entries: &Value) -> String {
    entries
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|e| {
                    format!(
                        "[{}] {:.2} {:<8} WHEN {} -> PREFER {}",
                        e["id"].as_str().unwrap_or(""),
                        e["confidence"].as_f64().unwrap_or(0.0),
                        e["status"].as_str().unwrap_or(""),
                        e["when"].as_str().unwrap_or(""),
                        e["prefer"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub async fn run(app: &App, args: LedgerArgs) -> Result<()> {
    let (default, sediment) = Store::default_path();
    let path = args.ledger.clone().unwrap_or(default);
    let fresh = !path.exists();
    let now = now_or(args.now);
    let mut service = LedgerService::open(app.runtime.clone(), &args.judge, &path)?;
    if fresh
        && args.ledger.is_none()
        && let Some(json) = sediment.filter(|p| p.is_file())
    {
        let entries = sediment_json::read(&json)?;
        service
            .store
            .import(&entries, &json.display().to_string(), now)?;
        eprintln!(
            "imported {} lessons from {} into {}",
            entries.len(),
            json.display(),
            path.display()
        );
    }
    let j = args.json;
    match args.command {
        LedgerCommand::Recall { context, k } => {
            let hits = service.recall(&context, k, now).await?;
            let rows: Vec<Value> = hits.iter().map(|e| view(e, now)).collect();
            print(
                j,
                json!({"ok": true, "count": rows.len(), "heuristics": rows}),
                |v| lines(&v["heuristics"]),
            )
        }
        LedgerCommand::Capture {
            when,
            prefer,
            feedback: f,
            from,
        } => match from {
            None => {
                let e = service
                    .capture(
                        when.as_deref().unwrap_or(""),
                        prefer.as_deref().unwrap_or(""),
                        feedback(f),
                        now,
                    )
                    .await?;
                print(j, json!({"ok": true, "captured": view(&e, now)}), |v| {
                    format!("captured {}", v["captured"]["id"].as_str().unwrap_or(""))
                })
            }
            Some(file) => {
                let reader = std::io::BufReader::new(
                    std::fs::File::open(&file)
                        .with_context(|| format!("cannot read {}", file.display()))?,
                );
                let mut out = std::io::stdout().lock();
                for (n, line) in reader.lines().enumerate() {
                    let line = line?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    let row: Value = serde_json::from_str(&line).with_context(|| {
                        format!("line {} of {} is not JSON", n + 1, file.display())
                    })?;
                    let (Some(w), Some(p)) = (row["when"].as_str(), row["prefer"].as_str()) else {
                        bail!(
                            "line {} of {} needs \"when\" and \"prefer\"",
                            n + 1,
                            file.display()
                        );
                    };
                    let fb = match row["feedback"].as_str().unwrap_or("neutral") {
                        "positive" => Feedback::Positive,
                        "negative" => Feedback::Negative,
                        "neutral" => Feedback::Neutral,
                        other => bail!(
                            "line {}: feedback '{other}' is not positive, negative or neutral",
                            n + 1
                        ),
                    };
                    let e = service.capture(w, p, fb, now).await?;
                    // printed only after the commit: an acknowledged capture is durable
                    writeln!(out, "captured {}", e.id)?;
                    out.flush()?;
                }
                Ok(())
            }
        },
        LedgerCommand::Confirm { id } => {
            let e = service.feedback(&id, false, now).await?;
            print(j, json!({"ok": true, "updated": view(&e, now)}), |v| {
                lines(&json!([v["updated"]]))
            })
        }
        LedgerCommand::Contradict { id } => {
            let e = service.feedback(&id, true, now).await?;
            print(j, json!({"ok": true, "updated": view(&e, now)}), |v| {
                lines(&json!([v["updated"]]))
            })
        }
        LedgerCommand::Consolidate => {
            let h = service.homeostasis(now).await?;
            print(
                j,
                json!({"ok": true, "retired": h.retired, "evicted": h.evicted, "active": h.active}),
                |v| {
                    format!(
                        "{} faded, {} evicted, {} active",
                        v["retired"], v["evicted"], v["active"]
                    )
                },
            )
        }
        LedgerCommand::Sleep => {
            let (s, _) = service.sleep(now).await?;
            print(
                j,
                json!({"ok": true, "merged": s.merged, "contradictions_resolved": s.contradictions_resolved, "generalized": s.generalized}),
                |v| {
                    format!(
                        "{} merged, {} contradictions resolved, {} abstracted",
                        v["merged"], v["contradictions_resolved"], v["generalized"]
                    )
                },
            )
        }
        LedgerCommand::Review => {
            let pairs: Vec<Value> = service
                .review_candidates()
                .await?
                .iter()
                .map(|c| json!({"a_id": c.a_id, "b_id": c.b_id, "a": c.a, "b": c.b, "trigger_similarity": c.trigger_similarity, "action_similarity": c.action_similarity}))
                .collect();
            print(
                j,
                json!({"ok": true, "count": pairs.len(), "pairs": pairs}),
                |v| {
                    v["pairs"]
                        .as_array()
                        .map(|p| {
                            p.iter()
                                .map(|c| {
                                    format!(
                                        "{} ~ {} ({} / {})\n  {}\n  {}",
                                        c["a_id"],
                                        c["b_id"],
                                        c["trigger_similarity"],
                                        c["action_similarity"],
                                        c["a"].as_str().unwrap_or(""),
                                        c["b"].as_str().unwrap_or("")
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join("\n")
                        })
                        .unwrap_or_default()
                },
            )
        }
        LedgerCommand::Apply { file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let judgments = parse_judgments(&text)?;
            let r = service.apply_judgments(&judgments, now).await?;
            let skipped: Vec<Value> = r
                .skipped
                .iter()
                .map(|s| json!({"a_id": s.a_id, "b_id": s.b_id, "reason": s.reason}))
                .collect();
            print(
                j,
                json!({"ok": true, "merged": r.merged, "contradictions_resolved": r.contradictions_resolved, "distinct": r.distinct, "skipped": skipped.len(), "skipped_judgments": skipped}),
                |v| {
                    format!(
                        "{} merged, {} contradictions resolved, {} skipped",
                        v["merged"], v["contradictions_resolved"], v["skipped"]
                    )
                },
            )
        }
        LedgerCommand::Stats {
            include_retired,
            limit,
        } => {
            let entries = service.stats(include_retired, limit, now).await?;
            let all = service.store.all()?;
            let active = all
                .iter()
                .filter(|e| e.status == silt_core::ledger::Status::Active)
                .count();
            let rows: Vec<Value> = entries.iter().map(|e| view(e, now)).collect();
            let out = json!({"ok": true, "path": path.display().to_string(), "total": all.len(), "active": active, "entries": rows, "events": service.store.event_counts()?.into_iter().map(|(k, n)| (k, json!(n))).collect::<serde_json::Map<String, Value>>()});
            print(j, out, |v| {
                format!(
                    "{}: {} entries, {} active\n{}",
                    v["path"].as_str().unwrap_or(""),
                    v["total"],
                    v["active"],
                    lines(&v["entries"])
                )
            })
        }
        LedgerCommand::History { id, limit } => {
            let events = service.store.history(id.as_deref(), limit)?;
            print(j, json!({"ok": true, "events": events}), |v| {
                v["events"]
                    .as_array()
                    .map(|e| {
                        e.iter()
                            .map(|e| {
                                format!(
                                    "{:>6} {} {:<12} {} {}",
                                    e["seq"],
                                    e["at"],
                                    e["kind"].as_str().unwrap_or(""),
                                    e["id"].as_str().unwrap_or(""),
                                    e["reason"].as_str().unwrap_or("")
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default()
            })
        }
        LedgerCommand::Import { file } => {
            let entries = sediment_json::read(&file)?;
            let n = service
                .store
                .import(&entries, &file.display().to_string(), now)?;
            print(
                j,
                json!({"ok": true, "imported": n, "path": path.display().to_string()}),
                |v| {
                    format!(
                        "imported {} lessons into {}",
                        v["imported"],
                        v["path"].as_str().unwrap_or("")
                    )
                },
            )
        }
        LedgerCommand::Export { file } => {
            let text = sediment_json::write(&service.store.all()?)?;
            match file {
                None => println!("{text}"),
                Some(file) => {
                    let dir = file
                        .parent()
                        .filter(|d| !d.as_os_str().is_empty())
                        .unwrap_or(std::path::Path::new("."));
                    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
                    tmp.write_all(text.as_bytes())?;
                    tmp.as_file().sync_all()?;
                    tmp.persist(&file)
                        .with_context(|| format!("writing {}", file.display()))?;
                    eprintln!("exported to {}", file.display());
                }
            }
            Ok(())
        }
    }
}

fn parse_judgments(text: &str) -> Result<Vec<Judgment>> {
    let rows: Vec<Value> = serde_json::from_str(text)
        .context("judgments must be a JSON list of {a_id, b_id, verdict}")?;
    if rows.is_empty() || rows.len() > 100 {
        bail!("give 1 to 100 judgments, got {}", rows.len());
    }
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let (Some(a), Some(b), Some(v)) = (
                r["a_id"].as_str(),
                r["b_id"].as_str(),
                r["verdict"].as_str(),
            ) else {
                bail!("judgment {i} needs a_id, b_id and verdict");
            };
            let verdict = match v {
                "merge" => Verdict::Merge,
                "contradict" => Verdict::Contradict,
                "distinct" => Verdict::Distinct,
                other => {
                    bail!("judgment {i}: verdict '{other}' is not merge, contradict or distinct")
                }
            };
            Ok(Judgment {
                a_id: a.trim().into(),
                b_id: b.trim().into(),
                verdict,
            })
        })
        .collect()
}
