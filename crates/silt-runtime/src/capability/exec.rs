//! `silt:search/exec`: the one way a plugin runs a program. Only programs
//! its manifest grants by name; stdin empty; a fresh empty working folder;
//! silt's environment minus the variables that reroute a model CLI to
//! another endpoint, key or model; killed with its whole process group at
//! the time limit or past the output cap.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;
use wasmtime::component::{HasSelf, Linker};

use crate::bindings::cli_search_backend::silt::search::exec::{self, ExecError, Exit};
use silt_config::env;
use silt_plugins::manifest::Manifest;

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
    env::list("SILT_STRIP_ENV_PREFIXES")
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
    /// The programs `manifest` grants, within its wall-clock limit; no fallback
    /// variable until a call sets one.
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
        // the plugin reads these errors: they name the variable, never its
        // value
        let words = match &chosen {
            Some((var, line)) => match shlex::split(line).filter(|w| !w.is_empty()) {
                Some(words) => words,
                None => {
                    tracing::warn!("{var} is not a command line: {line}");
                    return Err(ExecError::Failed(format!(
                        "{var} is set but is not a command line (unbalanced quotes?)"
                    )));
                }
            },
            None => vec![program.to_string()],
        };
        let found = resolve(&words[0], path).ok_or_else(|| match &chosen {
            Some((var, _)) => {
                tracing::warn!("{var} names {}, which is not an executable file", words[0]);
                ExecError::Failed(format!(
                    "{var} is set but its first word is not an executable file"
                ))
            }
            None => ExecError::NotFound(match override_var {
                Some(var) => format!("{program} is not on PATH (and {var} is not set)"),
                None => format!("{program} is not on PATH"),
            }),
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

/// An executable file, as an absolute path: a path as given (relative to
/// silt's folder, since the child runs elsewhere), else the first match in
/// an absolute PATH entry.
fn resolve(word: &str, path: Option<OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if word.contains('/') {
        let p = std::path::absolute(word).ok()?;
        return executable(&p).then_some(p);
    }
    std::env::split_paths(&path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(word))
        .find(|p| executable(p))
}

/// Reads `pipe` to its end into `kept`, keeping at most `cap` bytes (the
/// head, or the tail when `tail`); past the cap of a head reader, tells
/// `overflow` and stops.
async fn drain(
    mut pipe: impl AsyncRead + Unpin,
    kept: Arc<Mutex<Vec<u8>>>,
    cap: usize,
    tail: bool,
    overflow: Arc<Notify>,
) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut kept = kept.lock().expect("pipe buffer lock");
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > cap {
                    if tail {
                        let extra = kept.len() - cap;
                        kept.drain(..extra);
                    } else {
                        kept.truncate(cap);
                        overflow.notify_one();
                        return;
                    }
                }
            }
        }
    }
}

/// The child's process group, killed when dropped unless disarmed: a call
/// that is cancelled or runs out of wall clock takes the CLI's helpers
/// with it, not only the CLI.
struct Group {
    id: i32,
    armed: bool,
}

impl Group {
    fn kill(&self) {
        if self.id > 0 {
            // SAFETY: kill(2) on the group the child leads; called only
            // while the leader is unreaped (alive or a zombie), so the id
            // cannot belong to anyone else yet.
            unsafe {
                libc::kill(-self.id, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// Aborts the pipe readers however the run ends.
struct Readers(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Readers {
    fn drop(&mut self) {
        for r in &self.0 {
            r.abort();
        }
    }
}

/// Blocks until process `pid` has exited, without reaping it (the zombie
/// keeps its process group id from being reused until silt reaps it).
fn exited_unreaped(pid: i32) {
    loop {
        // SAFETY: waitid on our own child with a zeroed siginfo out-param.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Time the pipe readers get after the program ended: a helper that left
/// its process group (setsid) may still hold a pipe open.
const READ_GRACE: Duration = Duration::from_secs(2);

/// Runs `command` (resolved) with `args` for at most `limit_ms`.
pub async fn run(
    command: Vec<OsString>,
    args: Vec<String>,
    limit_ms: u64,
) -> Result<Exit, ExecError> {
    let folder = tempfile::Builder::new()
        .prefix("silt-exec-")
        .tempdir()
        .map_err(|e| ExecError::Failed(format!("no working folder for the program: {e}")))?;
    let extra = extra_prefixes();
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..])
        .args(&args)
        .current_dir(folder.path())
        .env_clear()
        .envs(
            env::vars_os()
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
    let pid = child.id().map_or(0, |id| id as i32);
    let mut group = Group {
        id: pid,
        armed: true,
    };
    let overflow = Arc::new(Notify::new());
    let (out, err) = (Arc::default(), Arc::default());
    let readers = Readers(vec![
        tokio::spawn(drain(
            child.stdout.take().expect("stdout is piped"),
            Arc::clone(&out),
            STDOUT_CAP,
            false,
            overflow.clone(),
        )),
        tokio::spawn(drain(
            child.stderr.take().expect("stderr is piped"),
            Arc::clone(&err),
            STDERR_TAIL,
            true,
            overflow.clone(),
        )),
    ]);
    // biased, overflow first: a flood's reader stops (notifying) before the
    // program dies of the closed pipe, so when both are ready the overflow
    // is the reason
    let ended = tokio::select! {
        biased;
        _ = overflow.notified() => Some(ExecError::TooMuchOutput(STDOUT_CAP as u64)),
        _ = tokio::task::spawn_blocking(move || exited_unreaped(pid)) => None,
        _ = tokio::time::sleep(Duration::from_millis(limit_ms)) => {
            Some(ExecError::TimedOut(limit_ms))
        }
    };
    // the leader is unreaped here: whatever it left in its group (a daemon
    // holding the pipes) goes with it, then it is reaped
    group.kill();
    group.armed = false;
    let status = child.wait().await;
    if let Some(e) = ended {
        return Err(e);
    }
    let status =
        status.map_err(|e| ExecError::Failed(format!("{shown} could not be waited on: {e}")))?;
    let mut readers = readers;
    let _ = tokio::time::timeout(READ_GRACE, async {
        for reader in readers.0.iter_mut() {
            let _ = reader.await;
        }
    })
    .await;
    drop(readers);
    // what was still in the pipe after the exit may have passed the cap
    if tokio::time::timeout(Duration::ZERO, overflow.notified())
        .await
        .is_ok()
    {
        return Err(ExecError::TooMuchOutput(STDOUT_CAP as u64));
    }
    let take = |b: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8_lossy(&b.lock().expect("pipe buffer lock")).into_owned()
    };
    Ok(Exit {
        status: status.code(),
        stdout: take(&out),
        stderr: take(&err),
    })
}

impl exec::Host for ExecGrants {
    async fn granted(&mut self) -> Vec<String> {
        ExecGrants::granted(self)
    }

    async fn run(
        &mut self,
        program: String,
        args: Vec<String>,
        timeout_ms: u64,
    ) -> Result<Exit, ExecError> {
        let command = self.command(
            &program,
            env::var,
            env::var_os("PATH").map(OsStr::to_os_string),
        )?;
        let limit = self.limit_ms(timeout_ms);
        tracing::debug!(plugin = %self.plugin, program, limit, "running a granted program");
        run(command, args, limit).await
    }
}

/// Links `silt:search/exec` to the [`ExecGrants`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut ExecGrants,
) -> wasmtime::Result<()> {
    exec::add_to_linker::<T, HasSelf<ExecGrants>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants() -> ExecGrants {
        let m = Manifest::parse(
            "[plugin]\nname = \"claude\"\nkind = \"search\"\n[grants.exec]\nclaude = { override = \"SILT_SEARCH_CMD_CLAUDE\" }\n[limits]\nwall_ms = 20000\n",
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
        assert!(
            matches!(missing, Err(ExecError::NotFound(m)) if m == "claude is not on PATH (and SILT_SEARCH_CMD_CLAUDE is not set)")
        );
        // a relative PATH entry is never searched (the child runs elsewhere)
        let relative = g.command("claude", none, Some("bin".into()));
        assert!(matches!(relative, Err(ExecError::NotFound(_))));
    }

    #[test]
    fn the_override_replaces_the_command_line_and_the_fallback_comes_second() {
        let bins = bin_dir(&["wrapper"]);
        let wrapper = bins.path().join("wrapper");
        let path = Some(OsString::from("/nonexistent"));
        let mut g = grants();
        let line = format!("'{}' --profile 'a b'", wrapper.display());
        let env = |k: &str| (k == "SILT_SEARCH_CMD_CLAUDE").then(|| line.clone());
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
        // the backend's own variable wins over the generic one
        let both = |k: &str| match k {
            "SILT_SEARCH_CMD_CLAUDE" => Some(line.clone()),
            "CMD_ANY" => Some(generic.clone()),
            _ => None,
        };
        assert_eq!(
            g.command("claude", both, path.clone()).unwrap()[1],
            "--profile"
        );
        // errors name the variable, never its value
        let bad =
            |k: &str| (k == "SILT_SEARCH_CMD_CLAUDE").then(|| "'unbalanced secret".to_string());
        let e = g.command("claude", bad, path.clone());
        assert!(
            matches!(&e, Err(ExecError::Failed(m)) if m.contains("SILT_SEARCH_CMD_CLAUDE") && !m.contains("secret")),
            "{e:?}"
        );
        let missing =
            |k: &str| (k == "SILT_SEARCH_CMD_CLAUDE").then(|| "/no/such/secret".to_string());
        let e = g.command("claude", missing, path);
        assert!(
            matches!(&e, Err(ExecError::Failed(m)) if !m.contains("secret")),
            "{e:?}"
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

    /// `sh -c script` through [`run`].
    async fn sh(script: &str, limit_ms: u64) -> Result<Exit, ExecError> {
        run(
            vec!["/bin/sh".into()],
            vec!["-c".into(), script.into()],
            limit_ms,
        )
        .await
    }

    #[tokio::test]
    async fn a_run_gets_empty_stdin_a_fresh_folder_and_is_killed_at_its_limit() {
        let out = sh("cat; pwd; echo oops >&2; exit 3", 10_000).await.unwrap();
        assert_eq!(out.status, Some(3));
        assert!(out.stdout.trim().contains("silt-exec-"), "{}", out.stdout);
        assert_eq!(out.stderr.trim(), "oops");
        // What it left in its group dies with it once it exits: the call
        // returns long before the 60 s the leftover would hold the pipe.
        let started = std::time::Instant::now();
        let left = sh("sleep 60 & echo hi", 10_000).await.unwrap();
        assert_eq!((left.status, left.stdout.trim()), (Some(0), "hi"));
        assert!(started.elapsed() < Duration::from_secs(30));
        // A helper that left the group holds the pipe; the call waits the
        // grace for it, not the helper's 60 s. The leader exits only once
        // the helper has started (its pid file is there), so the helper
        // has surely escaped.
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("helper.pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {0}.tmp && mv {0}.tmp {0}; exec sleep 60' & \
             while [ ! -e {0} ]; do :; done; echo ok",
            pid_file.display()
        );
        let started = std::time::Instant::now();
        let escaped = sh(&script, 30_000).await.unwrap();
        let took = started.elapsed();
        assert_eq!(escaped.stdout.trim(), "ok", "what was read is kept");
        assert!(
            took >= READ_GRACE && took < Duration::from_secs(30),
            "{took:?}"
        );
        let helper = std::fs::read_to_string(&pid_file).unwrap();
        let _ = std::process::Command::new("kill")
            .arg(helper.trim())
            .status();
        // hung: killed at the limit, well before either sleep ends
        let started = std::time::Instant::now();
        let slow = sh("sleep 60 & sleep 60", 300).await;
        assert!(matches!(slow, Err(ExecError::TimedOut(300))));
        assert!(started.elapsed() < Duration::from_secs(30));
        let flood = sh("yes", 20_000).await;
        assert!(matches!(flood, Err(ExecError::TooMuchOutput(_))));
    }
}
