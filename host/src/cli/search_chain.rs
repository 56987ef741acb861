//! `silt search-chain search|preflight`: the search chain from a shell.

use anyhow::Result;

use silt_mcp::tools::search_chain;
use silt_runtime::app::App;

/// `silt search-chain`'s subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SearchChainCommand {
    /// Try the routes in order (each route's cache, then the route live);
    /// exits 1 when every route fails.
    Search(ChainArgs),
    /// Call every route live and at once; report which pass.
    Preflight(ChainArgs),
}

/// The query and the routes both subcommands take.
#[derive(Debug, clap::Args)]
pub struct ChainArgs {
    /// What to search for.
    pub query: String,
    /// Search backends in order, comma-separated (e.g. searxng,brave).
    #[arg(long)]
    pub routes: String,
    /// Hits wanted (1 to 50).
    #[arg(long, default_value_t = 10)]
    pub count: u32,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

/// Runs one search-chain subcommand and prints its result (JSON with
/// `--json`); a search every route failed exits 1.
pub async fn run(app: &App, cmd: SearchChainCommand) -> Result<()> {
    match cmd {
        SearchChainCommand::Search(a) => {
            let routes = search_chain::parse_routes(&a.routes)?;
            let out =
                search_chain::search(&app.runtime, &app.config, &a.query, a.count, &routes).await?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                match out["route"].as_str() {
                    Some(route) => {
                        println!(
                            "{} hits from {route} (cache {})",
                            out["hits"].as_array().map_or(0, Vec::len),
                            out["cache"].as_str().unwrap_or("-")
                        );
                        for h in out["hits"].as_array().into_iter().flatten() {
                            println!(
                                "{:>3}. {} <{}>",
                                h["rank"],
                                h["title"].as_str().unwrap_or(""),
                                h["url"].as_str().unwrap_or("")
                            );
                        }
                    }
                    None => println!("every route failed"),
                }
                if let Some(errors) = out["errors"].as_object() {
                    for (route, why) in errors {
                        eprintln!("{route}: {}", why.as_str().unwrap_or(""));
                    }
                }
            }
            if out["route"].is_null() {
                std::process::exit(1);
            }
            Ok(())
        }
        SearchChainCommand::Preflight(a) => {
            let routes = search_chain::parse_routes(&a.routes)?;
            let out =
                search_chain::preflight(&app.runtime, &app.config, &a.query, a.count, &routes)
                    .await?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                for (route, r) in out["routes"].as_object().into_iter().flatten() {
                    let verdict = if r["ok"] == true { "ok" } else { "FAIL" };
                    println!(
                        "{route}: {verdict}, {} results, {} s{}",
                        r["results"],
                        r["seconds"],
                        r["error"]
                            .as_str()
                            .map(|e| format!(" ({e})"))
                            .unwrap_or_default()
                    );
                }
            }
            Ok(())
        }
    }
}
