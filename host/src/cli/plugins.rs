//! `silt plugins`: what each plugin is, exports and may touch; adding,
//! updating and removing plugins from folders, URLs and OCI registries;
//! publishing, and signing them.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};

use silt_plugins::install::{self, Mode, Origin, Staged};
use silt_plugins::lock::LockFile;
use silt_plugins::manifest::{Grants, Manifest, PluginKind};
use silt_plugins::registry::Entry;
use silt_plugins::signature::{SecretKey, Signed, Trust, key_text};
use silt_plugins::version;
use silt_runtime::app::App;

/// `silt plugins`' subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Every plugin silt can load, with its grants.
    List {
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// One plugin: version, digest, signer, exports, imports, grants and
    /// limits. Given a source (folder, URL, OCI reference) instead of an
    /// installed name, fetches and shows it without running any of it.
    Inspect {
        /// An installed plugin's name, or a source to fetch.
        name: String,
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// Installs a plugin from a folder, an https URL of its plugin.toml,
    /// or an OCI reference (oci://host/repo:tag, host/repo@sha256:…),
    /// after showing what it is granted; pins its digest in plugins.lock.
    Add {
        /// A folder, the https URL of a plugin.toml, or an OCI reference.
        source: String,
        /// Accept the grants without asking (for scripts).
        #[arg(long)]
        yes: bool,
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// Fetches an installed plugin again (from where it came, or --from)
    /// and moves its pin to what it is now.
    Update {
        /// The installed plugin's name.
        name: String,
        /// A new source to take it from.
        #[arg(long)]
        from: Option<String>,
        /// Install it even when its version is lower than the installed
        /// one's (or it states none while that one does): a rollback.
        #[arg(long)]
        allow_downgrade: bool,
        /// Accept the grants without asking (for scripts).
        #[arg(long)]
        yes: bool,
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// Removes a plugin that `silt plugins add` installed, and its pin.
    Remove {
        /// The plugin's name.
        name: String,
    },
    /// Pushes the plugin folder DIR (manifest, component, signature) to an
    /// OCI registry; prints the digest to add it by.
    Publish {
        /// The plugin folder.
        dir: PathBuf,
        /// host[:port]/repository:tag
        reference: String,
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// Makes a signing key: writes its secret to FILE (readable by you
    /// only) and prints the public key for silt.toml's trusted_keys.
    Keygen {
        /// The file to write the secret key to.
        #[arg(long)]
        out: PathBuf,
    },
    /// Signs the plugin folder DIR with a key from `keygen`: writes
    /// DIR/plugin.sig.
    Sign {
        /// The plugin folder.
        dir: PathBuf,
        /// The secret key file `keygen` wrote.
        #[arg(long)]
        key: PathBuf,
    },
}

fn grants_json(g: &Grants) -> Value {
    json!({"read": g.read, "http": g.http, "env": g.env, "models": g.models, "exec": g.exec})
}

fn grants_line(g: &Grants) -> String {
    let mut parts = Vec::new();
    if !g.read.is_empty() {
        parts.push(format!(
            "read {}",
            g.read
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !g.http.is_empty() {
        parts.push(format!("http {}", g.http.join(", ")));
    }
    if !g.env.is_empty() {
        parts.push(format!("env {}", g.env.join(", ")));
    }
    if !g.models.is_empty() {
        parts.push(format!("models {} (read-only)", g.models.join(", ")));
    }
    if !g.exec.is_empty() {
        let programs: Vec<String> = g
            .exec
            .iter()
            .map(|(p, e)| match &e.override_var {
                Some(var) => format!("{p} (or ${var})"),
                None => p.clone(),
            })
            .collect();
        parts.push(format!("exec {}", programs.join(", ")));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}

fn summary(e: &Entry) -> Value {
    let m = &e.manifest;
    json!({
        "name": m.plugin.name,
        "kind": m.plugin.kind,
        "description": m.plugin.description,
        "origin": e.origin(),
        // installed by `silt plugins add` (checked against plugins.lock on load)
        "pinned": e.checks.as_ref().is_some_and(|c| c.pin.is_some()),
        "grants": grants_json(&m.grants),
        "broad_grants": m.broad_grants(),
        "limits": m.limits,
        "entailment": m.judge.clone().unwrap_or_default().entailment,
    })
}

/// What a plugin about to be installed is and may do, for a person.
fn describe(staged: &Staged, signer: &Option<Signed>) -> String {
    let m = &staged.manifest;
    let mut out = format!(
        "{} ({}) — {}\nversion:   {}\nsource:    {}\n",
        m.plugin.name,
        format!("{:?}", m.plugin.kind).to_lowercase(),
        m.plugin.description,
        m.plugin
            .version
            .as_deref()
            .unwrap_or("unknown (its manifest states none)"),
        staged.source
    );
    if let Some(r) = &staged.resolved {
        out += &format!("resolved:  {r}\n");
    }
    out += &format!(
        "component: {} ({:.1} MB)\nsigned by: {}\ngrants:    {}\n",
        staged.component_digest,
        staged.component_size as f64 / 1e6,
        match signer {
            Some(s) if s.trusted => format!("{} (trusted)", s.key),
            Some(s) => format!("{} (not in trusted_keys)", s.key),
            None => "nobody (unsigned)".into(),
        },
        grants_line(&m.grants)
    );
    for warning in m.broad_grants() {
        out += &format!("warning:   {warning}\n");
    }
    out
}

fn staged_json(staged: &Staged, signer: &Option<Signed>) -> Value {
    let m = &staged.manifest;
    json!({
        "name": m.plugin.name,
        "kind": m.plugin.kind,
        "description": m.plugin.description,
        "version": m.plugin.version,
        "source": staged.source,
        "resolved": staged.resolved,
        "component_digest": staged.component_digest,
        "manifest_digest": staged.manifest_digest,
        "signer": signer,
        "grants": grants_json(&m.grants),
        "broad_grants": m.broad_grants(),
        "limits": m.limits,
    })
}

/// Asks on the terminal whether to go on; without a terminal, only
/// `--yes` goes on.
fn confirm(question: &str, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "not confirmed: stdin is not a terminal; read the grants above and run again with --yes to accept them"
        );
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        bail!("not installed: you declined");
    }
    Ok(())
}

/// Fetches, checks, shows, confirms and installs; what add and update share.
async fn fetch_and_install(
    app: &App,
    origin: &Origin,
    mode: Mode,
    allow_downgrade: bool,
    yes: bool,
    json: bool,
) -> Result<()> {
    let dir = app.config.install_dir();
    let trust = Trust::from_config(&app.config.plugins.trusted_keys)?;
    let staged = install::fetch(origin, &dir).await?;
    let name = staged.manifest.plugin.name.clone();
    if let Ok(taken) = app.runtime.registry().get(&name)
        && !taken
            .origin()
            .starts_with(&dir.join(&name).display().to_string())
    {
        bail!(
            "plugin name '{name}' is already taken by {}",
            taken.origin()
        );
    }
    let signer = install::check(&staged, &trust)?;
    if mode == Mode::Update {
        let lock = LockFile::read(&dir)?;
        if let Some(pin) = lock.plugins.get(&name)
            && pin.component == staged.component_digest
            && pin.manifest == staged.manifest_digest
        {
            if json {
                println!(
                    "{}",
                    json!({"name": name, "changed": false, "component_digest": pin.component})
                );
            } else {
                println!("{name} is already at {}", pin.component);
            }
            return Ok(());
        }
        // a signed manifest signs its version: going back to an older
        // signed release is refused unless asked for
        let installed = install::installed_version(&dir, &name)?;
        if let Some(note) = version::judge_update(
            &name,
            installed.as_deref(),
            staged.manifest.plugin.version.as_deref(),
            allow_downgrade,
        )? {
            eprintln!("note:      {note}");
        }
    }
    // a person reads this before saying yes; a script gets it on stderr
    eprint!("{}", describe(&staged, &signer));
    let verb = if mode == Mode::Add {
        "Install"
    } else {
        "Update"
    };
    confirm(&format!("{verb} {name} with these grants?"), yes)?;
    let described = staged_json(&staged, &signer);
    let pin = install::install(&dir, staged, signer.as_ref(), mode)?;
    if json {
        let mut out = described;
        out["installed"] = json!(dir.join(&name));
        out["changed"] = json!(true);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{} {name} ({}) in {}",
            if mode == Mode::Add {
                "installed"
            } else {
                "updated"
            },
            pin.component,
            dir.display()
        );
    }
    Ok(())
}

/// Runs one plugins subcommand; add and update ask before granting unless
/// `--yes`.
pub async fn run(app: &App, cmd: PluginsCommand) -> Result<()> {
    match cmd {
        PluginsCommand::Add { source, yes, json } => {
            fetch_and_install(app, &Origin::parse(&source)?, Mode::Add, false, yes, json).await?;
        }
        PluginsCommand::Update {
            name,
            from,
            allow_downgrade,
            yes,
            json,
        } => {
            let source = match from {
                Some(s) => s,
                None => {
                    let dir = app.config.install_dir();
                    LockFile::read(&dir)?
                        .plugins
                        .get(&name)
                        .map(|p| p.source.clone())
                        .with_context(|| {
                            format!("plugin '{name}' is not installed in {}; add it with `silt plugins add`", dir.display())
                        })?
                }
            };
            fetch_and_install(
                app,
                &Origin::parse(&source)?,
                Mode::Update,
                allow_downgrade,
                yes,
                json,
            )
            .await?;
        }
        PluginsCommand::Remove { name } => {
            let dir = app.config.install_dir();
            install::remove(&dir, &name)?;
            println!("removed {name} from {}", dir.display());
        }
        PluginsCommand::Publish {
            dir,
            reference,
            json,
        } => {
            let Origin::Oci(r) =
                Origin::parse(&format!("oci://{}", reference.trim_start_matches("oci://")))?
            else {
                unreachable!("an oci:// source is an OCI reference")
            };
            let digest = install::publish(&dir, &r).await?;
            let by_digest = format!("{}/{}@{digest}", r.registry(), r.repository());
            if json {
                println!(
                    "{}",
                    json!({"reference": r.whole(), "digest": digest, "add": by_digest})
                );
            } else {
                println!(
                    "pushed {} ({digest})\nadd it with: silt plugins add {by_digest}",
                    r.whole()
                );
            }
        }
        PluginsCommand::Keygen { out } => {
            let key = SecretKey::generate()?;
            write_secret(&out, &key.to_text())?;
            let public = key_text(&key.public());
            println!(
                "{public}\nsecret key written to {}; to trust it, add to silt.toml:\n[plugins]\ntrusted_keys = [\"{public}\"]",
                out.display()
            );
        }
        PluginsCommand::Sign { dir, key } => {
            let key = SecretKey::read(&key)?;
            let (manifest, manifest_digest) = Manifest::load_with_digest(&dir)?;
            let name = &manifest.plugin.name;
            let component = dir.join(manifest.component_file());
            let bytes = std::fs::read(&component)
                .with_context(|| format!("cannot read {}", component.display()))?;
            let sig = key.sign(name, &silt_plugins::lock::digest(&bytes), &manifest_digest);
            let path = dir.join(silt_plugins::signature::SIGNATURE_FILE);
            std::fs::write(&path, sig.to_toml())
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("signed {name} as {}: {}", sig.key, path.display());
        }
        PluginsCommand::List { json } => {
            let registry = app.runtime.registry();
            let entries: Vec<&Entry> = registry.entries().collect();
            if json {
                let out = json!({
                    "plugins": entries.iter().map(|e| summary(e)).collect::<Vec<_>>(),
                    "problems": registry.problems,
                });
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                for e in entries {
                    let m = &e.manifest;
                    println!(
                        "{:<12} {:<7} grants: {:<20} {}",
                        m.plugin.name,
                        format!("{:?}", m.plugin.kind).to_lowercase(),
                        grants_line(&m.grants),
                        e.origin()
                    );
                    for warning in m.broad_grants() {
                        println!("{:<12} warning: {warning}", "");
                    }
                }
                for p in &registry.problems {
                    println!("skipped: {p}");
                }
            }
        }
        PluginsCommand::Inspect { name, json }
            if app.runtime.registry().get(&name).is_err() && Origin::parse(&name).is_ok() =>
        {
            // not installed: fetch to a staging folder, show, and drop it
            let origin = Origin::parse(&name)?;
            let scratch = tempfile::tempdir()?;
            let staged = install::fetch(&origin, scratch.path()).await?;
            let trust = Trust::from_config(&app.config.plugins.trusted_keys)?;
            let signer = install::check(&staged, &trust)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&staged_json(&staged, &signer))?
                );
            } else {
                print!("{}", describe(&staged, &signer));
            }
        }
        PluginsCommand::Inspect { name, json } => {
            let registry = app.runtime.registry();
            let entry = registry.get(&name)?;
            let (_, verified) = entry.verified_bytes()?;
            let (_, component, _) = app.runtime.component(&name)?;
            let ty = component.component_type();
            let engine = app.runtime.engine();
            let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
            let imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
            let mut out = summary(entry);
            if let Some(v) = &verified {
                out["component_digest"] = json!(v.component_digest);
                out["manifest_digest"] = json!(v.manifest_digest);
                out["pinned"] = json!(v.pinned);
                out["signer"] = json!(v.signer);
            }
            out["exports"] = json!(exports);
            out["imports"] = json!(imports);
            if entry.manifest.plugin.kind == PluginKind::Judge {
                let judge = app.runtime.judge(&name).await?;
                let i = &judge.info;
                out["info"] = json!({
                    "name": i.name, "version": i.version, "deterministic": i.deterministic,
                    "cost_per_million_input_tokens": i.cost_per_million_input_tokens,
                    "preferred_batch_size": i.preferred_batch_size,
                });
                out["version"] = json!(i.version);
            }
            // the signed release the manifest states outranks what the
            // judge says of itself (kept under `info`)
            if let Some(v) = &entry.manifest.plugin.version {
                out["version"] = json!(v);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                let m = &entry.manifest;
                println!(
                    "{} ({}) — {}",
                    m.plugin.name,
                    format!("{:?}", m.plugin.kind).to_lowercase(),
                    m.plugin.description
                );
                if let Some(v) = out.get("version") {
                    println!("version:  {}", v.as_str().unwrap_or("?"));
                }
                println!("origin:   {}", entry.origin());
                if let Some(v) = &verified {
                    println!(
                        "digest:   {} ({})",
                        v.component_digest,
                        if v.pinned {
                            "matches plugins.lock"
                        } else {
                            "not pinned: put there by hand"
                        }
                    );
                    println!(
                        "signed:   {}",
                        match &v.signer {
                            Some(s) if s.trusted => format!("{} (trusted)", s.key),
                            Some(s) => format!("{} (not in trusted_keys)", s.key),
                            None => "no".into(),
                        }
                    );
                }
                println!("exports:  {}", exports.join(", "));
                println!(
                    "imports:  {}",
                    if imports.is_empty() {
                        "none".into()
                    } else {
                        imports.join(", ")
                    }
                );
                println!("grants:   {}", grants_line(&m.grants));
                if m.plugin.kind == PluginKind::Judge {
                    let entails = m.judge.clone().unwrap_or_default().entailment;
                    println!(
                        "verify:   {}",
                        if entails {
                            "reads entailment: may confirm a claim (supports_fully)"
                        } else {
                            "scores similarity: its verdicts are `unverified` (it cannot assess a claim)"
                        }
                    );
                }
                for warning in m.broad_grants() {
                    println!("warning:  {warning}");
                }
                let l = &m.limits;
                println!(
                    "limits:   memory {} MiB, cpu {} ms, wall {} ms, output {} KiB",
                    l.memory_mib, l.cpu_ms, l.wall_ms, l.output_kib
                );
            }
        }
    }
    Ok(())
}

/// Writes a secret key readable by its owner only, never over a file.
fn write_secret(path: &std::path::Path, text: &str) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| {
        format!(
            "cannot create {} (an existing key is never overwritten)",
            path.display()
        )
    })?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(())
}
