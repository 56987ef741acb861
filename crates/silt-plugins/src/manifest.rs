//! A plugin's manifest (`plugin.toml`): what it is and what it may touch.
//! Everything not granted here is denied.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// What role a component plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginKind {
    /// Exports `silt:judge/judge`.
    Judge,
    /// A silt engine (exports one of the `silt:sieve` interfaces).
    Engine,
    /// A web search backend (exports `silt:search/backend`).
    Search,
}

/// The `[plugin]` table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// What configs and `silt plugins` call it (lowercase letters, digits, '-');
    /// also its folder's name once installed.
    pub name: String,
    /// Its role, which decides the interface it must export.
    pub kind: PluginKind,
    /// One line for `silt plugins list`; empty when not given.
    #[serde(default)]
    pub description: String,
    /// The release, `MAJOR.MINOR.PATCH` (semver). A signature signs the
    /// manifest, so it signs this too: `silt plugins update` refuses to go
    /// back to a lower one without `--allow-downgrade`. Optional, so
    /// plugins made before it still load; theirs is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The component file, relative to the manifest's folder. Built-in
    /// plugins are embedded in the binary and leave it out.
    #[serde(default)]
    pub component: Option<PathBuf>,
}

/// The `[grants]` table: capabilities, deny by default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Host folders the plugin may read (never write), each visible inside
    /// the guest at the same absolute path.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Hosts the plugin may reach over `wasi:http`: `name` or `name:port`,
    /// or `env:VAR` for the host and port of the URL in environment
    /// variable VAR (which must be granted in `env` too): a backend whose
    /// server the user chooses, such as SearXNG. Loopback, private,
    /// link-local and metadata addresses are refused after resolution
    /// unless the host is granted by that literal name (or an `env:` URL
    /// names it literally).
    #[serde(default)]
    pub http: Vec<String>,
    /// Environment variables the plugin may read (copied from silt's own
    /// environment when set).
    #[serde(default)]
    pub env: Vec<String>,
    /// Installed models (`silt models install NAME`) the plugin may read,
    /// each mounted read-only at `/models/NAME` inside the guest; the
    /// host's own paths stay hidden. An entry `env:VAR=NAME` grants the
    /// model named by silt's environment variable VAR when it is set, else
    /// NAME (the user picks the model; the manifest still says it is one
    /// installed model, read-only).
    #[serde(default)]
    pub models: Vec<String>,
    /// Programs the plugin may run through `silt:search/exec`, by name
    /// (looked up on PATH when called), each with the environment variable
    /// that may replace its command line (`override`). A program runs with
    /// the user's rights and the arguments the plugin chooses: grant one
    /// only to a plugin trusted with that program.
    #[serde(default)]
    pub exec: std::collections::BTreeMap<String, ExecGrant>,
    /// Whether the plugin may ask the model of the MCP client whose call
    /// it serves (`silt:host/sampling`): prompts go to the user's own
    /// model, at the user's cost, so grant it only to a judge trusted
    /// with that.
    #[serde(default)]
    pub sampling: bool,
}

/// One `[grants.exec]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecGrant {
    /// A variable whose value, when set, is the command line (shell words)
    /// run instead of the bare program name: another path, a wrapper, or
    /// fixed leading arguments. The plugin's arguments follow it.
    #[serde(default, rename = "override")]
    pub override_var: Option<String>,
}

/// The `[limits]` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Linear memory cap per instance, in MiB.
    #[serde(default = "default_memory_mib")]
    pub memory_mib: u64,
    /// Guest execution time per call, in milliseconds (enforced by epoch
    /// interruption in 10 ms ticks).
    #[serde(default = "default_cpu_ms")]
    pub cpu_ms: u64,
    /// Wall-clock time per call, in milliseconds, including time spent
    /// waiting on the host.
    #[serde(default = "default_wall_ms")]
    pub wall_ms: u64,
    /// The largest result the plugin may hand back, in KiB.
    #[serde(default = "default_output_kib")]
    pub output_kib: u64,
    /// Calls one instance serves before it is replaced. 1 (the default)
    /// gives every call a fresh instance; a judge that loads a model asks
    /// for more, so the model is loaded once and stays warm. An instance
    /// that fails or times out is always dropped.
    #[serde(default = "default_reuse_calls")]
    pub reuse_calls: u32,
}

fn default_memory_mib() -> u64 {
    64
}
fn default_cpu_ms() -> u64 {
    5_000
}
fn default_wall_ms() -> u64 {
    30_000
}
fn default_output_kib() -> u64 {
    1024
}
fn default_reuse_calls() -> u32 {
    1
}

/// The model a `grants.models` entry names: the entry itself, or for
/// `env:VAR=NAME` the value of VAR (looked up with `var`) when set and not
/// empty, else NAME.
pub fn granted_model(entry: &str, var: impl Fn(&str) -> Option<String>) -> String {
    match entry
        .strip_prefix("env:")
        .and_then(|rest| rest.split_once('='))
    {
        Some((key, default)) => var(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string()),
        None => entry.to_string(),
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mib: default_memory_mib(),
            cpu_ms: default_cpu_ms(),
            wall_ms: default_wall_ms(),
            output_kib: default_output_kib(),
            reuse_calls: default_reuse_calls(),
        }
    }
}

/// What an exec grant's override variable must be called: a search
/// backend's, or a judge's (the agent judge's `claude` may be pointed
/// elsewhere than the search backend's).
pub const EXEC_OVERRIDE_PREFIX: &str = "SILT_SEARCH_CMD_";
/// The prefix of a judge's exec override variable; every other kind uses
/// [`EXEC_OVERRIDE_PREFIX`].
pub const JUDGE_EXEC_OVERRIDE_PREFIX: &str = "SILT_JUDGE_CMD_";

/// The largest memory cap a manifest may ask for; the pooling allocator
/// reserves this much per slot.
pub const MAX_MEMORY_MIB: u64 = 1024;

/// The longest a call may run guest code, in ms (one hour): a limit the
/// user can still wait out, so a spinning plugin always stops.
pub const MAX_CPU_MS: u64 = 3_600_000;
/// The longest a call may take on the wall clock, in ms (one hour).
pub const MAX_WALL_MS: u64 = 3_600_000;
/// The largest result a plugin may hand back, in KiB (64 MiB).
pub const MAX_OUTPUT_KIB: u64 = 64 << 10;
/// The most calls one warm instance may serve before it is replaced.
pub const MAX_REUSE_CALLS: u32 = 1_000_000;

/// Folders whose whole tree a plugin should rarely need: granting one
/// (or `/`) is reported as broad.
const BROAD_FOLDERS: [&str; 8] = [
    "/", "/etc", "/home", "/root", "/usr", "/var", "/proc", "/sys",
];

/// Programs that run whatever code they are given: a plugin granted one
/// through exec can do anything the user can, so its grant is shown as
/// full power rather than as one more program.
const INTERPRETERS: [&str; 24] = [
    "sh",
    "bash",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "csh",
    "busybox",
    "env",
    "python",
    "python3",
    "node",
    "deno",
    "bun",
    "npx",
    "uvx",
    "perl",
    "ruby",
    "php",
    "lua",
    "pwsh",
    "powershell",
    "cmd",
    "osascript",
];

/// Words in an environment variable's name that mark it as a secret.
const SECRET_WORDS: [&str; 7] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// The `[judge]` table: what a judge can be trusted with. Everything
/// defaults to the cautious answer, so a judge must claim an ability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSection {
    /// The judge reads what a passage states (entailment), not only which
    /// words or topics it shares with a claim: `sieve_verify` lets only
    /// such a judge call a claim `supports_fully`. Similarity judges leave
    /// it false; a claim with one word changed is as similar as the true one.
    #[serde(default)]
    pub entailment: bool,
    /// The judge scores a text by the words it shares with the question,
    /// which grep's own ranking (BM25F over the whole repository) already
    /// does better: grep then ranks in the engine and does not ask it.
    /// Only a judge whose answer is that evidence should claim it (silt's
    /// lexical judge); any other is asked as usual.
    #[serde(default)]
    pub engine_ranking: bool,
    /// The model that answers, as every answer's `usage.model` names it:
    /// a name or description, or `env:VAR=DEFAULT` for the value of silt's
    /// environment variable VAR when set, else DEFAULT. A judge granted
    /// installed models (`grants.models`) is named by them without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A whole manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The `[plugin]` table: what the plugin is and where its component lies.
    pub plugin: PluginSection,
    /// The `[grants]` table; nothing granted when left out.
    #[serde(default)]
    pub grants: Grants,
    /// The `[limits]` table; the defaults when left out.
    #[serde(default)]
    pub limits: Limits,
    /// Only for `kind = "judge"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSection>,
}

impl Manifest {
    /// Parses and checks a manifest; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Manifest> {
        let m: Manifest = toml::from_str(text)
            .with_context(|| format!("{origin} is not a valid plugin manifest"))?;
        m.check()
            .with_context(|| format!("{origin} is not a valid plugin manifest"))?;
        Ok(m)
    }

    /// The component's file, relative to the manifest's folder: the
    /// `component` it names, else `<name>.wasm`.
    pub fn component_file(&self) -> PathBuf {
        self.plugin
            .component
            .clone()
            .unwrap_or_else(|| format!("{}.wasm", self.plugin.name).into())
    }

    /// Reads `plugin.toml` from `dir`.
    pub fn load(dir: &Path) -> Result<Manifest> {
        Ok(Manifest::load_with_digest(dir)?.0)
    }

    /// Reads `plugin.toml` from `dir`, with the digest of the bytes read
    /// (what a lock file and a signature pin).
    pub fn load_with_digest(dir: &Path) -> Result<(Manifest, String)> {
        let path = dir.join("plugin.toml");
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let text = std::str::from_utf8(&bytes)
            .with_context(|| format!("{} is not UTF-8", path.display()))?;
        let manifest = Manifest::parse(text, &path.display().to_string())?;
        Ok((manifest, super::lock::digest(&bytes)))
    }

    fn check(&self) -> Result<()> {
        let name = &self.plugin.name;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            bail!("plugin name '{name}' must be lowercase letters, digits and '-'");
        }
        if let Some(v) = &self.plugin.version {
            super::version::Version::parse(v).context("[plugin] version")?;
        }
        if self.judge.is_some() && self.plugin.kind != PluginKind::Judge {
            bail!("a [judge] table belongs only in a judge's manifest (kind = \"judge\")");
        }
        let l = &self.limits;
        if l.memory_mib == 0 || l.memory_mib > MAX_MEMORY_MIB {
            bail!(
                "limits.memory_mib must be between 1 and {MAX_MEMORY_MIB}, got {}",
                l.memory_mib
            );
        }
        for (field, value, max) in [
            ("cpu_ms", l.cpu_ms, MAX_CPU_MS),
            ("wall_ms", l.wall_ms, MAX_WALL_MS),
            ("output_kib", l.output_kib, MAX_OUTPUT_KIB),
            (
                "reuse_calls",
                u64::from(l.reuse_calls),
                u64::from(MAX_REUSE_CALLS),
            ),
        ] {
            if value == 0 || value > max {
                bail!("limits.{field} must be between 1 and {max}, got {value}");
            }
        }
        for model in &self.grants.models {
            let named = match model.strip_prefix("env:") {
                Some(rest) => rest.split_once('=').and_then(|(var, name)| {
                    (!var.is_empty()
                        && var
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .then_some(name)
                }),
                None => Some(model.as_str()),
            };
            if !named.is_some_and(crate::models::valid_name) {
                bail!(
                    "grants.models entry '{model}' must be an installed model's name (lowercase \
                     letters, digits and '-') or env:VAR=NAME"
                );
            }
        }
        for dir in &self.grants.read {
            if !dir.is_absolute() {
                bail!(
                    "grants.read entry '{}' must be an absolute path",
                    dir.display()
                );
            }
        }
        for (program, grant) in &self.grants.exec {
            if program.is_empty()
                || !program
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                || program.starts_with('.')
            {
                bail!(
                    "grants.exec entry '{program}' must be a program name looked up on PATH \
                     (letters, digits, '-', '_', '.'; no path)"
                );
            }
            // the override chooses what runs: only a variable made for
            // that, never one that happens to hold a path (SHELL) or a
            // secret the plugin is not granted
            let prefix = match self.plugin.kind {
                PluginKind::Judge => JUDGE_EXEC_OVERRIDE_PREFIX,
                _ => EXEC_OVERRIDE_PREFIX,
            };
            if let Some(var) = &grant.override_var
                && (!var.starts_with(prefix)
                    || var.len() == prefix.len()
                    || !var
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            {
                bail!(
                    "grants.exec.{program}.override must be a variable named {prefix}<NAME> (capitals, digits, '_'), got '{var}'"
                );
            }
        }
        if !self.grants.exec.is_empty() {
            if !matches!(self.plugin.kind, PluginKind::Search | PluginKind::Judge) {
                bail!(
                    "grants.exec is for search backends and judges (kind = \"search\" or \"judge\") only"
                );
            }
            if self.limits.wall_ms < 10_000 {
                bail!(
                    "a plugin granted exec needs limits.wall_ms of at least 10000 (its program gets the wall clock less 5 s)"
                );
            }
        }
        for host in &self.grants.http {
            if let Some(var) = host.strip_prefix("env:") {
                if !self.grants.env.contains(&var.to_string()) {
                    bail!(
                        "grants.http entry '{host}' names variable {var}, which grants.env must grant too"
                    );
                }
                continue;
            }
            if host.is_empty() || host.contains('/') || host.contains('*') {
                bail!(
                    "grants.http entry '{host}' must be a host name or host:port (no scheme, path or wildcard)"
                );
            }
        }
        Ok(())
    }

    /// [`http_grant_warnings`] of this manifest's grants.
    pub fn http_grant_warnings(&self) -> Vec<String> {
        http_grant_warnings(&self.grants.http)
    }

    /// Grants wider than a plugin usually needs, in words, for `silt
    /// plugins add` and `list` to show: they load (the user may mean them),
    /// but never without a word.
    pub fn broad_grants(&self) -> Vec<String> {
        let g = &self.grants;
        let mut out = self.http_grant_warnings();
        let home = dirs::home_dir();
        for dir in &g.read {
            let plain = dir.components().collect::<PathBuf>();
            if BROAD_FOLDERS.iter().any(|b| plain == Path::new(b))
                || home.as_deref() == Some(plain.as_path())
            {
                out.push(format!(
                    "reads all of {} (grant the folder it needs instead)",
                    dir.display()
                ));
            }
        }
        for var in &g.env {
            let upper = var.to_ascii_uppercase();
            if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
                out.push(format!("reads {var}, which looks like a secret"));
            }
        }
        for program in g.exec.keys() {
            if is_interpreter(program) {
                out.push(format!(
                    "FULL POWER: runs {program}, an interpreter, so it can run any code as you"
                ));
            } else {
                out.push(format!("runs {program} with your rights"));
            }
        }
        if g.http.iter().any(|h| h.starts_with("env:")) {
            out.push("reaches whatever server its granted variable names".into());
        }
        out
    }
}

/// Whether `program` (a name looked up on PATH, maybe with a version
/// suffix such as python3.12 or a .exe) is one of [`INTERPRETERS`].
fn is_interpreter(program: &str) -> bool {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base) || INTERPRETERS.contains(&stem)
}

/// What is risky in `http` grants written into a manifest (an `env:`
/// entry is the owner's own setting, a SearXNG on loopback say, and is
/// not questioned): a link-local address (cloud metadata services answer
/// there), loopback (the services of this machine), and silt's own HTTP
/// port. A grant by literal address or `localhost` is the one way past
/// the internal-address rule, so each is named at load and by `plugins
/// add`.
pub fn http_grant_warnings(entries: &[String]) -> Vec<String> {
    let own_ports: Vec<u16> = std::iter::once(silt_config::DEFAULT_HTTP_PORT)
        .chain(silt_config::env::number::<u16>("SILT_HTTP_PORT"))
        .collect();
    entries
        .iter()
        .filter(|e| !e.starts_with("env:"))
        .filter_map(|entry| {
            let (host, port) = host_and_port(entry);
            let ip = if host.eq_ignore_ascii_case("localhost") {
                Some(std::net::IpAddr::from([127, 0, 0, 1]))
            } else {
                host.parse::<std::net::IpAddr>().ok()
            };
            let what = match ip {
                Some(ip) if silt_fetch::addresses::is_link_local(ip) => {
                    "a link-local address, where cloud metadata services hand out credentials"
                }
                Some(ip) if silt_fetch::addresses::is_loopback(ip) => match port {
                    Some(p) if own_ports.contains(&p) => "silt's own HTTP server",
                    Some(_) => "a service on this machine (loopback)",
                    None => {
                        "every port on this machine (loopback), silt's own HTTP server's among them"
                    }
                },
                _ => return None,
            };
            Some(format!("grants.http entry '{entry}' reaches {what}"))
        })
        .collect()
}

/// `name`, `name:port`, `[v6]:port` or a bare IPv6 address, split.
fn host_and_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').unwrap_or((rest, ""));
        return (host, tail.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    if entry.parse::<std::net::Ipv6Addr>().is_ok() {
        return (entry, None);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().ok()),
        None => (entry, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_grants_to_metadata_loopback_and_silts_port_are_named() {
        let entries: Vec<String> = [
            "169.254.169.254",
            "[fe80::1]:80",
            "::ffff:0:a9fe:a9fe",
            "localhost",
            "127.0.0.1:8723",
            "[::1]:9000",
            "api.example.com",
            "10.0.0.5:8080",
            "env:SILT_SEARXNG_URL",
        ]
        .map(String::from)
        .to_vec();
        let warnings = http_grant_warnings(&entries);
        assert_eq!(warnings.len(), 6, "{warnings:#?}");
        for (w, part) in warnings.iter().zip([
            "'169.254.169.254' reaches a link-local",
            "'[fe80::1]:80' reaches a link-local",
            "'::ffff:0:a9fe:a9fe' reaches a link-local",
            "'localhost' reaches every port",
            "'127.0.0.1:8723' reaches silt's own HTTP server",
            "'[::1]:9000' reaches a service on this machine",
        ]) {
            assert!(w.contains(part), "{w}");
        }
    }

    #[test]
    fn the_agent_judge_names_the_models_its_clis_run_by_default() {
        let model = |text: &str| {
            let m = Manifest::parse(text, "m").unwrap().judge.unwrap().model;
            granted_model(&m.unwrap(), |_| None)
        };
        let agent = model(include_str!("../builtin/agent.toml"));
        assert!(agent.contains(silt_core::search::claude::MODEL), "{agent}");
        assert!(agent.contains(silt_core::search::codex::MODEL), "{agent}");
        // the user's choice wins
        let m = Manifest::parse(include_str!("../builtin/openai.toml"), "m").unwrap();
        let chosen = granted_model(&m.judge.unwrap().model.unwrap(), |v| {
            (v == "SILT_MODEL").then(|| "qwen3-8b".to_string())
        });
        assert_eq!(chosen, "qwen3-8b");
    }

    #[test]
    fn only_the_language_model_judges_claim_entailment() {
        let entails = |text: &str| {
            Manifest::parse(text, "m")
                .unwrap()
                .judge
                .unwrap_or_default()
                .entailment
        };
        assert!(entails(include_str!("../builtin/openai.toml")));
        assert!(entails(include_str!("../builtin/llm.toml")));
        assert!(entails(include_str!("../builtin/agent.toml")));
        for text in [
            include_str!("../builtin/lexical.toml"),
            include_str!("../builtin/embedding.toml"),
            include_str!("../builtin/embedding-static.toml"),
        ] {
            assert!(!entails(text));
        }
        // a third-party judge that says nothing is not trusted with it
        assert!(!entails("[plugin]\nname = \"x\"\nkind = \"judge\"\n"));
        let err = Manifest::parse(
            "[plugin]\nname = \"x\"\nkind = \"engine\"\n[judge]\nentailment = true\n",
            "m",
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("only in a judge's manifest"),
            "{err:#}"
        );
    }

    #[test]
    fn a_version_is_read_and_checked() {
        let with = |v: &str| {
            Manifest::parse(
                &format!("[plugin]\nname = \"x\"\nkind = \"judge\"\nversion = \"{v}\"\n"),
                "m",
            )
        };
        assert_eq!(
            with("1.2.0").unwrap().plugin.version.as_deref(),
            Some("1.2.0")
        );
        let err = format!("{:#}", with("latest").unwrap_err());
        assert!(err.contains("MAJOR.MINOR.PATCH"), "{err}");
        // a manifest from before versions is still one
        let old = Manifest::parse("[plugin]\nname = \"x\"\nkind = \"judge\"\n", "m").unwrap();
        assert_eq!(old.plugin.version, None);
    }

    #[test]
    fn builtin_manifests_parse() {
        for (name, text) in [
            ("lexical", include_str!("../builtin/lexical.toml")),
            ("ask", include_str!("../builtin/ask.toml")),
            ("ledger", include_str!("../builtin/ledger.toml")),
        ] {
            let m = Manifest::parse(text, name).unwrap();
            assert_eq!(m.plugin.name, name);
            assert_eq!(m.grants, Grants::default(), "built-ins are granted nothing");
        }
        // the embedding judges see their model and nothing else
        for (name, text, model) in [
            (
                "embedding",
                include_str!("../builtin/embedding.toml"),
                "minilm",
            ),
            (
                "embedding-static",
                include_str!("../builtin/embedding-static.toml"),
                "potion",
            ),
        ] {
            let m = Manifest::parse(text, name).unwrap();
            assert_eq!(m.plugin.name, name);
            assert_eq!(
                m.grants,
                Grants {
                    models: vec![model.into()],
                    ..Grants::default()
                }
            );
            assert!(m.limits.reuse_calls > 1, "a loaded model stays warm");
        }
        // the search backends reach their own service and read their own keys
        let searxng = Manifest::parse(include_str!("../builtin/searxng.toml"), "s").unwrap();
        assert_eq!(searxng.plugin.kind, PluginKind::Search);
        assert_eq!(searxng.grants.http, ["env:SILT_SEARXNG_URL"]);
        let brave = Manifest::parse(include_str!("../builtin/brave.toml"), "b").unwrap();
        assert_eq!(brave.grants.http, ["api.search.brave.com"]);
        assert_eq!(brave.grants.env, ["BRAVE_API_KEY"]);
        // the CLI backends run their own program and reach no host
        for (name, text) in [
            ("claude", include_str!("../builtin/claude.toml")),
            ("codex", include_str!("../builtin/codex.toml")),
        ] {
            let m = Manifest::parse(text, name).unwrap();
            assert_eq!(m.plugin.kind, PluginKind::Search);
            assert!(m.grants.http.is_empty());
            let programs: Vec<&String> = m.grants.exec.keys().collect();
            assert_eq!(programs, [name]);
            assert_eq!(
                m.grants.exec[name].override_var.as_deref(),
                Some(format!("SILT_SEARCH_CMD_{}", name.to_uppercase()).as_str())
            );
            assert!(m.limits.wall_ms > 90_000, "room for the 90 s default limit");
        }
    }

    #[test]
    fn exec_grants_name_programs_not_paths() {
        let base = "[plugin]\nname = \"x\"\nkind = \"search\"\n[grants.exec]\n";
        for bad in [
            "\"/bin/sh\" = {}",
            "\"../x\" = {}",
            "\"\" = {}",
            "sh = { override = \"A B\" }",
            "sh = { override = \"SHELL\" }",
            "x = { override = \"AWS_SECRET_ACCESS_KEY\" }",
            "x = { override = \"SILT_SEARCH_CMD_\" }",
        ] {
            assert!(
                Manifest::parse(&format!("{base}{bad}\n"), "t").is_err(),
                "{bad}"
            );
        }
        let m = Manifest::parse(
            &format!("{base}claude = {{ override = \"SILT_SEARCH_CMD_X\" }}\ncodex = {{}}\n"),
            "t",
        )
        .unwrap();
        assert_eq!(
            m.grants.exec["claude"].override_var.as_deref(),
            Some("SILT_SEARCH_CMD_X")
        );
        assert_eq!(m.grants.exec["codex"], ExecGrant::default());
        let engine = "[plugin]\nname = \"x\"\nkind = \"engine\"\n[grants.exec]\nsh = {}\n[limits]\nwall_ms = 20000\n";
        let err = format!("{:#}", Manifest::parse(engine, "t").unwrap_err());
        assert!(err.contains("search backends and judges"), "{err}");
        // a judge names its override SILT_JUDGE_CMD_*, a backend SILT_SEARCH_CMD_*
        let judge = |var: &str| {
            Manifest::parse(
                &format!(
                    "[plugin]\nname = \"x\"\nkind = \"judge\"\n[grants.exec]\n\
                     claude = {{ override = \"{var}\" }}\n[limits]\nwall_ms = 20000\n"
                ),
                "t",
            )
        };
        assert!(judge("SILT_JUDGE_CMD_CLAUDE").is_ok());
        assert!(judge("SILT_SEARCH_CMD_CLAUDE").is_err());
        assert!(
            Manifest::parse(
                &format!("{base}claude = {{ override = \"SILT_JUDGE_CMD_CLAUDE\" }}\n"),
                "t"
            )
            .is_err()
        );
        // the agent judge runs the two agent CLIs and reaches no host
        let agent = Manifest::parse(include_str!("../builtin/agent.toml"), "agent").unwrap();
        assert_eq!(agent.plugin.kind, PluginKind::Judge);
        assert!(agent.grants.http.is_empty() && agent.grants.read.is_empty());
        let programs: Vec<&String> = agent.grants.exec.keys().collect();
        assert_eq!(programs, ["claude", "codex"]);
        assert_eq!(
            agent.grants.exec["codex"].override_var.as_deref(),
            Some("SILT_JUDGE_CMD_CODEX")
        );
        let short = format!("{base}claude = {{}}\n[limits]\nwall_ms = 5000\n");
        assert!(
            Manifest::parse(&short, "t").is_err(),
            "no time left for the program"
        );
    }

    #[test]
    fn an_env_http_grant_needs_its_variable_granted() {
        let base = "[plugin]\nname = \"x\"\nkind = \"search\"\n[grants]\nhttp = [\"env:URL\"]\n";
        let err = format!("{:#}", Manifest::parse(base, "t").unwrap_err());
        assert!(err.contains("grants.env must grant too"), "{err}");
        assert!(Manifest::parse(&format!("{base}env = [\"URL\"]\n"), "t").is_ok());
    }

    #[test]
    fn refuses_unknown_keys_and_bad_grants() {
        let base = "[plugin]\nname = \"x\"\nkind = \"judge\"\n";
        assert!(Manifest::parse(&format!("{base}[grants]\nnetwork = true\n"), "t").is_err());
        assert!(
            Manifest::parse(&format!("{base}[grants]\nread = [\"relative/dir\"]\n"), "t").is_err()
        );
        assert!(
            Manifest::parse(
                &format!("{base}[grants]\nhttp = [\"https://x.com/\"]\n"),
                "t"
            )
            .is_err()
        );
        assert!(Manifest::parse(&format!("{base}[limits]\nmemory_mib = 0\n"), "t").is_err());
        assert!(Manifest::parse(&format!("{base}[limits]\nreuse_calls = 0\n"), "t").is_err());
        assert!(Manifest::parse(&format!("{base}[grants]\nmodels = [\"../etc\"]\n"), "t").is_err());
        for bad in ["env:X", "env:=m", "env:x=m", "env:X=../m"] {
            let text = format!("{base}[grants]\nmodels = [\"{bad}\"]\n");
            assert!(Manifest::parse(&text, "t").is_err(), "{bad}");
        }
        let chosen = format!("{base}[grants]\nmodels = [\"env:SILT_M=smollm2\"]\n");
        assert!(Manifest::parse(&chosen, "t").is_ok());
        assert_eq!(granted_model("env:SILT_M=smollm2", |_| None), "smollm2");
        assert_eq!(
            granted_model("env:SILT_M=smollm2", |_| Some("qwen".into())),
            "qwen"
        );
        assert_eq!(
            granted_model("env:SILT_M=smollm2", |_| Some(" ".into())),
            "smollm2"
        );
        assert_eq!(granted_model("minilm", |_| Some("x".into())), "minilm");
        assert!(Manifest::parse("[plugin]\nname = \"Bad Name\"\nkind = \"judge\"\n", "t").is_err());
        let m = Manifest::parse(base, "t").unwrap();
        assert_eq!(m.limits, Limits::default());
    }

    #[test]
    fn every_limit_has_a_ceiling() {
        let base = "[plugin]\nname = \"x\"\nkind = \"judge\"\n[limits]\n";
        for (field, max) in [
            ("cpu_ms", MAX_CPU_MS),
            ("wall_ms", MAX_WALL_MS),
            ("output_kib", MAX_OUTPUT_KIB),
            ("reuse_calls", u64::from(MAX_REUSE_CALLS)),
            ("memory_mib", MAX_MEMORY_MIB),
        ] {
            assert!(Manifest::parse(&format!("{base}{field} = {max}\n"), "t").is_ok());
            let err = Manifest::parse(&format!("{base}{field} = {}\n", max + 1), "t").unwrap_err();
            assert!(format!("{err:#}").contains(field), "{err:#}");
        }
        // u64::MAX does not fit TOML's integers; the largest that does
        let err = Manifest::parse(&format!("{base}cpu_ms = {}\n", i64::MAX), "t").unwrap_err();
        assert!(
            format!("{err:#}").contains("cpu_ms must be between 1 and 3600000"),
            "{err:#}"
        );
    }

    #[test]
    fn broad_grants_are_named() {
        let base = "[plugin]\nname = \"x\"\nkind = \"search\"\n[limits]\nwall_ms = 20000\n";
        let m = Manifest::parse(
            &format!(
                "{base}[grants]\nread = [\"/\", \"/srv/models\", \"/etc/\"]\n\
                 env = [\"OPENAI_API_KEY\", \"LANG\", \"GH_TOKEN\"]\n\
                 [grants.exec]\ncurl = {{}}\n"
            ),
            "t",
        )
        .unwrap();
        let broad = m.broad_grants();
        assert_eq!(broad.len(), 5, "{broad:?}");
        assert!(broad[0].contains("all of /"));
        assert!(broad[1].contains("all of /etc/"));
        assert!(broad[2].contains("OPENAI_API_KEY"));
        assert!(broad[3].contains("GH_TOKEN"));
        assert!(broad[4].contains("runs curl"));
        assert!(!broad[4].contains("FULL POWER"));
        // what `plugins add` shows names a grant to the metadata address
        let m = Manifest::parse(
            &format!("{base}[grants]\nhttp = [\"169.254.169.254\"]\n"),
            "t",
        )
        .unwrap();
        let broad = m.broad_grants();
        assert!(
            broad.len() == 1 && broad[0].contains("link-local"),
            "{broad:?}"
        );
        for interpreter in ["sh", "python3.12", "node", "bash.exe"] {
            let m = Manifest::parse(
                &format!("{base}[grants.exec]\n\"{interpreter}\" = {{}}\n"),
                "t",
            )
            .unwrap();
            let broad = m.broad_grants();
            assert!(
                broad[0].starts_with("FULL POWER"),
                "{interpreter}: {broad:?}"
            );
        }
        for (name, text) in [
            ("lexical", include_str!("../builtin/lexical.toml")),
            ("embedding", include_str!("../builtin/embedding.toml")),
        ] {
            assert!(
                Manifest::parse(text, name)
                    .unwrap()
                    .broad_grants()
                    .is_empty()
            );
        }
    }
}
