//! The agent judge end to end, with a scripted stand-in for `claude` and
//! `codex` on PATH: the judge component in its sandbox asks the host to
//! run the CLI with a batch of numbered items; the stand-in records what
//! it was given, reads the items off the prompt and answers each as a
//! capable model would (or misbehaves, as `$FAKE_AGENT_MODE` says), in
//! the CLI's own output stream. `silt ask`, a `sieve_ask` over MCP and a
//! sleep pass's relations all come from it; a CLI that prints garbage,
//! hangs, fails or leaves items out is a clear error and nothing else.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, serve, text_of};

/// The stand-in, for both names. It answers yes/no questions "yes" for
/// an item that mentions a fix, a verify passage by whether it states the
/// claim (about the Rhine) or another figure, a choice by the option whose
/// label the item names, and lesson pairs by their actions: both about a
/// transaction are one lesson said twice, tabs against spaces contradict,
/// anything else is distinct. Modes: `answer` (the default), `garbage`,
/// `sleep`, `fail`, `missing` (leaves out item 2 of every batch of more
/// than one), `letters` (answers an item that adds something with a
/// letter it was not offered).
const STAND_IN: &str = r#"#!/usr/bin/env python3
import json, os, re, sys, time

name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
# Start time first, so the records sort in the order the runs began; a
# pid alone wraps and sorts as text ("9999" after "10000").
stamp = "%020d-%d" % (time.time_ns(), os.getpid())
rec = os.path.join(os.environ["FAKE_RECORD"], "%s.%s" % (name, stamp))
open(rec + ".args", "w").write(json.dumps(args))
open(rec + ".env", "w").write("\n".join("%s=%s" % kv for kv in os.environ.items()))
open(rec + ".cwd", "w").write(os.getcwd())
open(rec + ".stdin", "w").write(sys.stdin.read())
mode = os.environ.get("FAKE_AGENT_MODE", "answer")

if name == "claude":
    prompt = args[args.index("-p") + 1]
else:
    prompt = args[-1]

if mode == "sleep":
    time.sleep(60)
if mode == "fail":
    sys.stderr.write("starting\nError: not logged in. Run /login\n")
    sys.exit(1)

options = re.findall(r"^([A-Z])\. (.*)$", prompt.split("Items:")[0], re.M)
items = re.findall(r'^Item (\d+):\n"""\n(.*?)\n"""', prompt, re.M | re.S)

def spread(best, n):
    return {l: (0.97 if k == best else round(0.03 / (n - 1), 6)) for k, (l, _) in enumerate(options)}

def answer(text):
    n = len(options)
    if "How do they relate?" in prompt:
        actions = re.findall(r"PREFER (.*)", text)
        if all("transaction" in a for a in actions):
            return spread(0, n)
        if any("tabs" in a for a in actions) and any("spaces" in a for a in actions):
            return spread(1, n)
        return spread(3, n)
    labels = [option.split(":")[0] for _, option in options]
    if "supports_fully" in labels:
        claim = options[labels.index("supports_fully")][1].split("says: ", 1)[1]
        if "Rhine" not in text:
            return spread(labels.index("does_not_address"), n)
        return spread(labels.index("supports_fully" if claim in text else "contradicts"), n)
    if options[0][1].startswith("Yes:"):
        return spread(0 if "fix" in text else 1, n)
    for k, (_, option) in enumerate(options):
        if option.split(":")[0].strip().lower() in text.lower():
            return spread(k, n)
    return spread(n - 1, n)

batch = {num: answer(text) for num, text in items}
if mode == "missing" and len(batch) > 1:
    del batch["2"]
if mode == "letters":
    for num, text in items:
        if "add" in text:
            batch[num] = {"A": 0.5, "Z": 0.5}
reply = "Here are my probabilities:\n```json\n" + json.dumps(batch) + "\n```"
if mode == "garbage":
    reply = "I cannot help with that."

if name == "claude":
    lines = [
        {"type": "system", "subtype": "init", "tools": []},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": reply}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": reply,
         "total_cost_usd": 0.0042,
         "usage": {"input_tokens": 900, "cache_read_input_tokens": 100, "output_tokens": 80}},
    ]
else:
    lines = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": reply}},
        {"type": "turn.completed", "usage": {"input_tokens": 1000, "output_tokens": 100}},
    ]
if mode == "garbage":
    print("<html>502 Bad Gateway</html>")
else:
    for line in lines:
        print(json.dumps(line))
"#;

struct StandIn {
    dir: tempfile::TempDir,
}

impl StandIn {
    fn new() -> StandIn {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "record", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("home/silt.toml"), "").unwrap();
        for name in ["claude", "codex"] {
            let p = dir.path().join("bin").join(name);
            std::fs::write(&p, STAND_IN).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        StandIn { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn record(&self) -> String {
        self.dir.path().join("record").display().to_string()
    }

    /// PATH with the stand-ins first.
    fn path(&self) -> String {
        let system = std::env::var("PATH").unwrap_or_default();
        format!("{}:{system}", self.dir.path().join("bin").display())
    }

    /// Every recorded run of `name`: (args, env, cwd, stdin).
    fn runs(&self, name: &str) -> Vec<(Vec<String>, String, String, String)> {
        let record = self.dir.path().join("record");
        let mut stamps: Vec<String> = std::fs::read_dir(&record)
            .unwrap()
            .filter_map(|e| {
                let f = e.unwrap().file_name().to_string_lossy().to_string();
                f.strip_prefix(&format!("{name}."))
                    .and_then(|r| r.strip_suffix(".args"))
                    .map(str::to_string)
            })
            .collect();
        stamps.sort();
        let read = |stamp: &str, ext: &str| {
            std::fs::read_to_string(record.join(format!("{name}.{stamp}.{ext}")))
                .unwrap_or_default()
        };
        stamps
            .iter()
            .map(|stamp| {
                (
                    serde_json::from_str(&read(stamp, "args")).unwrap(),
                    read(stamp, "env"),
                    read(stamp, "cwd"),
                    read(stamp, "stdin"),
                )
            })
            .collect()
    }

    /// `silt ask judge` on `items` with the agent judge, as a shell user
    /// runs it, under `env` besides the stand-ins.
    fn ask(&self, items: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let file = self.dir.path().join("items.json");
        std::fs::write(&file, serde_json::to_string(items).unwrap()).unwrap();
        let home = self.home();
        let mut cmd = silt_e2e::silt_in(
            &home,
            &[
                "ask",
                "judge",
                "Is it a bug fix?",
                "--yes",
                "it repairs wrong behaviour",
                "--no",
                "it adds or changes behaviour",
                "--judge",
                "agent",
                "--threshold",
                "0",
            ],
        );
        cmd.arg("--items")
            .arg(&file)
            .env("PATH", self.path())
            .env("FAKE_RECORD", self.record())
            .envs(env.iter().copied());
        cmd.output().unwrap()
    }
}

fn probability_of(out: &Value, id: &str) -> f64 {
    out["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {out:#}"))["probability"]
        .as_f64()
        .unwrap()
}

#[test]
fn silt_ask_answers_from_claude_in_one_sandboxed_run() {
    let stand = StandIn::new();
    let items: Vec<String> = (0..40)
        .map(|i| match i % 2 {
            0 => format!("fix a crash in module {i}"),
            _ => format!("add a flag to module {i}"),
        })
        .collect();
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    let ran = stand.ask(
        &items,
        &[
            // a session routed elsewhere must not route the judge
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy"),
            ("ANTHROPIC_API_KEY", "sk-not-for-the-child"),
            ("CLAUDECODE", "1"),
            ("KEEP_ME", "kept"),
        ],
    );
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let out: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(out["results"].as_array().unwrap().len(), 40, "{out:#}");
    assert!((probability_of(&out, "0") - 0.97).abs() < 1e-9, "{out:#}");
    assert!(probability_of(&out, "1") < 0.05, "{out:#}");
    assert!((probability_of(&out, "38") - 0.97).abs() < 1e-9, "{out:#}");
    let runs = stand.runs("claude");
    // 40 items in batches of 30: two runs, each its own fresh folder
    assert_eq!(runs.len(), 2, "{out:#}");
    let usage = &out["usage"];
    assert_eq!(usage["judge"], "agent", "{out:#}");
    assert!(
        usage["model"]
            .as_str()
            .unwrap()
            .contains("claude-haiku-4-5"),
        "{out:#}"
    );
    assert!(
        (usage["cost_usd"].as_f64().unwrap() - 0.0084).abs() < 1e-9,
        "{out:#}"
    );
    assert_eq!(usage["input_tokens"], 2000, "{out:#}");
    for (args, env, cwd, stdin) in &runs {
        assert_eq!(args[0], "-p");
        assert!(args[1].contains("Item 1:\n\"\"\"\n"), "{args:?}");
        let line = args.join(" ");
        assert!(
            line.contains("--tools  --permission-mode dontAsk --max-turns 1"),
            "{line}"
        );
        assert!(line.contains("--model claude-haiku-4-5-20251001"), "{line}");
        assert!(stdin.is_empty(), "stdin is empty");
        assert!(cwd.contains("silt-exec-"), "a fresh folder: {cwd}");
        for gone in ["ANTHROPIC_BASE_URL=", "ANTHROPIC_API_KEY=", "CLAUDECODE="] {
            assert!(
                !env.lines().any(|l| l.starts_with(gone)),
                "{gone} reached the child"
            );
        }
        assert!(env.lines().any(|l| l == "KEEP_ME=kept"));
        assert!(!Path::new(cwd.trim()).exists(), "the folder was removed");
    }
    assert!(runs[0].0[1].contains("Answer all 30 items"));
    assert!(runs[1].0[1].contains("Answer all 10 items"));
}

#[test]
fn a_cli_that_misbehaves_is_a_clear_error_and_nothing_else() {
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[("FAKE_AGENT_MODE", "garbage")],
            "did not answer validly, even when asked again",
        ),
        (
            &[("FAKE_AGENT_MODE", "sleep"), ("SILT_AGENT_TIMEOUT", "2")],
            "did not answer within 2 s (SILT_AGENT_TIMEOUT)",
        ),
        (
            &[("FAKE_AGENT_MODE", "fail")],
            "claude exited 1: Error: not logged in. Run /login",
        ),
        (
            &[("FAKE_AGENT_MODE", "letters")],
            "1 of 3 items were not answered validly: item 2: names option 'Z', which was \
             not offered",
        ),
    ];
    for (env, want) in cases {
        let stand = StandIn::new();
        let ran = stand.ask(&["fix a crash", "add a flag", "fix a leak"], env);
        let err = String::from_utf8_lossy(&ran.stderr);
        assert!(!ran.status.success(), "{env:?}: {err}");
        assert!(err.contains(want), "{env:?}: {err}");
        assert!(
            !String::from_utf8_lossy(&ran.stdout).contains("probability"),
            "{env:?}: no answer is printed"
        );
        let runs = stand.runs("claude").len();
        // invalid answers are asked once more; the rest end at once
        let retried = env[0].1 == "garbage" || env[0].1 == "letters";
        assert_eq!(runs, if retried { 2 } else { 1 }, "{env:?}");
    }
    // an item left out is asked again alone, and then answered
    let stand = StandIn::new();
    let ran = stand.ask(
        &["fix a crash", "add a flag", "fix a leak"],
        &[("FAKE_AGENT_MODE", "missing")],
    );
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let out: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert!(probability_of(&out, "1") < 0.05, "{out:#}");
    let runs = stand.runs("claude");
    assert_eq!(runs.len(), 2);
    assert!(
        runs[1].0[1].contains("Item 1:\n\"\"\"\nadd a flag\n"),
        "{:?}",
        runs[1].0
    );
    assert!(!runs[1].0[1].contains("Item 2:"));
    // the CLI not installed: the error says what the judge needs
    let stand = StandIn::new();
    let ran = stand.ask(&["x"], &[("PATH", "/nonexistent")]);
    let err = String::from_utf8_lossy(&ran.stderr);
    assert!(err.contains("installed and logged in"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_verify_and_a_sleep_pass_take_their_answers_from_claude() {
    let stand = StandIn::new();
    let home = stand.home();
    std::fs::write(
        home.join("notes.md"),
        "The Rhine is about 1,230 kilometres long. It rises in the Swiss Alps and flows into \
         the North Sea at Rotterdam.\n",
    )
    .unwrap();
    let ledger = home.join("ledger.db").display().to_string();
    let (path, record) = (stand.path(), stand.record());
    let client = serve(
        &home,
        &home,
        &[
            ("PATH", path.as_str()),
            ("FAKE_RECORD", record.as_str()),
            ("SILT_LEDGER_PATH", ledger.as_str()),
            ("SILT_SLEEP_PRESSURE", "0"),
        ],
    )
    .await;
    let asked = json_of(
        &call(
            &client,
            "sieve_ask",
            json!({
                "question": "Which kind of change is it?",
                "kind": "choose",
                "options": {"added": "a new feature", "fixed": "a bug fix", "removed": "something dropped"},
                "items": ["fixed the crash on start", "removed the old flag", "added dark mode"],
                "judge": "agent",
            }),
        )
        .await,
    );
    let picks: Vec<&str> = asked["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{asked:#}"))
        .iter()
        .map(|r| r["choice"].as_str().unwrap())
        .collect();
    assert_eq!(picks, ["fixed", "removed", "added"], "{asked:#}");

    // a capable judge may confirm a claim (entailment = true)
    let verified = json_of(
        &call(
            &client,
            "sieve_verify",
            json!({"judge": "agent", "records": [
                {"claim": "The Rhine is about 1,230 kilometres long.", "kind": "fact",
                 "citations": [{"locator": "notes.md"}]},
                {"claim": "The Rhine is about 300 kilometres long.", "kind": "fact",
                 "citations": [{"locator": "notes.md"}]}]}),
        )
        .await,
    );
    let verdicts: Vec<&str> = verified["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{verified:#}"))
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["supports_fully", "contradicts"], "{verified:#}");

    for (when, prefer) in [
        ("indenting Python code", "use four spaces"),
        ("indenting Python code", "use tabs"),
        ("writing a SQL migration", "wrap it in a transaction"),
        (
            "writing an SQL migration",
            "wrap the migration in a transaction",
        ),
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
    let before = stand.runs("claude").len();
    let slept = json_of(&call(&client, "sediment_sleep", json!({"judge": "agent"})).await);
    assert_eq!(slept["ok"], true, "{slept:#}");
    assert_eq!(slept["merged"], 1, "{slept:#}");
    assert_eq!(slept["contradictions_resolved"], 1, "{slept:#}");
    let runs = stand.runs("claude");
    assert!(runs.len() > before, "the relations came from the stand-in");
    let relate = &runs.last().unwrap().0[1];
    assert!(relate.contains("How do they relate?"), "{relate}");
    assert!(relate.contains("B. They contradict"), "{relate}");
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_is_chosen_by_its_setting() {
    let stand = StandIn::new();
    let home = stand.home();
    let (path, record) = (stand.path(), stand.record());
    let client = serve(
        &home,
        &home,
        &[
            ("PATH", path.as_str()),
            ("FAKE_RECORD", record.as_str()),
            ("SILT_AGENT_CLI", "codex"),
        ],
    )
    .await;
    let asked = call(
        &client,
        "sieve_ask",
        json!({
            "question": "Is it a bug fix?",
            "kind": "judge",
            "yes": "it repairs wrong behaviour",
            "no": "it adds behaviour",
            "items": ["fix a crash", "add a flag"],
            "judge": "agent",
        }),
    )
    .await;
    let out = json_of(&asked);
    assert_eq!(
        out["results"].as_array().map(Vec::len),
        Some(2),
        "{}",
        text_of(&asked)
    );
    assert!(stand.runs("claude").is_empty());
    let runs = stand.runs("codex");
    assert_eq!(runs.len(), 1);
    let line = runs[0].0.join(" ");
    assert!(
        line.starts_with("exec --json --skip-git-repo-check --ephemeral"),
        "{line}"
    );
    assert!(line.contains("web_search=\"disabled\""), "{line}");
    // codex reports tokens, not a cost: priced at the judge's estimate
    assert!(out["usage"]["cost_usd"].as_f64().unwrap() > 0.0, "{out:#}");
}
