//! `silt:search/exec`: the one way a plugin runs a program. Only programs
//! its manifest grants by name; stdin empty; a fresh empty working folder;
//! silt's environment minus the variables that reroute a model CLI to
//! another endpoint, key or model; killed with its whole process group at
//! the time limit or past the output cap.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::bindings::cli_search_backend::silt::search::exec::{self, ExecError, Exit};
use crate::plugins::manifest::Manifest;

/// The most stdout kept; a program writing more is stopped.
pub const STDOUT_CAP: usize = 8 << 20;
/// How much of stderr's end is kept for error messages.
const STDERR_TAIL: usize = 4 << 10;
/// Time kept back from the plugin's wall clock, so the plugin outlives its
/// program and can report the timeout itself.
const WALL_MARGIN_MS: u64 = 5_000;

/// Variables removed from every child's environment, by exact name.
const STRIP_NAMES: &[&str] = &[
    "CLAUDE_CODE_SUBAGENT_MODEL",
    "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
    "API_TIMEOUT_MS",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "CLAUDECODE",
];
/// ... and by prefix (`$SILT_STRIP_ENV_PREFIXES` adds more).
const STRIP_PREFIXES: &[&str] = &["ANTHROPIC_", "CLAUDE_CODE_USE_"];

/// Whether a variable would send a child CLI to another endpoint, key or
/// model (a session routed to a third-party endpoint must not route the
/// search too).
pub fn routing_variable(name: &str, extra_prefixes: &[String]) -> bool {
    STRIP_NAMES.contains(&name)
        || STRIP_PREFIXES.iter().any(|p| name.starts_with(p))
        || extra_prefixes
            .iter()
            .any(|p| !p.is_empty() && name.starts_with(p.as_str()))
}

/// The prefixes in `$SILT_STRIP_ENV_PREFIXES` (comma-separated).
fn extra_prefixes() -> Vec<String> {
    std::env::var("SILT_STRIP_ENV_PREFIXES")
        .unwrap_or_default()
        .split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// One store's exec grants.
#[derive(Debug, Clone, Default)]
pub struct ExecGrants {
    plugin: String,
    /// Program name → the variable that may replace its command line.
    programs: BTreeMap<String, Option<String>>,
    /// A second variable consulted after the program's own (`sieve_search`
    /// sets `SILT_SEARCH_CMD`; the search chain does not).
    pub fallback_var: Option<String>,
    /// The plugin's wall-clock limit.
    wall_ms: u64,
}

impl ExecGrants {
    pub fn new(manifest: &Manifest) -> Self {
        ExecGrants {
            plugin: manifest.plugin.name.clone(),
            programs: manifest
                .grants
                .exec
                .iter()
                .map(|(p, g)| (p.clone(), g.override_var.clone()))
                .collect(),
            fallback_var: None,
            wall_ms: manifest.limits.wall_ms,
        }
    }

    /// The granted names.
    pub fn granted(&self) -> Vec<String> {
        self.programs.keys().cloned().collect()
    }

    /// The command line `program` runs as: its override's shell words, or
    /// the name itself; the first word resolved on PATH.
    pub fn command(
        &self,
        program: &str,
        env: impl Fn(&str) -> Option<String>,
        path: Option<OsString>,
    ) -> Result<Vec<OsString>, ExecError> {
        let Some(override_var) = self.programs.get(program) else {
            return Err(ExecError::Denied(format!(
                "'{program}' is not granted to plugin '{}' (its manifest grants {:?})",
                self.plugin,
                self.granted()
            )));
        };
        let chosen = [override_var.as_ref(), self.fallback_var.as_ref()]
            .into_iter()
            .flatten()
            .find_map(|var| {
                env(var)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (var.clone(), v))
            });
        let words = match &chosen {
            Some((var, line)) => shlex::split(line)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| {
                    ExecError::NotFound(format!(
                        "{var} is not a command line (unbalanced quotes?): {line}"
                    ))
                })?,
            None => vec![program.to_string()],
        };
        let found = resolve(&words[0], path).ok_or_else(|| {
            ExecError::NotFound(match &chosen {
                Some((var, _)) => format!("{} (from {var}) is not an executable", words[0]),
                None => format!("{program} is not on PATH"),
            })
        })?;
        Ok(std::iter::once(found.into_os_string())
            .chain(words[1..].iter().map(OsString::from))
            .collect())
    }

    /// The limit a run gets: what the plugin asks, within its wall clock.
    pub fn limit_ms(&self, asked: u64) -> u64 {
        asked
            .min(self.wall_ms.saturating_sub(WALL_MARGIN_MS))
            .max(1)
    }
}

/// An executable file: a path as given, else the first match on PATH.
fn resolve(word: &str, path: Option<OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if word.contains('/') {
        let p = PathBuf::from(word);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(&path?)
        .map(|dir| dir.join(word))
        .find(|p| executable(p))
}

/// Reads `pipe` to its end, keeping at most `cap` bytes (the head, or the
/// tail when `tail`); past the cap of a head reader, kills the group.
async fn drain(
    mut pipe: impl AsyncRead + Unpin,
    cap: usize,
    tail: bool,
    group: i32,
    overflowed: Arc<AtomicBool>,
) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > cap {
                    if tail {
                        kept.drain(..kept.len() - cap);
                    } else {
                        overflowed.store(true, Ordering::SeqCst);
                        kill_group(group);
                        return kept;
                    }
                }
            }
        }
    }
}

fn kill_group(group: i32) {
    if group > 0 {
        // SAFETY: kill(2) on a process group we created; no memory involved.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
}

/// Runs `command` (resolved) with `args` for at most `limit_ms`.
pub async fn run(
    command: Vec<OsString>,
    args: Vec<String>,
    limit_ms: u64,
) -> Result<Exit, ExecError> {
    let folder = tempfile::Builder::new()
        .prefix("silt-exec-")
        .tempdir()
        .map_err(|e| ExecError::NotFound(format!("no working folder for the program: {e}")))?;
    let extra = extra_prefixes();
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..])
        .args(&args)
        .current_dir(folder.path())
        .env_clear()
        .envs(
            std::env::vars_os()
                .filter(|(k, _)| k.to_str().is_some_and(|k| !routing_variable(k, &extra))),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let shown = command[0].to_string_lossy().to_string();
    let mut child = cmd
        .spawn()
        .map_err(|e| ExecError::NotFound(format!("{shown} could not be started: {e}")))?;
    let group = child.id().map_or(0, |id| id as i32);
    let overflowed = Arc::new(AtomicBool::new(false));
    let stdout = tokio::spawn(drain(
        child.stdout.take().expect("stdout is piped"),
        STDOUT_CAP,
        false,
        group,
        overflowed.clone(),
    ));
    let stderr = tokio::spawn(drain(
        child.stderr.take().expect("stderr is piped"),
        STDERR_TAIL,
        true,
        group,
        overflowed.clone(),
    ));
    let waited = tokio::time::timeout(Duration::from_millis(limit_ms), child.wait()).await;
    // whatever it left behind (a daemon holding the pipes) goes with it
    kill_group(group);
    let status = match waited {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            return Err(ExecError::NotFound(format!(
                "{shown} could not be waited on: {e}"
            )));
        }
        Err(_) => {
            let _ = child.wait().await;
            return Err(ExecError::TimedOut(limit_ms));
        }
    };
    let stdout = stdout.await.unwrap_or_default();
    let stderr = stderr.await.unwrap_or_default();
    if overflowed.load(Ordering::SeqCst) {
        return Err(ExecError::TooMuchOutput(STDOUT_CAP as u64));
    }
    Ok(Exit {
        status: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// The shared types interface has no functions; the world imports it only
/// for the types the backend export uses.
impl crate::bindings::search_backend::silt::search::types::Host for super::state::PluginState {}

impl exec::Host for super::state::PluginState {
    async fn granted(&mut self) -> Vec<String> {
        self.exec.granted()
    }

    async fn run(
        &mut self,
        program: String,
        args: Vec<String>,
        timeout_ms: u64,
    ) -> Result<Exit, ExecError> {
        let command = self.exec.command(
            &program,
            |k| std::env::var(k).ok(),
            std::env::var_os("PATH"),
        )?;
        let limit = self.exec.limit_ms(timeout_ms);
        tracing::debug!(plugin = %self.plugin, program, limit, "running a granted program");
        run(command, args, limit).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants() -> ExecGrants {
        let m = Manifest::parse(
            "[plugin]\nname = \"claude\"\nkind = \"search\"\n[grants.exec]\nclaude = { override = \"CMD_CLAUDE\" }\n[limits]\nwall_ms = 20000\n",
            "t",
        )
        .unwrap();
        ExecGrants::new(&m)
    }

    fn bin_dir(names: &[&str]) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for n in names {
            let p = dir.path().join(n);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    #[test]
    fn only_granted_programs_run_and_they_resolve_on_path() {
        let bins = bin_dir(&["claude", "codex"]);
        let path = Some(bins.path().as_os_str().to_owned());
        let g = grants();
        let none = |_: &str| None;
        assert_eq!(
            g.command("claude", none, path.clone()).unwrap(),
            [bins.path().join("claude").into_os_string()]
        );
        for other in ["codex", "sh", "/bin/sh"] {
            assert!(matches!(
                g.command(other, none, path.clone()),
                Err(ExecError::Denied(_))
            ));
        }
        let missing = g.command("claude", none, Some("/nonexistent".into()));
        assert!(matches!(missing, Err(ExecError::NotFound(m)) if m == "claude is not on PATH"));
    }

    #[test]
    fn the_override_replaces_the_command_line_and_the_fallback_comes_second() {
        let bins = bin_dir(&["wrapper"]);
        let wrapper = bins.path().join("wrapper");
        let path = Some(OsString::from("/nonexistent"));
        let mut g = grants();
        let line = format!("'{}' --profile 'a b'", wrapper.display());
        let env = |k: &str| (k == "CMD_CLAUDE").then(|| line.clone());
        assert_eq!(
            g.command("claude", env, path.clone()).unwrap(),
            [
                wrapper.clone().into_os_string(),
                "--profile".into(),
                "a b".into()
            ]
        );
        g.fallback_var = Some("CMD_ANY".into());
        let generic = format!("{} x", wrapper.display());
        let env = |k: &str| (k == "CMD_ANY").then(|| generic.clone());
        assert_eq!(g.command("claude", env, path.clone()).unwrap()[1], "x");
        let bad = |k: &str| (k == "CMD_CLAUDE").then(|| "'unbalanced".to_string());
        assert!(
            matches!(g.command("claude", bad, path), Err(ExecError::NotFound(m)) if m.contains("CMD_CLAUDE"))
        );
    }

    #[test]
    fn routing_variables_are_recognised() {
        let extra = vec!["MYWRAP_".to_string()];
        for v in [
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDECODE",
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "API_TIMEOUT_MS",
            "MYWRAP_TOKEN",
        ] {
            assert!(routing_variable(v, &extra), "{v}");
        }
        for v in [
            "PATH",
            "HOME",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "OPENAI_ORG",
        ] {
            assert!(!routing_variable(v, &extra), "{v}");
        }
    }

    #[test]
    fn the_limit_stays_inside_the_wall_clock() {
        let g = grants();
        assert_eq!(g.limit_ms(90_000), 15_000);
        assert_eq!(g.limit_ms(2_000), 2_000);
    }

    #[tokio::test]
    async fn a_run_gets_empty_stdin_a_fresh_folder_and_is_killed_at_its_limit() {
        let out = run(
            vec!["/bin/sh".into()],
            vec!["-c".into(), "cat; pwd; echo oops >&2; exit 3".into()],
            10_000,
        )
        .await
        .unwrap();
        assert_eq!(out.status, Some(3));
        assert!(out.stdout.trim().contains("silt-exec-"), "{}", out.stdout);
        assert_eq!(out.stderr.trim(), "oops");
        // a grandchild holding stdout open dies with the group
        let started = std::time::Instant::now();
        let slow = run(
            vec!["/bin/sh".into()],
            vec!["-c".into(), "sleep 30 & sleep 30".into()],
            300,
        )
        .await;
        assert!(matches!(slow, Err(ExecError::TimedOut(300))));
        assert!(started.elapsed() < Duration::from_secs(5));
        let flood = run(
            vec!["/bin/sh".into()],
            vec!["-c".into(), "yes".into()],
            20_000,
        )
        .await;
        assert!(matches!(flood, Err(ExecError::TooMuchOutput(_))));
    }
}
