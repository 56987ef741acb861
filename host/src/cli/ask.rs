//! `silt ask judge|choose|score`: the seed's `sieve-ask`, JSON out.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::{Map, Value};

use silt_mcp::tools::ask::{self, AskParams, ItemInput, Kind};
use silt_runtime::app::App;

/// `silt ask`'s three question kinds, as `sieve_ask`'s `kind`.
#[derive(Debug, Subcommand)]
pub enum AskCommand {
    /// One yes/no probability per item.
    Judge {
        /// The question, the items and the call's limits.
        #[command(flatten)]
        common: Common,
        /// What makes the answer yes.
        #[arg(long)]
        yes: String,
        /// What makes the answer no.
        #[arg(long)]
        no: String,
        /// Keep at most this many results.
        #[arg(long)]
        top_k: Option<u32>,
        /// Drop results below this probability.
        #[arg(long)]
        threshold: Option<f64>,
    },
    /// One option per item, with the full distribution.
    Choose {
        /// The question, the items and the call's limits.
        #[command(flatten)]
        common: Common,
        /// An option as label=when it applies (repeat, in order).
        #[arg(long = "option", required = true)]
        options: Vec<String>,
    },
    /// One level per item on an ordered scale, lowest first.
    Score {
        /// The question, the items and the call's limits.
        #[command(flatten)]
        common: Common,
        /// A level (repeat, lowest first).
        #[arg(long = "level", required = true)]
        levels: Vec<String>,
    },
}

/// What every kind of question takes.
#[derive(Debug, Args)]
pub struct Common {
    /// The question asked of every item.
    pub question: String,
    /// A file holding a JSON list of strings or {id, text}; without it,
    /// the list is read from stdin.
    #[arg(long, value_name = "FILE")]
    pub items: Option<PathBuf>,
    /// Cut each item to this many characters.
    #[arg(long)]
    pub max_chars: Option<u32>,
    /// The most the call may spend, in USD.
    #[arg(long)]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask.
    #[arg(long)]
    pub judge: Option<String>,
}

/// A JSON value from `path`, or from stdin without one; `what` names it
/// in the error.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Option<PathBuf>, what: &str) -> Result<T> {
    let (text, origin) = match path {
        Some(p) => (
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
            p.display().to_string(),
        ),
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .with_context(|| format!("reading {what} from stdin"))?;
            (s, "stdin".to_string())
        }
    };
    serde_json::from_str(&text).with_context(|| format!("{what} from {origin}"))
}

fn read_items(path: &Option<PathBuf>) -> Result<Vec<ItemInput>> {
    read_json(
        path,
        "items must be a JSON list of strings or {\"id\", \"text\"} objects; read",
    )
}

fn params(common: Common, kind: Kind) -> Result<AskParams> {
    Ok(AskParams {
        question: common.question,
        items: read_items(&common.items)?,
        kind,
        yes: None,
        no: None,
        options: None,
        levels: None,
        top_k: None,
        threshold: None,
        max_chars: common.max_chars,
        budget_usd: common.budget_usd,
        judge: common.judge,
    })
}

/// Builds the tool arguments from the command line.
pub fn to_params(cmd: AskCommand) -> Result<AskParams> {
    Ok(match cmd {
        AskCommand::Judge {
            common,
            yes,
            no,
            top_k,
            threshold,
        } => AskParams {
            yes: Some(yes),
            no: Some(no),
            top_k,
            threshold,
            ..params(common, Kind::Judge)?
        },
        AskCommand::Choose { common, options } => {
            let mut map = Map::new();
            for o in options {
                let Some((label, when)) = o.split_once('=') else {
                    bail!("--option '{o}' must be label=when it applies");
                };
                map.insert(
                    label.trim().to_string(),
                    Value::String(when.trim().to_string()),
                );
            }
            AskParams {
                options: Some(map),
                ..params(common, Kind::Choose)?
            }
        }
        AskCommand::Score { common, levels } => AskParams {
            levels: Some(levels),
            ..params(common, Kind::Score)?
        },
    })
}

/// Asks the question and prints the result as JSON on stdout.
pub async fn run(app: &App, cmd: AskCommand) -> Result<()> {
    let params = to_params(cmd)?;
    let out = ask::run(&app.runtime, &app.config, &params).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
