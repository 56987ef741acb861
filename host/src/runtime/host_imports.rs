//! The imports engines see: the judge (forwarded to the chosen judge
//! plugin), the log and the clock.

use crate::bindings::ask_engine::silt::host::{clock, log};
use crate::bindings::ask_engine::silt::judge::judge as judge_import;
use crate::bindings::judge::silt::judge::types;
use crate::bindings::types::{Item, JudgeError, JudgeInfo, Question, Response};

use super::state::PluginState;

impl types::Host for PluginState {}

impl crate::bindings::ledger_engine::silt::ledger::types::Host for PluginState {}

impl judge_import::Host for PluginState {
    async fn info(&mut self) -> wasmtime::Result<JudgeInfo> {
        match &self.judge {
            Some(judge) => Ok(judge.info.clone()),
            None => wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            ),
        }
    }

    async fn ask(
        &mut self,
        question: Question,
        items: Vec<Item>,
    ) -> wasmtime::Result<Result<Response, JudgeError>> {
        let Some(judge) = self.judge.clone() else {
            wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            );
        };
        Ok(judge.ask(&question, &items).await)
    }
}

impl log::Host for PluginState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let plugin = &self.plugin;
        match level {
            log::Level::Debug => tracing::debug!(plugin, "{message}"),
            log::Level::Info => tracing::info!(plugin, "{message}"),
            log::Level::Warn => tracing::warn!(plugin, "{message}"),
            log::Level::Error => tracing::error!(plugin, "{message}"),
        }
        Ok(())
    }
}

impl clock::Host for PluginState {
    async fn now(&mut self) -> wasmtime::Result<f64> {
        Ok(self.fixed_now.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)
        }))
    }
}

impl crate::bindings::ledger_engine::silt::host::ids::Host for PluginState {
    async fn next_id(&mut self) -> wasmtime::Result<String> {
        Ok(silt_core::ids::new_id())
    }
}

impl crate::bindings::ledger_engine::silt::judge::relate::Host for PluginState {
    async fn relate(
        &mut self,
        pairs: Vec<crate::bindings::ledger_engine::silt::judge::relate::LessonPair>,
    ) -> wasmtime::Result<Result<Vec<types::Distribution>, JudgeError>> {
        let Some(judge) = self.judge.clone() else {
            wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            );
        };
        let n = pairs.len() as u64;
        let out = judge.relate(pairs).await;
        if let Some(counter) = &self.related_pairs {
            counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(out)
    }
}
