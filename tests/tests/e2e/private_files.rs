//! silt's own files keep other users out whatever the umask: its folders
//! 0700, the ledger and its -wal and -shm, the answer cache and the env
//! file 0600, a looser mode left by an older silt or a hand-run recipe
//! tightened with a warning. Checked by mode and by a read as `nobody`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use serde_json::json;
use silt_e2e::raw_stdio::RawServer;
use silt_e2e::silt_binary;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .mode()
        & 0o777
}

fn chmod(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Whether uid 65534 (`nobody`) can read `file`; as a normal user, whether
/// the file's mode lets others read it (there is no other uid to become).
fn others_can_read(file: &Path) -> bool {
    // SAFETY: geteuid has no preconditions
    if unsafe { libc::geteuid() } != 0 {
        return mode(file) & 0o004 != 0;
    }
    std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
        .arg(file)
        .output()
        .expect("setpriv (util-linux) runs")
        .status
        .success()
}

/// `silt ARGS` with its data, cache and config folders under `home` and
/// umask 000, so nothing but silt's own modes keeps other users out.
fn silt_under(home: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(silt_binary());
    cmd.args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("SILT_SLEEP_PRESSURE", "0");
    for k in [
        "SILT_CACHE_DIR",
        "SILT_COMPILE_CACHE_DIR",
        "SILT_LEDGER_PATH",
        "SILT_LEDGER_URL",
        "SEDIMENT_LEDGER_PATH",
        "SILT_CONFIG",
        "SILT_ENV_FILE",
        "SILT_PLUGIN_PATH",
        "SILT_HTTP_TOKEN_FILE",
    ] {
        cmd.env_remove(k);
    }
    // SAFETY: umask is async-signal-safe and touches no memory
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    cmd
}

#[tokio::test]
async fn silts_files_are_private_whatever_the_umask() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // the test's own folder lets others in: only silt's modes may stop them
    chmod(h, 0o755);
    // a home's usual folders, open to all as they usually are
    for dir in [".local/share", ".cache"] {
        std::fs::create_dir_all(h.join(dir)).unwrap();
        chmod(&h.join(dir), 0o755);
        chmod(&h.join(".local"), 0o755);
    }
    // the env file as `mkdir` and `echo >>` leave it under umask 022
    let config = h.join(".config/silt");
    std::fs::create_dir_all(&config).unwrap();
    chmod(&config, 0o755);
    std::fs::write(config.join("silt.toml"), "judge = \"lexical\"\n").unwrap();
    std::fs::write(config.join("env"), "SILT_HTTP_TOKEN=secret\n").unwrap();
    chmod(&config.join("env"), 0o644);

    let mut server = RawServer::start(silt_under(h, &["serve"])).await;
    server
        .call(
            1,
            "sediment_capture",
            json!({"when": "deploying the private service", "prefer": "rotate the key first"}),
        )
        .await;
    let answer = server.next(Duration::from_secs(60)).await.unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");

    // while the server runs, its ledger has its -wal and -shm
    let data = h.join(".local/share/silt");
    let cache = h.join(".cache/silt");
    for dir in [&data, &cache, &config] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    let mut files = vec![config.join("env")];
    for db in [data.join("ledger.db"), cache.join("answers.sqlite")] {
        for suffix in ["", "-wal", "-shm"] {
            let p = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
            if suffix.is_empty() || p.exists() {
                files.push(p);
            }
        }
    }
    assert!(
        files.iter().any(|f| f.ends_with("ledger.db-wal")),
        "{files:?}"
    );
    for f in &files {
        assert_eq!(mode(f), 0o600, "{}", f.display());
        // the folder alone would stop them: open it to show the file does too
        let parent = f.parent().unwrap();
        chmod(parent, 0o755);
        assert!(!others_can_read(f), "another user read {}", f.display());
        chmod(parent, 0o700);
    }
    let err = server.kill().await;
    assert!(
        err.contains("could be read by other users (mode 644); silt made it 600"),
        "{err}"
    );

    // a ledger an older silt left 0644 in a 0755 folder is tightened
    chmod(&data, 0o755);
    chmod(&data.join("ledger.db"), 0o644);
    let out = silt_under(h, &["ledger", "stats"]).output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(mode(&data), 0o700, "{err}");
    assert_eq!(mode(&data.join("ledger.db")), 0o600, "{err}");
    assert!(
        err.contains("ledger.db could be read by other users"),
        "{err}"
    );
}

/// `silt http-token --write-env` keeps the token where `bin/silt-mcp`
/// reads it, 0600 in a 0700 folder, replacing an earlier line.
#[tokio::test]
async fn the_token_goes_into_a_private_env_file() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    chmod(h, 0o755);
    let write = || async {
        let out = silt_under(h, &["http-token", "--write-env"])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    };
    write().await;
    write().await;
    let env = h.join(".config/silt/env");
    let token = std::fs::read_to_string(h.join(".config/silt/http-token")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&env).unwrap(),
        format!("SILT_HTTP_TOKEN={}\n", token.trim())
    );
    assert_eq!((mode(env.parent().unwrap()), mode(&env)), (0o700, 0o600));
    chmod(env.parent().unwrap(), 0o755);
    assert!(!others_can_read(&env));
}

/// A variable set to nothing counts as unset: with `SILT_CACHE_DIR=`,
/// `SILT_MODELS_DIR=` and an empty entry in `SILT_PLUGIN_PATH` a call
/// writes nothing in the folder it runs in and loads nothing from it (an
/// empty path named the current folder, so the compiled components and
/// the answer cache landed in whatever repository the agent was in), and
/// the default cache folder is used instead.
#[test]
fn an_empty_variable_puts_nothing_in_the_current_folder() {
    use std::io::Write;
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(home.path().join("silt.toml"), "").unwrap();
    let mut child = std::process::Command::new(silt_e2e::silt_binary())
        .current_dir(cwd.path())
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join(".cache"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env(
            "SILT_PLUGIN_PATH",
            format!(":{}", home.path().join("plugins").display()),
        )
        .env("SILT_CACHE_DIR", "")
        .env_remove("SILT_COMPILE_CACHE_DIR")
        .env("SILT_MODELS_DIR", "")
        .args([
            "ask",
            "judge",
            "Is it a fix?",
            "--yes",
            "it repairs",
            "--no",
            "it adds",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"["fix the crash on launch", "add a dark mode"]"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "written in the current folder: {left:?}");
    assert!(
        home.path().join(".cache/silt/components").is_dir(),
        "the default cache folder was not used"
    );
}
