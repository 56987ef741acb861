//! Helpers for silt's end-to-end tests: plugin folders for the hostile
//! components, a runtime over them, and the `silt` binary's path.

use std::path::{Path, PathBuf};

use silt::app::App;
use silt::config::Config;

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

/// A runtime that sees the plugins under `plugins` (and the built-ins),
/// with no compile cache.
pub fn app_with_plugins(plugins: &Path) -> App {
    let config = Config {
        plugins: silt::config::PluginsConfig {
            dirs: vec![plugins.to_path_buf()],
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
            .env("SILT_CACHE_DIR", home.join("cache"))
            .env("SILT_PLUGIN_PATH", home.join("plugins"))
            .env("SILT_CONFIG", home.join("silt.toml"))
            .env_remove("SILT_FETCH_ALLOW_HOSTS")
            .env_remove("SILT_FETCH_ALLOW_PRIVATE");
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
