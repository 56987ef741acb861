//! `silt-bench sieve`: grep over a repository cold and warm beside the
//! I/O floor (listing the files as `rg --files` does and reading every
//! one), and verify over a generated 20-claim report citing local files.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use silt_config::Config;
use silt_mcp::tools::grep::{self, GrepMode, GrepParams};
use silt_mcp::tools::verify::{self, VerifyParams};
use silt_runtime::app::App;

#[derive(Debug, clap::Args)]
pub struct BenchSieveArgs {
    /// The repository grep searches (about 1000 files is the reference's size).
    #[arg(long)]
    pub repo: PathBuf,
    /// What grep is asked.
    #[arg(
        long,
        default_value = "where are command line flags parsed and validated"
    )]
    pub question: String,
    /// Warm runs per measurement.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// The judge grep and verify ask.
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// Skip functions mode and verify (for a slow judge).
    #[arg(long)]
    pub files_only: bool,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A fresh app whose caches (compiled components, answers) live in `dir`.
fn fresh_app(dir: &Path) -> Result<App> {
    let config = Config {
        cache_dir: Some(dir.to_path_buf()),
        ..Config::default()
    };
    // named here, so no $SILT_COMPILE_CACHE_DIR can make a cold run warm
    App::with_compile_cache(config, Some(dir.join("components")))
}

/// Fails when a run timed as cold was served answers from a cache.
fn no_answer_cached(result: &Value, what: &str) -> Result<()> {
    let hits = result["cache_hits"].as_u64();
    anyhow::ensure!(
        hits == Some(0),
        "the cold {what} run found {hits:?} answers cached: it would not be cold"
    );
    Ok(())
}

/// The floor any grep pays: list the files (`rg --files` when installed,
/// else silt's own gitignore-aware walk) and read every one.
fn io_floor(repo: &Path) -> Result<(Duration, String, usize, u64)> {
    let started = Instant::now();
    let (files, lister): (Vec<PathBuf>, String) = match std::process::Command::new("rg")
        .arg("--files")
        .current_dir(repo)
        .output()
    {
        Ok(out) if out.status.success() => (
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| repo.join(l))
                .collect(),
            "rg --files".into(),
        ),
        _ => (
            silt_files::walk::walk(&silt_files::beneath::Beneath::open(repo)?, grep::CACHE_DIR)?
                .files
                .into_iter()
                .map(|f| repo.join(f.path))
                .collect(),
            "silt walk (rg not installed)".into(),
        ),
    };
    let mut bytes = 0u64;
    for f in &files {
        bytes += std::fs::read(f).map(|b| b.len() as u64).unwrap_or(0);
    }
    Ok((started.elapsed(), lister, files.len(), bytes))
}

/// Ten source files and a 20-claim report citing them, half the claims
/// with quotes, a few citing what the sources do not say.
fn verify_fixture(dir: &Path) -> Result<String> {
    let topics = [
        "ledger", "budget", "sleep", "recall", "capture", "decay", "merge", "boundary", "parent",
        "eviction",
    ];
    let mut report = String::from("# Findings\n\n");
    for (i, t) in topics.iter().enumerate() {
        let mut text = String::new();
        for p in 0..12 {
            text.push_str(&format!(
                "Paragraph {p} on the {t}: the {t} keeps {n} items and revisits them every {d} days. \
                 Other notes on unrelated topics follow, covering storage, logging and tests.\n\n",
                n = 100 + i * 10 + p,
                d = 3 + p
            ));
        }
        std::fs::write(dir.join(format!("{t}.md")), text)?;
        report.push_str(&format!(
            "- The {t} keeps {} items (`{t}.md`).\n- It revisits them every 5 days [notes]({t}.md).\n",
            100 + i * 10 + 2
        ));
    }
    Ok(report)
}

/// Copies the regular files of `from` into `to`, leaving out `.git` and
/// any `.silt-cache` an older silt left inside the tree.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" || name == grep::CACHE_DIR {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

pub async fn run(args: BenchSieveArgs) -> Result<()> {
    let original = std::fs::canonicalize(&args.repo)
        .with_context(|| format!("cannot open {}", args.repo.display()))?;
    let runs = args.runs.max(1);
    // the runs use a copy: answers cached in the repository by earlier
    // runs would make "cold" warm, and the user's tree is left alone
    let cache = tempfile::tempdir()?;
    let repo = cache.path().join("repo");
    copy_tree(&original, &repo)
        .with_context(|| format!("cannot copy {} to time it", original.display()))?;
    let (floor, lister, files, bytes) = io_floor(&repo)?;

    let params = |mode, question: &str| GrepParams {
        question: question.to_string(),
        path: repo.to_string_lossy().into_owned(),
        mode,
        top_k: Some(20),
        threshold: Some(0.0),
        budget_usd: None,
        judge: Some(args.judge.clone()),
    };
    let mut grep_json = json!({});
    let modes: &[(&str, GrepMode)] = if args.files_only {
        &[("files", GrepMode::Files)]
    } else {
        &[
            ("files", GrepMode::Files),
            ("functions", GrepMode::Functions),
        ]
    };
    // absolute paths only, as over HTTP
    let local = silt_runtime::folders::Folders::local(None);
    for &(name, mode) in modes {
        // cold: a fresh app on an empty cache folder of its own, nothing
        // compiled, no answer kept (the OS page cache is warm)
        let app = fresh_app(&cache.path().join(name))?;
        let t = Instant::now();
        let p = params(mode, &args.question);
        let first = grep::run(&app.runtime, &app.config, &p, &local, None).await?;
        let cold = t.elapsed();
        no_answer_cached(&first, name)?;
        let mut warm = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            grep::run(&app.runtime, &app.config, &p, &local, None).await?;
            warm.push(t.elapsed());
        }
        // another question over the same files: no answer is cached, but a
        // judge that keeps vectors embeds only the question
        let t = Instant::now();
        let other = params(mode, "how are API errors turned into messages for the user");
        let second = grep::run(&app.runtime, &app.config, &other, &local, None).await?;
        let new_question = t.elapsed();
        grep_json[name] = json!({
            "cold_s": secs(cold), "warm_p50_s": secs(median(warm)),
            "new_question_s": secs(new_question),
            "units_scored": first["units_scored"], "requests": first["requests"],
            "input_tokens": first["input_tokens"],
            "new_question_input_tokens": second["input_tokens"],
        });
    }
    if args.files_only {
        let out = json!({"repo": original, "files": files, "judge": args.judge, "grep": grep_json, "runs": runs});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }

    let fixture = tempfile::tempdir()?;
    let report = verify_fixture(fixture.path())?;
    let vparams = VerifyParams {
        report: Some(report),
        base_path: Some(fixture.path().to_string_lossy().into_owned()),
        judge: Some(args.judge.clone()),
        ..VerifyParams::default()
    };
    let app = fresh_app(&cache.path().join("verify"))?;
    let t = Instant::now();
    let first = verify::run(&app.runtime, &app.config, &vparams, &local, None).await?;
    let vcold = t.elapsed();
    no_answer_cached(&first, "verify")?;
    let mut vwarm = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        verify::run(&app.runtime, &app.config, &vparams, &local, None).await?;
        vwarm.push(t.elapsed());
    }
    let claims = first["results"].as_array().map_or(0, Vec::len);
    let vwarm = median(vwarm);

    let out: Value = json!({
        "repo": original, "files": files, "bytes": bytes, "judge": args.judge,
        "io_floor": {"lister": lister, "seconds": secs(floor)},
        "grep": grep_json,
        "verify": {"claims": claims, "cold_s": secs(vcold), "warm_p50_s": secs(vwarm),
                   "requests": first["requests"]},
        "runs": runs,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{files} files, {:.1} MB; I/O floor ({lister}): {:.3} s",
            bytes as f64 / 1e6,
            secs(floor)
        );
        for name in ["files", "functions"] {
            let g = &out["grep"][name];
            println!(
                "grep {name:<9} cold {:.3} s, warm p50 {:.3} s ({} units)",
                g["cold_s"].as_f64().unwrap_or(0.0),
                g["warm_p50_s"].as_f64().unwrap_or(0.0),
                g["units_scored"]
            );
        }
        println!(
            "verify {claims} claims: cold {:.3} s, warm p50 {:.3} s",
            secs(vcold),
            secs(vwarm)
        );
    }
    Ok(())
}
