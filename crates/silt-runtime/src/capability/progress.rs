//! `silt:sieve/progress`: an engine names the stage it is in, and the
//! capabilities that do work for it (reads, fetches, judged items) count
//! steps, for whoever watches a long call (a terminal, MCP progress
//! notifications).

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::ask_engine::silt::sieve::progress;
use silt_progress::Stages;

/// The longest stage name shown: a plugin's words reach the user's screen.
const MAX_STAGE_CHARS: usize = 80;

/// Where one call's progress goes; nowhere when nobody watches.
#[derive(Clone, Default)]
pub struct Progress {
    stages: Option<Arc<Stages>>,
}

impl Progress {
    /// Progress reported to `stages`; None: nobody watches.
    pub fn new(stages: Option<Arc<Stages>>) -> Self {
        Progress { stages }
    }

    /// Counts `n` steps of work.
    pub fn step(&self, n: u64) {
        if let Some(s) = &self.stages {
            s.advance(n);
        }
    }
}

impl progress::Host for Progress {
    async fn stage(&mut self, name: String, total: u64) -> wasmtime::Result<()> {
        if let Some(s) = &self.stages {
            let name: String = name
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_STAGE_CHARS)
                .collect();
            s.stage(&name, total);
        }
        Ok(())
    }
}

/// Links `silt:sieve/progress` to the [`Progress`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Progress,
) -> wasmtime::Result<()> {
    progress::add_to_linker::<T, HasSelf<Progress>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress::Host;

    #[tokio::test]
    async fn a_stage_name_reaches_the_screen_without_controls_and_cut() {
        let stages = Arc::new(Stages::default());
        let mut p = Progress::new(Some(stages.clone()));
        let long = format!("reading\x1b[2J files{}", "x".repeat(200));
        p.stage(long, 4).await.unwrap();
        p.step(1);
        let shown = stages.snapshot("steps").message;
        assert!(!shown.contains('\x1b'), "{shown}");
        // 16 characters of words, then x's up to the 80 shown
        assert_eq!(shown, format!("reading[2J files{}: 1/4", "x".repeat(64)));
        // nobody watching: steps and stages go nowhere
        let mut quiet = Progress::default();
        quiet.step(3);
        quiet.stage("s".into(), 1).await.unwrap();
    }
}
