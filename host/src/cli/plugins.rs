//! `silt plugins list|inspect`: what each plugin is, exports and may touch.

use anyhow::Result;
use clap::Subcommand;
use serde_json::{Value, json};

use crate::app::App;
use crate::plugins::manifest::{Grants, PluginKind};
use crate::plugins::registry::Entry;

#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Every plugin silt can load, with its grants.
    List {
        /// JSON out.
        #[arg(long)]
        json: bool,
    },
    /// One plugin: version, exports, imports, grants and limits.
    Inspect {
        name: String,
        /// JSON out.
        #[arg(long)]
        json: bool,
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
        "grants": grants_json(&m.grants),
        "broad_grants": m.broad_grants(),
        "limits": m.limits,
        "entailment": m.judge.unwrap_or_default().entailment,
    })
}

pub async fn run(app: &App, cmd: PluginsCommand) -> Result<()> {
    match cmd {
        PluginsCommand::List { json } => {
            let entries: Vec<&Entry> = app.runtime.registry.entries().collect();
            if json {
                let out = json!({
                    "plugins": entries.iter().map(|e| summary(e)).collect::<Vec<_>>(),
                    "problems": app.runtime.registry.problems,
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
                for p in &app.runtime.registry.problems {
                    println!("skipped: {p}");
                }
            }
        }
        PluginsCommand::Inspect { name, json } => {
            let entry = app.runtime.registry.get(&name)?;
            let (_, component) = app.runtime.component(&name)?;
            let ty = component.component_type();
            let engine = app.runtime.engine();
            let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
            let imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
            let mut out = summary(entry);
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
                    let entails = m.judge.unwrap_or_default().entailment;
                    println!(
                        "verify:   {}",
                        if entails {
                            "reads entailment: may confirm a claim (supports_fully)"
                        } else {
                            "scores similarity: never confirms a claim (at most partially_supports)"
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
