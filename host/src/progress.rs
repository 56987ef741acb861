//! Progress for long calls: a counter the work bumps as it goes, reported
//! to the MCP client (progress notifications) or drawn on a terminal.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

/// How often the counter is read while the work runs.
const TICK: Duration = Duration::from_millis(500);

/// Reports `counter` to the client that sent `token`: once at the start,
/// whenever it moved since the last tick, and once at the end, so a
/// client always sees the call begin and finish.
pub struct ProgressReporter {
    pub counter: Arc<AtomicU64>,
    ticker: Option<tokio::task::JoinHandle<()>>,
    peer: Option<(Peer<RoleServer>, ProgressToken)>,
    unit: &'static str,
}

impl ProgressReporter {
    /// Starts reporting, if the client asked for progress (sent a token).
    pub async fn start(
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        unit: &'static str,
    ) -> Self {
        let counter = Arc::new(AtomicU64::new(0));
        let Some(token) = token else {
            return ProgressReporter {
                counter,
                ticker: None,
                peer: None,
                unit,
            };
        };
        let _ = peer
            .notify_progress(
                ProgressNotificationParam::new(token.clone(), 0.0).with_message("started"),
            )
            .await;
        let ticker = {
            let (peer, token, counter) = (peer.clone(), token.clone(), counter.clone());
            tokio::spawn(async move {
                let mut last = 0;
                loop {
                    tokio::time::sleep(TICK).await;
                    let n = counter.load(Ordering::Relaxed);
                    if n != last {
                        let _ = peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), n as f64)
                                    .with_message(format!("{n} {unit}")),
                            )
                            .await;
                        last = n;
                    }
                }
            })
        };
        ProgressReporter {
            counter,
            ticker: Some(ticker),
            peer: Some((peer, token)),
            unit,
        }
    }

    /// Runs `work` with the counter, reporting it meanwhile.
    pub async fn around<T, Fut>(
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        unit: &'static str,
        work: impl FnOnce(Arc<AtomicU64>) -> Fut,
    ) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        let progress = Self::start(peer, token, unit).await;
        let out = work(progress.counter.clone()).await;
        progress.finish().await;
        out
    }

    /// Stops the ticker and sends the final count.
    pub async fn finish(mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        if let Some((peer, token)) = self.peer.take() {
            let n = self.counter.load(Ordering::Relaxed);
            let _ = peer
                .notify_progress(
                    ProgressNotificationParam::new(token, n as f64)
                        .with_message(format!("done: {n} {}", self.unit)),
                )
                .await;
        }
    }
}

impl Drop for ProgressReporter {
    fn drop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
    }
}

/// A counter shown on stderr while a command runs, when stderr is a
/// terminal (never in a pipe, where it would only be noise).
pub struct TerminalProgress {
    pub counter: Arc<AtomicU64>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl TerminalProgress {
    /// Starts redrawing `label: N unit` a few times a second.
    pub fn start(label: &'static str, unit: &'static str) -> Self {
        use std::io::IsTerminal;
        let counter = Arc::new(AtomicU64::new(0));
        let ticker = std::io::stderr().is_terminal().then(|| {
            let counter = counter.clone();
            tokio::spawn(async move {
                const SPIN: [char; 4] = ['|', '/', '-', '\\'];
                for i in 0.. {
                    let n = counter.load(Ordering::Relaxed);
                    eprint!("\r{} {label}: {n} {unit}", SPIN[i % SPIN.len()]);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            })
        });
        TerminalProgress { counter, ticker }
    }

    /// Runs `work` with the counter, drawing it meanwhile.
    pub async fn around<T, Fut>(
        label: &'static str,
        unit: &'static str,
        work: impl FnOnce(Arc<AtomicU64>) -> Fut,
    ) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        let progress = Self::start(label, unit);
        let out = work(progress.counter.clone()).await;
        progress.finish();
        out
    }

    /// Stops and clears the line.
    pub fn finish(mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
            eprint!("\r\x1b[2K");
        }
    }
}
