//! Fuzz targets (see `silt_e2e::fuzz`): every parser a caller's input
//! reaches — the Markdown report extractor, HTML to text, PDF to text (in
//! its child process), the Sediment ledger import, plugin manifests — and
//! the tool arguments of a running server. Each runs a bounded number of
//! inputs here (`.ci/run`); `SILT_FUZZ_ITERS=200000 cargo test --release
//! --workspace --test e2e -- fuzz::` runs longer.

use std::time::Duration;

use serde_json::{Value, json};
use silt_e2e::fuzz;
use silt_e2e::mcp::{call, serve};
use silt_e2e::silt_binary;

const MARKDOWN: &[&[u8]] = &[
    b"# Title\n\nThe client retries with backoff [docs](https://a.example/x).\n\n- item one [s](notes.md)\n  - nested point, e.g. this.\n\n| a | b |\n|---|---|\n| cell [c](https://c.example) | two |\n",
    b"> quoted claim [q](q.md)\n>\n> > deeper\n\n1. first\n2. second ```code``` `span`\n\n<div>html</div>\n",
    b"Text with **bold _nested_ words** and [link][ref].\n\n[ref]: https://r.example \"title\"\n",
];
const MARKDOWN_TOKENS: &[&[u8]] = &[
    b">",
    b"- ",
    b"  ",
    b"[",
    b"]",
    b"(",
    b")",
    b"*",
    b"_",
    b"`",
    b"```\n",
    b"|",
    b"\n",
    b"#",
    b"<",
    b"e.g.",
    b"\xc3\xa9",
    b"\xe2\x80\x94",
    b"](",
    b"1. ",
    b"\\",
];

#[test]
fn fuzz_the_report_extractor() {
    fuzz::run(
        "report",
        300,
        Duration::from_secs(10),
        MARKDOWN,
        MARKDOWN_TOKENS,
        |input| {
            let text = String::from_utf8_lossy(input);
            for record in silt_core::verify::report::extract(&text) {
                assert!(!record.claim.trim().is_empty(), "an empty claim");
            }
        },
    );
}

const HTML: &[&[u8]] = &[
    b"<!doctype html><html><head><title>t</title><style>p{}</style></head><body><p>The client retries.</p><div><b>bold</b> <i>it</i></div><script>x()</script></body></html>",
    b"<table><tr><td>a</td><td>b</td></tr></table><ul><li>one<li>two</ul><pre>code\n</pre>",
    b"<p hidden>gone</p><noscript>n</noscript><template><p>t</p></template>&amp;&lt;&#x263a;",
];
const HTML_TOKENS: &[&[u8]] = &[
    b"<div>",
    b"</div>",
    b"<b><i>",
    b"<p>",
    b"<table><tr><td>",
    b"<li>",
    b"<script>",
    b"</script>",
    b"<!--",
    b"-->",
    b"&amp;",
    b"&#",
    b"<svg><foreignObject>",
    b"<textarea>",
    b"<![CDATA[",
    b"<p hidden>",
    b"\"",
    b"'",
    b"=",
];

#[test]
fn fuzz_html_to_text() {
    fuzz::run(
        "html",
        300,
        Duration::from_secs(10),
        HTML,
        HTML_TOKENS,
        |input| {
            let _ = silt_fetch::html::to_text(&String::from_utf8_lossy(input));
        },
    );
}

/// PDFs go through the child silt runs in production (`silt pdf-text`);
/// the child may refuse or fail, but must end by itself, under its time
/// limit, and never by a signal (a crash the parent cannot explain). Half
/// the inputs mutate the page's content stream inside a well-formed file,
/// half the file's raw bytes.
#[test]
fn fuzz_pdf_text_in_its_child() {
    use std::os::unix::process::ExitStatusExt;
    let content: &[u8] =
        b"BT /F1 12 Tf 72 700 Td (The client retries with backoff.) Tj 0 -14 Td [(kern)-120(ed)] TJ ET";
    let whole = silt_e2e::pdf::one_page(content, false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.pdf");
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    let mut n = 0usize;
    fuzz::run(
        "pdf",
        60,
        Duration::from_secs(35),
        &[content, &whole],
        &[
            b"BT ",
            b"ET ",
            b"(",
            b")",
            b"[",
            b"]",
            b"<<",
            b">>",
            b"Tj ",
            b"TJ ",
            b"Td ",
            b"/F1 ",
            b"1e308 ",
            b"-99999999 ",
            b"\\",
            b"q ",
            b"Q ",
            b"cm ",
        ],
        |input| {
            n += 1;
            // the seed file is the corpus's longer entry: raw mutations start with %PDF
            let bytes = if input.starts_with(b"%PDF") {
                input.to_vec()
            } else {
                silt_e2e::pdf::one_page(input, false)
            };
            std::fs::write(&path, &bytes).unwrap();
            let out = std::process::Command::new(silt_binary())
                .arg("pdf-text")
                .arg(&path)
                .output()
                .unwrap();
            if let Some(signal) = out.status.signal() {
                panic!("the PDF child died of signal {signal}");
            }
            *outcomes
                .entry(format!("exit {}", out.status.code().unwrap_or(-1)))
                .or_default() += 1;
        },
    );
    eprintln!("pdf child outcomes over {n} inputs: {outcomes:?}");
    // 0: text; 3: refused with a reason. Anything else is a crash the
    // parent can only call "failed"
    assert!(
        outcomes.keys().all(|k| k == "exit 0" || k == "exit 3"),
        "the PDF child crashed: {outcomes:?}"
    );
    assert!(
        outcomes.get("exit 0").copied().unwrap_or(0) > 0,
        "no input was read at all: the target does not reach the extractor"
    );
}

/// Found by the fuzzer above (lopdf 0.36 recursed once per `[`, so 35k of
/// them overflowed the child's stack): arrays nested far deeper than any
/// real PDF, in the file's objects and in a page's content stream, are
/// refused or read, never a crash.
#[test]
fn deeply_nested_arrays_do_not_crash_the_pdf_child() {
    let deep = |n: usize| [b"[".repeat(n), b"]".repeat(n)].concat();
    let whole = silt_e2e::pdf::one_page(b"BT /F1 12 Tf 72 700 Td (deep) Tj ET", false);
    let at = whole.windows(2).position(|w| w == b">>").unwrap();
    let in_objects = [&whole[..at], b"/Deep ", &deep(40_000)[..], &whole[at..]].concat();
    let in_content = silt_e2e::pdf::one_page(
        &[
            &b"BT /F1 12 Tf 72 700 Td (deep) Tj "[..],
            &deep(40_000),
            b" TJ ET",
        ]
        .concat(),
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("objects", in_objects), ("content", in_content)] {
        let path = dir.path().join(format!("{name}.pdf"));
        std::fs::write(&path, bytes).unwrap();
        let out = std::process::Command::new(silt_binary())
            .arg("pdf-text")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "nesting in the {name}: the child ended with {} ({})",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

const LEDGER: &[&[u8]] = &[
    br#"[{"when": "editing the parser", "prefer": "run its tests", "id": "0a1b2c3d", "confidence": 0.5, "created": 1700000000.0, "last_confirmed": 1700000000.0, "last_fired": 1700000000.0, "hit_count": 2, "confirm_count": 1, "contradiction_count": 0, "status": "active", "note": "", "extra": {"k": [1, 2]}}]"#,
    b"[]",
];
const JSON_TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b":",
    b",",
    b"1e308",
    b"-3",
    b"null",
    b"\"status\": \"retired\"",
    b"\\u0000",
    b"\\ud800",
    b"\"id\": \"",
    b"9999999999999999999999",
];

#[test]
fn fuzz_the_ledger_import() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.json");
    // odd values in a well-formed entry reach the import's own checks
    let seed: Value = serde_json::from_slice(LEDGER[0]).unwrap();
    let mut rng = fuzz::Rng::new(fuzz::seed());
    let structured: Vec<Vec<u8>> = (0..fuzz::iterations(300))
        .map(|_| serde_json::to_vec(&fuzz::mutate_json(&mut rng, &seed)).unwrap())
        .collect();
    let mut accepted = 0;
    for input in &structured {
        std::fs::write(&path, input).unwrap();
        if let Ok(entries) = silt_ledger_service::sediment_json::read(&path, 1_800_000_000.0) {
            accepted += 1;
            for e in &entries {
                silt_core::ledger::limits::stored_entry(e, 1_800_000_000.0).unwrap();
            }
        }
    }
    eprintln!(
        "fuzz ledger-import: {accepted} of {} structured inputs accepted",
        structured.len()
    );
    fuzz::run(
        "ledger-import",
        300,
        Duration::from_secs(10),
        LEDGER,
        JSON_TOKENS,
        |input| {
            std::fs::write(&path, input).unwrap();
            if let Ok(entries) = silt_ledger_service::sediment_json::read(&path, 1_800_000_000.0) {
                // what the import accepts, capture would have
                for e in &entries {
                    silt_core::ledger::limits::stored_entry(e, 1_800_000_000.0).unwrap();
                }
                let text = silt_ledger_service::sediment_json::write(&entries).unwrap();
                std::fs::write(&path, text).unwrap();
                let again = silt_ledger_service::sediment_json::read(&path, 1_800_000_000.0)
                    .expect("what silt writes, it reads back");
                assert_eq!(again.len(), entries.len());
            }
        },
    );
}

const MANIFEST: &[&[u8]] = &[
    b"[plugin]\nname = \"my-judge\"\nkind = \"judge\"\ndescription = \"x\"\n\n[grants]\nread = [\"/srv/m\"]\nhttp = [\"api.example.com\", \"env:URL\"]\nenv = [\"URL\"]\nmodels = [\"minilm\"]\n\n[limits]\nmemory_mib = 256\ncpu_ms = 5000\nwall_ms = 30000\noutput_kib = 1024\nreuse_calls = 4\n",
    b"[plugin]\nname = \"s\"\nkind = \"search\"\n[grants.exec]\nclaude = { override = \"SILT_SEARCH_CMD_CLAUDE\" }\n[limits]\nwall_ms = 20000\n",
];
const TOML_TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"[[",
    b"{",
    b"}",
    b"=",
    b"\"",
    b"'''",
    b"\n",
    b"9223372036854775807",
    b"-1",
    b"inf",
    b"nan",
    b"[grants.exec.x]",
    b"a.b.c = 1\n",
];

#[test]
fn fuzz_plugin_manifests() {
    fuzz::run(
        "manifest",
        500,
        Duration::from_secs(10),
        MANIFEST,
        TOML_TOKENS,
        |input| {
            if let Ok(m) =
                silt_plugins::manifest::Manifest::parse(&String::from_utf8_lossy(input), "fuzz")
            {
                // a manifest that loads keeps within every ceiling
                let l = m.limits;
                assert!(l.cpu_ms <= silt_plugins::manifest::MAX_CPU_MS);
                assert!(l.wall_ms <= silt_plugins::manifest::MAX_WALL_MS);
                assert!(l.memory_mib <= silt_plugins::manifest::MAX_MEMORY_MIB);
                let _ = m.broad_grants();
            }
        },
    );
}

/// Mutated arguments for every tool of a running server: each call gets an
/// answer (a result or an error), and the server outlives them all.
#[tokio::test(flavor = "multi_thread")]
async fn fuzz_tool_arguments() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("notes.md"), "The client retries with backoff.\n").unwrap();
    let ledger = home.path().join("ledger.db");
    let client = serve(
        home.path(),
        &repo,
        &[
            ("SILT_LEDGER_PATH", ledger.to_str().unwrap()),
            ("SILT_SLEEP_PRESSURE", "0"),
        ],
    )
    .await;
    let valid: Vec<(&'static str, Value)> = vec![
        (
            "sieve_ask",
            json!({"question": "is it about retries?", "items": ["retry with backoff", {"id": "b", "text": "colour"}], "kind": "judge", "top_k": 2, "threshold": 0.5}),
        ),
        (
            "sieve_ask",
            json!({"question": "which?", "items": ["a"], "kind": "choose", "options": {"x": "when x", "y": "when y"}}),
        ),
        (
            "sieve_rank",
            json!({"question": "retries", "candidates": [{"id": "a", "text": "retry"}], "top_k": 1}),
        ),
        (
            "sieve_route",
            json!({"ask": "fix the build", "routes": [{"id": "ci", "description": "CI failures", "aliases": ["build"]}]}),
        ),
        (
            "sieve_grep",
            json!({"question": "retry", "path": ".", "mode": "files", "top_k": 3}),
        ),
        (
            "sieve_verify",
            json!({"records": [{"claim": "The client retries", "citations": [{"locator": "notes.md", "quote": "retries"}]}]}),
        ),
        (
            "sieve_verify",
            json!({"report": "# R\n\nThe client retries [n](notes.md).\n"}),
        ),
        (
            "sieve_triage_threads",
            json!({"threads": [{"thread_id": "t", "events": [{"id": "e1", "ts": "2026-01-01T00:00:00Z", "role": "assistant", "kind": "message", "text": "Should I deploy?"}], "contract": {"title": "t", "first_prompt": "p", "human_amendments": []}}]}),
        ),
        (
            "sediment_capture",
            json!({"when": "editing the parser", "prefer": "run its tests", "feedback": "positive"}),
        ),
        (
            "sediment_recall",
            json!({"context": "editing the parser", "k": 3}),
        ),
        (
            "sediment_stats",
            json!({"include_retired": true, "limit": 10, "telemetry": true}),
        ),
        (
            "sediment_apply_judgments",
            json!({"judgments": [{"a_id": "x", "b_id": "y", "verdict": "merge"}]}),
        ),
        ("sediment_forget", json!({"id": "nope", "reason": "r"})),
    ];
    let texts: Vec<String> = valid.iter().map(|(_, v)| v.to_string()).collect();
    let corpus: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    let tokens: &[&[u8]] = &[
        b"\"",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"null",
        b"-1",
        b"1e308",
        b"\"top_k\": 0,",
        b"\"k\": 99999999999,",
        b"\\u0000",
        b"true",
    ];
    let seed = fuzz::seed();
    let mut rng = fuzz::Rng::new(seed);
    let n = fuzz::iterations(150);
    let mut answered = [0usize; 3];
    for i in 0..n {
        let pick = rng.below(valid.len());
        let name = valid[pick].0;
        // half the inputs are odd values in well-formed JSON (they reach
        // the tools' own checks), half mutated bytes (they reach the parser)
        let mut args = if rng.below(2) == 0 {
            match fuzz::mutate_json(&mut rng, &valid[pick].1) {
                Value::Object(m) => Value::Object(m),
                other => json!({"question": other}),
            }
        } else {
            let input = fuzz::mutate(&mut rng, &corpus[pick..pick + 1], tokens);
            // a mutation that is no longer a JSON object is sent as a string
            match serde_json::from_slice::<Value>(&input) {
                Ok(Value::Object(m)) if input.len() < 4 << 20 => Value::Object(m),
                _ => json!({"question": String::from_utf8_lossy(&input[..input.len().min(5000)])}),
            }
        };
        // a flipped bit turns "." into "/": the folders stay the test's own
        for key in ["path", "base_path"] {
            if args.get(key).is_some() {
                args[key] = json!(".");
            }
        }
        let request = rmcp::model::CallToolRequestParams::new(name)
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let out = tokio::time::timeout(Duration::from_secs(120), client.call_tool(request))
            .await
            .unwrap_or_else(|_| {
                panic!("input {i} to {name} got no answer in 120 s (SILT_FUZZ_SEED={seed}): {args}")
            });
        // a tool result (ok or error) or a JSON-RPC error: an answer either way
        match out {
            Ok(r) => {
                if r.is_error == Some(true) && std::env::var_os("SILT_FUZZ_SHOW").is_some() {
                    eprintln!("{name} {args:.300} -> {:.300}", silt_e2e::mcp::text_of(&r));
                }
                answered[usize::from(r.is_error == Some(true))] += 1
            }
            Err(rmcp::ServiceError::McpError(_)) => answered[2] += 1,
            Err(e) => panic!("input {i} to {name} broke the connection ({e}): {args}"),
        }
    }
    eprintln!(
        "fuzz tool-arguments: {n} calls, {} ok, {} tool errors, {} protocol errors, seed {seed}",
        answered[0], answered[1], answered[2]
    );
    let stats = call(&client, "sediment_stats", json!({})).await;
    assert_ne!(stats.is_error, Some(true), "the server still answers");
    client.cancel().await.unwrap();
}
