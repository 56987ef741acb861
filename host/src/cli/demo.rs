//! `silt demo`: the seed's ten rotted lessons, consolidated by the ledger
//! engine component: decay and fading, then the sleep pass, on a ledger
//! of the demo's own in the store the user's ledger is kept in.

use anyhow::Result;

use silt_ledger_service::service::LedgerService;
use silt_ledger_service::values::{entry_from_wit, view};
use silt_runtime::app::App;
use silt_runtime::bindings::ledger_engine::silt::ledger::types::Entry;

/// `silt demo`'s options.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// The judge for the sleep pass (it must export silt:judge/relations).
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// The time to run at, in unix seconds (default: now).
    #[arg(long)]
    pub now: Option<f64>,
    /// JSON out.
    #[arg(long)]
    pub json: bool,
}

fn active(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| {
            e.status == silt_runtime::bindings::ledger_engine::silt::ledger::types::Status::Active
        })
        .count()
}

fn print_entries(title: &str, entries: &[Entry], now: f64) {
    println!("{title} ({} active)", active(entries));
    for e in entries {
        let v = view(e, now);
        let mark = match v["status"].as_str() {
            Some("active") => " ",
            Some("dormant") => "~",
            _ => "x",
        };
        println!(
            "  {mark} [{}] {:.2}  WHEN {} -> PREFER {}",
            e.id,
            v["confidence"].as_f64().unwrap_or(0.0),
            e.when,
            e.prefer
        );
        if !e.note.is_empty() {
            println!("               {}", e.note);
        }
    }
}

/// Imports the ten demo lessons into a scratch ledger (a new SQLite file,
/// or a schema of its own on the configured PostgreSQL server),
/// consolidates and sleeps, and prints the ledger before and after.
pub async fn run(app: &App, args: DemoArgs) -> Result<()> {
    let now = args.now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    });
    // the demo's own ledger, through the store a user's ledger uses:
    // on a team's PostgreSQL server (SILT_LEDGER_URL, [ledger] url) a
    // schema of its own, else a new SQLite file; never the user's ledger
    let (configured, _) =
        silt_ledger_service::store::Store::default_path(app.config.ledger.url.as_deref());
    let dir = tempfile::tempdir()?;
    let schema = match silt_ledger_service::store::Location::of(&configured) {
        silt_ledger_service::store::Location::Postgres(url) => {
            Some(silt_ledger_service::store::Scratch::schema(url, "demo")?)
        }
        silt_ledger_service::store::Location::File(_) => None,
    };
    let ledger = match &schema {
        Some(s) => std::path::PathBuf::from(&s.url),
        None => dir.path().join("demo.db"),
    };
    if !args.json {
        match &schema {
            Some(s) => eprintln!(
                "(the demo's ledger: schema {} in {}, dropped after)",
                s.name,
                silt_ledger_service::store::describe(&configured)
            ),
            None => eprintln!("(the demo's ledger: a new SQLite file, removed after)"),
        }
    }
    let mut service = LedgerService::open(app.runtime.clone(), &args.judge, &ledger)?;
    service
        .store
        .import(&silt_core::ledger::demo::entries(now), "the demo", now)?;
    let before = service.stats(true, 500, now).await?;
    let consolidate = service.homeostasis(now).await?;
    let (sleep, events) = service.sleep(now, None).await?;
    let after = service.stats(true, 500, now).await?;
    drop(service);
    if args.json {
        let core = |entries: &[Entry]| entries.iter().map(entry_from_wit).collect::<Vec<_>>();
        let consolidate = silt_core::ledger::ops::Homeostasis {
            retired: consolidate.retired as usize,
            evicted: consolidate.evicted as usize,
            active: consolidate.active as usize,
        };
        let sleep = silt_core::ledger::sleep::SleepReport {
            merged: sleep.merged as usize,
            contradictions_resolved: sleep.contradictions_resolved as usize,
            generalized: sleep.generalized as usize,
            held_for_review: sleep.held_for_review as usize,
        };
        let out = silt_core::ledger::demo::report(
            &args.judge,
            &core(&before),
            &consolidate,
            &sleep,
            &core(&after),
            &events,
            now,
        );
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_entries("BEFORE", &before, now);
        println!();
        println!(
            "consolidate: {} faded, {} evicted, {} active",
            consolidate.retired, consolidate.evicted, consolidate.active
        );
        println!(
            "sleep ({} judge): {} merged, {} contradictions resolved, {} abstracted",
            args.judge, sleep.merged, sleep.contradictions_resolved, sleep.generalized
        );
        println!();
        print_entries("AFTER", &after, now);
    }
    Ok(())
}
