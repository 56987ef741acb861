//! The embedding judge end to end: the real all-MiniLM-L6-v2 (and the
//! potion static model) inside the sandboxed component, as `silt models
//! install` put them (`.ci/run` installs both first). No mock: a missing
//! model fails with the command that installs it.

use std::path::PathBuf;

use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, serve};
use silt_e2e::{app_with_plugins, install_hostile, silt_binary};

fn models_dir() -> PathBuf {
    silt_plugins::models::models_dir()
}

fn require(name: &str) -> PathBuf {
    let dir = models_dir().join(name);
    assert!(
        dir.join("model.safetensors").is_file(),
        "model '{name}' is not installed at {}; run `cargo run --release -- models install {name}` (as .ci/run does)",
        dir.display()
    );
    dir
}

#[test]
fn demo_with_the_embedding_judge_ends_with_six_active() {
    require("minilm");
    let out = std::process::Command::new(silt_binary())
        .args([
            "demo",
            "--judge",
            "embedding",
            "--json",
            "--now",
            "1780000000",
        ])
        .env("SILT_CACHE_DIR", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["after"]["active"], 6, "{report:#}");
    // the GPT pair is one boundary rule and the trading trio (one action
    // said alike) one lesson, an abstracted parent over three; the XML
    // trio words its action three ways, and MiniLM's sibling probability
    // for it stays under the destructive margin abstraction is held to
    // (issue 55), so it stays three lessons
    assert_eq!(
        report["sleep"],
        json!({"merged": 0, "contradictions_resolved": 1, "generalized": 1, "held_for_review": 0})
    );
    let parents: Vec<&Value> = report["after"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["note"] == "abstracted parent")
        .collect();
    let actions: Vec<&str> = parents
        .iter()
        .map(|p| p["prefer"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["anchor reasoning on HTF bias first"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sieve_tools_take_the_embedding_judge() {
    require("minilm");
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/retry.rs"),
        "/// Waits longer after each failed request before trying again.\npub fn backoff(attempt: u32) -> u64 { 100 * 2u64.pow(attempt) }\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("src/theme.rs"),
        "/// Colours of the dark and light themes.\npub const DARK: &str = \"#000\";\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("notes.md"),
        "# Notes\n\nThe client retries failed requests with exponential backoff.\n",
    )
    .unwrap();
    // ordinary-sized files, so their text outweighs the question's
    for (i, topic) in [
        "a parser for config files",
        "the command line flags",
        "log rotation",
    ]
    .iter()
    .enumerate()
    {
        let body: String = (0..30)
            .map(|l| format!("// line {l}: helpers for {topic}, kept apart from the rest\n"))
            .collect();
        std::fs::write(repo.join(format!("src/other{i}.rs")), body).unwrap();
    }
    let client = serve(home.path(), &repo, &[]).await;

    let asked = json_of(
        &call(
            &client,
            "sieve_ask",
            json!({"question": "Does the item describe a bug?", "kind": "judge",
                   "yes": "It reports a bug: a crash, an error or broken behaviour.",
                   "no": "It asks for a new feature or another change.",
                   "items": ["fix crash on launch", "add dark mode"], "judge": "embedding",
                   "threshold": 0.0}),
        )
        .await,
    );
    assert_eq!(asked["judge"], "embedding");
    // usage names the judge and its model, and that it reads no entailment
    assert_eq!(
        (
            &asked["usage"]["judge"],
            &asked["usage"]["model"],
            &asked["usage"]["judge_reads_meaning"]
        ),
        (&json!("embedding"), &json!("minilm"), &json!(false)),
        "{asked:#}"
    );
    let p = |id: &str| {
        asked["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["text"] == id || r["id"] == id)
            .map(|r| r["probability"].as_f64().unwrap())
    };
    let rows = asked["results"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{asked:#}");
    let (bug, feature) = (
        p("0").or(p("fix crash on launch")),
        p("1").or(p("add dark mode")),
    );
    let (bug, feature) = (bug.unwrap(), feature.unwrap());
    assert!(bug > 0.5 && feature < 0.5, "{asked:#}");

    let ranked = json_of(
        &call(
            &client,
            "sieve_rank",
            json!({"question": "how does the client wait between retries",
                   "candidates": [
                       {"id": "css", "text": "The dark theme uses a black background"},
                       {"id": "retry", "text": "After a failed request the client sleeps twice as long before the next attempt"},
                       {"id": "db", "text": "Rows are stored in a SQLite file"}],
                   "judge": "embedding", "threshold": 0.0}),
        )
        .await,
    );
    assert_eq!(ranked["results"][0]["id"], "retry", "{ranked:#}");

    let routed = json_of(
        &call(
            &client,
            "sieve_route",
            json!({"ask": "I was charged twice on my card for one invoice",
                   "routes": [
                       {"id": "billing", "description": "payments, invoices, refunds and card charges"},
                       {"id": "infra", "description": "servers, deployments and outages"},
                       {"id": "design", "description": "colours, layout and themes"}],
                   "judge": "embedding"}),
        )
        .await,
    );
    assert_eq!(routed["choice"], "billing", "{routed:#}");

    let grep = |question: &str| {
        json!({"question": question, "path": repo.display().to_string(),
               "judge": "embedding", "threshold": 0.0})
    };
    let first = json_of(
        &call(
            &client,
            "sieve_grep",
            grep("where is the retry delay computed"),
        )
        .await,
    );
    let paths: Vec<&str> = first["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_ne!(paths.first(), Some(&"src/theme.rs"), "{first:#}");
    assert!(paths.contains(&"src/retry.rs"), "{first:#}");
    // a new question over the same files: only the question is embedded
    let second = json_of(
        &call(
            &client,
            "sieve_grep",
            grep("which colours does the dark theme use"),
        )
        .await,
    );
    assert_eq!(second["results"][0]["path"], "src/theme.rs", "{second:#}");
    let (t1, t2) = (
        first["input_tokens"].as_u64().unwrap(),
        second["input_tokens"].as_u64().unwrap(),
    );
    assert!(
        t2 * 3 < t1,
        "the files' vectors were cached: {t1} then {t2}"
    );

    let verified = json_of(
        &call(
            &client,
            "sieve_verify",
            json!({"records": [{"claim": "The client retries failed requests with exponential backoff",
                                "citations": [{"locator": "notes.md"}]}],
                   "judge": "embedding"}),
        )
        .await,
    );
    // similarity is no assessment: the embedding judge never gives a
    // verdict that asserts something
    assert_eq!(
        verified["results"][0]["verdict"], "unverified",
        "{verified:#}"
    );
}

#[tokio::test]
async fn a_model_grant_shows_that_model_and_nothing_else() {
    let minilm = require("minilm");
    require("potion");
    // the hostile reader, granted exactly what the embedding judge is
    let plugins = tempfile::tempdir().unwrap();
    install_hostile(
        plugins.path(),
        "read-outside",
        "models = [\"minilm\"]",
        "memory_mib = 32\ncpu_ms = 300\nwall_ms = 5000",
    );
    let app = app_with_plugins(plugins.path());
    let outside = [
        // the model's real path on the host is not mapped
        minilm.join("config.json"),
        // nor is any other model
        models_dir().join("potion").join("config.json"),
        PathBuf::from("/etc/passwd"),
    ];
    for target in outside {
        let params: silt_mcp::tools::ask::AskParams = serde_json::from_value(json!({
            "question": format!("{}|/models/minilm/config.json", target.display()),
            "kind": "judge", "yes": "y", "no": "n",
            "items": ["x"], "judge": "read-outside",
        }))
        .unwrap();
        let err = silt_mcp::tools::ask::run(&app.runtime, &app.config, &params)
            .await
            .expect_err("the hostile judge never answers")
            .to_string();
        assert!(!err.contains("LEAKED"), "{err}");
        assert!(err.contains("could not read any of"), "{err}");
        // the grant itself works: the model's own config is readable
        assert!(err.contains("\"model_type\": \"bert\""), "{err}");
    }
}

/// Runs `silt ledger ARGS` on `home`'s ledger.db with no silt.toml and
/// answer cache of its own; its stdout, after checking it succeeded.
fn ledger_cli(home: &std::path::Path, args: &[&str]) -> String {
    ledger_cli_vectors(home, args, None)
}

/// [`ledger_cli`] with the ledger's embedder for a judge without vectors
/// set (`none`: lessons pair and recall by their words).
fn ledger_cli_vectors(home: &std::path::Path, args: &[&str], embedder: Option<&str>) -> String {
    std::fs::write(home.join("none.toml"), "").unwrap();
    let mut cmd = std::process::Command::new(silt_binary());
    if let Some(e) = embedder {
        cmd.env("SILT_LEDGER_EMBEDDER", e);
    }
    let out = cmd
        .arg("ledger")
        .arg("--ledger")
        .arg(home.join("ledger.db"))
        .args(args)
        .env("SILT_CACHE_DIR", home.join("cache"))
        .env("SILT_CONFIG", home.join("none.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn recall_with_the_embedding_judge_finds_lessons_by_meaning_without_repeats() {
    require("minilm");
    let home = tempfile::tempdir().unwrap();
    let silt = |args: &[&str]| ledger_cli(home.path(), args);
    let lessons = [
        (
            "target model is Claude",
            "use XML delimiter tags for structure",
        ),
        (
            "when the model is Claude / Anthropic",
            "wrap sections in XML tags",
        ),
        ("Anthropic model as target", "structure with XML style tags"),
        (
            "trading prompt for XAUUSD",
            "anchor reasoning on HTF bias first",
        ),
        (
            "trading prompt for futures",
            "anchor reasoning on HTF bias first",
        ),
        (
            "output must be valid JSON",
            "append a self-verification checklist step",
        ),
        ("deploying a database migration", "take a backup first"),
    ];
    for (when, prefer) in lessons {
        silt(&["capture", "--when", when, "--prefer", prefer]);
    }
    let recall_with = |judge: &str, embedder: Option<&str>| -> Vec<String> {
        let out = ledger_cli_vectors(
            home.path(),
            &[
                "--judge",
                judge,
                "--json",
                "recall",
                "-k",
                "4",
                "writing the system prompt for an Anthropic LLM",
            ],
            embedder,
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        v["heuristics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["when"].as_str().unwrap().to_string())
            .collect()
    };
    let xml = |w: &String| lessons[..3].iter().any(|l| l.0 == w);
    let trading = |w: &String| w.starts_with("trading prompt");
    let recall = |judge: &str| recall_with(judge, None);
    let by_meaning = recall("embedding");
    assert!(xml(&by_meaning[0]), "{by_meaning:?}");
    // one lesson said three ways, and two siblings, each come back once
    assert_eq!(
        by_meaning.iter().filter(|w| xml(w)).count(),
        1,
        "{by_meaning:?}"
    );
    assert!(
        by_meaning.iter().filter(|w| trading(w)).count() <= 1,
        "{by_meaning:?}"
    );
    // a task about nothing the ledger knows recalls nothing (the
    // model's relatedness midpoint is the floor)
    let out = silt(&[
        "--judge",
        "embedding",
        "--json",
        "recall",
        "-k",
        "4",
        "bake a chocolate cake for the birthday party",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["count"], 0, "{v}");
    // by words alone the lexical judge ranks by shared letters and
    // repeats the trio
    let lexical = recall_with("lexical", Some("none"));
    assert!(
        lexical.iter().filter(|w| xml(w)).count() >= 2,
        "{lexical:?}"
    );
    // with the default embedder (potion) it recalls by meaning: the trio
    // once, first
    let lexical = recall("lexical");
    assert!(xml(&lexical[0]), "{lexical:?}");
    assert_eq!(lexical.iter().filter(|w| xml(w)).count(), 1, "{lexical:?}");
}

/// grep with the transformer over a repository of hundreds of long files
/// finishes within the engine's limits: the judge reads the shortlist with
/// the strongest lexical evidence (24 units a stage), not every preview.
#[tokio::test(flavor = "multi_thread")]
async fn grep_with_the_transformer_reads_a_shortlist_of_a_large_repository() {
    require("minilm");
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("big");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let topics = [
        ("theme", "colours of the dark theme and the light theme"),
        ("config", "reading settings from the configuration file"),
        ("log", "writing log lines with timestamps"),
        ("rows", "storing rows in the database table"),
        ("headers", "parsing request headers"),
        ("cli", "command line flags and their help text"),
    ];
    for i in 0..300 {
        let (name, about) = topics[i % topics.len()];
        let mut body = format!("//! Helpers for {about}.\n\n");
        for f in 0..12 {
            body.push_str(&format!(
                "/// Part {f} of {about}.\npub fn {name}_{i}_{f}(input: &str) -> String {{\n    \
                 let value = input.trim();\n    value.to_string()\n}}\n\n"
            ));
        }
        std::fs::write(repo.join(format!("src/{name}{i}.rs")), body).unwrap();
    }
    let mut retry = String::from(
        "//! Retry policy: how long the client waits before the next attempt.\n\n\
         use std::time::Duration;\n\n\
         /// The retry delay: the base delay doubled for every failed attempt, capped.\n\
         pub fn retry_delay(attempt: u32) -> Duration {\n    \
         let base = Duration::from_millis(200);\n    \
         (base * 2u32.pow(attempt.min(6))).min(Duration::from_secs(30))\n}\n",
    );
    for l in 0..90 {
        retry.push_str(&format!(
            "// note {l}: the delay grows after each failure\n"
        ));
    }
    std::fs::write(repo.join("src/retry.rs"), retry).unwrap();
    let client = serve(home.path(), &repo, &[]).await;

    let out = json_of(
        &call(
            &client,
            "sieve_grep",
            json!({"question": "where is the retry delay computed",
                   "path": repo.display().to_string(), "mode": "functions",
                   "judge": "embedding", "top_k": 5, "threshold": 0.0}),
        )
        .await,
    );
    let scored = out["units_scored"].as_u64().unwrap();
    assert!(
        (24..=48).contains(&scored),
        "24 files, then at most 24 functions: {out:#}"
    );
    assert_eq!(out["results"][0]["path"], "src/retry.rs", "{out:#}");
}

/// `SILT_GREP_JUDGE_WEIGHT` reaches the engine: at 0 the embedding judge's
/// ranking is the repository's evidence alone (the lexical judge's answer,
/// probability for probability), at 1 its own; out of range is refused.
#[test]
fn the_grep_judge_weight_moves_grep_from_the_evidence_to_the_judge() {
    require("minilm");
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("retry.rs"),
        "/// the delay before the next attempt doubles\nfn retry_delay() {}\n",
    )
    .unwrap();
    std::fs::write(repo.path().join("theme.rs"), "fn dark_theme_colours() {}\n").unwrap();
    std::fs::write(repo.path().join("notes.md"), "the delay of the release\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let grep = |judge: &str, weight: Option<&str>| {
        let mut cmd = std::process::Command::new(silt_binary());
        cmd.args(["grep", "--judge", judge, "--json", "--threshold", "0"])
            .arg("how long does the client wait before retrying")
            .arg(repo.path())
            .env("SILT_CACHE_DIR", cache.path())
            .env_remove("SILT_GREP_JUDGE_WEIGHT");
        if let Some(w) = weight {
            cmd.env("SILT_GREP_JUDGE_WEIGHT", w);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            stderr,
        )
    };
    let hits = |stdout: &str| -> Vec<(String, f64)> {
        let v: Value = serde_json::from_str(stdout).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap().to_string(),
                    h["probability"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (ok, lexical, err) = grep("lexical", None);
    assert!(ok, "{err}");
    let (ok, evidence_only, err) = grep("embedding", Some("0"));
    assert!(ok, "{err}");
    assert_eq!(hits(&evidence_only), hits(&lexical));
    let (ok, judge_only, err) = grep("embedding", Some("1"));
    assert!(ok, "{err}");
    assert_ne!(hits(&judge_only), hits(&lexical), "{judge_only}");
    let (ok, _, err) = grep("embedding", Some("2"));
    assert!(!ok && err.contains("[0, 1]"), "{err}");
}

/// A lesson said again in other words shares too few words to be a
/// lexical candidate; with the embedding judge review (and sleep) pair it
/// by meaning. The vectors land in the ledger file with the next write,
/// keyed by the judge's model and each text's hash, so another process
/// embeds none of them again.
#[test]
fn lessons_near_in_meaning_are_paired_and_their_vectors_kept() {
    require("minilm");
    let home = tempfile::tempdir().unwrap();
    let ledger = home.path().join("ledger.db");
    // by words only until the embedding judge is asked, so that its
    // vectors are the only ones the file keeps
    let silt_as = |args: &[&str], embedder: Option<&str>| -> Value {
        let args: Vec<&str> = std::iter::once("--json")
            .chain(args.iter().copied())
            .collect();
        serde_json::from_str(&ledger_cli_vectors(home.path(), &args, embedder)).unwrap()
    };
    let silt = |args: &[&str]| silt_as(args, Some("none"));
    // the dev set's merge-05, and a lesson about something else
    let lessons = [
        (
            "editing a file you have not read",
            "read the whole file before changing it",
        ),
        (
            "about to modify code you haven't looked at",
            "open and read the file first",
        ),
        (
            "choosing a release version number",
            "follow semantic versioning",
        ),
    ];
    let mut ids = vec![];
    for (when, prefer) in lessons {
        let v = silt(&["capture", "--when", when, "--prefer", prefer]);
        ids.push(v["captured"]["id"].as_str().unwrap().to_string());
    }
    let pairs = |v: Value| -> Vec<(String, String)> {
        v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["a_id"].as_str().unwrap().to_string(),
                    p["b_id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        pairs(silt(&["review"])),
        vec![],
        "the words alone pair them"
    );
    let want_one = |found: Vec<(String, String)>| {
        let mut p = [ids[0].clone(), ids[1].clone()];
        p.sort();
        let found: Vec<(String, String)> = found
            .into_iter()
            .map(|(a, b)| if a < b { (a, b) } else { (b, a) })
            .collect();
        assert_eq!(found, vec![(p[0].clone(), p[1].clone())]);
    };
    // the default lexical judge pairs them by potion's vectors
    want_one(pairs(silt_as(&["review"], None)));
    let by_meaning = pairs(silt(&["--judge", "embedding", "review"]));
    let want = {
        let mut p = [ids[0].clone(), ids[1].clone()];
        p.sort();
        (p[0].clone(), p[1].clone())
    };
    let found: Vec<(String, String)> = by_meaning
        .into_iter()
        .map(|(a, b)| if a < b { (a, b) } else { (b, a) })
        .collect();
    assert_eq!(found, vec![want]);

    // a read wrote nothing; the next write keeps the six texts' vectors
    let count = || -> (i64, i64) {
        let db = rusqlite::Connection::open(&ledger).unwrap();
        let q = |sql: &str| db.query_row(sql, [], |r| r.get(0)).unwrap();
        (
            q("SELECT COUNT(*) FROM vectors"),
            q("SELECT COUNT(DISTINCT model) FROM vectors"),
        )
    };
    assert_eq!(count(), (0, 0));
    // a recall's context is embedded too, but it is a task, not a lesson:
    // never written
    silt(&["--judge", "embedding", "recall", "fixing a typo in a file"]);
    assert_eq!(count(), (6, 1));
    silt(&["--judge", "embedding", "sleep"]);
    assert_eq!(count(), (6, 1));
    // forgetting a lesson takes its texts' vectors with it
    silt(&["forget", &ids[2]]);
    assert_eq!(count(), (4, 1));
}

/// Issue 17 item 3: one action on situations worded apart folds under a
/// parent with MiniLM (potion is no longer sure enough: abstraction is
/// held to the destructive margin), which the words alone never pair;
/// the same action on situations that have nothing to do with each
/// other does not. Neither cluster is in docs/eval, which the siblings
/// curve was fitted on.
#[test]
fn siblings_worded_apart_fold_under_a_parent_by_meaning() {
    require("minilm");
    require("potion");
    let upgrades = [
        "upgrading React to a new major version",
        "bumping the Django release",
        "moving to the next Rust edition",
    ];
    let guide = "read the migration guide before changing any code";
    let unrelated = [
        "naming a git branch",
        "ordering lunch for the team",
        "picking a font for the slides",
    ];
    for judge in ["lexical", "embedding", "embedding-static"] {
        let home = tempfile::tempdir().unwrap();
        let silt = |args: &[&str]| -> Value {
            let args: Vec<&str> = ["--json", "--judge", judge]
                .into_iter()
                .chain(args.iter().copied())
                .collect();
            serde_json::from_str(&ledger_cli(home.path(), &args)).unwrap()
        };
        for when in upgrades {
            silt(&["capture", "--when", when, "--prefer", guide]);
        }
        for when in unrelated {
            silt(&["capture", "--when", when, "--prefer", "ask the team first"]);
        }
        // the captures' auto-sleep may have folded them already
        silt(&["sleep"]);
        // held to the destructive margin (issue 55), only MiniLM is sure
        // enough of these siblings; potion's probability for them stays
        // under it, as the lexical judge's does
        let want = usize::from(judge == "embedding");
        let entries = silt(&["export"]);
        let statuses: Vec<&str> = entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["status"].as_str().unwrap())
            .collect();
        // nothing retired: the unrelated three stay active whatever the judge
        assert_eq!(
            statuses.iter().filter(|&&s| s == "dormant").count(),
            3 * want,
            "{judge}: {entries:#}"
        );
        assert_eq!(
            statuses.iter().filter(|&&s| s == "active").count(),
            6 - 2 * want,
            "{judge}: {entries:#}"
        );
        let parents: Vec<&Value> = entries
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["note"] == "abstracted parent")
            .collect();
        assert_eq!(parents.len(), want, "{judge}: {entries:#}");
        if let Some(parent) = parents.first() {
            assert_eq!(parent["prefer"], guide);
            assert_eq!(
                parent["when"],
                "upgrading React to a new major version, bumping the Django release or \
                 moving to the next Rust edition"
            );
        }
    }
}

/// The built-in judges relate lessons by index (each lesson sent once,
/// `silt:judge/relations-by-index`): their relations do not depend on
/// how the lessons are shared among the pairs (each pair's two sent apart
/// give the same numbers, bit for bit), and a pair naming a lesson that
/// was not sent is refused, saying which, instead of read out of bounds.
#[tokio::test]
async fn relations_by_index_do_not_depend_on_how_lessons_are_shared() {
    use silt_runtime::bindings::relations_by_index_judge::exports::silt::judge::relations_by_index::Lesson;
    use silt_runtime::bindings::types::JudgeError;
    require("potion");
    let now = 1_750_000_000.0;
    let lessons: Vec<Lesson> = silt_core::ledger::demo::entries(now)
        .iter()
        .map(|e| Lesson {
            when: e.when.clone(),
            prefer: e.prefer.clone(),
        })
        .collect();
    let n = lessons.len() as u32;
    assert!(n >= 8, "{n}");
    // every ordered pair, a lesson with itself included
    let pairs: Vec<(u32, u32)> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect();
    let apart: Vec<Lesson> = pairs
        .iter()
        .flat_map(|&(a, b)| [lessons[a as usize].clone(), lessons[b as usize].clone()])
        .collect();
    let apart_pairs: Vec<(u32, u32)> = (0..pairs.len() as u32)
        .map(|k| (2 * k, 2 * k + 1))
        .collect();
    let app = app_with_plugins(tempfile::tempdir().unwrap().path());
    for name in ["lexical", "embedding-static"] {
        let judge = app.runtime.judge(name).await.unwrap();
        let shared = judge.relate_by_index(&lessons, &pairs).await.unwrap();
        let sent_apart = judge.relate_by_index(&apart, &apart_pairs).await.unwrap();
        assert_eq!(shared.len(), pairs.len(), "{name}");
        let numbers =
            |r: &[silt_runtime::bindings::ledger_engine::silt::judge::relations::Relation]| {
                r.iter()
                    .map(|r| [r.merge, r.contradict, r.sibling, r.distinct])
                    .collect::<Vec<_>>()
            };
        assert_eq!(numbers(&shared), numbers(&sent_apart), "{name}");
        // the pairs say something: not every pair is one relation
        let most: std::collections::HashSet<usize> = numbers(&shared)
            .iter()
            .map(|r| (0..4).fold(0, |b, j| if r[j] > r[b] { j } else { b }))
            .collect();
        assert!(most.len() >= 2, "{name}: {most:?}");
        let Err(JudgeError::InvalidQuestion(e)) =
            judge.relate_by_index(&lessons, &[(0, 1), (2, n)]).await
        else {
            panic!("{name} read a lesson past the end");
        };
        assert!(
            e.contains(&format!("pair 1 names lesson {n} of the {n} sent")),
            "{name}: {e}"
        );
    }
}

/// With a judge that gives vectors, the sleep pass also hands the
/// whole-lesson view's search by meaning to the host (while it searches
/// the trigger view itself), and makes the pass it makes on one core.
/// At this size the engine's own view ends first and it takes the
/// search back (so this runs the take-back through the real host);
/// `a_second_instance_finds_the_pairs_by_meaning_the_engine_finds`
/// checks the second instance's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sleep_pass_searches_by_meaning_on_a_second_instance() {
    require("potion");
    // 5,000 lessons: their distinct triggers and their rows by meaning
    // are both more than the host hands over from
    let handed = crate::runtime::sleeps_alike_on_one_core_and_two("embedding-static", 5_000).await;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // by words (triggers) and by meaning (the whole-lesson view), the second
    // answered or, when the engine finished its own view before the
    // second instance reached it, taken back
    let (handed_over, answered, taken_back) = handed;
    assert_eq!(handed_over, if cores >= 2 { 2 } else { 0 }, "{handed:?}");
    assert_eq!(answered + taken_back, handed_over, "{handed:?}");
}

/// The second instance's search by meaning is the engine's own code: on
/// potion's vectors of generated lessons (whole-lesson rows, as a pass
/// hands them over, twins included), `partners.near` run in the sandbox
/// gives exactly the pairs silt-core gives natively; rows it cannot read
/// give none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_finds_the_pairs_by_meaning_the_engine_finds() {
    use silt_core::ledger::meaning::{lesson_vector, pairs_near};
    use silt_core::ledger::rows::{Rows, quantise};
    require("potion");
    let app = app_with_plugins(tempfile::tempdir().unwrap().path());
    let judge = app.runtime.judge("embedding-static").await.unwrap();
    let lessons = silt_core::ledger::synthetic::agent_entries(3_000, 1_750_000_000.0);
    let texts: Vec<String> = lessons
        .iter()
        .flat_map(|e| [e.when.clone(), e.prefer.clone()])
        .collect();
    // a call's output is capped: a few hundred lessons at a time
    let mut vectors = Vec::new();
    for batch in texts.chunks(512) {
        vectors.extend(judge.embed(batch.to_vec()).await.unwrap().vectors);
    }
    let dim = vectors[0].len();
    let mut rows = Rows::new(dim);
    for pair in vectors.chunks(2) {
        let (when, prefer) = (quantise(&pair[0]), quantise(&pair[1]));
        rows.push_stored(&lesson_vector(&when, &prefer));
    }
    let (cut, per_row) = (0.8, 8);
    let native: Vec<(u32, u32)> = pairs_near(&rows, cut, per_row)
        .into_iter()
        .map(|(i, j)| (i as u32, j as u32))
        .collect();
    assert!(native.len() > lessons.len(), "{}", native.len());
    let apart = app
        .runtime
        .near_on_second_instance(rows.stored().to_vec(), dim as u32, cut, per_row as u32)
        .await
        .unwrap();
    assert_eq!(apart, native);
    let unreadable = app
        .runtime
        .near_on_second_instance(rows.stored()[1..].to_vec(), dim as u32, cut, per_row as u32)
        .await
        .unwrap();
    assert!(unreadable.is_empty());
}
