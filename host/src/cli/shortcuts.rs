//! `silt rank`, `silt route` and `silt grep`: the shell forms of
//! sieve_rank, sieve_route and sieve_grep, JSON out.

use std::path::PathBuf;

use anyhow::Result;

use crate::app::App;
use crate::cli::ask::read_json;
use crate::tools::{grep, rank, route};

#[derive(Debug, clap::Args)]
pub struct RankArgs {
    /// What the candidates are ranked against.
    pub question: String,
    /// A JSON list of {id, text} (or strings); without it, read from stdin.
    #[arg(long)]
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

#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// The request to route.
    pub ask: String,
    /// A JSON list of {id, description, aliases}; without it, read from stdin.
    #[arg(long)]
    pub routes: Option<PathBuf>,
    /// Approximate budget in USD.
    #[arg(long)]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
}

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
}

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
    let base = std::env::current_dir()?;
    let out = grep::run(&app.runtime, &app.config, &params, Some(&base)).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
