//! `silt.toml`: which judge each tool uses and where plugins and caches live.
//!
//! Looked up in order: `$SILT_CONFIG` (a file that must exist), `./silt.toml`,
//! then `<config dir>/silt/silt.toml` (`~/.config/silt/silt.toml` on Linux).
//! No file means the defaults: every tool on the lexical judge.

#![deny(missing_docs)]

pub mod env;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The judge every tool uses unless configured otherwise.
pub const DEFAULT_JUDGE: &str = "lexical";

/// Per-tool settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// The judge plugin this tool asks by default.
    pub judge: Option<String>,
}

/// The `[plugins]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginsConfig {
    /// Folders searched for plugins (each plugin is a sub-folder holding a
    /// `plugin.toml`), after `$SILT_PLUGIN_PATH` and before the default.
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
    /// Public keys (`ed25519:<hex>`) whose signatures you trust. When any
    /// is listed, every third-party plugin must be signed by one of them.
    #[serde(default)]
    pub trusted_keys: Vec<String>,
}

/// The `[ledger]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerConfig {
    /// Run the sleep pass after a capture once the active set holds at
    /// least this many candidate pairs per active entry (0 turns it off).
    pub sleep_pressure: Option<f64>,
    /// The least probability a judge must give merge or contradict for
    /// sleep to retire a lesson on it (default 0.8; 0 < margin <= 1).
    pub destructive_margin: Option<f64>,
    /// The embedding plugin whose vectors pair lessons for sleep and
    /// review and recall them by meaning when the ledger's judge has no
    /// vectors of its own (default `embedding-static`, potion; `"none"`:
    /// by words only). `$SILT_LEDGER_EMBEDDER` goes before it.
    pub embedder: Option<String>,
    /// A team's ledger in PostgreSQL (`postgres://USER@HOST/DATABASE`);
    /// `$SILT_LEDGER_URL` and `$SILT_LEDGER_PATH` go before it.
    pub url: Option<String>,
}

/// The `[fetch]` table: what verify may fetch beyond public addresses.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    /// Hosts (names or IP literals) fetched although they are internal
    /// (loopback, private, link-local), e.g. an intranet wiki. Added to
    /// `$SILT_FETCH_ALLOW_HOSTS`.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Every internal address (also `$SILT_FETCH_ALLOW_PRIVATE=1`).
    pub allow_private: Option<bool>,
}

/// The folders of a colon-separated search path, empty entries skipped.
fn search_path(value: &std::ffi::OsStr) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// The embedding plugin a ledger takes its vectors from when its judge
/// has none: potion, installed by the README's set-up.
pub const DEFAULT_EMBEDDER: &str = "embedding-static";

/// The HTTP server's port when neither `--port`, `$SILT_HTTP_PORT` nor
/// the config sets one.
pub const DEFAULT_HTTP_PORT: u16 = 8723;

/// The `[server]` table: the shared HTTP server (`silt serve --http`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The address to listen on; loopback unless set (127.0.0.1).
    pub bind: Option<std::net::IpAddr>,
    /// The port (8723; `--port` and `$SILT_HTTP_PORT` win).
    pub port: Option<u16>,
    /// `Host` header values accepted besides the loopback names, e.g. the
    /// name a reverse proxy forwards (`"silt.internal"`, `"silt.internal:443"`).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides loopback ones, with a scheme and a
    /// port or `:*` (`"https://tools.example:443"`). Requests without an
    /// `Origin` (every MCP client that is not a web page) always pass.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// The folders HTTP callers may read (grep's `path`, verify's
    /// `base_path`), absolute. None listed: file tools are refused over
    /// HTTP, since the server reads with its owner's rights.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
    /// The file holding the bearer token every HTTP call must send
    /// (`$SILT_HTTP_TOKEN_FILE` wins; default `<config dir>/silt/http-token`).
    pub token_file: Option<PathBuf>,
    /// Connections that showed the token served at once (default 512, or
    /// half the process's file-descriptor limit when that is lower); past
    /// it a request gets 503 with Retry-After. Connections yet to show the
    /// token wait apart, in a quarter as many places (at least 8).
    pub max_connections: Option<usize>,
    /// Seconds a connection may take to send a request's headers, and may
    /// sit idle between requests, before it is closed (default 10).
    pub header_timeout_secs: Option<u64>,
}

/// The `[search]` table: which backend `sieve_search` uses.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// A search plugin's name (`searxng`, `brave`, or an installed one);
    /// `$SILT_SEARCH_BACKEND` wins. Unset: searxng when `$SILT_SEARXNG_URL`
    /// is set, else brave when `$BRAVE_API_KEY` is set.
    pub backend: Option<String>,
}

/// The `[grep]` table: how `sieve_grep` weighs a judge.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepConfig {
    /// A judge's share of each unit's probability, 0 to 1; the rest is
    /// the repository's own lexical evidence (default 0.1, fitted on the
    /// grep evaluation; `$SILT_GREP_JUDGE_WEIGHT` wins).
    pub judge_weight: Option<f64>,
}

/// The redundancy pressure that schedules a sleep pass when none is set.
pub const DEFAULT_SLEEP_PRESSURE: f64 = 0.5;

/// The whole config file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The judge for tools that name none.
    pub judge: Option<String>,
    /// Settings by tool name (`sieve_ask`, ...).
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    /// Where plugins are looked for and whose signatures are trusted.
    #[serde(default)]
    pub plugins: PluginsConfig,
    /// The lessons ledger: auto-sleep, margin, embedder and store.
    #[serde(default)]
    pub ledger: LedgerConfig,
    /// Internal hosts verify may fetch.
    #[serde(default)]
    pub fetch: FetchConfig,
    /// The shared HTTP server's address, access rules and limits.
    #[serde(default)]
    pub server: ServerConfig,
    /// The backend `sieve_search` asks.
    #[serde(default)]
    pub search: SearchConfig,
    /// How much `sieve_grep` trusts a judge.
    #[serde(default)]
    pub grep: GrepConfig,
    /// Where compiled components and answers are cached (default: the user cache dir).
    pub cache_dir: Option<PathBuf>,
    /// Remember judges' answers (default on; `SILT_ANSWER_CACHE=0` turns it off).
    pub answer_cache: Option<bool>,
    /// The file this config was read from, if any.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl Config {
    /// Whether judges' answers are remembered: off when `answer_cache` is
    /// false or `$SILT_ANSWER_CACHE` is 0/off/false, else on.
    pub fn answer_cache_enabled(&self) -> bool {
        let env_off = matches!(
            env::text("SILT_ANSWER_CACHE").as_deref(),
            Some("0") | Some("off") | Some("false")
        );
        self.answer_cache != Some(false) && !env_off
    }

    /// Finds and reads the config file, or returns the defaults.
    pub fn discover() -> Result<Config> {
        if let Some(path) = env::path("SILT_CONFIG") {
            if !path.is_file() {
                bail!(
                    "SILT_CONFIG points to {}, which is not a file",
                    path.display()
                );
            }
            return Config::load(&path);
        }
        let candidates = [
            Some(PathBuf::from("silt.toml")),
            dirs::config_dir().map(|d| d.join("silt").join("silt.toml")),
        ];
        for path in candidates.into_iter().flatten() {
            if path.is_file() {
                return Config::load(&path);
            }
        }
        Ok(Config::default())
    }

    /// Reads one config file.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        let mut config: Config = toml::from_str(&text)
            .with_context(|| format!("config {} is not valid", path.display()))?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// The judge `tool` uses when the call names none.
    pub fn judge_for(&self, tool: &str) -> &str {
        self.tools
            .get(tool)
            .and_then(|t| t.judge.as_deref())
            .or(self.judge.as_deref())
            .unwrap_or(DEFAULT_JUDGE)
    }

    /// The plugin giving a ledger vectors when its judge has none:
    /// `$SILT_LEDGER_EMBEDDER`, `[ledger] embedder`, or potion's judge;
    /// None for "none".
    pub fn ledger_embedder(&self) -> Option<String> {
        let named = env::text("SILT_LEDGER_EMBEDDER")
            .or_else(|| self.ledger.embedder.clone())
            .unwrap_or_else(|| DEFAULT_EMBEDDER.to_string());
        let named = named.trim().to_string();
        (named != "none").then_some(named)
    }

    /// The auto-sleep threshold: `$SILT_SLEEP_PRESSURE`, the config's
    /// `[ledger] sleep_pressure`, or the default; 0 turns auto-sleep off.
    pub fn sleep_pressure(&self) -> Result<f64> {
        let value = match env::text("SILT_SLEEP_PRESSURE") {
            Some(v) => v
                .parse::<f64>()
                .with_context(|| format!("SILT_SLEEP_PRESSURE='{v}' is not a number"))?,
            None => self.ledger.sleep_pressure.unwrap_or(DEFAULT_SLEEP_PRESSURE),
        };
        if !value.is_finite() || value < 0.0 {
            bail!("the sleep pressure must be a number >= 0 (0 turns auto-sleep off), got {value}");
        }
        Ok(value)
    }

    /// The judge's weight in grep: `$SILT_GREP_JUDGE_WEIGHT`, the config's
    /// `[grep] judge_weight`, or None (the engine's default).
    pub fn grep_judge_weight(&self) -> Result<Option<f64>> {
        let value = match env::text("SILT_GREP_JUDGE_WEIGHT") {
            Some(v) => Some(
                v.parse::<f64>()
                    .with_context(|| format!("SILT_GREP_JUDGE_WEIGHT='{v}' is not a number"))?,
            ),
            None => self.grep.judge_weight,
        };
        if let Some(w) = value
            && !(w.is_finite() && (0.0..=1.0).contains(&w))
        {
            bail!(
                "the grep judge weight must be in [0, 1] (0: the repository's evidence alone, \
                 1: the judge alone), got {w}"
            );
        }
        Ok(value)
    }

    /// The ledger's destructive margin: the config's `[ledger]
    /// destructive_margin` or the engine's default.
    pub fn destructive_margin(&self) -> Result<f64> {
        let m = self
            .ledger
            .destructive_margin
            .unwrap_or(silt_core::ledger::DEFAULT_DESTRUCTIVE_MARGIN);
        if !(m > 0.0 && m <= 1.0) {
            bail!(
                "[ledger] destructive_margin must be above 0 and at most 1 (1 retires a lesson \
                 only on a certain verdict), got {m}"
            );
        }
        Ok(m)
    }

    /// Plugin folders in search order: `$SILT_PLUGIN_PATH` (colon-separated;
    /// an empty entry is skipped, never read as the current folder, which
    /// would load plugins from the repository an agent runs in), the
    /// config's `[plugins] dirs`, then `<data dir>/silt/plugins`.
    pub fn plugin_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = env::path("SILT_PLUGIN_PATH")
            .map(|v| search_path(v.as_os_str()))
            .unwrap_or_default();
        dirs.extend(self.plugins.dirs.iter().cloned());
        dirs.extend(dirs::data_dir().map(|d| d.join("silt").join("plugins")));
        dirs
    }

    /// Where `silt plugins add` installs: the first plugin folder searched.
    pub fn install_dir(&self) -> PathBuf {
        self.plugin_dirs()
            .into_iter()
            .next()
            .unwrap_or_else(|| PathBuf::from("silt-plugins"))
    }

    /// The HTTP server's token file: `$SILT_HTTP_TOKEN_FILE`, the
    /// config's `[server] token_file`, or `<config dir>/silt/http-token`.
    pub fn token_file(&self) -> PathBuf {
        env::path("SILT_HTTP_TOKEN_FILE")
            .or_else(|| self.server.token_file.clone())
            .or_else(|| dirs::config_dir().map(|d| d.join("silt").join("http-token")))
            .unwrap_or_else(|| PathBuf::from(".silt-http-token"))
    }

    /// Where compiled components are cached: `$SILT_COMPILE_CACHE_DIR`,
    /// else `components` in [`Config::cache_dir`]. The artifacts are keyed
    /// by content and written whole, so concurrent runs may share a folder.
    pub fn compile_cache_dir(&self) -> PathBuf {
        env::path("SILT_COMPILE_CACHE_DIR").unwrap_or_else(|| self.cache_dir().join("components"))
    }

    /// Where silt keeps its caches (the answers, and the compiled
    /// components unless [`Config::compile_cache_dir`] says otherwise):
    /// `$SILT_CACHE_DIR`, the config's `cache_dir`, or `<cache dir>/silt`.
    pub fn cache_dir(&self) -> PathBuf {
        env::path("SILT_CACHE_DIR")
            .or_else(|| self.cache_dir.clone())
            .or_else(|| dirs::cache_dir().map(|d| d.join("silt")))
            .unwrap_or_else(|| std::env::temp_dir().join("silt-cache"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_search_path_entry_is_not_the_current_folder() {
        let dirs = search_path(std::ffi::OsStr::new(":/a/plugins::/b/plugins:"));
        assert_eq!(
            dirs,
            [PathBuf::from("/a/plugins"), PathBuf::from("/b/plugins")]
        );
    }

    #[test]
    fn tool_setting_beats_default_judge() {
        let c: Config =
            toml::from_str("judge = \"embedding\"\n[tools.sieve_ask]\njudge = \"http-model\"\n")
                .unwrap();
        assert_eq!(c.judge_for("sieve_ask"), "http-model");
        assert_eq!(c.judge_for("sieve_rank"), "embedding");
        assert_eq!(Config::default().judge_for("sieve_ask"), DEFAULT_JUDGE);
    }

    #[test]
    fn the_grep_judge_weight_is_read_and_checked() {
        // $SILT_GREP_JUDGE_WEIGHT would win; the test process never sets it
        assert_eq!(Config::default().grep_judge_weight().unwrap(), None);
        let c: Config = toml::from_str("[grep]\njudge_weight = 0.5\n").unwrap();
        assert_eq!(c.grep_judge_weight().unwrap(), Some(0.5));
        let c: Config = toml::from_str("[grep]\njudge_weight = 1.5\n").unwrap();
        let e = c.grep_judge_weight().unwrap_err().to_string();
        assert!(e.contains("[0, 1]"), "{e}");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Config>("jugde = \"x\"\n").is_err());
    }
}
