//! `silt-bench`: silt's benchmarks, kept out of the `silt` binary users
//! install. Each subcommand times one product the way docs/BENCHMARKS.md
//! reports it; the ones that need a server start the `silt` binary built
//! beside this one (or `$SILT_BIN`).

mod embed;
mod http;
mod judge;
mod ledger;
mod llm;
mod model;
mod sieve;
mod stdio_client;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use silt_runtime::app::App;

/// Benchmarks of silt's judges, ledger, grep and server.
#[derive(Debug, Parser)]
#[command(name = "silt-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Do not use the on-disk cache of compiled components.
    #[arg(long, global = true)]
    no_compile_cache: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The cost of the host -> engine -> judge chain and of cold start.
    Judge(judge::BenchArgs),
    /// The ledger on a generated ledger, beside the Python reference when given its checkout.
    Ledger(ledger::BenchLedgerArgs),
    /// The embedding judge in its sandbox: model load, sentences per second, peak memory.
    Embed(embed::BenchEmbedArgs),
    /// The local language-model judge in its sandbox: model load, items and tokens per second, peak memory.
    Llm(llm::BenchLlmArgs),
    /// grep over a repository (cold, warm, beside the I/O floor) and verify over a 20-claim report.
    Sieve(sieve::BenchSieveArgs),
    /// The shared HTTP server under concurrent clients: throughput and p50/p99 latency.
    Http(http::BenchHttpArgs),
    /// sieve_ask and sieve_verify on the HTTP model judge beside the same requests sent with curl.
    Model(model::BenchModelArgs),
}

/// The `silt` binary the server benchmarks start: `$SILT_BIN`, else the
/// one cargo built beside this binary.
pub(crate) fn silt_binary() -> Result<PathBuf> {
    if let Some(bin) = silt_config::env::path("SILT_BIN") {
        return Ok(bin);
    }
    let me = std::env::current_exe()?;
    let bin = me
        .parent()
        .context("silt-bench has no folder")?
        .join(format!("silt{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(
        bin.is_file(),
        "no silt binary at {}: build it (`cargo build --release -p silt`) or set SILT_BIN",
        bin.display()
    );
    Ok(bin)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // every setting the run reads from the environment, read once
    silt_config::env::capture();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            silt_config::env::text("SILT_LOG")
                .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
                .unwrap_or_else(|| "warn".into()),
        )
        .init();
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("silt-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<()> {
    // these two only drive servers they start
    let command = match cli.command {
        Command::Http(args) => return http::run(args).await,
        Command::Model(args) => return model::run(args).await,
        Command::Sieve(args) => return sieve::run(args).await,
        other => other,
    };
    let app = if matches!(
        command,
        Command::Judge(_) | Command::Embed(_) | Command::Llm(_)
    ) {
        // these time the judge chain, not the answer cache
        let mut config = silt_config::Config::discover()?;
        config.answer_cache = Some(false);
        App::with_config(config, !cli.no_compile_cache)?
    } else {
        App::open(!cli.no_compile_cache)?
    };
    match command {
        Command::Judge(args) => judge::run(&app, args).await,
        Command::Ledger(args) => ledger::run(&app, args).await,
        Command::Embed(args) => embed::run(&app, args).await,
        Command::Llm(args) => llm::run(&app, args).await,
        Command::Http(_) | Command::Model(_) | Command::Sieve(_) => {
            unreachable!("run before the app opens")
        }
    }
}
