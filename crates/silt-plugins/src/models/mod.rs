//! Models on this machine: where they live, which silt knows how to fetch,
//! and installing them (`silt models install NAME`).
//!
//! A model is a folder `<models dir>/<name>` holding `config.json`,
//! `tokenizer.json` and `model.safetensors` (or, for a model the catalog
//! knows, the files it lists, such as one GGUF file), plus `silt-model.json` that
//! records where it came from and the sha256 of every file. The models
//! dir is `$SILT_MODELS_DIR`, else `<data dir>/silt/models`. A plugin sees a
//! model only if its manifest grants it by name (`[grants] models`).

pub mod catalog;
pub mod install;

use std::path::PathBuf;

use anyhow::{Result, bail};

/// The record an install leaves beside the model's files.
pub const RECORD: &str = "silt-model.json";

/// Where installed models live.
pub fn models_dir() -> PathBuf {
    silt_config::env::path("SILT_MODELS_DIR")
        .or_else(|| dirs::data_dir().map(|d| d.join("silt").join("models")))
        .unwrap_or_else(|| std::env::temp_dir().join("silt-models"))
}

/// Whether `name` can name a model: lowercase letters, digits and '-',
/// not starting with '-' (so it is one path component and never hidden).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The folder of installed model `name`, or how to install it.
pub fn installed(name: &str) -> Result<PathBuf> {
    if !valid_name(name) {
        bail!("'{name}' is not a model name (lowercase letters, digits and '-')");
    }
    let dir = models_dir().join(name);
    // a known model's files, else the files its install recorded (a GGUF
    // model is one file), else an embedding model's
    let recorded: Option<Vec<String>> = std::fs::read(dir.join(RECORD))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["files"].as_object().map(|o| o.keys().cloned().collect()));
    let needed: Vec<String> = match (catalog::find(name), recorded) {
        (Some(k), _) => k.file_names().into_iter().map(String::from).collect(),
        (None, Some(files)) if !files.is_empty() => files,
        _ => catalog::REQUIRED.iter().map(|f| f.to_string()).collect(),
    };
    if !needed.iter().all(|f| dir.join(f).is_file()) {
        bail!(
            "model '{name}' is not installed (looked in {}); run `silt models install {name}`",
            dir.display()
        );
    }
    Ok(dir)
}
