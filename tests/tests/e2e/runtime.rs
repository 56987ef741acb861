//! The runtime's plumbing: the compile cache and config-chosen judges.

use serde_json::json;
use silt_config::{Config, PluginsConfig, ToolConfig};
use silt_e2e::install_hostile;
use silt_mcp::tools::ask::{self, AskParams};
use silt_runtime::app::App;
use silt_runtime::cache::CacheOutcome;

fn params(judge: Option<&str>) -> AskParams {
    let mut v = json!({"question": "Which team?", "kind": "choose",
        "options": {"web": "browser CSS", "api": "HTTP endpoints"}, "items": ["CSS in the browser"]});
    if let Some(j) = judge {
        v["judge"] = json!(j);
    }
    serde_json::from_value(v).unwrap()
}

fn cached_app(cache: &std::path::Path) -> App {
    App::with_compile_cache(Config::default(), Some(cache.join("components"))).unwrap()
}

#[tokio::test]
async fn components_compile_once_then_load_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    // by plugin name: the order plugins load in is not the point
    let outcome = |app: &App| {
        let mut loads = app
            .runtime
            .load_reports()
            .iter()
            .map(|r| (r.plugin.clone(), r.cache))
            .collect::<Vec<_>>();
        loads.sort_by(|a, b| a.0.cmp(&b.0));
        loads
    };

    let first = cached_app(cache.path());
    ask::run(&first.runtime, &first.config, &params(None))
        .await
        .unwrap();
    assert_eq!(
        outcome(&first),
        [
            ("ask".into(), CacheOutcome::Miss),
            ("lexical".into(), CacheOutcome::Miss)
        ]
    );

    let second = cached_app(cache.path());
    ask::run(&second.runtime, &second.config, &params(None))
        .await
        .unwrap();
    assert_eq!(
        outcome(&second),
        [
            ("ask".into(), CacheOutcome::Hit),
            ("lexical".into(), CacheOutcome::Hit)
        ]
    );

    // A damaged artifact is recompiled, never trusted.
    let artifacts: Vec<_> = std::fs::read_dir(cache.path().join("components"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(artifacts.len(), 2);
    for a in &artifacts {
        std::fs::write(a.path(), b"not a compiled component").unwrap();
    }
    let third = cached_app(cache.path());
    let out = ask::run(&third.runtime, &third.config, &params(None))
        .await
        .unwrap();
    assert_eq!(out["results"][0]["choice"], "web");
    assert_eq!(
        outcome(&third),
        [
            ("ask".into(), CacheOutcome::Miss),
            ("lexical".into(), CacheOutcome::Miss)
        ]
    );
}

#[tokio::test]
async fn the_config_picks_the_judge_and_a_call_overrides_it() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "bad-probs", "", "");
    let mut config = Config {
        plugins: PluginsConfig {
            dirs: vec![plugins.path().to_path_buf()],
            ..Default::default()
        },
        ..Config::default()
    };
    config.tools.insert(
        "sieve_ask".into(),
        ToolConfig {
            judge: Some("bad-probs".into()),
        },
    );
    let app = App::with_config(config, false).unwrap();

    let err = ask::run(&app.runtime, &app.config, &params(None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("judge 'bad-probs'"),
        "the configured judge answers: {err}"
    );
    let out = ask::run(&app.runtime, &app.config, &params(Some("lexical")))
        .await
        .unwrap();
    assert_eq!(out["judge"], "lexical");
}

#[tokio::test]
async fn a_judge_without_relate_serves_all_but_the_sleep_pass() {
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(plugins.path(), "bad-probs", "", "");
    let config = Config {
        plugins: PluginsConfig {
            dirs: vec![plugins.path().to_path_buf()],
            ..Default::default()
        },
        ..Config::default()
    };
    let app = App::with_config(config, false).unwrap();
    let params = silt_runtime::ledger::default_params();
    let mut ledger = app
        .runtime
        .open_ledger("bad-probs", &params, None, None)
        .await
        .unwrap();
    let now = 1_750_000_000.0;
    let demo: Vec<_> = silt_core::ledger::demo::entries(now)
        .iter()
        .map(silt_ledger_service::values::entry_to_wit)
        .collect();
    ledger.sync(&demo).await.unwrap();
    // the agent-as-judge path needs no relate
    assert!(!ledger.review_candidates().await.unwrap().is_empty());
    let Err(err) = ledger.sleep(now, None).await else {
        panic!("a judge without relate ran the sleep pass")
    };
    let err = err.to_string();
    assert!(
        err.contains("does not export silt:judge/relations"),
        "{err}"
    );
}

#[tokio::test]
async fn a_sleep_pass_with_thousands_of_pairs_stays_under_the_judge_output_cap() {
    // 250 lessons on one trigger: 31,125 candidate pairs, whose relations in
    // one answer would cross the lexical judge's 1 MiB output cap.
    let app = App::with_config(Config::default(), false).unwrap();
    let mut ledger = app
        .runtime
        .open_ledger(
            "lexical",
            &silt_runtime::ledger::default_params(),
            None,
            None,
        )
        .await
        .unwrap();
    let now = 1_750_000_000.0;
    let entries: Vec<_> = (0..250)
        .map(|i| {
            let e = silt_core::ledger::Entry::new(
                format!("{i:08x}"),
                "deploying on a Friday".into(),
                format!("ask for a review first, step {i}"),
                0.5,
                1,
                now,
            );
            silt_ledger_service::values::entry_to_wit(&e)
        })
        .collect();
    ledger.sync(&entries).await.unwrap();
    let (report, _) = ledger
        .sleep(now, None)
        .await
        .expect("sleep runs in bounded batches");
    // every pair answered: "step 3" and "step 7" are other actions, so the
    // judge leans to merge without the margin and each pair is held
    assert_eq!(report.merged, 0, "{report:?}");
    assert!(report.held_for_review > 2_000, "{report:?}");
}

/// Where the machine has a core to spare, the sleep pass hands its search
/// by words to a second instance of the engine (its `partners` export)
/// and makes the very pass it makes searching itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sleep_pass_searches_by_words_on_a_second_instance() {
    // 5,000 generated lessons hold more distinct triggers than the host
    // hands over from (its 32 actions are searched by the engine); the
    // lexical judge gives no vectors, so nothing is searched by meaning
    let handed = sleeps_alike_on_one_core_and_two("lexical", 5_000).await;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let handed_over = u32::from(cores >= 2);
    assert_eq!(handed, (handed_over, handed_over, 0));
}

/// Sleeps `lessons` generated lessons asking `judge`, searching on one
/// core and then with a core to spare: the two passes must be the same.
/// Returns what the engine handed to a second instance with a core to
/// spare (searches started, answers taken, searches taken back).
pub(crate) async fn sleeps_alike_on_one_core_and_two(
    judge: &str,
    lessons: usize,
) -> (u32, u32, u32) {
    let app = App::with_config(Config::default(), false).unwrap();
    let now = 1_750_000_000.0;
    let entries: Vec<_> = silt_core::ledger::synthetic::agent_entries(lessons, now)
        .iter()
        .map(silt_ledger_service::values::entry_to_wit)
        .collect();
    let mut passes = vec![];
    let mut handed = (0, 0, 0);
    for one_core in [true, false] {
        let mut ledger = app
            .runtime
            .open_ledger(judge, &silt_runtime::ledger::default_params(), None, None)
            .await
            .unwrap();
        if one_core {
            ledger.search_on_one_core();
        }
        ledger.sync(&entries).await.unwrap();
        let (report, change) = ledger.sleep(now, None).await.unwrap();
        if one_core {
            assert_eq!(ledger.searched_ahead(), (0, 0, 0));
        } else {
            handed = ledger.searched_ahead();
        }
        assert!(report.merged > 0, "{judge}: {report:?}");
        // the lessons synced in, as the pass left them (the abstracted
        // parents' ids are fresh each pass, so not the parent each note
        // names)
        let synced: std::collections::HashSet<&str> =
            entries.iter().map(|e| e.id.as_str()).collect();
        let touched: Vec<serde_json::Value> = change
            .entries
            .iter()
            .filter(|e| synced.contains(e.id.as_str()))
            .map(|e| {
                let mut e = serde_json::to_value(e).unwrap();
                if e["note"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("folded under"))
                {
                    e["note"] = "folded under a parent".into();
                }
                e
            })
            .collect();
        passes.push((serde_json::to_value(report).unwrap(), touched));
    }
    assert_eq!(passes[0].0, passes[1].0, "{judge}");
    assert!(!passes[0].1.is_empty(), "{judge}");
    let differ = (passes[0].1.iter().zip(&passes[1].1))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(passes[0].1.len(), passes[1].1.len(), "{judge}");
    assert_eq!(
        differ, 0,
        "{judge}: lessons the two passes left differently"
    );
    handed
}

/// Judges built against earlier contracts (tests/compat: the lexical
/// judge's rules behind `silt:judge@0.1.0`'s positional `relate`, and
/// behind 0.1.1's named `relations` without `relations-by-index`) still
/// load, answer a question, and relate lessons for the sleep pass: each
/// leaves the ledger where the lexical judge does.
#[tokio::test]
async fn a_judge_built_against_the_previous_contract_still_relates_lessons() {
    let plugins = tempfile::tempdir().unwrap();
    let old = [
        (
            "old-lexical",
            env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1"),
            "0.1.0",
        ),
        (
            "pair-lexical",
            env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1_1"),
            "0.1.1",
        ),
    ];
    for (name, wasm, version) in old {
        let dir = plugins.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(wasm, dir.join(format!("{name}.wasm"))).unwrap();
        std::fs::write(
            dir.join("plugin.toml"),
            format!("[plugin]\nname = \"{name}\"\nkind = \"judge\"\ndescription = \"a silt:judge@{version} judge\"\n"),
        )
        .unwrap();
    }
    let app = silt_e2e::app_with_plugins(plugins.path());
    for (name, _, _) in old {
        let out = ask::run(&app.runtime, &app.config, &params(Some(name)))
            .await
            .unwrap();
        assert_eq!(out["judge"], name, "{out:#}");
    }

    let now = 1_750_000_000.0;
    let demo: Vec<_> = silt_core::ledger::demo::entries(now)
        .iter()
        .map(silt_ledger_service::values::entry_to_wit)
        .collect();
    let mut ends = Vec::new();
    for judge in ["old-lexical", "pair-lexical", "lexical"] {
        let mut ledger = app
            .runtime
            .open_ledger(judge, &silt_runtime::ledger::default_params(), None, None)
            .await
            .unwrap();
        ledger.sync(&demo).await.unwrap();
        let (report, change) = ledger.sleep(now, None).await.unwrap();
        // a parent the pass formed has a fresh id: name it by its lesson
        let mut statuses: Vec<(String, String)> = change
            .entries
            .iter()
            .map(|e| {
                let known = demo.iter().any(|d| d.id == e.id);
                let who = if known {
                    e.id.clone()
                } else {
                    format!("new: {} -> {}", e.when, e.prefer)
                };
                (who, format!("{:?}", e.status))
            })
            .collect();
        statuses.sort();
        ends.push((serde_json::to_value(report).unwrap(), statuses));
    }
    let report = &ends[0].0;
    assert!(
        report["merged"].as_u64().unwrap() + report["contradictions_resolved"].as_u64().unwrap()
            > 0,
        "the demo has duplicates and a contradiction to act on: {report:#}"
    );
    assert_eq!(ends[0], ends[2]);
    assert_eq!(ends[1], ends[2]);
}
