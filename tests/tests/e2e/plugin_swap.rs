//! A judge swapped under a live MCP session: `silt plugins update` (and
//! add, remove) while `silt serve` runs; new calls use the new plugin,
//! a call holding the old instance finishes on it, and the client is told
//! when the tools' list of judges changed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, text_of};
use silt_e2e::{example_plugins, silt_binary};

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListChanges(Arc<AtomicUsize>);

impl rmcp::ClientHandler for ListChanges {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A plugin folder named `name` holding component `wasm` as `judge.wasm`.
fn folder(at: &Path, name: &str, wasm: &Path) -> String {
    let dir = at.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(wasm, dir.join("judge.wasm")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!("[plugin]\nname = \"{name}\"\nkind = \"judge\"\ncomponent = \"judge.wasm\"\n"),
    )
    .unwrap();
    dir.to_str().unwrap().to_string()
}

fn silt(home: &Path, args: &[&str]) {
    let out = silt_e2e::silt_in(home, args).output().unwrap();
    assert!(
        out.status.success(),
        "silt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ask_args(judge: &str) -> Value {
    json!({"question": "Is it a bug report?", "kind": "judge",
           "yes": "a crash, an error or broken behaviour", "no": "a request for a new feature",
           "items": [{"id": "bug", "text": "fix crash on launch with an error"}],
           "judge": judge, "threshold": 0.0})
}

async fn waits_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !done().await {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_judge_swapped_under_a_live_session_answers_anew() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join("silt.toml"), "answer_cache = false\n").unwrap();
    let sources = home.join("sources");
    let words = folder(
        &sources.join("a"),
        "swappable",
        &example_plugins().join("words-py/words-py.wasm"),
    );
    let lexical = folder(
        &sources.join("b"),
        "swappable",
        Path::new(env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1")),
    );
    silt(home, &["plugins", "add", &words, "--yes"]);

    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("serve").envs(silt_e2e::home_env(home));
    let changes = ListChanges::default();
    let client = changes
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let probability = |v: &Value| v["results"][0]["probability"].as_f64().unwrap();

    // the words judge: two yes-words, no no-words
    let before = json_of(&call(&client, "sieve_ask", ask_args("swappable")).await);
    assert!((probability(&before) - 0.7).abs() < 1e-9, "{before:#}");
    let lexical_answer = probability(&json_of(
        &call(&client, "sieve_ask", ask_args("lexical")).await,
    ));
    assert!(
        (lexical_answer - 0.7).abs() > 0.01,
        "the two judges must differ"
    );
    let tools = client.list_all_tools().await.unwrap();
    let described = serde_json::to_string(&tools).unwrap();
    assert!(described.contains("swappable"), "{described}");
    assert!(!described.contains("late-judge"), "{described}");

    // swapped for the lexical rules: new calls answer as those do
    silt(
        home,
        &[
            "plugins",
            "update",
            "swappable",
            "--from",
            &lexical,
            "--yes",
        ],
    );
    waits_for("the swapped judge answers", async || {
        let now = json_of(&call(&client, "sieve_ask", ask_args("swappable")).await);
        (probability(&now) - lexical_answer).abs() < 1e-9
    })
    .await;
    // the set of judges did not change, so neither did the tools
    assert_eq!(changes.0.load(Ordering::SeqCst), 0);

    // a judge added, then removed: the client is told each time
    let extra = folder(
        &sources.join("c"),
        "late-judge",
        &example_plugins().join("words-js/words-js.wasm"),
    );
    silt(home, &["plugins", "add", &extra, "--yes"]);
    waits_for("list_changed after add", async || {
        changes.0.load(Ordering::SeqCst) >= 1
    })
    .await;
    let tools = serde_json::to_string(&client.list_all_tools().await.unwrap()).unwrap();
    assert!(tools.contains("late-judge"), "{tools}");
    let asked = json_of(&call(&client, "sieve_ask", ask_args("late-judge")).await);
    assert!((probability(&asked) - 0.7).abs() < 1e-9, "{asked:#}");
    silt(home, &["plugins", "remove", "late-judge"]);
    waits_for("list_changed after remove", async || {
        changes.0.load(Ordering::SeqCst) >= 2
    })
    .await;
    let gone = call(&client, "sieve_ask", ask_args("late-judge")).await;
    assert_eq!(gone.is_error, Some(true));
    assert!(
        text_of(&gone).contains("no plugin named 'late-judge'"),
        "{}",
        text_of(&gone)
    );
    client.cancel().await.unwrap();
}

/// What a call in flight holds is the loaded judge; a reload while it
/// runs leaves that instance whole, and the next call loads the new one.
#[tokio::test]
async fn a_call_holding_the_old_judge_finishes_on_it() {
    let home = tempfile::tempdir().unwrap();
    let plugins = home.path().join("plugins");
    folder(
        &plugins,
        "swappable",
        &example_plugins().join("words-py/words-py.wasm"),
    );
    let runtime = silt_e2e::app_with_plugins(&plugins).runtime;
    let held = runtime.judge("swappable").await.unwrap();
    assert_eq!(held.info.name, "words-py");
    folder(
        &plugins,
        "swappable",
        Path::new(env!("SILT_TEST_WASM_COMPAT_JUDGE_V0_1")),
    );
    assert_eq!(runtime.reload().unwrap(), vec!["swappable".to_string()]);
    let fresh = runtime.judge("swappable").await.unwrap();
    assert_ne!(fresh.info.name, "words-py");
    // the held instance still answers, as the words judge
    use silt_runtime::bindings::types::{Answer, AnswerSpace, Item, Question, YesNo};
    let question = Question {
        text: "Is it a bug report?".into(),
        space: AnswerSpace::Judge(YesNo {
            yes: "a crash".into(),
            no: "a feature".into(),
        }),
    };
    let items = vec![Item {
        id: "bug".into(),
        text: "fix the crash".into(),
    }];
    let answered = held.ask(&question, &items).await.unwrap();
    // "crash" is the one shared yes-word: 0.5 + 0.3·1/2
    assert!(matches!(
        answered.answers[0],
        Answer::YesProbability(p) if (p - 0.65).abs() < 1e-9
    ));
}

/// The shared HTTP server reloads too: a judge added while it runs
/// answers its next call (it keeps no sessions, so nobody is notified).
#[tokio::test(flavor = "multi_thread")]
async fn the_shared_server_picks_up_a_judge_added_while_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let served = silt_e2e::http::serve_http(home, "answer_cache = false\n", &[]).await;
    let client = served.client().await;
    let before = call(&client, "sieve_ask", ask_args("late-judge")).await;
    assert_eq!(before.is_error, Some(true), "{}", text_of(&before));
    let late = folder(
        &home.join("sources"),
        "late-judge",
        &example_plugins().join("words-py/words-py.wasm"),
    );
    silt(home, &["plugins", "add", &late, "--yes"]);
    waits_for("the added judge answers over HTTP", async || {
        let now = call(&client, "sieve_ask", ask_args("late-judge")).await;
        now.is_error != Some(true)
            && json_of(&now)["results"][0]["probability"]
                .as_f64()
                .is_some_and(|p| (p - 0.7).abs() < 1e-9)
    })
    .await;
    client.cancel().await.unwrap();
}
