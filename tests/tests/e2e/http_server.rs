//! The shared server: `silt serve --http` as agents use it — streamable
//! HTTP on loopback, refusing foreign `Host` and `Origin` headers, absolute
//! paths only, the owner's token on every call, files only under the
//! owner's roots, many clients on one ledger, a hung plugin stalling no
//! one, a hostile page crashing nothing, and a clean stop on SIGTERM.

use std::time::Duration;

use serde_json::{Value, json};
use silt_e2e::http::{Served, connect, serve_http, start};
use silt_e2e::install_hostile;
use silt_e2e::mcp::{call, json_of, text_of};

const LEXICAL: &str = "judge = \"lexical\"\n";

/// An `initialize` POSTed by hand with `headers` (and the owner's token
/// unless they carry an `authorization` of their own); the response status.
async fn initialize(served: &Served, headers: &[(&str, &str)]) -> u16 {
    try_initialize(served, headers).await.unwrap()
}

/// [`initialize`], on a new connection, failing as the connection does.
async fn try_initialize(served: &Served, headers: &[(&str, &str)]) -> reqwest::Result<u16> {
    let mut req = reqwest::Client::new().post(&served.url);
    if !headers.iter().any(|(k, _)| *k == "authorization") {
        req = req.bearer_auth(&served.token);
    }
    let req = req
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}})
            .to_string(),
        );
    let mut req = req;
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    Ok(req
        .timeout(Duration::from_secs(10))
        .send()
        .await?
        .status()
        .as_u16())
}

/// A body that is not JSON gets JSON-RPC's parse error, not a bare HTTP
/// status; a valid call on the same server still works after it.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_gets_a_json_rpc_parse_error() {
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    for body in [
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"",
        "not json at all",
        "",
    ] {
        let r = reqwest::Client::new()
            .post(&served.url)
            .bearer_auth(&served.token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400, "{body:?}");
        let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert_eq!(v["id"], Value::Null, "{v}");
        assert_eq!(v["error"]["code"], -32700, "{v}");
    }
    assert_eq!(initialize(&served, &[]).await, 200);
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
    let other = reqwest::Client::new()
        .get(served.url.replace("/mcp", "/other"))
        .bearer_auth(&served.token)
        .send()
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
    let config = format!(
        "{LEXICAL}[server]\nroots = [{:?}]\n",
        repo.display().to_string()
    );
    let served = serve_http(home.path(), &config, &[]).await;
    let client = served.client().await;

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
    // read and matched: support cleared the threshold, and the lexical
    // judge (similarity, not entailment) says it could not assess it
    assert_eq!(
        verified["results"][0]["flags"],
        json!(["judge_cannot_confirm"]),
        "{verified:#}"
    );
    assert_eq!(
        verified["results"][0]["verdict"], "unverified",
        "{verified:#}"
    );
}

/// 64 clients at once, each capturing its own lesson, recalling and
/// asking: no call fails and every capture is in the ledger after.
#[tokio::test(flavor = "multi_thread")]
async fn sixty_four_concurrent_clients_share_one_ledger() {
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let (url, token) = (served.url.clone(), served.token.clone());
    let mut tasks = Vec::new();
    for i in 0..64 {
        let (url, token) = (url.clone(), token.clone());
        tasks.push(tokio::spawn(async move {
            let client = connect(&url, &token).await;
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
    let client = connect(&url, &token).await;
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
    let served = serve_http(
        home.path(),
        LEXICAL,
        &[("SILT_LOG", "silt_runtime::capability::judge_calls=debug")],
    )
    .await;
    let (hung_url, token) = (served.url.clone(), served.token.clone());
    let hung = tokio::spawn(async move {
        let client = connect(&hung_url, &token).await;
        let r = call(
            &client,
            "sieve_ask",
            json!({"question": "Is it?", "yes": "yes", "no": "no", "items": ["x"], "judge": "spin"}),
        )
        .await;
        (r.is_error, text_of(&r))
    });
    // the spinning call has reached its judge before the others start
    let log = served.log.clone();
    let reached = tokio::time::timeout(Duration::from_secs(60), async move {
        while !log.lock().unwrap().contains("asking judge 'spin'") {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(reached.is_ok(), "{}", served.log.lock().unwrap());
    let client = served.client().await;
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
    let client = served.client().await;
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
        .env("SILT_HTTP_TOKEN_FILE", home.path().join("http-token"))
        .env_remove("SILT_LEDGER_PATH");
    let served = start(cmd).await;
    assert_eq!(served.url, format!("http://127.0.0.1:{port}/mcp"));
    let client = served.client().await;
    let stats = json_of(&call(&client, "sediment_stats", json!({})).await);
    assert_eq!(
        stats["path"],
        home.path().join("from-env.db").display().to_string()
    );
}

/// Loopback is open to every user of the machine: a call without the
/// owner's token (or with a wrong one) is refused before it reaches MCP,
/// and another user cannot read the token.
#[tokio::test(flavor = "multi_thread")]
async fn calls_without_the_owners_token_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let wrong = format!("Bearer {}", "0".repeat(served.token.len()));
    let cases: [(&[(&str, &str)], u16); 4] = [
        (&[], 200),
        (&[("authorization", "")], 401),
        (&[("authorization", &wrong)], 401),
        (&[("authorization", &served.token)], 401),
    ];
    for (headers, want) in cases {
        assert_eq!(initialize(&served, headers).await, want, "{headers:?}");
    }
    // the refusal says what to send, as JSON, and never leaks the token
    let refused = reqwest::Client::new()
        .post(&served.url)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    assert!(refused.headers().contains_key("www-authenticate"));
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "unauthorized", "{body}");
    assert!(
        body["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("http-token"),
        "{body}"
    );
    assert!(!body.to_string().contains(&served.token));
    // every path, not only the endpoint
    let other = reqwest::get(served.url.replace("/mcp", "/other"))
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 401);

    // the token file is the owner's alone
    use std::os::unix::fs::MetadataExt;
    let token_file = home.path().join("http-token");
    assert_eq!(
        std::fs::metadata(&token_file).unwrap().mode() & 0o777,
        0o600
    );
    // SAFETY: geteuid has no preconditions
    if unsafe { libc::geteuid() } == 0 {
        // as uid nobody, the token cannot be read
        let as_nobody = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(&token_file)
            .output()
            .expect("setpriv (util-linux) runs");
        assert!(!as_nobody.status.success(), "nobody read the token");
        assert!(
            String::from_utf8_lossy(&as_nobody.stderr).contains("Permission denied"),
            "{as_nobody:?}"
        );
    } else {
        eprintln!(
            "NOTE: not root, so the read as another uid was not tried; mode 0600 was checked"
        );
    }
}

/// Over HTTP the server reads only under the roots its owner lists: none
/// listed refuses every file tool; a folder outside them, or `/` as a base,
/// is refused with the rule named.
#[tokio::test(flavor = "multi_thread")]
async fn files_outside_the_owners_roots_are_refused_over_http() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    let private = home.path().join("private");
    for dir in [&repo, &private] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("notes.md"), "The client retries with backoff.\n").unwrap();
    }
    let grep =
        |path: &std::path::Path| json!({"question": "retry", "path": path.display().to_string()});
    let verify = |base: &str, locator: &str| {
        json!({"base_path": base, "records": [{"claim": "The client retries with backoff",
               "citations": [{"locator": locator}]}]})
    };

    // no roots: nothing can be read
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let client = served.client().await;
    let refused = call(&client, "sieve_grep", grep(&repo)).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text_of(&refused).contains("roots"), "{refused:?}");
    drop(client);
    drop(served);

    let config = format!(
        "{LEXICAL}[server]\nroots = [{:?}]\n",
        repo.display().to_string()
    );
    let served = serve_http(home.path(), &config, &[]).await;
    let client = served.client().await;
    let inside = call(&client, "sieve_grep", grep(&repo)).await;
    assert_ne!(inside.is_error, Some(true), "{inside:?}");
    for (tool, args) in [
        ("sieve_grep", grep(&private)),
        ("sieve_grep", grep(&repo.join(".."))),
        ("sieve_verify", verify("/", "/etc/passwd")),
        (
            "sieve_verify",
            verify(&private.display().to_string(), "notes.md"),
        ),
    ] {
        let r = call(&client, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}: {r:?}");
        assert!(text_of(&r).contains("[server] roots"), "{r:?}");
    }
    // a locator cannot climb out of an allowed base either
    let out = json_of(
        &call(
            &client,
            "sieve_verify",
            verify(&repo.display().to_string(), "../private/notes.md"),
        )
        .await,
    );
    assert_ne!(out["results"][0]["verdict"], "supports_fully", "{out:#}");
    assert!(out.to_string().contains("outside the base path"), "{out:#}");
}

/// A cited page of deeply nested elements once overflowed the stack of the
/// plugin's fiber and killed the shared server for everyone: now the call
/// answers and the server goes on serving.
#[tokio::test(flavor = "multi_thread")]
async fn a_deeply_nested_page_crashes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mut page = String::from("<!doctype html><html><body>");
    page.push_str(&"<div>".repeat(100_000));
    page.push_str("The client retries with backoff.");
    std::fs::write(repo.join("deep.html"), page).unwrap();
    let config = format!(
        "{LEXICAL}[server]\nroots = [{:?}]\n",
        repo.display().to_string()
    );
    let served = serve_http(home.path(), &config, &[]).await;
    let client = served.client().await;
    let args = json!({"base_path": repo.display().to_string(), "records": [{
        "claim": "The client retries with backoff", "citations": [{"locator": "deep.html"}]}]});
    let out = json_of(&call(&client, "sieve_verify", args).await);
    // the text under 100k tags was read and matched (lexical: not confirmed)
    assert_eq!(
        out["results"][0]["flags"],
        json!(["judge_cannot_confirm"]),
        "{out:#}"
    );
    // the same server, still up
    let stats = json_of(&call(&client, "sediment_stats", json!({})).await);
    assert_eq!(stats["ok"], true, "{stats:#}");
}

/// A loopback source that answers after `delay` with a sentence. Counts
/// the fetches that arrived and the ones whose caller hung up first.
async fn slow_source(
    delay: Duration,
) -> (String, std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/notes.txt", listener.local_addr().unwrap());
    let counts = std::sync::Arc::new([
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    ]);
    let seen = counts.clone();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                seen[0].fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = tokio::time::sleep(delay) => {
                        let body = "The client retries with backoff.";
                        let _ = sock.write_all(format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()).as_bytes()).await;
                    }
                    // the fetcher closed the connection before the answer
                    _ = sock.read(&mut buf) => { seen[1].fetch_add(1, Ordering::SeqCst); }
                }
            });
        }
    });
    (url, counts)
}

fn verify_args(url: &str) -> Value {
    json!({"records": [{"claim": "The client retries with backoff",
                        "citations": [{"locator": url}]}]})
}

/// SIGTERM while a call is in flight: the call finishes and is answered
/// with its result (not a 500), then the server stops.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_lets_the_calls_in_flight_finish() {
    let home = tempfile::tempdir().unwrap();
    let (url, fetches) = slow_source(Duration::from_secs(3)).await;
    let mut served = serve_http(
        home.path(),
        LEXICAL,
        &[("SILT_FETCH_ALLOW_HOSTS", "127.0.0.1")],
    )
    .await;
    let client = served.client().await;
    let args = verify_args(&url);
    let in_flight = tokio::spawn(async move { call(&client, "sieve_verify", args).await });
    // in flight: its fetch has reached the source, which holds it 3 s
    let reached = tokio::time::timeout(Duration::from_secs(60), async {
        while fetches[0].load(std::sync::atomic::Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(reached.is_ok(), "the verify call never fetched its source");
    let pid = served.child.id().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = json_of(&in_flight.await.unwrap());
    assert_eq!(out["sources"][0]["error"], Value::Null, "{out:#}");
    assert_eq!(
        out["results"][0]["flags"],
        json!(["judge_cannot_confirm"]),
        "{out:#}"
    );
    let status = tokio::time::timeout(Duration::from_secs(30), served.child.wait())
        .await
        .expect("the server stops after draining")
        .unwrap();
    assert!(status.success(), "{}", served.log.lock().unwrap());
    assert!(
        served.log.lock().unwrap().contains("waiting up to"),
        "{}",
        served.log.lock().unwrap()
    );
}

/// A caller that hangs up stops its call: the fetch it started is closed
/// at once, not left to run into silt's 15 s fetch limit.
#[tokio::test(flavor = "multi_thread")]
async fn a_caller_that_hangs_up_stops_its_call() {
    use std::sync::atomic::Ordering;
    let home = tempfile::tempdir().unwrap();
    let (url, counts) = slow_source(Duration::from_secs(30)).await;
    let served = serve_http(
        home.path(),
        LEXICAL,
        &[("SILT_FETCH_ALLOW_HOSTS", "127.0.0.1")],
    )
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "sieve_verify", "arguments": verify_args(&url)}});
    let hung_up = reqwest::Client::new()
        .post(&served.url)
        .bearer_auth(&served.token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .timeout(Duration::from_secs(2))
        .body(body.to_string())
        .send()
        .await;
    assert!(
        hung_up.is_err(),
        "the call answered within 2 s: {hung_up:?}"
    );
    assert_eq!(
        counts[0].load(Ordering::SeqCst),
        1,
        "the source was fetched"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    while counts[1].load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        counts[1].load(Ordering::SeqCst),
        1,
        "the fetch kept running after its caller left\n{}",
        served.log.lock().unwrap()
    );
}

/// More idle connections than the server takes: they wait (in the
/// kernel, then in a room of their own, 8 here, the longest waiting closed
/// as new ones arrive) until the deadline to show the token; the owner's
/// connection, arriving amid them, is answered.
#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_neither_starve_nor_stall_the_server() {
    use tokio::io::AsyncReadExt;
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(
        home.path(),
        &format!("{LEXICAL}[server]\nmax_connections = 8\nheader_timeout_secs = 2\n"),
        &[],
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(
            tokio::net::TcpStream::connect(served.authority())
                .await
                .unwrap(),
        );
    }
    assert_eq!(initialize(&served, &[]).await, 200);
    // every idle one is closed: the kernel holds a silent socket for the
    // deadline to authenticate (2 s here, the headers timeout; rounded up
    // to its SYN-ACK retries) before silt sees it, then silt gives it as
    // long again (or displaces it for a newer one)
    let started = std::time::Instant::now();
    for sock in idle.iter_mut() {
        let mut buf = vec![0u8; 512];
        let n = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut buf))
            .await
            .expect("an idle connection is closed")
            .unwrap_or(0);
        assert!(
            n == 0 || String::from_utf8_lossy(&buf[..n]).contains("408"),
            "{n}"
        );
    }
    eprintln!(
        "the idle connections were closed in {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(initialize(&served, &[]).await, 200);
}

/// The probe's flood: 600 sockets of someone without the token, each
/// reconnecting as soon as the server closes it, never sending a byte.
/// The owner's calls, each on a new connection, are still answered: at
/// least 95 of 100 (the old server, whose places anyone could hold,
/// answered 1 in 113).
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_idle_reconnecting_sockets_leaves_the_owner_served() {
    use tokio::io::AsyncReadExt;
    let home = tempfile::tempdir().unwrap();
    let served = serve_http(home.path(), LEXICAL, &[]).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reconnects = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut flood = Vec::new();
    for _ in 0..600 {
        let (addr, stop, reconnects) = (
            served.authority().to_string(),
            stop.clone(),
            reconnects.clone(),
        );
        flood.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok(mut sock) = tokio::net::TcpStream::connect(&addr).await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                reconnects.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut buf = [0u8; 256];
                // held until the server closes it, then at once again
                loop {
                    match tokio::time::timeout(Duration::from_millis(500), sock.read(&mut buf))
                        .await
                    {
                        Ok(_) => break,
                        Err(_) if stop.load(std::sync::atomic::Ordering::Relaxed) => return,
                        Err(_) => {}
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut answered = 0;
    for _ in 0..100 {
        // a new client each time: a new connection, into the crowd
        let sent = try_initialize(&served, &[]).await;
        match sent {
            Ok(200) => answered += 1,
            Ok(status) => eprintln!("owner call answered {status}"),
            Err(e) => eprintln!("owner call failed: {e:?}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for f in flood {
        f.await.unwrap();
    }
    let reconnects = reconnects.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("{answered} of 100 owner calls answered; the flood connected {reconnects} times");
    assert!(
        reconnects > 600,
        "the flood never reconnected: {reconnects}"
    );
    assert!(answered >= 95, "{answered} of 100 owner calls answered");
}

/// Runs a `silt` command that must succeed; its JSON output.
fn silt_json(args: &[&str]) -> Value {
    let out = std::process::Command::new(silt_e2e::silt_binary())
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Group commit answers a capture only once the batch holding it is
/// durable: 32 clients capture at once (so captures share commits), the
/// server is killed with SIGKILL mid-stream, and every capture it
/// acknowledged is in the ledger, once.
#[tokio::test(flavor = "multi_thread")]
async fn kill_9_under_load_keeps_every_acknowledged_capture() {
    let home = tempfile::tempdir().unwrap();
    let ledger = home.path().join("ledger.db");
    let stored = || {
        let stored = silt_json(&["ledger", "--ledger", ledger.to_str().unwrap(), "export"]);
        stored
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    let version = || {
        let db = rusqlite::Connection::open(&ledger).unwrap();
        let version: String = db
            .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                r.get(0)
            })
            .unwrap();
        version.parse().unwrap()
    };
    kill_9_under_load(home.path(), &[], stored, version).await;
}

/// The same on a team's ledger in PostgreSQL; and the killed server's
/// write lock went with its connection, so the next writer goes on.
#[tokio::test(flavor = "multi_thread")]
async fn kill_9_under_load_on_postgres_keeps_every_acknowledged_capture() {
    use silt_e2e::postgres::{count, database, sql};
    let home = tempfile::tempdir().unwrap();
    let db = database();
    let stored = || {
        sql(&db.url, "SELECT id FROM entries")
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    let version = || {
        let v: String = sql(&db.url, "SELECT value FROM meta WHERE key = 'version'")[0].get(0);
        v.parse().unwrap()
    };
    kill_9_under_load(
        home.path(),
        &[("SILT_LEDGER_URL", &db.url)],
        stored,
        version,
    )
    .await;
    let before = count(&db.url, "SELECT COUNT(*) FROM entries");
    let next = std::process::Command::new(silt_e2e::silt_binary())
        .args([
            "ledger",
            "--json",
            "capture",
            "--when",
            "after the kill",
            "--prefer",
            "go on",
        ])
        .env("SILT_LEDGER_URL", &db.url)
        .env("SILT_SLEEP_PRESSURE", "0")
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert_eq!(count(&db.url, "SELECT COUNT(*) FROM entries"), before + 1);
}

/// 32 HTTP clients capture into the ledger `env` names until 300 are
/// acknowledged; then SIGKILL. `stored` lists the ids in the ledger,
/// `version` its commit count.
async fn kill_9_under_load(
    home: &std::path::Path,
    env: &[(&str, &str)],
    stored: impl Fn() -> Vec<String>,
    version: impl Fn() -> usize,
) {
    use rmcp::model::CallToolRequestParams;
    use std::sync::{Arc, Mutex};
    let mut env = env.to_vec();
    env.push(("SILT_SLEEP_PRESSURE", "0"));
    let mut served = serve_http(home, LEXICAL, &env).await;
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut clients = Vec::new();
    for c in 0..32 {
        let (url, token, acked) = (served.url.clone(), served.token.clone(), acked.clone());
        clients.push(tokio::spawn(async move {
            let client = connect(&url, &token).await;
            for j in 0.. {
                let args = json!({"when": format!("writing module {c}-{j}"),
                                  "prefer": format!("add test {c}-{j} first")});
                let params = CallToolRequestParams::new("sediment_capture")
                    .with_arguments(args.as_object().unwrap().clone());
                // the server is gone: stop
                let Ok(out) = client.call_tool(params).await else {
                    return;
                };
                let out = json_of(&out);
                assert_eq!(out["ok"], true, "{out}");
                let id = out["captured"]["id"].as_str().unwrap().to_string();
                acked.lock().unwrap().push(id);
            }
        }));
    }
    let started = std::time::Instant::now();
    while acked.lock().unwrap().len() < 300 {
        assert!(started.elapsed() < Duration::from_secs(120), "too slow");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();
    for c in clients {
        let _ = c.await;
    }
    let acked = acked.lock().unwrap().clone();
    let mut ids = stored();
    ids.sort_unstable();
    let all = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), all, "a lesson stored twice");
    for id in &acked {
        assert!(
            ids.binary_search(id).is_ok(),
            "acknowledged capture {id} was lost"
        );
    }
    assert!(acked.len() >= 300 && all >= acked.len(), "{} stored", all);
    // each commit bumps the version once: fewer commits than captures
    // means the clients' captures did share commits
    let version = version();
    assert!(version < all, "{version} commits for {all} captures");
}
