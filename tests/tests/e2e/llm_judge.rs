//! The local language-model judge end to end: SmolLM2-135M-Instruct as
//! `silt models install smollm2` leaves it (`.ci/run` installs it), run
//! by `judges/llm` inside the sandbox; its prompts checked against
//! llama.cpp's own rendering and tokenization (`SILT_LLAMA_SERVER`, as for
//! the HTTP judge); and what the sandbox and the loader refuse.

use std::path::Path;

use serde_json::{Value, json};
use silt_core::closed::{Debias, Plan};
use silt_core::ledger::relate::Lesson;
use silt_core::types::{AnswerSpace, Question};
use silt_e2e::mcp::{call, json_of, serve};

use crate::openai_judge::{MODEL_FILE, answers_all_three_kinds, llama_server, models_dir};

#[tokio::test(flavor = "multi_thread")]
async fn the_local_model_answers_all_three_kinds_of_question() {
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[("SILT_ANSWER_CACHE", "0")]).await;
    let items = json!([
        "fix: the parser crashed on an empty file",
        "docs: spelling in the README",
    ]);
    answers_all_three_kinds(&client, "llm", &items).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_and_a_sleep_pass_run_on_the_local_model() {
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("retry.md"),
        "# Retries\n\nThe client retries a failed request three times, waiting twice as long \
         before each attempt. It never retries a request that returned 4xx.\n",
    )
    .unwrap();
    let ledger = home.path().join("ledger.db");
    // one prompt per item, not one per label order and prior: the
    // corrections are exercised by the test above, and cost 8x here
    let env = [
        ("SILT_ANSWER_CACHE", "0"),
        ("SILT_LEDGER_PATH", ledger.to_str().unwrap()),
        ("SILT_SLEEP_PRESSURE", "0"),
        ("SILT_LLM_DEBIAS", "none"),
    ];
    let client = serve(home.path(), &docs, &env).await;

    let verified = json_of(
        &call(
            &client,
            "sieve_verify",
            json!({"records": [
                {"claim": "The client retries requests that returned 404",
                 "citations": [{"locator": "retry.md"}]}],
                   "judge": "llm"}),
        )
        .await,
    );
    let results = verified["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{verified:#}");
    // the passage says the opposite: a 135M model may not see that, but
    // it must not confirm it
    assert_ne!(results[0]["verdict"], "supports_fully", "{verified:#}");
    assert!(
        verified["input_tokens"].as_u64().unwrap_or(0) > 0,
        "{verified:#}"
    );

    for (when, prefer) in [
        ("indenting Python code", "use four spaces"),
        ("indenting Python code", "use tabs"),
        ("writing a SQL migration", "wrap it in a transaction"),
    ] {
        let c = json_of(
            &call(
                &client,
                "sediment_capture",
                json!({"when": when, "prefer": prefer}),
            )
            .await,
        );
        assert_eq!(c["ok"], true, "{c:#}");
    }
    let slept = json_of(&call(&client, "sediment_sleep", json!({"judge": "llm"})).await);
    assert_eq!(slept["ok"], true, "{slept:#}");
    assert!(slept["merged"].is_u64(), "{slept:#}");
    let stats = json_of(&call(&client, "sediment_stats", json!({"telemetry": true})).await);
    // whatever the model said, nothing is lost: retired lessons stay in the ledger
    assert_eq!(stats["total"], 3, "{stats:#}");
}

/// POSTs `body` to llama-server's `path`; the JSON reply.
async fn post(url: &str, path: &str, body: Value) -> Value {
    let reply = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(reply.status().is_success(), "{path}: {}", reply.status());
    serde_json::from_str(&reply.text().await.unwrap()).unwrap()
}

/// The judge's prompts are the text llama.cpp renders from the same file's
/// chat template and the tokens it cuts that text into, and its answers
/// are the HTTP judge's answers from llama-server on the same model.
#[tokio::test(flavor = "multi_thread")]
async fn the_prompts_and_answers_match_llama_cpp_on_the_same_model() {
    let server = llama_server().await;
    let file = models_dir().join("smollm2").join(MODEL_FILE);
    let model = silt_llm::Model::load(&file).unwrap();
    let question = Question {
        text: "Does this commit repair a bug?".into(),
        space: AnswerSpace::Judge {
            yes: "It repairs wrong behaviour".into(),
            no: "It adds something".into(),
        },
    };
    let mut plan = Plan::ask(
        &question,
        &["fix: crash on 12 empty files", "feat: add --json"],
        Debias::Both,
    );
    let pair = (
        Lesson {
            when: "indenting Python",
            prefer: "use 4 spaces",
        },
        Lesson {
            when: "indenting Python",
            prefer: "use tabs",
        },
    );
    plan.prompts
        .extend(Plan::relate(&[pair], Debias::None).prompts);
    for prompt in &plan.prompts {
        let rendered = post(
            &server.url,
            "/apply-template",
            json!({"messages": [{"role": "system", "content": prompt.system},
                                {"role": "user", "content": prompt.user}]}),
        )
        .await;
        let text = model.template.render(prompt).unwrap();
        assert_eq!(rendered["prompt"].as_str().unwrap(), text);
        let tokens = post(
            &server.url,
            "/tokenize",
            json!({"content": text, "add_special": true, "parse_special": true}),
        )
        .await;
        let theirs: Vec<u64> = tokens["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect();
        let ours: Vec<u64> = model
            .encode(&text)
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect();
        assert_eq!(ours, theirs, "{text}");
    }

    // the same question through both judges, without corrections
    let home = tempfile::tempdir().unwrap();
    let items = home.path().join("items.json");
    std::fs::write(
        &items,
        r#"["fix: the parser crashed on an empty file", "docs: spelling in the README", "feat: add a --json flag"]"#,
    )
    .unwrap();
    let ask = |judge: &str| {
        let mut cmd = std::process::Command::new(silt_e2e::silt_binary());
        cmd.args([
            "ask",
            "judge",
            "Does this commit repair a bug?",
            "--yes",
            "It repairs wrong behaviour",
            "--no",
            "It adds or documents something",
            "--threshold",
            "0",
            "--judge",
            judge,
        ])
        .arg("--items")
        .arg(&items)
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_PLUGIN_PATH", home.path().join("plugins"))
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_ANSWER_CACHE", "0")
        .env("SILT_MODEL_URL", &server.url)
        .env("SILT_MODEL", "smollm2")
        .env("SILT_MODEL_DEBIAS", "none")
        .env("SILT_LLM_DEBIAS", "none");
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{judge}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut by_id: Vec<(String, f64)> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["probability"].as_f64().unwrap(),
                )
            })
            .collect();
        by_id.sort_by(|a, b| a.0.cmp(&b.0));
        by_id
    };
    std::fs::write(home.path().join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let local = ask("llm");
    let served = ask("openai");
    assert_eq!(local.len(), 3);
    for ((id, a), (_, b)) in local.iter().zip(&served) {
        // llama.cpp runs the Q4_1 weights, silt their Q8_0 copy, with other
        // kernels: the label log-probabilities differ by up to about 0.2
        assert!(
            (a - b).abs() < 0.15,
            "item {id}: local {a}, llama-server {b}: {local:?} vs {served:?}"
        );
    }
}

/// Runs `silt ask judge` with `judge` under `home`, models from `models`,
/// the llm judge granted model `llm_model` (empty: its default); the exit
/// status and stderr.
fn ask_with(home: &Path, models: &Path, judge: &str, llm_model: &str) -> (bool, String) {
    let items = home.join("items.json");
    std::fs::write(&items, r#"["fix a crash"]"#).unwrap();
    std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let out = std::process::Command::new(silt_e2e::silt_binary())
        .args([
            "ask",
            "judge",
            "Is it a fix?",
            "--yes",
            "a fix",
            "--no",
            "not",
        ])
        .arg("--items")
        .arg(&items)
        .args(["--judge", judge])
        .envs(silt_e2e::home_env(home))
        .env("SILT_MODELS_DIR", models)
        .env("SILT_LLM_MODEL", llm_model)
        .env("SILT_ANSWER_CACHE", "0")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Installs the built-in llm component as plugin `name`, granted `model`
/// with a memory cap of `memory_mib`.
fn install_llm(home: &Path, name: &str, model: &str, memory_mib: u32) {
    let registry = silt_plugins::registry::Registry::discover(&[], &Default::default()).unwrap();
    let llm = registry
        .entries()
        .find(|e| e.manifest.plugin.name == "llm")
        .expect("the built-in llm judge");
    let dir = home.join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.wasm")), llm.bytes().unwrap()).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!(
            "[plugin]\nname = \"{name}\"\nkind = \"judge\"\ndescription = \"the llm judge, \
             another grant\"\n\n[grants]\nmodels = [\"{model}\"]\n\n[limits]\nmemory_mib = \
             {memory_mib}\nwall_ms = 300000\n"
        ),
    )
    .unwrap();
}

#[test]
fn the_judge_reads_only_its_model_folder_and_refuses_broken_models() {
    let home = tempfile::tempdir().unwrap();
    let real = models_dir();

    // granted another model's folder (SILT_LLM_MODEL picks the one it is
    // granted), it cannot find SmolLM2 beside it
    let (ok, err) = ask_with(home.path(), &real, "llm", "minilm");
    assert!(!ok);
    assert!(err.contains("holds no .gguf file"), "{err}");

    // a file cut short, installed as a user would install their own model
    let models = home.path().join("models");
    let bytes = std::fs::read(real.join("smollm2").join(MODEL_FILE)).unwrap();
    let cut = home.path().join("half.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let installed = std::process::Command::new(silt_e2e::silt_binary())
        .args(["models", "install", "half", "--from"])
        .arg(&cut)
        .env("SILT_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let (ok, err) = ask_with(home.path(), &models, "llm", "half");
    assert!(!ok);
    assert!(err.contains("cut short"), "{err}");
    assert!(err.contains("reinstall"), "{err}");
    // the whole file installed under another name answers
    std::fs::write(&cut, &bytes).unwrap();
    let whole = std::process::Command::new(silt_e2e::silt_binary())
        .args(["models", "install", "whole", "--from"])
        .arg(&cut)
        .env("SILT_MODELS_DIR", &models)
        .output()
        .unwrap();
    assert!(whole.status.success());
    let (ok, err) = ask_with(home.path(), &models, "llm", "whole");
    assert!(ok, "{err}");

    // a model larger than the cap is stopped by the cap
    install_llm(home.path(), "llm-small", "smollm2", 96);
    let (ok, err) = ask_with(home.path(), &real, "llm-small", "");
    assert!(!ok);
    assert!(err.contains("over its memory limit of 96 MiB"), "{err}");
}
