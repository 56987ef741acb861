//! `silt rank`, `silt route`, `silt grep` and `silt verify`: the shell
//! forms of sieve_rank, sieve_route, sieve_grep and sieve_verify; JSON out
//! (grep and verify print short lines unless `--json`).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::ask::read_json;
use silt_mcp::tools::{grep, rank, route, verify};
use silt_progress::TerminalProgress;
use silt_runtime::app::App;
use silt_runtime::folders::Folders;

/// `silt rank`'s options, as `sieve_rank`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RankArgs {
    /// What the candidates are ranked against.
    pub question: String,
    /// A file holding a JSON list of {id, text} (or strings); without
    /// it, the list is read from stdin.
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
    /// Keep at most this many results.
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Drop candidates below this probability.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
}

/// `silt route`'s options, as `sieve_route`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// The request to route.
    pub ask: String,
    /// A file holding a JSON list of {id, description, aliases}; without
    /// it, the list is read from stdin.
    #[arg(long, value_name = "FILE")]
    pub routes: Option<PathBuf>,
    /// Approximate budget in USD.
    #[arg(long)]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
}

/// Runs `sieve_rank` and prints the result as JSON.
pub async fn rank(app: &App, args: RankArgs) -> Result<()> {
    let params = rank::RankParams {
        question: args.question,
        candidates: read_json(
            &args.candidates,
            "candidates must be a JSON list of {\"id\", \"text\"} objects or strings; read",
        )?,
        top_k: args.top_k,
        threshold: args.threshold,
        judge: args.judge,
    };
    let out = rank::run(&app.runtime, &app.config, &params).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// Runs `sieve_route` and prints the result as JSON.
pub async fn route(app: &App, args: RouteArgs) -> Result<()> {
    let params = route::RouteParams {
        ask: args.ask,
        routes: read_json(
            &args.routes,
            "routes must be a JSON list of {\"id\", \"description\", \"aliases\"}; read",
        )?,
        budget_usd: args.budget_usd,
        judge: args.judge,
    };
    let out = route::run(&app.runtime, &app.config, &params).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// `silt grep`'s options, as `sieve_grep`'s arguments.
#[derive(Debug, clap::Args)]
pub struct GrepArgs {
    /// What you are trying to find, in plain language.
    pub question: String,
    /// The folder to search (default: the current one).
    #[arg(default_value = ".")]
    pub path: String,
    /// Score the strongest files' functions (or 60-line chunks) too.
    #[arg(long)]
    pub functions: bool,
    /// How many results to return.
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Drop units below this probability.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// The most the call may spend, in USD.
    #[arg(long)]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
    /// Print the result as JSON (default: one line per hit).
    #[arg(long)]
    pub json: bool,
}

/// Runs `sieve_grep` (a relative path from the current folder), showing
/// progress on the terminal; prints one line per hit, or JSON.
pub async fn grep(app: &App, args: GrepArgs) -> Result<()> {
    let params = grep::GrepParams {
        question: args.question,
        path: args.path,
        mode: if args.functions {
            grep::GrepMode::Functions
        } else {
            grep::GrepMode::Files
        },
        top_k: args.top_k,
        threshold: args.threshold,
        budget_usd: args.budget_usd,
        judge: args.judge,
    };
    let folders = Folders::local(Some(&std::env::current_dir()?));
    let out = TerminalProgress::around("grep", "steps", |steps| {
        grep::run(&app.runtime, &app.config, &params, &folders, Some(steps))
    })
    .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let hits = out["results"].as_array().cloned().unwrap_or_default();
    for h in &hits {
        println!(
            "{:.2}  {}:{}-{}",
            h["probability"].as_f64().unwrap_or(0.0),
            h["path"].as_str().unwrap_or(""),
            h["line_start"],
            h["line_end"]
        );
    }
    println!(
        "{} hits of {} units scored ({} judge requests, {} cached)",
        hits.len(),
        out["units_scored"],
        out["requests"],
        out["cache_hits"]
    );
    for s in out["skipped"].as_array().into_iter().flatten() {
        println!(
            "skipped {}: {}",
            s["path"].as_str().unwrap_or(""),
            s["reason"].as_str().unwrap_or("")
        );
    }
    if let Some(part) = out["read_in_part"]["paths"].as_array() {
        println!(
            "{} file(s) {}",
            part.len(),
            out["read_in_part"]["note"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

/// `silt verify`'s options, as `sieve_verify`'s arguments.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// A Markdown report to read claims from ('-' for stdin).
    #[arg(long, conflicts_with = "records")]
    pub report: Option<String>,
    /// A JSON list of records {claim, claim_context?, kind?, premises?, citations} ('-' for stdin).
    #[arg(long)]
    pub records: Option<String>,
    /// The folder file citations resolve against (default: the current one).
    #[arg(long)]
    pub base_path: Option<String>,
    /// The most the call may spend, in USD.
    #[arg(long)]
    pub budget_usd: Option<f64>,
    /// Full support below this flags a claim.
    #[arg(long)]
    pub support_threshold: Option<f64>,
    /// A contradiction at or above this flags a claim.
    #[arg(long)]
    pub contradict_threshold: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
    /// Print the result as JSON (default: one line per claim).
    #[arg(long)]
    pub json: bool,
}

fn read_text(path: &str) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    if path == "-" {
        std::io::stdin().read_to_string(&mut text)?;
    } else {
        text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    }
    Ok(text)
}

/// Runs `sieve_verify` on a report or records (from a file or stdin),
/// showing progress on the terminal; prints one line per claim, or JSON.
pub async fn verify(app: &App, args: VerifyArgs) -> Result<()> {
    if args.report.is_none() && args.records.is_none() {
        anyhow::bail!(
            "give the claims to check: --report FILE (a Markdown report) or --records FILE (a JSON list of claims); '-' reads stdin"
        );
    }
    let params = verify::VerifyParams {
        records: match &args.records {
            Some(path) => Some(read_json(
                &(path != "-").then(|| PathBuf::from(path)),
                "records must be a JSON list of {\"claim\", \"citations\": [{\"locator\", \"quote\"}]}; read",
            )?),
            None => None,
        },
        report: args.report.as_deref().map(read_text).transpose()?,
        base_path: args.base_path,
        budget_usd: args.budget_usd,
        support_threshold: args.support_threshold,
        contradict_threshold: args.contradict_threshold,
        judge: args.judge,
    };
    let folders = Folders::local(Some(&std::env::current_dir()?));
    let out = TerminalProgress::around("verify", "steps", |steps| {
        verify::run(&app.runtime, &app.config, &params, &folders, Some(steps))
    })
    .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for c in out["results"].as_array().into_iter().flatten() {
        let verdict = c["verdict"]
            .as_str()
            .unwrap_or(if c["kind"] == "recommendation" {
                "recommendation"
            } else {
                "unverified"
            });
        let flags: Vec<&str> = c["flags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .collect();
        println!(
            "{verdict:<18} {}{}",
            c["claim"].as_str().unwrap_or(""),
            if flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", flags.join(", "))
            }
        );
    }
    println!(
        "counts {}; relay blocked: {}",
        out["counts"], out["unqualified_factual_relay_blocked"]
    );
    Ok(())
}

/// `silt search`'s options, as `sieve_search`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// What to search the web for.
    pub query: String,
    /// Results returned (default 10).
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Query variants (default 3; 2 to 4).
    #[arg(long)]
    pub variants: Option<u32>,
    /// Hits reranked (default 30; at most 50).
    #[arg(long)]
    pub depth: Option<u32>,
    /// The judge plugin that reranks.
    #[arg(long)]
    pub judge: Option<String>,
}

/// Runs `sieve_search` and prints the result as JSON.
pub async fn search(app: &App, args: SearchArgs) -> Result<()> {
    let params = silt_mcp::tools::search::SearchParams {
        query: args.query,
        top_k: args.top_k,
        variants: args.variants,
        depth: args.depth,
        judge: args.judge,
    };
    let out = silt_mcp::tools::search::run(&app.runtime, &app.config, &params).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
