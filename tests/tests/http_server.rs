//! The shared server: `silt serve --http` as agents use it — streamable
//! HTTP on loopback, refusing foreign `Host` and `Origin` headers, absolute
//! paths only, many clients on one ledger, a hung plugin stalling no one,
//! and a clean stop on SIGTERM.

use std::time::Duration;

use serde_json::{Value, json};
use silt_e2e::http::{Served, connect, serve_http, start};
use silt_e2e::install_hostile;
use silt_e2e::mcp::{call, json_of, text_of};

const LEXICAL: &str = "judge = \"lexical\"\n";

/// An `initialize` POSTed by hand with `headers`; the response status.
async fn initialize(served: &Served, headers: &[(&str, &str)]) -> u16 {
    let mut req = reqwest::Client::new()
        .post(&served.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}})
            .to_string(),
        );
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_host_and_origin_headers_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(
        home.path(),
        &format!("{LEXICAL}[server]\nallowed_hosts = [\"silt.internal\"]\nallowed_origins = [\"https://tools.example:443\"]\n"),
        &[],
    )
    .await;
    assert!(
        served.url.starts_with("http://127.0.0.1:") && served.url.ends_with("/mcp"),
        "loopback by default: {}",
        served.url
    );
    let port = served.authority().rsplit(':').next().unwrap().to_string();
    let cases: [(&[(&str, &str)], u16); 7] = [
        (&[], 200),
        (&[("origin", "http://localhost:5173")], 200),
        (&[("host", "evil.example")], 403),
        (&[("host", &format!("evil.example:{port}"))], 403),
        (&[("origin", "http://evil.example")], 403),
        (&[("host", "silt.internal")], 200),
        (&[("origin", "https://tools.example")], 200),
    ];
    for (headers, want) in cases {
        assert_eq!(
            initialize(&served, headers).await,
            want,
            "headers {headers:?}"
        );
    }
    // other paths are not the endpoint
    let other = reqwest::get(served.url.replace("/mcp", "/other"))
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_and_verify_take_only_absolute_paths_over_http() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("retry.rs"), "fn retry_delay() {}\n").unwrap();
    std::fs::write(repo.join("notes.md"), "The client retries with backoff.\n").unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let client = connect(&served.url).await;

    // relative to the server's folder, "repo" exists: it is still refused
    let relative = call(
        &client,
        "sieve_grep",
        json!({"question": "retry delay", "path": "repo"}),
    )
    .await;
    assert_eq!(relative.is_error, Some(true));
    assert!(text_of(&relative).contains("absolute"), "{relative:?}");
    let absolute = json_of(
        &call(
            &client,
            "sieve_grep",
            json!({"question": "retry delay", "path": repo.display().to_string(), "threshold": 0.0}),
        )
        .await,
    );
    assert_eq!(absolute["results"][0]["path"], "retry.rs", "{absolute:#}");

    let claim = |base: Option<&str>| {
        let mut args = json!({"records": [{"claim": "The client retries with backoff",
                                           "citations": [{"locator": "notes.md"}]}]});
        if let Some(b) = base {
            args["base_path"] = json!(b);
        }
        args
    };
    let relative_base = call(&client, "sieve_verify", claim(Some("repo"))).await;
    assert_eq!(relative_base.is_error, Some(true));
    assert!(
        text_of(&relative_base).contains("absolute"),
        "{relative_base:?}"
    );
    // no base path: a relative file locator cannot be resolved
    let no_base = call(&client, "sieve_verify", claim(None)).await;
    let text = text_of(&no_base);
    assert!(
        no_base.is_error == Some(true) || text.contains("base_path"),
        "{text}"
    );
    let verified = json_of(
        &call(
            &client,
            "sieve_verify",
            claim(Some(&repo.display().to_string())),
        )
        .await,
    );
    assert_eq!(
        verified["results"][0]["verdict"], "supports_fully",
        "{verified:#}"
    );
}

/// 64 clients at once, each capturing its own lesson, recalling and
/// asking: no call fails and every capture is in the ledger after.
#[tokio::test(flavor = "multi_thread")]
async fn sixty_four_concurrent_clients_share_one_ledger() {
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let url = served.url.clone();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let client = connect(&url).await;
            let when = format!("deploying service number{i} to staging");
            let captured = json_of(
                &call(
                    &client,
                    "sediment_capture",
                    json!({"when": when, "prefer": format!("run the smoke suite{i} first")}),
                )
                .await,
            );
            assert_eq!(captured["ok"], true, "{captured:#}");
            let recalled = json_of(
                &call(
                    &client,
                    "sediment_recall",
                    json!({"context": format!("deploying service number{i}"), "k": 3}),
                )
                .await,
            );
            assert_eq!(recalled["ok"], true, "{recalled:#}");
            let asked = json_of(
                &call(
                    &client,
                    "sieve_ask",
                    json!({"question": "Does the item mention staging?",
                           "yes": "It mentions staging", "no": "It does not",
                           "items": [when.clone(), "a note about colours"], "threshold": 0.0}),
                )
                .await,
            );
            assert_eq!(asked["results"].as_array().unwrap().len(), 2, "{asked:#}");
            client.cancel().await.unwrap();
            captured["captured"]["id"].as_str().unwrap().to_string()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.expect("a client failed"));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 64, "every capture got its own lesson");
    let client = connect(&url).await;
    let stats = json_of(&call(&client, "sediment_stats", json!({"telemetry": true})).await);
    assert_eq!(
        stats["telemetry"]["events"]["captured"], 64,
        "no capture lost: {stats:#}"
    );
    // a scheduled sleep pass may fold lessons under parents, never drop one
    assert!(stats["total"].as_u64().unwrap() >= 64, "{stats:#}");
}

/// A judge that spins forever holds only its own caller: other callers'
/// calls finish while it runs, and it ends at its CPU limit.
#[tokio::test(flavor = "multi_thread")]
async fn a_hung_plugin_does_not_stall_other_callers() {
    let home = tempfile::tempdir().unwrap();
    install_hostile(
        &home.path().join("plugins"),
        "spin",
        "read = []\nhttp = []\nenv = []",
        "memory_mib = 64\ncpu_ms = 20000\nwall_ms = 30000\noutput_kib = 64",
    );
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let hung_url = served.url.clone();
    let hung = tokio::spawn(async move {
        let client = connect(&hung_url).await;
        let r = call(
            &client,
            "sieve_ask",
            json!({"question": "Is it?", "yes": "yes", "no": "no", "items": ["x"], "judge": "spin"}),
        )
        .await;
        (r.is_error, text_of(&r))
    });
    // give the spinning call a head start
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = connect(&served.url).await;
    for _ in 0..8 {
        let asked = json_of(
            &call(
                &client,
                "sieve_ask",
                json!({"question": "Does it mention tests?", "yes": "It mentions tests", "no": "It does not",
                       "items": ["add tests"], "threshold": 0.0}),
            )
            .await,
        );
        assert_eq!(asked["results"].as_array().unwrap().len(), 1);
    }
    assert!(
        !hung.is_finished(),
        "the spinning judge was still running while the others were answered"
    );
    let (is_error, text) = hung.await.unwrap();
    assert_eq!(is_error, Some(true), "{text}");
    assert!(text.contains("spin"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_stops_the_server_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let mut served = serve_http(home.path(), LEXICAL, &[]).await;
    let client = connect(&served.url).await;
    let stats: Value = json_of(&call(&client, "sediment_stats", json!({})).await);
    assert_eq!(stats["ok"], true);
    let pid = served.child.id().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(30), served.child.wait())
        .await
        .expect("the server stops within 30 s of SIGTERM")
        .unwrap();
    assert!(
        status.success(),
        "{status:?}\n{}",
        served.log.lock().unwrap()
    );
    assert!(
        served.log.lock().unwrap().contains("silt: stopped"),
        "{}",
        served.log.lock().unwrap()
    );
}

/// The launcher sources the env file (so keys stay out of client configs)
/// and runs the server; the file's port is the one served.
#[tokio::test(flavor = "multi_thread")]
async fn the_launcher_sources_the_env_file() {
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(home.path().join("silt.toml"), LEXICAL).unwrap();
    let env_file = home.path().join("env");
    std::fs::write(
        &env_file,
        format!(
            "SILT_HTTP_PORT={port}\nSILT_LEDGER_PATH='{}'\n",
            home.path().join("from-env.db").display()
        ),
    )
    .unwrap();
    let launcher = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bin/silt-mcp");
    let mut cmd = tokio::process::Command::new(launcher);
    cmd.arg("--http")
        .current_dir(home.path())
        .env("SILT_ENV_FILE", &env_file)
        .env("SILT_BIN", silt_e2e::silt_binary())
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_PLUGIN_PATH", home.path().join("plugins"))
        .env("SILT_HTTP_PORT", "1")
        .env_remove("SILT_LEDGER_PATH");
    let served = start(cmd).await;
    assert_eq!(served.url, format!("http://127.0.0.1:{port}/mcp"));
    let client = connect(&served.url).await;
    let stats = json_of(&call(&client, "sediment_stats", json!({})).await);
    assert_eq!(
        stats["path"],
        home.path().join("from-env.db").display().to_string()
    );
}
