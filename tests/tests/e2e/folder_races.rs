//! Folders changing under a running server: a caller who can write under
//! a root swaps the folder it names for a symlink to a folder outside the
//! roots while grep and verify read it; files turn into FIFOs, sockets and
//! devices while grep walks. Nothing outside the roots is read, and the
//! server never stops answering.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use silt_e2e::http::serve_http;
use silt_e2e::mcp::{call, serve, text_of};

/// The probe's attack on the shared server: with `[server] roots` set,
/// the base folder that grep and verify name is swapped, atomically and
/// continuously, with a symlink to a folder outside the roots holding a
/// secret. Over 20,000 calls from four clients, no answer carries a byte
/// or a name from outside; some calls are refused (the swap was seen) and
/// some answer from the real folder (the race is live both ways).
#[tokio::test(flavor = "multi_thread")]
async fn swapping_the_base_folder_never_reads_outside_the_roots() {
    let home = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(home.path()).unwrap();
    let root = top.join("root");
    let outside = top.join("outside");
    std::fs::create_dir_all(root.join("base")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        root.join("base/notes.md"),
        "The client retries with backoff.\n",
    )
    .unwrap();
    std::fs::write(
        outside.join("notes.md"),
        "The client retries with backoff. SECRET-CONTENT\n",
    )
    .unwrap();
    std::fs::write(outside.join("SECRET-NAME.md"), "retries backoff\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("base.link")).unwrap();
    let config = format!(
        "judge = \"lexical\"\n[server]\nroots = [{:?}]\n",
        root.display().to_string()
    );
    let served = serve_http(&top, &config, &[]).await;
    let base = root.join("base").display().to_string();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps =
        silt_files::beneath::swap_until(root.join("base"), root.join("base.link"), stop.clone());
    let (calls, refused, answered) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    const CALLS: usize = 20_000;
    let started = Instant::now();
    let mut clients = Vec::new();
    for n in 0..4 {
        let client = served.client().await;
        let (base, calls, refused, answered) = (
            base.clone(),
            calls.clone(),
            refused.clone(),
            answered.clone(),
        );
        clients.push(tokio::spawn(async move {
            while calls.fetch_add(1, Ordering::Relaxed) < CALLS {
                let (tool, args) = if n % 2 == 0 {
                    (
                        "sieve_verify",
                        json!({"base_path": base, "records": [{
                            "claim": "The client retries with backoff",
                            "citations": [{"locator": "notes.md"}]}]}),
                    )
                } else {
                    (
                        "sieve_grep",
                        json!({"question": "retries backoff", "path": base, "threshold": 0.0}),
                    )
                };
                let r = call(&client, tool, args).await;
                let text = text_of(&r);
                assert!(
                    !text.contains("SECRET"),
                    "{tool} read outside the roots: {text}"
                );
                if r.is_error == Some(true) {
                    refused.fetch_add(1, Ordering::Relaxed);
                } else if text.contains("notes.md") {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    let (refused, answered) = (
        refused.load(Ordering::Relaxed),
        answered.load(Ordering::Relaxed),
    );
    eprintln!(
        "{CALLS} calls in {:.0?}: {answered} answered from the base, {refused} refused, {swaps} swaps",
        started.elapsed()
    );
    assert!(swaps > 1000, "too few swaps to race anything: {swaps}");
    assert!(refused > 0, "no call ever met the swapped folder");
    assert!(answered > 0, "no call ever read the real folder");
}

/// A repository whose files keep turning into FIFOs, sockets and devices
/// while grep walks it over stdio: grep answers every time (listing what
/// it could not read), and `sediment_stats` beside it answers throughout:
/// every call within 5 s, 95 in 100 within a second. A plain open of a FIFO waited for a writer forever
/// and took the server's async workers with it.
#[tokio::test(flavor = "multi_thread")]
async fn files_turning_into_fifos_and_devices_never_freeze_the_server() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    const FILES: usize = 300;
    for i in 0..FILES {
        std::fs::write(
            repo.join(format!("f{i:03}.rs")),
            format!("fn retry_{i}() {{ /* backoff */ }}\n"),
        )
        .unwrap();
    }
    let client = Arc::new(serve(home.path(), &repo, &[]).await);
    let stop = Arc::new(AtomicBool::new(false));
    let turned = Arc::new(AtomicUsize::new(0));
    let turner = {
        let (repo, stop, turned) = (repo.clone(), stop.clone(), turned.clone());
        std::thread::spawn(move || {
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let path = repo.join(format!("f{:03}.rs", i % FILES));
                if turn_special(&path, i % 3) {
                    turned.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(2));
                let _ = std::fs::remove_file(&path);
                std::fs::write(&path, "fn restored() {}\n").unwrap();
                i += 7;
            }
        })
    };
    // two greps at once: the old walk blocked one async worker per FIFO
    let mut greps = Vec::new();
    for _ in 0..2 {
        let (client, stop, repo) = (client.clone(), stop.clone(), repo.clone());
        greps.push(tokio::spawn(async move {
            let mut done = 0;
            while !stop.load(Ordering::Relaxed) {
                let args = json!({"question": "retry backoff", "path": repo.display().to_string()});
                let r = tokio::time::timeout(
                    Duration::from_secs(60),
                    call(&client, "sieve_grep", args),
                )
                .await
                .expect("a grep never answered");
                assert_ne!(r.is_error, Some(true), "{}", text_of(&r));
                done += 1;
            }
            done
        }));
    }
    let started = Instant::now();
    let mut took = Vec::new();
    while started.elapsed() < Duration::from_secs(20) {
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            call(&client, "sediment_stats", json!({})),
        )
        .await
        .expect("sediment_stats never answered: the server froze");
        assert_ne!(r.is_error, Some(true), "{}", text_of(&r));
        took.push(t.elapsed());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    turner.join().unwrap();
    let mut grepped = 0;
    for g in greps {
        grepped += g.await.unwrap();
    }
    took.sort();
    let p95 = took[took.len() * 95 / 100];
    eprintln!(
        "{} stats calls (p95 {p95:?}, slowest {:?}), {grepped} greps, {} files turned special",
        took.len(),
        took.last().unwrap(),
        turned.load(Ordering::Relaxed)
    );
    assert!(turned.load(Ordering::Relaxed) > 100, "too few files turned");
    assert!(grepped > 4, "too few greps ran: {grepped}");
    // every call answered within 5 s (above); 95 in 100 within a second,
    // on 2 cores shared with the greps and with other tests
    assert!(p95 < Duration::from_secs(1), "stats p95 {p95:?}");
}

/// Replaces the file at `path` with a FIFO (`kind` 0), a Unix socket (1)
/// or a character device like /dev/null (2, needs root: a FIFO
/// otherwise). True when something special now stands there.
fn turn_special(path: &Path, kind: usize) -> bool {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY (both calls): a valid C string; they only create the node
    let device = || unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
    let fifo = || unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    match kind {
        1 => std::os::unix::net::UnixListener::bind(path).is_ok(),
        2 => device() == 0 || fifo() == 0,
        _ => fifo() == 0,
    }
}
