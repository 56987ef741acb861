//! The sieve engines' calls: ask, rank, route, triage and grep in the ask
//! engine, verify in the verify engine; each on a fresh instance bound to
//! the judge the caller names, with only the capabilities the call needs.

use std::sync::Arc;

use wasmtime::Store;

use super::answer_cache::{AnswerCache, grep_cache_path};
use super::capability::files::{Files, RepoGrant, WalkNotes};
use super::capability::judge_calls::JudgeCalls;
use super::capability::progress::Progress;
use super::capability::sources::Sources;
use super::failure::PluginFailure;
use super::state::PluginState;
use super::{CallError, Loaded, Runtime};
use crate::bindings::ask_engine::AskEnginePre;
use crate::bindings::ask_engine::exports::silt::sieve::{ask, grep, rank, route, triage};
use crate::bindings::ask_engine::silt::sieve::types::{AskError, AskUsage as Usage};
use crate::bindings::verify_engine::VerifyEnginePre;
use crate::bindings::verify_engine::exports::silt::sieve::verify;
use silt_fetch::SourceFetcher;
use silt_plugins::manifest::{JudgeSection, PluginKind};
use silt_progress::Stages;

/// What one engine call is given besides its judge.
#[derive(Default)]
struct CallGrants {
    answers: Option<Arc<AnswerCache>>,
    repo: Option<RepoGrant>,
    sources: Option<Arc<SourceFetcher>>,
    steps: Option<Arc<Stages>>,
}

/// A result whose usage the host completes: the engine counts a request
/// per batch, the host knows which of them the answer cache served.
trait WithUsage {
    fn usage(&mut self) -> &mut Usage;
}

macro_rules! with_usage {
    ($($t:ty),*) => {$(
        impl WithUsage for $t {
            fn usage(&mut self) -> &mut Usage {
                &mut self.usage
            }
        }
    )*};
}
with_usage!(
    ask::AskResult,
    rank::RankResult,
    route::RouteResult,
    triage::TriageResult,
    grep::GrepResult,
    verify::VerifyResult
);

impl Runtime {
    async fn ask_engine(&self) -> Result<Arc<Loaded<AskEnginePre<PluginState>>>, CallError> {
        self.load("ask", || async {
            self.prepare(
                "ask",
                PluginKind::Engine,
                &self.linkers.ask,
                "silt:sieve/ask-engine",
                AskEnginePre::new,
            )
        })
        .await
    }

    async fn verify_engine(&self) -> Result<Arc<Loaded<VerifyEnginePre<PluginState>>>, CallError> {
        self.load("verify", || async {
            self.prepare(
                "verify",
                PluginKind::Engine,
                &self.linkers.verify,
                "silt:sieve/verify-engine",
                VerifyEnginePre::new,
            )
        })
        .await
    }

    /// A fresh store for one call of `engine`, bound to judge `judge` and
    /// given `grants`.
    async fn engine_store<P>(
        &self,
        judge: &str,
        engine: &Loaded<P>,
        grants: CallGrants,
    ) -> Result<Store<PluginState>, CallError> {
        let judge = self.judge(judge).await?;
        // only a judge that gives the same answers again has them kept (the
        // sampling judge's model is whichever the calling client picks)
        let answers = grants.answers.filter(|_| judge.info.deterministic);
        let mut store = engine.sandbox().store()?;
        let s = store.data_mut();
        let progress = Progress::new(grants.steps);
        s.judge = JudgeCalls::new(&s.plugin, Some(judge));
        s.judge.answers = answers;
        s.judge.progress = progress.clone();
        s.files = Files::new(grants.repo, progress.clone());
        s.sources = Sources::new(&s.plugin, grants.sources, progress.clone());
        s.progress = progress;
        Ok(store)
    }

    /// How an engine call ended, as its caller sees it: a contained
    /// failure, the output cap applied to what it returned, the usage
    /// completed, the engine's error mapped to a [`CallError`].
    fn engine_result<P, R>(
        engine: &Loaded<P>,
        store: &Store<PluginState>,
        outcome: Result<wasmtime::Result<Result<R, AskError>>, tokio::time::error::Elapsed>,
    ) -> Result<R, CallError>
    where
        R: WithUsage + serde::Serialize,
    {
        match engine.sandbox().finish(store, outcome)? {
            Ok(mut result) => {
                let limits = &engine.manifest.limits;
                PluginFailure::check_output(&engine.manifest.plugin.name, &result, limits)?;
                let calls = &store.data().judge;
                result.usage().requests = calls.calls;
                result.usage().cache_hits = calls.cache_hits;
                Ok(result)
            }
            Err(AskError::InvalidRequest(m)) => Err(CallError::InvalidRequest(m)),
            Err(AskError::JudgeFailed(m)) => Err(CallError::JudgeFailed(m)),
        }
    }

    /// One call of `engine` with judge `judge` and `grants`: a fresh
    /// store, `call` (instantiate and call one export) under the engine's
    /// wall clock, and the outcome as [`Self::engine_result`] gives it.
    async fn run_engine<P, R>(
        &self,
        judge: &str,
        engine: &Loaded<P>,
        grants: CallGrants,
        call: impl AsyncFnOnce(&mut Store<PluginState>) -> wasmtime::Result<Result<R, AskError>>,
    ) -> Result<R, CallError>
    where
        R: WithUsage + serde::Serialize,
    {
        let mut store = self.engine_store(judge, engine, grants).await?;
        let outcome = tokio::time::timeout(engine.sandbox().wall(), call(&mut store)).await;
        Self::engine_result(engine, &store, outcome)
    }

    /// What judge `name`'s manifest claims for it (the cautious defaults
    /// when it claims nothing).
    pub(super) fn judge_section(&self, name: &str) -> Result<JudgeSection, CallError> {
        Ok(self
            .registry()
            .get(name)?
            .manifest
            .judge
            .clone()
            .unwrap_or_default())
    }

    fn answers_only(&self) -> CallGrants {
        CallGrants {
            answers: self.answers.clone(),
            ..Default::default()
        }
    }

    /// Runs the ask engine on `request` with judge `judge_name`.
    pub async fn ask(
        &self,
        judge_name: &str,
        request: &ask::AskRequest,
    ) -> Result<ask::AskResult, CallError> {
        let engine = self.ask_engine().await?;
        self.run_engine(judge_name, &engine, self.answers_only(), async |store| {
            let e = engine.pre.instantiate_async(&mut *store).await?;
            e.silt_sieve_ask().call_ask(&mut *store, request).await
        })
        .await
    }

    /// Runs `sieve_rank` in the ask engine with judge `judge_name`.
    pub async fn rank(
        &self,
        judge_name: &str,
        request: &rank::RankRequest,
    ) -> Result<rank::RankResult, CallError> {
        let engine = self.ask_engine().await?;
        self.run_engine(judge_name, &engine, self.answers_only(), async |store| {
            let e = engine.pre.instantiate_async(&mut *store).await?;
            e.silt_sieve_rank().call_rank(&mut *store, request).await
        })
        .await
    }

    /// Runs `sieve_route` in the ask engine with judge `judge_name`.
    pub async fn route(
        &self,
        judge_name: &str,
        request: &route::RouteRequest,
    ) -> Result<route::RouteResult, CallError> {
        let engine = self.ask_engine().await?;
        self.run_engine(judge_name, &engine, self.answers_only(), async |store| {
            let e = engine.pre.instantiate_async(&mut *store).await?;
            e.silt_sieve_route().call_route(&mut *store, request).await
        })
        .await
    }

    /// Runs `sieve_triage_threads` in the ask engine with judge `judge_name`.
    pub async fn triage(
        &self,
        judge_name: &str,
        request: &triage::TriageRequest,
    ) -> Result<triage::TriageResult, CallError> {
        let engine = self.ask_engine().await?;
        self.run_engine(judge_name, &engine, self.answers_only(), async |store| {
            let e = engine.pre.instantiate_async(&mut *store).await?;
            e.silt_sieve_triage()
                .call_triage(&mut *store, request)
                .await
        })
        .await
    }

    /// Runs `sieve_grep` in the ask engine over the files beneath `root`.
    pub async fn grep(
        &self,
        judge_name: &str,
        root: silt_files::beneath::Beneath,
        request: &grep::GrepRequest,
        steps: Option<Arc<Stages>>,
    ) -> Result<(grep::GrepResult, WalkNotes), CallError> {
        // whether grep asks the judge at all is the judge's manifest's word
        let mut request = request.clone();
        request.engine_ranks = self.judge_section(judge_name)?.engine_ranking;
        let request = &request;
        let cache_key = root.root().to_path_buf();
        let repo = RepoGrant::new(root, silt_files::walk::CACHE_DIR);
        let notes = repo.notes.clone();
        // grep's answers live in silt's cache, keyed by the repository
        // (never inside it: grep is read-only)
        let answers = match (&self.answers, &self.grep_cache_root) {
            (Some(_), Some(user_cache)) => {
                match AnswerCache::open(&grep_cache_path(&cache_key, user_cache)) {
                    Ok(c) => Some(Arc::new(c)),
                    Err(e) => {
                        tracing::warn!("grep answer cache off for this call: {e:#}");
                        None
                    }
                }
            }
            _ => None,
        };
        let grants = CallGrants {
            answers,
            repo: Some(repo),
            steps,
            ..Default::default()
        };
        let engine = self.ask_engine().await?;
        let result = self
            .run_engine(judge_name, &engine, grants, async |store| {
                let e = engine.pre.instantiate_async(&mut *store).await?;
                e.silt_sieve_grep().call_grep(&mut *store, request).await
            })
            .await?;
        let notes = notes.lock().map(|n| n.clone()).unwrap_or_default();
        Ok((result, notes))
    }

    /// Runs `sieve_verify` with judge `judge_name`, fetching through `sources`.
    pub async fn verify(
        &self,
        judge_name: &str,
        sources: SourceFetcher,
        request: &verify::VerifyRequest,
        steps: Option<Arc<Stages>>,
    ) -> Result<verify::VerifyResult, CallError> {
        // what the judge may confirm is its manifest's word, not the caller's
        let mut request = request.clone();
        request.judge_entails = self.judge_section(judge_name)?.entailment;
        let request = &request;
        let grants = CallGrants {
            answers: self.answers.clone(),
            sources: Some(Arc::new(sources)),
            steps,
            ..Default::default()
        };
        let engine = self.verify_engine().await?;
        self.run_engine(judge_name, &engine, grants, async |store| {
            let e = engine.pre.instantiate_async(&mut *store).await?;
            e.silt_sieve_verify()
                .call_verify(&mut *store, request)
                .await
        })
        .await
    }
}
