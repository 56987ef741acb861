//! The `silt` command line.

pub mod ask;
pub mod demo;
pub mod ledger;
pub mod models;
pub mod plugins;
pub mod search_chain;
pub mod shortcuts;

use clap::{Parser, Subcommand};

/// silt: an MCP server whose engines and judges are sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "silt", version, about)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
    /// Do not use the on-disk cache of compiled components.
    #[arg(long, global = true)]
    pub no_compile_cache: bool,
}

/// Every `silt` subcommand; all but `models`, `http-token` and `pdf-text`
/// read the config and start the runtime first (see `main`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the MCP tools on stdio (one process per agent).
    Serve(ServeArgs),
    /// Ask one closed question of every item (the shell form of sieve_ask); JSON out.
    #[command(subcommand)]
    Ask(ask::AskCommand),
    /// Rerank candidates against a question (the shell form of sieve_rank); JSON out.
    Rank(shortcuts::RankArgs),
    /// Choose one route for a request, or none (the shell form of sieve_route); JSON out.
    Route(shortcuts::RouteArgs),
    /// Rank a repository's files or functions against a question (the shell form of sieve_grep); JSON out.
    Grep(shortcuts::GrepArgs),
    /// Check claims (records or a Markdown report) against the sources they cite (the shell form of sieve_verify).
    Verify(shortcuts::VerifyArgs),
    /// Search the web through the chosen backend and rerank the hits (the shell form of sieve_search); JSON out.
    Search(shortcuts::SearchArgs),
    /// Try search routes in order with per-route caches, or check every route live.
    #[command(subcommand)]
    SearchChain(search_chain::SearchChainCommand),
    /// List or inspect plugins and their grants.
    #[command(subcommand)]
    Plugins(plugins::PluginsCommand),
    /// Install and list the models judges may be granted (sha256-checked).
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// The Sediment memory ledger: recall, capture, confirm, consolidate, sleep, history, import, export.
    Ledger(ledger::LedgerArgs),
    /// Watch ten rotted lessons consolidate (the ledger engine on embedded defaults).
    Demo(demo::DemoArgs),
    /// Measure a judge's answers on labelled data (accuracy, log-loss, calibration).
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Print the shared HTTP server's token (creating it, 0600, if missing),
    /// for an MCP client's `Authorization: Bearer` header.
    HttpToken(HttpTokenArgs),
    /// The PDF reader's child process (run by silt itself under limits).
    #[command(hide = true)]
    PdfText(PdfTextArgs),
}

/// What `silt eval` measures.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Yes/no and choose questions on STS Benchmark pairs (a file you give).
    Judge(silt_eval::judge::EvalJudgeArgs),
    /// Lesson relations and abstraction on the committed labelled pairs and
    /// clusters (docs/eval), as the sleep pass would act on them.
    Ledger(silt_eval::ledger::EvalLedgerArgs),
    /// The whole sleep pass on one ledger of every labelled lesson
    /// (docs/eval): which pairs it finds, merges, resolves and abstracts.
    Sleep(silt_eval::sleep::EvalSleepArgs),
    /// sieve_verify's verdicts on the committed true and altered claims
    /// (docs/eval/verify): how many altered claims pass as supports_fully.
    Verify(silt_eval::verify::EvalVerifyArgs),
}

/// `silt http-token`'s options.
#[derive(Debug, clap::Args)]
pub struct HttpTokenArgs {
    /// Print the token file's path instead of the token.
    #[arg(long)]
    pub path: bool,
    /// Set `SILT_HTTP_TOKEN=<token>` in the env file `bin/silt-mcp` reads
    /// (`$SILT_ENV_FILE`, else `~/.config/silt/env`), written 0600 in a
    /// 0700 folder, replacing an earlier line; prints nothing on stdout.
    #[arg(long, conflicts_with = "path")]
    pub write_env: bool,
}

/// The PDF reader child's one argument.
#[derive(Debug, clap::Args)]
pub struct PdfTextArgs {
    /// The PDF to read.
    pub file: std::path::PathBuf,
}

/// `silt serve`'s options: stdio unless `--http`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at http://127.0.0.1:8723/mcp instead of stdio:
    /// one shared server for every agent on the machine.
    #[arg(long)]
    pub http: bool,
    /// The HTTP port (default `$SILT_HTTP_PORT`, else the config's
    /// `[server] port`, else 8723; 0 picks a free one).
    #[arg(long, requires = "http")]
    pub port: Option<u16>,
}
