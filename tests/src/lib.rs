//! Helpers for silt's end-to-end tests: plugin folders for the hostile
//! components, a runtime over them, and the `silt` binary's path.

pub mod fuzz;

/// What the MCP client tests (Python SDK, Inspector CLI) share.
pub mod clients {
    use std::path::{Path, PathBuf};

    /// The small repository the documented tool calls in
    /// tests/clients/tool_calls.json point at (`$REPO`), under `home`.
    pub fn example_repo(home: &Path) -> PathBuf {
        let repo = home.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("notes.md"), "The client retries with backoff.\n").unwrap();
        std::fs::write(
            repo.join("retry.py"),
            "MAX_RETRIES = 5\n\ndef retry_delay(attempt):\n    return 2 ** attempt\n",
        )
        .unwrap();
        repo
    }
}
pub mod loopback_model;
pub mod pdf;
pub mod postgres;
pub mod searxng;

use std::path::{Path, PathBuf};

use serde_json::Value;
use silt_config::Config;
use silt_runtime::app::App;

/// The hostile components this crate's build script built.
pub fn hostile_wasm(name: &str) -> &'static str {
    match name {
        "read-outside" => env!("SILT_TEST_WASM_HOSTILE_READ_OUTSIDE"),
        "net-escape" => env!("SILT_TEST_WASM_HOSTILE_NET_ESCAPE"),
        "spin" => env!("SILT_TEST_WASM_HOSTILE_SPIN"),
        "alloc-bomb" => env!("SILT_TEST_WASM_HOSTILE_ALLOC_BOMB"),
        "trap" => env!("SILT_TEST_WASM_HOSTILE_TRAP"),
        "bad-probs" => env!("SILT_TEST_WASM_HOSTILE_BAD_PROBS"),
        "flood" => env!("SILT_TEST_WASM_HOSTILE_FLOOD"),
        other => panic!("no hostile component named {other}"),
    }
}

/// Installs hostile component `name` as a judge plugin in `plugins`, with
/// the given `[grants]` and `[limits]` TOML bodies.
pub fn install_hostile(plugins: &Path, name: &str, grants: &str, limits: &str) {
    let dir = plugins.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(hostile_wasm(name), dir.join(format!("{name}.wasm"))).unwrap();
    let manifest = format!(
        "[plugin]\nname = \"{name}\"\nkind = \"judge\"\ndescription = \"hostile test judge\"\n\n[grants]\n{grants}\n\n[limits]\n{limits}\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
}

/// The folder where `.ci/example-plugins` built the judges written in
/// Python and JavaScript (examples/judge-*): one folder per plugin, its
/// manifest beside its component. The tests that load them fail without
/// it rather than skip.
pub fn example_plugins() -> PathBuf {
    let dir = std::env::var_os("SILT_EXAMPLE_PLUGINS")
        .map(PathBuf::from)
        .expect(
            "SILT_EXAMPLE_PLUGINS is not set: build the examples with \
         `export SILT_EXAMPLE_PLUGINS=$(.ci/example-plugins)` (as .ci/run does)",
        );
    assert!(
        dir.is_dir(),
        "SILT_EXAMPLE_PLUGINS={} is not a folder",
        dir.display()
    );
    dir
}

/// Copies example plugin `name` (see [`example_plugins`]) into `plugins`.
pub fn install_example(plugins: &Path, name: &str) {
    let from = example_plugins().join(name);
    let to = plugins.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for file in ["plugin.toml", &format!("{name}.wasm")] {
        std::fs::copy(from.join(file), to.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", from.join(file).display()));
    }
}

/// A runtime that sees the plugins under `plugins` (and the built-ins),
/// with no compile cache.
pub fn app_with_plugins(plugins: &Path) -> App {
    let config = Config {
        plugins: silt_config::PluginsConfig {
            dirs: vec![plugins.to_path_buf()],
            ..Default::default()
        },
        // every call reaches the judge under test
        answer_cache: Some(false),
        ..Config::default()
    };
    App::with_config(config, false).expect("opening silt")
}

/// The `silt` binary built beside the running test (cargo builds it for
/// the host crate's own integration tests).
pub fn silt_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let bin = dir.join(format!("silt{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: run the tests with `cargo test --workspace --release`, which builds it",
        bin.display()
    );
    bin
}

/// `silt ARGS` with its config, caches and plugins under `home`, as a
/// user's shell would run it; stdin is closed, so nothing can be
/// confirmed but by `--yes`.
pub fn silt_in(home: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(silt_binary());
    cmd.args(args)
        .envs(home_env(home))
        .stdin(std::process::Stdio::null());
    cmd
}

/// The variables that put silt's config, caches and plugins under `home`
/// (for `Command::envs`, std's or tokio's).
pub fn home_env(home: &Path) -> [(&'static str, std::path::PathBuf); 3] {
    [
        ("SILT_CONFIG", home.join("silt.toml")),
        ("SILT_CACHE_DIR", home.join("cache")),
        ("SILT_PLUGIN_PATH", home.join("plugins")),
    ]
}

/// Every variable that configures search, removed from a child `silt` so
/// it is configured only by what a test passes.
pub fn clear_search_settings(cmd: &mut tokio::process::Command) {
    for k in [
        "SILT_SEARCH_BACKEND",
        "SILT_SEARXNG_URL",
        "SILT_SEARXNG_MAX_PAGES",
        "SILT_SEARXNG_TIMEOUT",
        "SILT_SEARXNG_DEADLINE",
        "BRAVE_API_KEY",
        "SILT_BRAVE_ENDPOINT",
        "SILT_SEARCH_CACHE_TTL",
        "SILT_SEARCH_TIMEOUT",
        "SILT_SEARCH_CMD",
        "SILT_SEARCH_CMD_CLAUDE",
        "SILT_SEARCH_CMD_CODEX",
        "SILT_CLAUDE_SEARCH_MODEL",
        "SILT_CODEX_SEARCH_MODEL",
        "SILT_CODEX_SEARCH_EFFORT",
        "SILT_STRIP_ENV_PREFIXES",
    ] {
        cmd.env_remove(k);
    }
}

/// `silt search-chain ARGS --json` under `home`, as a caller's script
/// would run it: its exit code and JSON.
pub async fn search_chain(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, Value) {
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.arg("search-chain")
        .args(args)
        .arg("--json")
        .envs(home_env(home));
    clear_search_settings(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    let out = cmd.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), json)
}

/// An MCP client of `silt serve` over stdio, and its tools' JSON answers.
pub mod mcp {
    use std::path::Path;

    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, CallToolResult};
    use rmcp::transport::TokioChildProcess;
    use serde_json::Value;

    pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;
    pub type RecordingClient = rmcp::service::RunningService<rmcp::RoleClient, ProgressRecorder>;

    /// Records the progress notifications the server sends.
    #[derive(Clone, Default)]
    pub struct ProgressRecorder(
        pub std::sync::Arc<std::sync::Mutex<Vec<rmcp::model::ProgressNotificationParam>>>,
    );

    impl rmcp::ClientHandler for ProgressRecorder {
        async fn on_progress(
            &self,
            params: rmcp::model::ProgressNotificationParam,
            _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            self.0.lock().unwrap().push(params);
        }
    }

    impl ProgressRecorder {
        /// The notifications so far, once at least `n` arrived (they may
        /// trail the result by a moment) or after a second.
        pub async fn seen(&self, n: usize) -> Vec<rmcp::model::ProgressNotificationParam> {
            for _ in 0..50 {
                if self.0.lock().unwrap().len() >= n {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            self.0.lock().unwrap().clone()
        }
    }

    /// `silt serve` running in `dir`, with its config, caches and plugins
    /// under `home` and the lexical judge; `env` is set on top.
    pub async fn serve(home: &Path, dir: &Path, env: &[(&str, &str)]) -> Client {
        serve_with((), home, dir, env).await
    }

    /// [`serve`] with a client that records progress notifications.
    pub async fn serve_recording(home: &Path, dir: &Path) -> (RecordingClient, ProgressRecorder) {
        let recorder = ProgressRecorder::default();
        (serve_with(recorder.clone(), home, dir, &[]).await, recorder)
    }

    async fn serve_with<H: rmcp::ClientHandler>(
        handler: H,
        home: &Path,
        dir: &Path,
        env: &[(&str, &str)],
    ) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
        let mut cmd = tokio::process::Command::new(super::silt_binary());
        cmd.arg("serve")
            .current_dir(dir)
            .envs(super::home_env(home))
            .env_remove("SILT_FETCH_ALLOW_HOSTS")
            .env_remove("SILT_FETCH_ALLOW_PRIVATE");
        super::clear_search_settings(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        std::fs::write(home.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
        handler
            .serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap()
    }

    /// Calls tool `name` with `args` (a JSON object).
    pub async fn call<H: rmcp::ClientHandler>(
        client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
        name: &'static str,
        args: Value,
    ) -> CallToolResult {
        client
            .call_tool(
                CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .expect("tools/call")
    }

    /// The result's text content.
    pub fn text_of(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.clone())
            .collect()
    }

    /// The result as JSON; panics with the tool's message on an error.
    pub fn json_of(r: &CallToolResult) -> Value {
        assert_ne!(r.is_error, Some(true), "tool error: {}", text_of(r));
        serde_json::from_str(&text_of(r)).unwrap()
    }
}

/// The shared server: `silt serve --http` as a child process.
pub mod http {
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// A running `silt serve --http`, killed when dropped.
    pub struct Served {
        pub child: tokio::process::Child,
        /// `http://127.0.0.1:PORT/mcp`.
        pub url: String,
        /// What the server wrote to stderr so far.
        pub log: Arc<Mutex<String>>,
        /// The owner's token, which every request must carry.
        pub token: String,
    }

    impl Served {
        /// `host:port` of the server.
        pub fn authority(&self) -> &str {
            self.url
                .trim_start_matches("http://")
                .trim_end_matches("/mcp")
        }

        /// An MCP client of this server, sending its token.
        pub async fn client(&self) -> super::mcp::Client {
            connect(&self.url, &self.token).await
        }
    }

    /// Starts `silt serve --http --port 0` with its config (`config`,
    /// written to `home/silt.toml`), caches, plugins, token and ledger under
    /// `home`, in `home` as its working folder; waits for the line that
    /// names its address.
    pub async fn serve_http(home: &Path, config: &str, env: &[(&str, &str)]) -> Served {
        std::fs::write(home.join("silt.toml"), config).unwrap();
        let mut cmd = tokio::process::Command::new(super::silt_binary());
        cmd.args(["serve", "--http", "--port", "0"])
            .current_dir(home)
            .env("SILT_HTTP_TOKEN_FILE", home.join("http-token"))
            .envs(super::home_env(home))
            .env("SILT_LEDGER_PATH", home.join("ledger.db"))
            .env_remove("SILT_HTTP_PORT")
            .env_remove("SILT_FETCH_ALLOW_HOSTS")
            .env_remove("SILT_FETCH_ALLOW_PRIVATE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        start(cmd).await
    }

    /// Starts `cmd` (a `silt serve --http`, directly or through the
    /// launcher, with `$SILT_HTTP_TOKEN_FILE` set) and waits for the line
    /// that names its address; then reads the token the server made.
    pub async fn start(mut cmd: tokio::process::Command) -> Served {
        let token_file = cmd
            .as_std()
            .get_envs()
            .find(|(k, _)| *k == "SILT_HTTP_TOKEN_FILE")
            .and_then(|(_, v)| v)
            .map(std::path::PathBuf::from)
            .expect("tests set SILT_HTTP_TOKEN_FILE");
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("starting silt serve --http");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let url = loop {
            match lines.next_line().await.unwrap() {
                Some(line) => {
                    log.lock().unwrap().push_str(&format!("{line}\n"));
                    if let Some(url) = line.strip_prefix("silt: serving MCP at ") {
                        break url.to_string();
                    }
                }
                None => panic!(
                    "silt serve --http exited before serving:\n{}",
                    log.lock().unwrap()
                ),
            }
        };
        // keep reading, so the server never blocks on a full pipe
        let tail = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tail.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let token = std::fs::read_to_string(&token_file)
            .expect("the server made its token file")
            .trim()
            .to_string();
        Served {
            child,
            url,
            log,
            token,
        }
    }

    /// An MCP client of `url`, authenticating with `token`.
    pub async fn connect(url: &str, token: &str) -> super::mcp::Client {
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .auth_header(token.to_string());
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("connecting over streamable HTTP")
    }
}

/// `silt serve` over stdio spoken to in raw JSON-RPC lines, as a client
/// with its own framing would: what silt answers to lines an SDK never
/// sends (batches, other versions), and what it does on SIGTERM.
pub mod raw_stdio {
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
    use tokio::process::{Child, ChildStdin, ChildStdout};

    pub struct RawServer {
        pub child: Child,
        stdin: Option<ChildStdin>,
        lines: Lines<BufReader<ChildStdout>>,
    }

    impl RawServer {
        /// Spawns `cmd` (a `silt serve`) with piped stdio and initializes it.
        pub async fn start(mut cmd: tokio::process::Command) -> RawServer {
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true);
            let mut child = cmd.spawn().expect("spawning silt serve");
            let stdin = child.stdin.take();
            let lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let mut server = RawServer {
                child,
                stdin,
                lines,
            };
            server
                .send(
                    &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}}),
                )
                .await;
            let answer = server.next(Duration::from_secs(60)).await;
            assert_eq!(
                answer.as_ref().map(|a| &a["id"]),
                Some(&json!("init")),
                "{answer:?}"
            );
            server
                .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            server
        }

        /// Writes `line` and a newline.
        pub async fn send_line(&mut self, line: &str) {
            let stdin = self.stdin.as_mut().expect("stdin is open");
            stdin.write_all(line.as_bytes()).await.unwrap();
            stdin.write_all(b"\n").await.unwrap();
            stdin.flush().await.unwrap();
        }

        pub async fn send(&mut self, message: &Value) {
            self.send_line(&message.to_string()).await;
        }

        /// A `tools/call` of `name` with `args`, under request id `id`.
        pub async fn call(&mut self, id: u64, name: &str, args: Value) {
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": {"name": name, "arguments": args}}))
                .await;
        }

        /// The next line silt writes, as JSON; None at the end of its
        /// output or when nothing comes `within`.
        pub async fn next(&mut self, within: Duration) -> Option<Value> {
            match tokio::time::timeout(within, self.lines.next_line()).await {
                Ok(Ok(Some(line))) => {
                    Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
                }
                _ => None,
            }
        }

        /// Sends the process signal `name` (`TERM`).
        pub fn signal(&self, name: &str) {
            let pid = self.child.id().expect("running").to_string();
            let sent = std::process::Command::new("kill")
                .args(["-s", name, &pid])
                .status()
                .unwrap();
            assert!(sent.success());
        }

        /// Waits up to `within` for the process to end; its stderr.
        pub async fn ended(mut self, within: Duration) -> Option<String> {
            let status = tokio::time::timeout(within, self.child.wait()).await.ok()?;
            status.unwrap();
            let mut err = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                tokio::io::AsyncReadExt::read_to_string(&mut e, &mut err)
                    .await
                    .unwrap();
            }
            Some(err)
        }

        /// Kills the process; its stderr.
        pub async fn kill(mut self) -> String {
            let _ = self.child.start_kill();
            self.ended(Duration::from_secs(30))
                .await
                .unwrap_or_default()
        }
    }
}
