//! Progress for long calls: steps the host counts as the work goes and the
//! stage the engine says it is in, reported to the MCP client (progress
//! notifications with a total when the stage has one) or drawn on a
//! terminal.

#![deny(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

/// How often the counter is read while the work runs.
const TICK: Duration = Duration::from_millis(500);

/// A long call's progress: steps done, counted by the host as the work
/// goes (files read, sources fetched, items sent to the judge), and the
/// stage the engine said it is in, with that stage's size. Steps only
/// grow, so the overall figure never goes back when a stage begins.
#[derive(Debug, Default)]
pub struct Stages {
    done: Arc<AtomicU64>,
    stage: std::sync::Mutex<Option<Stage>>,
}

#[derive(Debug, Clone)]
struct Stage {
    name: String,
    /// Steps done before it began.
    base: u64,
    /// Its steps; 0 when unknown.
    total: u64,
}

/// What a watcher shows at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Steps done over the whole call (only grows).
    pub progress: u64,
    /// The call's total as far as it is known: the steps before this
    /// stage plus this stage's size; None while the size is unknown.
    pub total: Option<u64>,
    /// `stage: done/total`, or the bare count before any stage.
    pub message: String,
}

impl Stages {
    /// Counts `n` more steps.
    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// A new stage of `total` steps (0: unknown) begins now.
    pub fn stage(&self, name: &str, total: u64) {
        let base = self.done.load(Ordering::Relaxed);
        if let Ok(mut s) = self.stage.lock() {
            *s = Some(Stage {
                name: name.to_string(),
                base,
                total,
            });
        }
    }

    /// The step counter itself, for work that counts without stages.
    pub fn counter(&self) -> Arc<AtomicU64> {
        self.done.clone()
    }

    /// Steps done so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Where the call is; `unit` names the steps before any stage.
    pub fn snapshot(&self, unit: &str) -> Snapshot {
        let done = self.done();
        let stage = self.stage.lock().ok().and_then(|s| s.clone());
        match stage {
            None => Snapshot {
                progress: done,
                total: None,
                message: format!("{done} {unit}"),
            },
            Some(s) => {
                // `done` was read before the stage: a stage set in between
                // may start past it
                let within = done.saturating_sub(s.base);
                let (total, message) = if s.total > 0 {
                    (
                        Some(s.base + s.total.max(within)),
                        format!("{}: {within}/{}", s.name, s.total.max(within)),
                    )
                } else {
                    (None, format!("{}: {within}", s.name))
                };
                Snapshot {
                    progress: done,
                    total,
                    message,
                }
            }
        }
    }
}

/// Reports `stages` to the client that sent `token`: once at the start,
/// whenever it moved since the last tick, and once at the end, so a
/// client always sees the call begin and finish.
pub struct ProgressReporter {
    /// What the work counts into; the ticker reads it.
    pub stages: Arc<Stages>,
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
        let stages = Arc::new(Stages::default());
        let Some(token) = token else {
            return ProgressReporter {
                stages,
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
            let (peer, token, stages) = (peer.clone(), token.clone(), stages.clone());
            tokio::spawn(async move {
                let mut last = Snapshot {
                    progress: 0,
                    total: None,
                    message: String::new(),
                };
                loop {
                    tokio::time::sleep(TICK).await;
                    let now = stages.snapshot(unit);
                    if now != last {
                        let _ = peer.notify_progress(notification(&token, &now)).await;
                        last = now;
                    }
                }
            })
        };
        ProgressReporter {
            stages,
            ticker: Some(ticker),
            peer: Some((peer, token)),
            unit,
        }
    }

    /// Runs `work` with the stages, reporting them meanwhile.
    pub async fn around<T, Fut>(
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        unit: &'static str,
        work: impl FnOnce(Arc<Stages>) -> Fut,
    ) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        let progress = Self::start(peer, token, unit).await;
        let out = work(progress.stages.clone()).await;
        progress.finish().await;
        out
    }

    /// Stops the ticker and sends the final count.
    pub async fn finish(mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        if let Some((peer, token)) = self.peer.take() {
            let mut last = self.stages.snapshot(self.unit);
            // the end: whatever was left of a stage did not happen
            last.total = Some(last.progress);
            last.message = format!("done: {}", last.message);
            let _ = peer.notify_progress(notification(&token, &last)).await;
        }
    }
}

fn notification(token: &ProgressToken, s: &Snapshot) -> ProgressNotificationParam {
    let mut n = ProgressNotificationParam::new(token.clone(), s.progress as f64)
        .with_message(s.message.clone());
    n.total = s.total.map(|t| t as f64);
    n
}

impl Drop for ProgressReporter {
    fn drop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
    }
}

/// Progress shown on stderr while a command runs, when stderr is a
/// terminal (never in a pipe, where it would only be noise).
pub struct TerminalProgress {
    /// What the work counts into; the line is drawn from it.
    pub stages: Arc<Stages>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl TerminalProgress {
    /// Starts redrawing `label: stage done/total` a few times a second.
    pub fn start(label: &'static str, unit: &'static str) -> Self {
        use std::io::IsTerminal;
        let stages = Arc::new(Stages::default());
        let ticker = std::io::stderr().is_terminal().then(|| {
            let stages = stages.clone();
            tokio::spawn(async move {
                const SPIN: [char; 4] = ['|', '/', '-', '\\'];
                for i in 0.. {
                    let s = stages.snapshot(unit);
                    eprint!("\r\x1b[2K{} {label}: {}", SPIN[i % SPIN.len()], s.message);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            })
        });
        TerminalProgress { stages, ticker }
    }

    /// Runs `work` with the stages, drawing them meanwhile.
    pub async fn around<T, Fut>(
        label: &'static str,
        unit: &'static str,
        work: impl FnOnce(Arc<Stages>) -> Fut,
    ) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        let progress = Self::start(label, unit);
        let out = work(progress.stages.clone()).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_name_the_work_and_never_go_back() {
        let s = Stages::default();
        s.advance(3);
        assert_eq!(s.snapshot("steps").message, "3 steps");
        assert_eq!(s.snapshot("steps").total, None);
        s.stage("reading files", 10);
        s.advance(4);
        let now = s.snapshot("steps");
        assert_eq!(now.message, "reading files: 4/10");
        assert_eq!((now.progress, now.total), (7, Some(13)));
        s.stage("judging files", 0);
        s.advance(2);
        let now = s.snapshot("steps");
        assert_eq!(now.message, "judging files: 2");
        assert_eq!((now.progress, now.total), (9, None));
        // a stage that runs past its size grows it rather than show 12/10
        s.stage("judging functions", 1);
        s.advance(3);
        assert_eq!(s.snapshot("steps").message, "judging functions: 3/3");
        assert_eq!(s.snapshot("steps").total, Some(12));
    }
}
