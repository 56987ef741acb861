//! `silt ledger …`: every Sediment operation from a shell.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use silt_ledger_service::sediment_json;
use silt_runtime::app::App;

use silt_ledger_service::store::Store;
use silt_mcp::tools::sediment_tools::LedgerTools;

/// `silt ledger`'s options, shared by every ledger subcommand.
#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// The ledger: a file, or a postgres:// URL (default: $SILT_LEDGER_URL,
    /// $SILT_LEDGER_PATH, [ledger] url, beside $SEDIMENT_LEDGER_PATH, or
    /// the data dir).
    #[arg(long, global = true)]
    pub ledger: Option<PathBuf>,
    /// The time to act at, in unix seconds, to replay a run (default: now).
    #[arg(long, global = true)]
    pub now: Option<f64>,
    /// JSON out.
    #[arg(long, global = true)]
    pub json: bool,
    /// The ledger's judge: it relates lessons in the sleep pass and, when it
    /// has vectors (the embedding judge), recall ranks by meaning.
    #[arg(long, global = true, default_value = "lexical")]
    pub judge: String,
    /// The operation to run.
    #[command(subcommand)]
    pub command: LedgerCommand,
}

/// How a captured outcome went (`--feedback`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FeedbackArg {
    /// It worked.
    Positive,
    /// It did not.
    Negative,
    /// Not known yet.
    Neutral,
}

/// The ledger operations, each the shell form of a `sediment_*` tool or a
/// command beyond them.
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// The top lessons for a task (each returned fires).
    Recall {
        /// The task at hand.
        context: String,
        /// How many lessons, at most (1 to 20).
        #[arg(short, long, default_value_t = 5)]
        k: u32,
    },
    /// Distil an outcome into a lesson; or many, one per line of --from.
    Capture {
        /// The situation, generalised (WHEN ...).
        #[arg(long, required_unless_present = "from")]
        when: Option<String>,
        /// What to do in it (PREFER ...).
        #[arg(long, required_unless_present = "from")]
        prefer: Option<String>,
        /// How it went.
        #[arg(long, value_enum, default_value = "neutral")]
        feedback: FeedbackArg,
        /// JSON lines of {when, prefer, feedback?}, each committed on its own.
        #[arg(long, conflicts_with_all = ["when", "prefer"])]
        from: Option<PathBuf>,
    },
    /// That lesson worked.
    Confirm {
        /// The lesson's id.
        id: String,
    },
    /// That lesson failed.
    Contradict {
        /// The lesson's id.
        id: String,
    },
    /// Decay, fade and evict (cheap; every run).
    Consolidate,
    /// Merge, resolve contradictions, abstract (periodic).
    Sleep,
    /// Pairs for an agent to judge.
    Review,
    /// Apply an agent's verdicts: a JSON list of {a_id, b_id, verdict} (a file, or - for stdin).
    Apply {
        /// The verdicts' file, or - for stdin.
        file: PathBuf,
    },
    /// Entries by effective confidence.
    Stats {
        /// List retired lessons too.
        #[arg(long)]
        include_retired: bool,
        /// List at most this many (1 to 500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Take back a merge or a resolved contradiction by its event number
    /// (`seq` in `silt ledger history`).
    Undo {
        /// The event's number.
        event: i64,
    },
    /// Delete a lesson for good (its text is gone; the log keeps the id
    /// and the reason).
    Forget {
        /// The lesson's id.
        id: String,
        /// Why, for the log.
        #[arg(long)]
        reason: Option<String>,
    },
    /// The event log, for one entry or all.
    History {
        /// Only the events naming this entry.
        id: Option<String>,
        /// Show at most this many events, newest first.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Read a Sediment ledger.json into this ledger (unknown fields kept).
    Import {
        /// The Sediment ledger.json to read.
        file: PathBuf,
    },
    /// Write the ledger as a Sediment ledger.json (to FILE, or stdout).
    Export {
        /// The file to write (default: stdout).
        file: Option<PathBuf>,
    },
    /// Copy this whole ledger (lessons, the event log with its undo
    /// records, the judge's vectors) into a new, empty one: a SQLite
    /// ledger to PostgreSQL or back. Counts are checked after the copy;
    /// this ledger is only read.
    Migrate {
        /// The target: a postgres:// URL or a file path.
        #[arg(long)]
        to: PathBuf,
    },
    /// Write the ledger engine composed with --judge into one component
    /// that runs outside silt (`wasmtime run FILE demo`, jco).
    Standalone {
        /// Where to write the component.
        #[arg(short, long)]
        out: PathBuf,
        /// A library exporting silt:ledger/engine instead of a command.
        #[arg(long)]
        library: bool,
    },
}

fn now_or(now: Option<f64>) -> f64 {
    now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    })
}

fn feedback_name(f: FeedbackArg) -> &'static str {
    match f {
        FeedbackArg::Positive => "positive",
        FeedbackArg::Negative => "negative",
        FeedbackArg::Neutral => "neutral",
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

/// A tool's `{ok: false, error}` as a command failure.
/// Writes `bytes` to `file` through a synced temporary file beside it, so
/// a crash leaves either the old file or the new one.
fn write_atomically(file: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(file)
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}

fn tool(outcome: silt_mcp::tools::sediment_tools::ToolOutcome) -> Result<Value> {
    outcome.map_err(|e| anyhow::anyhow!(e))
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Runs one ledger command on the ledger `--ledger` names (else the default
/// one) and prints its result, as JSON with `--json`.
pub async fn run(app: &App, args_in: LedgerArgs) -> Result<()> {
    let (default, sediment) = Store::default_path(app.config.ledger.url.as_deref());
    let (path, sediment) = match args_in.ledger.clone() {
        Some(p) => (p, None),
        None => (default, sediment),
    };
    // the ledger's judge is the sleep pass's (see Config::judge_for)
    let mut config = (*app.config).clone();
    config
        .tools
        .entry("sediment_sleep".into())
        .or_default()
        .judge = Some(args_in.judge.clone());
    let tools = std::sync::Arc::new(LedgerTools::at(
        app.runtime.clone(),
        std::sync::Arc::new(config),
        path.clone(),
        sediment,
        args_in.now,
    ));
    let j = args_in.json;
    let now = now_or(args_in.now);
    let judge = (args_in.judge != "lexical").then(|| args_in.judge.clone());
    match args_in.command {
        LedgerCommand::Recall { context, k } => {
            let v = tool(
                tools
                    .recall(args(json!({"context": context, "k": k})))
                    .await,
            )?;
            print(j, v, |v| lines(&v["heuristics"]))
        }
        LedgerCommand::Capture {
            when,
            prefer,
            feedback: f,
            from,
        } => {
            match from {
                None => {
                    let v = tool(tools.capture(args(json!({"when": when, "prefer": prefer, "feedback": feedback_name(f)}))).await)?;
                    print(j, v, |v| {
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
                        let v = tools.capture(args(row)).await.map_err(|e| {
                            anyhow::anyhow!("line {} of {}: {e}", n + 1, file.display())
                        })?;
                        // printed only after the commit: an acknowledged capture is durable
                        writeln!(
                            out,
                            "captured {}",
                            v["captured"]["id"].as_str().unwrap_or("")
                        )?;
                        out.flush()?;
                    }
                    Ok(())
                }
            }
        }
        LedgerCommand::Confirm { id } => {
            let v = tool(tools.feedback(args(json!({"id": id})), false).await)?;
            print(j, v, |v| lines(&json!([v["updated"]])))
        }
        LedgerCommand::Contradict { id } => {
            let v = tool(tools.feedback(args(json!({"id": id})), true).await)?;
            print(j, v, |v| lines(&json!([v["updated"]])))
        }
        LedgerCommand::Consolidate => {
            let v = tool(tools.consolidate(args(json!({}))).await)?;
            print(j, v, |v| {
                format!(
                    "{} faded, {} evicted, {} active",
                    v["retired"], v["evicted"], v["active"]
                )
            })
        }
        LedgerCommand::Sleep => {
            let v = tool(tools.sleep(args(json!({"judge": judge}))).await)?;
            print(j, v, |v| {
                format!(
                    "{} merged, {} contradictions resolved, {} abstracted, {} held for review \
                     (the judge was not sure enough to retire a lesson: `silt ledger review`)",
                    v["merged"],
                    v["contradictions_resolved"],
                    v["generalized"],
                    v["held_for_review"]
                )
            })
        }
        LedgerCommand::Review => {
            let v = tool(tools.review(args(json!({}))).await)?;
            print(j, v, |v| {
                v["pairs"]
                    .as_array()
                    .map(|p| {
                        p.iter()
                            .map(|c| {
                                format!(
                                    "{} ~ {} ({} {}{})\n  {}\n  {}",
                                    c["a_id"],
                                    c["b_id"],
                                    c["suspected"].as_str().unwrap_or(""),
                                    c["p"],
                                    if c["held"] == true { ", held" } else { "" },
                                    c["a"].as_str().unwrap_or(""),
                                    c["b"].as_str().unwrap_or("")
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default()
            })
        }
        LedgerCommand::Apply { file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let judgments: Value = serde_json::from_str(&text)
                .context("judgments must be a JSON list of {a_id, b_id, verdict}")?;
            let v = tool(tools.apply(args(json!({"judgments": judgments}))).await)?;
            print(j, v, |v| {
                format!(
                    "{} merged, {} contradictions resolved, {} skipped",
                    v["merged"], v["contradictions_resolved"], v["skipped"]
                )
            })
        }
        LedgerCommand::Stats {
            include_retired,
            limit,
        } => {
            let v = tool(tools.stats(args(json!({"include_retired": include_retired, "limit": limit, "telemetry": true}))).await)?;
            print(j, v, |v| {
                format!(
                    "{}: {} entries, {} active\n{}",
                    v["path"].as_str().unwrap_or(""),
                    v["total"],
                    v["active"],
                    lines(&v["entries"])
                )
            })
        }
        LedgerCommand::Undo { event } => {
            let v = tool(tools.undo(args(json!({"event": event}))).await)?;
            print(j, v, |v| {
                let partial = if v["partial"] == true {
                    " (the surviving lesson changed since: only what the step gave it was taken back)"
                } else {
                    ""
                };
                format!(
                    "undid event {}{partial}; restored:\n{}",
                    v["undone"],
                    lines(&v["restored"])
                )
            })
        }
        LedgerCommand::Forget { id, reason } => {
            let v = tool(
                tools
                    .forget(args(json!({"id": id, "reason": reason})))
                    .await,
            )?;
            print(j, v, |v| {
                format!("forgot {}", v["forgotten"].as_str().unwrap_or(""))
            })
        }
        LedgerCommand::History { id, limit } => {
            let service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
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
            let entries = sediment_json::read(&file, now)?;
            let mut service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
            let n = service
                .store
                .import(&entries, &file.display().to_string(), now)?;
            print(
                j,
                json!({"ok": true, "imported": n, "path": silt_ledger_service::store::describe(&path)}),
                |v| {
                    format!(
                        "imported {} lessons into {}",
                        v["imported"],
                        v["path"].as_str().unwrap_or("")
                    )
                },
            )
        }
        LedgerCommand::Standalone { out, library } => {
            let registry = app.runtime.registry();
            let ledger = registry.get("ledger")?.bytes()?;
            let judge_bytes = registry.get(&args_in.judge)?.bytes()?;
            let bytes = if library {
                silt_plugins::compose::ledger_library(&ledger, &judge_bytes)?
            } else {
                silt_plugins::compose::ledger_command(&ledger, &judge_bytes)?
            };
            write_atomically(&out, &bytes)?;
            print(
                j,
                json!({"ok": true, "path": out.display().to_string(), "bytes": bytes.len(), "judge": args_in.judge, "kind": if library { "library" } else { "command" }}),
                |v| {
                    format!(
                        "wrote {} ({} bytes, judge {})",
                        v["path"].as_str().unwrap_or(""),
                        v["bytes"],
                        v["judge"].as_str().unwrap_or("")
                    )
                },
            )
        }
        LedgerCommand::Migrate { to } => {
            let from = silt_ledger_service::store::describe(&path);
            let target = silt_ledger_service::store::describe(&to);
            let mut service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
            let mut there = Store::open(&to)?;
            let counts = service.store.copy_to(&mut there)?;
            print(
                j,
                json!({"ok": true, "from": from, "to": target, "entries": counts.entries,
                       "events": counts.events, "vectors": counts.vectors, "verified": true}),
                |v| {
                    format!(
                        "copied {} entries, {} events and {} vectors from {} to {} (counts checked)",
                        v["entries"],
                        v["events"],
                        v["vectors"],
                        v["from"].as_str().unwrap_or(""),
                        v["to"].as_str().unwrap_or("")
                    )
                },
            )
        }
        LedgerCommand::Export { file } => {
            let service = tools.open().await.map_err(|e| anyhow::anyhow!(e))?;
            let text = sediment_json::write(&service.store.all()?)?;
            match file {
                None => println!("{text}"),
                Some(file) => {
                    write_atomically(&file, text.as_bytes())?;
                    eprintln!("exported to {}", file.display());
                }
            }
            Ok(())
        }
    }
}
