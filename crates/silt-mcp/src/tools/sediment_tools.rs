//! The nine `sediment_*` tools: the seed's names, arguments, limits and
//! result shapes, taken flat and strict; every bad input gets
//! `{ok: false, error}` and changes nothing.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;

use crate::tools::error::ToolError;
use silt_config::Config;
use silt_ledger_service::sediment_json;
use silt_ledger_service::service::{Done, LedgerService, Op, SleepCommit};
use silt_ledger_service::store::Store;
use silt_ledger_service::values::view;
use silt_runtime::Runtime;
use silt_runtime::bindings::ledger_engine::silt::ledger::types::{
    CaptureRelation, Feedback, Judgment, SleepReport, Verdict,
};
use silt_runtime::judged_by::JudgedBy;

/// Below this many active lessons there is nothing worth a sleep pass.
const MIN_ACTIVE_FOR_SLEEP: u32 = 3;

/// Sleeps tried away from the lock before one runs under it.
const SLEEP_ATTEMPTS: usize = 3;

fn default_k() -> u32 {
    5
}
fn default_limit() -> u32 {
    50
}

/// sediment_recall
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The task at hand, 1 to 2000 characters.
    pub context: String,
    /// How many lessons, 1 to 20 (default 5).
    #[serde(default = "default_k", deserialize_with = "crate::tools::schema::u32")]
    #[schemars(range(min = 1, max = 20))]
    pub k: u32,
}

/// How the captured outcome went.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackParam {
    /// It worked.
    Positive,
    /// It did not.
    Negative,
    /// Not known yet.
    Neutral,
}

/// sediment_capture
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct CaptureParams {
    /// The situation, generalised (WHEN ...), 1 to 300 characters.
    pub when: String,
    /// What to do in it (PREFER ...), 1 to 300 characters.
    pub prefer: String,
    /// positive, negative or neutral (default neutral).
    #[serde(default)]
    pub feedback: Option<FeedbackParam>,
    /// How this lesson relates to one already in the ledger, decided now
    /// while it is fresh (e.g. the answer to an earlier capture's
    /// `near` question).
    #[serde(default)]
    pub relates_to: Option<RelatesToParam>,
}

/// A captured lesson's relation to one already held.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RelatesToParam {
    /// The other lesson's id (active).
    #[serde(deserialize_with = "crate::tools::schema::id")]
    pub id: String,
    /// restates (merged with it), contradicts (the new lesson wins; the
    /// other is kept as its boundary) or refines (both kept, the pair
    /// never merged or resolved by sleep).
    pub relation: RelationParam,
}

/// How a new lesson relates to one already held.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum RelationParam {
    /// The same lesson said again: they merge.
    Restates,
    /// The same situation, the opposite action: the new lesson wins and the other retires as its boundary.
    Contradicts,
    /// A narrower or sharper version: both stay, and sleep never merges or resolves the pair.
    Refines,
}

/// sediment_review_candidates
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct ReviewParams {
    /// Pairs on this page, 1 to 50 (default 10). Answer them with
    /// sediment_apply_judgments and ask again for the next.
    #[serde(
        default = "default_page",
        deserialize_with = "crate::tools::schema::u32"
    )]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
}

fn default_page() -> u32 {
    10
}

/// sediment_confirm and sediment_contradict
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct IdParams {
    /// The lesson's id, 1 to 32 characters (see sediment_stats).
    #[serde(deserialize_with = "crate::tools::schema::id")]
    pub id: String,
}

/// sediment_undo
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct UndoParams {
    /// The event's number in the log (`seq` in `silt ledger history`,
    /// `sediment_stats` telemetry and sleep's events): a merge, a
    /// resolved contradiction or an abstraction.
    pub event: i64,
}

/// sediment_forget
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// The lesson's id (see sediment_stats with include_retired).
    #[serde(deserialize_with = "crate::tools::schema::id")]
    pub id: String,
    /// Why, for the log (1 to 300 characters; default "forgotten on request").
    #[serde(default)]
    pub reason: Option<String>,
}

/// sediment_consolidate
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// sediment_sleep
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct SleepParams {
    /// The judge that relates lessons (default: silt.toml's, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

/// One verdict on a pair from sediment_review_candidates.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct JudgmentParam {
    /// The first lesson's id, as the review page gave it.
    #[serde(deserialize_with = "crate::tools::schema::id")]
    pub a_id: String,
    /// The second lesson's id, as the review page gave it.
    #[serde(deserialize_with = "crate::tools::schema::id")]
    pub b_id: String,
    /// merge, contradict or distinct
    pub verdict: VerdictParam,
}

/// A verdict on a reviewed pair.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum VerdictParam {
    /// The same lesson: fold them into one.
    Merge,
    /// Opposite actions for one situation: the stronger is kept.
    Contradict,
    /// Different lessons: both stay, and the pair is not offered again until one changes.
    Distinct,
}

/// sediment_apply_judgments
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct ApplyParams {
    /// 1 to 100 verdicts.
    pub judgments: Vec<JudgmentParam>,
}

/// sediment_stats
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct StatsParams {
    /// Include retired entries (default false); dormant ones are always listed.
    #[serde(default)]
    pub include_retired: bool,
    /// At most this many entries, 1 to 500 (default 50).
    #[serde(
        default = "default_limit",
        deserialize_with = "crate::tools::schema::u32"
    )]
    #[schemars(range(min = 1, max = 500))]
    pub limit: u32,
    /// Also report the event log: what fires most, what was pruned, and how the ledger drifted.
    #[serde(default)]
    pub telemetry: bool,
}

/// A tool's outcome: `{ok: true, ...}` or what went wrong.
pub type ToolOutcome = Result<Value, ToolError>;

use crate::tools::error::parse_args as parse;

use silt_core::ledger::limits::{MAX_ID_CHARS, MAX_ROW_ID_BYTES, MAX_TEXT_CHARS, text};

fn range(name: &str, value: u32, lo: u32, hi: u32) -> Result<u32, ToolError> {
    if !(lo..=hi).contains(&value) {
        return Err(ToolError::invalid(format!(
            "{name} must be between {lo} and {hi}, got {value}"
        )));
    }
    Ok(value)
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The server's one ledger, opened on first use.
pub struct LedgerTools {
    runtime: Arc<Runtime>,
    config: Arc<Config>,
    path: PathBuf,
    sediment: Option<PathBuf>,
    service: Mutex<Option<LedgerService>>,
    /// A fixed time to act at (replays); None is the clock.
    fixed_now: Option<f64>,
    /// Overrides the configured auto-sleep threshold (0 is off).
    sleep_pressure: Option<f64>,
    /// Held by the auto-sleep pass under way. A capture that finds the
    /// pressure high while one runs does not start another: passes side
    /// by side read the same snapshot, and all but one find their rows
    /// changed at commit, retry, and end up sleeping under the lock that
    /// every other call waits for.
    auto_sleeping: Arc<tokio::sync::Mutex<()>>,
    /// A server's auto-sleep runs after the capture has answered: a pass
    /// over 10k lessons takes seconds the agent need not wait for. A
    /// one-shot command sleeps before it answers (it exits right after).
    sleep_in_background: bool,
    /// What the last background pass did, for the next capture's answer.
    slept: std::sync::Mutex<Option<Result<Value, String>>>,
    /// Recalls and captures waiting for the ledger's lock: whoever gets
    /// the lock runs every one waiting in one commit (see `batched`).
    waiting: std::sync::Mutex<Vec<Waiting>>,
}

/// An operation waiting for the ledger, and where its answer goes.
struct Waiting {
    op: Op,
    answer: tokio::sync::oneshot::Sender<Result<Done, ToolError>>,
}

impl LedgerTools {
    /// The ledger at the default path (see [`Store::default_path`]).
    pub fn new(runtime: Arc<Runtime>, config: Arc<Config>) -> Self {
        let (path, sediment) = Store::default_path(config.ledger.url.as_deref());
        LedgerTools::at(runtime, config, path, sediment, None)
    }

    /// The ledger at `path`, acting at `now` if given; a Sediment file to
    /// import when the ledger is new.
    pub fn at(
        runtime: Arc<Runtime>,
        config: Arc<Config>,
        path: PathBuf,
        sediment: Option<PathBuf>,
        now: Option<f64>,
    ) -> Self {
        LedgerTools {
            runtime,
            config,
            path,
            sediment,
            service: Mutex::new(None),
            fixed_now: now,
            sleep_pressure: None,
            auto_sleeping: Arc::new(tokio::sync::Mutex::new(())),
            sleep_in_background: false,
            slept: std::sync::Mutex::new(None),
            waiting: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Runs auto-sleep after a capture has answered (servers).
    pub fn sleeping_in_background(mut self) -> Self {
        self.sleep_in_background = true;
        self
    }

    /// Waits for a background sleep pass under way to commit: a server
    /// whose client hung up lets its last pass finish rather than lose it.
    pub async fn settle(&self) {
        let _turn = self.auto_sleeping.lock().await;
    }

    /// Turns auto-scheduled sleep off for these tools (benchmarks).
    pub fn without_auto_sleep(mut self) -> Self {
        self.sleep_pressure = Some(0.0);
        self
    }

    fn now(&self) -> f64 {
        self.fixed_now.unwrap_or_else(now)
    }

    /// The open service, for commands beyond the nine tools.
    pub async fn open(
        &self,
    ) -> Result<tokio::sync::MappedMutexGuard<'_, LedgerService>, ToolError> {
        self.service().await
    }

    async fn service(&self) -> Result<tokio::sync::MappedMutexGuard<'_, LedgerService>, ToolError> {
        let mut guard = self.service.lock().await;
        if guard.is_none() {
            let fresh = !Store::exists(&self.path);
            // a Sediment ledger to adopt is read (and checked) before the
            // new file exists: a refused import leaves nothing behind, so
            // the next call tries it again
            let adopt = match self.sediment.as_ref().filter(|p| fresh && p.is_file()) {
                Some(json) => Some((
                    json,
                    sediment_json::read(json, self.now()).map_err(|e| format!("{e:#}"))?,
                )),
                None => None,
            };
            let judge = self.config.judge_for("sediment_sleep").to_string();
            let mut service = LedgerService::open(self.runtime.clone(), &judge, &self.path)
                .map_err(ToolError::from)?;
            let mut params = silt_runtime::ledger::default_params();
            params.destructive_margin = self
                .config
                .destructive_margin()
                .map_err(|e| format!("{e:#}"))?;
            service.set_params(params);
            service.set_embedder(self.config.ledger_embedder());
            if let Some((json, entries)) = adopt {
                service
                    .store
                    .import(&entries, &json.display().to_string(), self.now())
                    .map_err(|e| format!("{e:#}"))?;
            }
            *guard = Some(service);
        }
        Ok(tokio::sync::MutexGuard::map(guard, |s| {
            s.as_mut().expect("opened above")
        }))
    }

    /// sediment_recall: fires the top `k` active lessons for `context`.
    pub async fn recall(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: RecallParams = parse(args)?;
        let context = text("context", &p.context, 2000).map_err(ToolError::invalid)?;
        let k = range("k", p.k, 1, 20)?;
        let now = self.now();
        let Done::Recalled(hits) = self.batched(Op::Recall { context, k, now }).await? else {
            unreachable!("a recall answers with what it fired")
        };
        let rows: Vec<Value> = hits.iter().map(|e| view(e, now)).collect();
        Ok(json!({"ok": true, "count": rows.len(), "heuristics": rows}))
    }

    /// sediment_capture: stores a lesson (settling its `relates_to`, or
    /// asking about near lessons), then sleeps when the pressure is past
    /// the threshold.
    pub async fn capture(self: &Arc<Self>, args: Map<String, Value>) -> ToolOutcome {
        let p: CaptureParams = parse(args)?;
        let when = text("when", &p.when, MAX_TEXT_CHARS).map_err(ToolError::invalid)?;
        let prefer = text("prefer", &p.prefer, MAX_TEXT_CHARS).map_err(ToolError::invalid)?;
        let feedback = match p.feedback.unwrap_or(FeedbackParam::Neutral) {
            FeedbackParam::Positive => Feedback::Positive,
            FeedbackParam::Negative => Feedback::Negative,
            FeedbackParam::Neutral => Feedback::Neutral,
        };
        let threshold = match self.sleep_pressure {
            Some(p) => p,
            None => self.config.sleep_pressure().map_err(|e| format!("{e:#}"))?,
        };
        let now = self.now();
        let op = Op::Capture {
            when,
            prefer,
            feedback,
            now,
        };
        let relates = match &p.relates_to {
            Some(r) => Some(self.related_lesson(r).await?),
            None => None,
        };
        let Done::Captured(e) = self.batched(op).await? else {
            unreachable!("a capture answers with the lesson stored")
        };
        let mut out = json!({"ok": true, "captured": view(&e, now)});
        match relates {
            Some((relation, other)) => {
                // the lesson is committed: a failure here is a warning, and
                // the agent can give the verdict with apply_judgments
                let settled = self
                    .service()
                    .await?
                    .settle(&e.id, relation, &other, now)
                    .await;
                match settled {
                    Ok(events) => {
                        out["settled"] =
                            json!(events
                            .iter()
                            .map(|ev| json!({"kind": ev.kind, "id": ev.id, "others": ev.others}))
                            .collect::<Vec<_>>())
                    }
                    Err(err) => out["settle_error"] = json!(err.to_string()),
                }
            }
            None => {
                if let Some((near, question, usage)) = self.near_question(&e.id).await {
                    out["near"] = near;
                    out["question"] = json!(question);
                    out["usage"] = usage;
                }
            }
        }
        if threshold > 0.0 {
            // Auto-scheduled sleep: by redundancy pressure, not a turn count.
            // The lesson is committed by now, so nothing here may turn the
            // capture into a failure (an agent would retry and write it
            // twice): a failed check or pass is a warning beside `ok: true`.
            let mut warnings = Vec::new();
            let slept = self.slept.lock().expect("not poisoned").take();
            match slept {
                Some(Ok(report)) => out["last_auto_sleep"] = report,
                Some(Err(e)) => warnings.push(format!(
                    "the sleep pass an earlier capture started failed: {e}"
                )),
                None => {}
            }
            match self.auto_sleep(threshold, now).await {
                Ok(Some(report)) => out["auto_sleep"] = report,
                Ok(None) => {}
                Err(warning) => warnings.push(warning),
            }
            if !warnings.is_empty() {
                out["warning"] = json!(warnings.join("; "));
            }
        }
        Ok(out)
    }

    /// The relation a capture gives, checked before anything is written:
    /// the other lesson must be in the ledger and active.
    async fn related_lesson(
        &self,
        r: &RelatesToParam,
    ) -> Result<(CaptureRelation, String), ToolError> {
        let found = self
            .service()
            .await?
            .store
            .get(&r.id)
            .map_err(|e| format!("{e:#}"))?;
        match found {
            Some(e) if e.status == silt_core::ledger::Status::Active => {}
            Some(e) => {
                return Err(ToolError::invalid(format!(
                    "relates_to.id '{}' is {:?}, not active; relate the new lesson to an active one",
                    r.id, e.status
                )
                .to_lowercase()));
            }
            None => {
                return Err(ToolError::invalid(format!(
                    "relates_to.id '{}' is no lesson in this ledger; sediment_stats lists them",
                    r.id
                )));
            }
        }
        let relation = match r.relation {
            RelationParam::Restates => CaptureRelation::Restates,
            RelationParam::Contradicts => CaptureRelation::Contradicts,
            RelationParam::Refines => CaptureRelation::Refines,
        };
        Ok((relation, r.id.clone()))
    }

    /// Up to 3 lessons near the one just captured that the judge could
    /// not clear as distinct, and the question to put to the agent; none
    /// when there are none (or the judge failed: the capture stands).
    async fn near_question(&self, id: &str) -> Option<(Value, String, Value)> {
        let mut service = self.service().await.ok()?;
        let near = service.near_lessons(id, 3).await.ok()?;
        if near.is_empty() {
            return None;
        }
        let by = self.runtime.judged_by(service.judge()).ok()?;
        let pairs: Vec<Value> = near
            .iter()
            .map(|p| {
                let mut pair = json!({"id": p.b_id, "lesson": p.b});
                suspicion(&mut pair, "relation", &by, p.relation, p.probability);
                pair
            })
            .collect();
        Some((
            json!(pairs),
            format!(
                "Does {id} restate, contradict or refine any of these near lessons, or is it \
                 distinct? Capture again with relates_to, or send sediment_apply_judgments \
                 verdicts (merge, contradict, distinct) for ({id}, other)."
            ),
            json!(by.usage_fields()),
        ))
    }

    /// Runs `op` with every other recall and capture waiting for the
    /// ledger at the moment it gets the lock, in one commit (group
    /// commit); answers once that commit is durable. A caller that finds
    /// its operation already run by the one before it takes that answer.
    /// If that one went away mid-batch (its transaction rolled back), or
    /// the batch failed, each operation runs alone.
    async fn batched(&self, op: Op) -> Result<Done, ToolError> {
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        let mine = op.clone();
        self.waiting
            .lock()
            .expect("not poisoned")
            .push(Waiting { op, answer });
        let mut service = self.service().await?;
        match answered.try_recv() {
            Ok(done) => return done,
            Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                return service.run_one(&mine).await.map_err(ToolError::from);
            }
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
        }
        // still waiting, so ours is among them; callers who went away
        // are not run for
        let batch: Vec<Waiting> = std::mem::take(&mut *self.waiting.lock().expect("not poisoned"))
            .into_iter()
            .filter(|w| !w.answer.is_closed())
            .collect();
        let ops: Vec<Op> = batch.iter().map(|w| w.op.clone()).collect();
        match service.run_batch(&ops).await {
            Ok(done) => {
                for (w, d) in batch.into_iter().zip(done) {
                    let _ = w.answer.send(Ok(d));
                }
            }
            Err(e) if batch.len() == 1 => {
                if let Some(w) = batch.into_iter().next() {
                    let _ = w.answer.send(Err(ToolError::from(e)));
                }
            }
            Err(_) => {
                for w in batch {
                    let alone = service.run_one(&w.op).await.map_err(ToolError::from);
                    let _ = w.answer.send(alone);
                }
            }
        }
        answered
            .try_recv()
            .unwrap_or_else(|_| Err(String::from("the ledger dropped this call's answer").into()))
    }

    /// Sleeps when the redundancy pressure reaches `threshold`, away from
    /// the lock like any sleep; None when it does not. In the background,
    /// the answer says a pass started and the next capture's says what it
    /// did (`last_auto_sleep`, or a warning when it failed).
    async fn auto_sleep(
        self: &Arc<Self>,
        threshold: f64,
        now: f64,
    ) -> Result<Option<Value>, String> {
        // a pass is under way: this lesson's pairs stay counted, so the
        // first capture after it checks them. Nor is the pressure counted
        // meanwhile: a count over the threshold is cut short and not kept,
        // so at 10k lessons every capture during a pass recounted hundreds
        // of lessons' pairs under the ledger's lock (capture p50 157 ms).
        let Ok(turn) = self.auto_sleeping.clone().try_lock_owned() else {
            return Ok(None);
        };
        let r = self
            .service()
            .await
            .map_err(|e| e.to_string())?
            .redundancy(threshold)
            .await
            .map_err(|e| format!("captured; the scheduled sleep check failed: {e}"))?;
        let pressure = if r.active >= MIN_ACTIVE_FOR_SLEEP {
            r.candidate_pairs as f64 / r.active as f64
        } else {
            0.0
        };
        if pressure < threshold {
            return Ok(None);
        }
        let pressure = (pressure * 1000.0).round() / 1000.0;
        if !self.sleep_in_background {
            return self
                .scheduled_pass(pressure, threshold, now)
                .await
                .map(Some)
                .map_err(|e| format!("captured; the scheduled sleep pass failed: {e}"));
        }
        let tools = Arc::clone(self);
        tokio::spawn(async move {
            let outcome = tools
                .scheduled_pass(pressure, threshold, now)
                .await
                .map_err(|e| e.to_string());
            if let Err(e) = &outcome {
                tracing::warn!("{e}");
            }
            *tools.slept.lock().expect("not poisoned") = Some(outcome);
            // released only once the outcome is there for `settle` to see
            drop(turn);
        });
        Ok(Some(json!({
            "pressure": pressure, "threshold": threshold, "started": true,
        })))
    }

    /// The auto-sleep pass itself and its report.
    async fn scheduled_pass(
        &self,
        pressure: f64,
        threshold: f64,
        now: f64,
    ) -> Result<Value, ToolError> {
        let judge = self.config.judge_for("sediment_sleep").to_string();
        let (s, undoable) = self.sleep_apart(&judge, now, None).await?;
        Ok(json!({
            "pressure": pressure, "threshold": threshold,
            "merged": s.merged, "contradictions_resolved": s.contradictions_resolved,
            "generalized": s.generalized, "held_for_review": s.held_for_review,
            "undoable": undoable,
        }))
    }

    /// sediment_confirm, or sediment_contradict when `contradict`.
    pub async fn feedback(&self, args: Map<String, Value>, contradict: bool) -> ToolOutcome {
        let p: IdParams = parse(args)?;
        let id = text("id", &p.id, MAX_ID_CHARS).map_err(ToolError::invalid)?;
        let now = self.now();
        let e = self
            .service()
            .await?
            .feedback(&id, contradict, now)
            .await
            .map_err(ToolError::from)?;
        Ok(json!({"ok": true, "updated": view(&e, now)}))
    }

    /// sediment_consolidate: decay, retire lessons below the floor, evict
    /// over the cap.
    pub async fn consolidate(&self, args: Map<String, Value>) -> ToolOutcome {
        let _: NoParams = parse(args)?;
        let h = self
            .service()
            .await?
            .homeostasis(self.now())
            .await
            .map_err(ToolError::from)?;
        Ok(json!({"ok": true, "retired": h.retired, "evicted": h.evicted, "active": h.active}))
    }

    /// sediment_sleep: merge, resolve and abstract with the chosen judge.
    pub async fn sleep(&self, args: Map<String, Value>) -> ToolOutcome {
        self.sleep_counting(args, None).await
    }

    /// [`Self::sleep`], counting the lesson pairs judged into `judged` as
    /// the pass goes (for progress notifications).
    pub async fn sleep_counting(
        &self,
        args: Map<String, Value>,
        judged: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> ToolOutcome {
        let p: SleepParams = parse(args)?;
        let default = self.config.judge_for("sediment_sleep").to_string();
        let judge = p.judge.unwrap_or_else(|| default.clone());
        // refuse a judge that cannot relate lessons before touching the ledger
        let loaded = self.runtime.judge(&judge).await.map_err(ToolError::from)?;
        if !loaded.can_relate() {
            return Err(ToolError {
                code: crate::tools::error::ErrorCode::InvalidRequest,
                message: format!(
                    "judge '{judge}' cannot relate lessons (it does not export silt:judge/relations)"
                ),
                hint: Some("use lexical, or review and apply judgments yourself".into()),
            });
        }
        let (s, undoable) = self.sleep_apart(&judge, self.now(), judged).await?;
        let candidates = self
            .runtime
            .ledger_vectors_from(&judge, self.config.ledger_embedder().as_deref())
            .await
            .map_err(ToolError::from)?
            .describe();
        let usage = self.runtime.judged_by(&judge)?.usage_fields();
        Ok(
            json!({"ok": true, "merged": s.merged, "contradictions_resolved": s.contradictions_resolved,
                   "generalized": s.generalized, "held_for_review": s.held_for_review,
                   "undoable": undoable, "candidates": candidates, "usage": usage}),
        )
    }

    /// A sleep pass asking `judge` that holds neither the ledger's lock nor
    /// this server's handle while the judge works: it sleeps a snapshot on
    /// an engine instance of its own and commits if nothing it changed moved
    /// meanwhile. A ledger too busy for that three times running is slept
    /// under the lock. Returns the report and the undoable steps.
    async fn sleep_apart(
        &self,
        judge: &str,
        now: f64,
        judged: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> Result<(SleepReport, Vec<Value>), ToolError> {
        for _ in 0..SLEEP_ATTEMPTS {
            let started = std::time::Instant::now();
            let snapshot = self
                .service()
                .await?
                .sleep_snapshot(judge)
                .map_err(ToolError::from)?;
            if let Some(j) = &judged {
                j.store(0, std::sync::atomic::Ordering::Relaxed);
            }
            let read = started.elapsed();
            let (report, change) =
                LedgerService::sleep_apart(&self.runtime, &snapshot, now, judged.clone())
                    .await
                    .map_err(ToolError::from)?;
            let slept = started.elapsed();
            let mut service = self.service().await?;
            match service
                .commit_sleep(&snapshot, &change)
                .map_err(ToolError::from)?
            {
                SleepCommit::Done(events) => {
                    let steps = undoable(&events, service.store.last_event_seqs());
                    // the pass's own stages are logged by the engine
                    tracing::debug!(
                        "sleep apart: read {:.3} s, engine {:.3} s, write {:.3} s",
                        read.as_secs_f64(),
                        (slept - read).as_secs_f64(),
                        (started.elapsed() - slept).as_secs_f64()
                    );
                    return Ok((report, steps));
                }
                SleepCommit::Stale => continue,
            }
        }
        let mut service = self.service().await?;
        let default = self.config.judge_for("sediment_sleep").to_string();
        service.set_judge(judge);
        let outcome = service.sleep(now, judged).await;
        // a per-call judge applies to this call only
        service.set_judge(&default);
        let (report, events) = outcome.map_err(ToolError::from)?;
        let steps = undoable(&events, service.store.last_event_seqs());
        Ok((report, steps))
    }

    /// Takes back a merge or a resolved contradiction.
    pub async fn undo(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: UndoParams = parse(args)?;
        let now = self.now();
        let undo = self
            .service()
            .await?
            .undo(p.event, now)
            .map_err(ToolError::from)?;
        Ok(json!({
            "ok": true,
            "undone": p.event,
            "restored": undo.entries.iter().map(|e| e.view(now)).collect::<Vec<_>>(),
            "partial": undo.partial,
        }))
    }

    /// Deletes a lesson for good; the log keeps its id and the reason.
    pub async fn forget(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: ForgetParams = parse(args)?;
        // longer than a capture's ids: a file an older silt imported may
        // hold one, and forgetting is how it goes
        let trimmed = text("id", &p.id, MAX_ROW_ID_BYTES).map_err(ToolError::invalid)?;
        let reason = match &p.reason {
            Some(r) => text("reason", r, MAX_TEXT_CHARS).map_err(ToolError::invalid)?,
            None => "forgotten on request".into(),
        };
        let now = self.now();
        let mut service = self.service().await?;
        // such a file may also hold a key with spaces at its ends: taken
        // as given when, trimmed, it names nothing
        let has = |id: &str| service.store.contains(id).map_err(ToolError::from);
        let id = if trimmed != p.id && !has(&trimmed)? && has(&p.id)? {
            p.id
        } else {
            trimmed
        };
        let gone = service.forget(&id, &reason, now).map_err(ToolError::from)?;
        Ok(json!({
            "ok": true,
            "forgotten": id,
            "was": gone.map(|e| e.view(now)),
        }))
    }

    /// sediment_review_candidates: a page of undecided pairs and how many
    /// remain.
    pub async fn review(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: ReviewParams = parse(args)?;
        let limit = range("limit", p.limit, 1, 50)?;
        let mut service = self.service().await?;
        let page = service.review_page(limit).await.map_err(ToolError::from)?;
        let by = self.runtime.judged_by(service.judge())?;
        drop(service);
        // compact: a page of 10 ordinary lessons is about 3k characters
        let pairs: Vec<Value> = page
            .pairs
            .iter()
            .map(|c| {
                let mut pair = json!({"a_id": c.a_id, "b_id": c.b_id, "a": c.a, "b": c.b});
                suspicion(&mut pair, "suspected", &by, c.relation, c.probability);
                if c.held {
                    pair["held"] = json!(true);
                }
                pair
            })
            .collect();
        Ok(
            json!({"ok": true, "count": pairs.len(), "remaining": page.remaining, "pairs": pairs,
                  "usage": by.usage_fields()}),
        )
    }

    /// sediment_apply_judgments: applies 1 to 100 verdicts, reporting each
    /// one skipped.
    pub async fn apply(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: ApplyParams = parse(args)?;
        if p.judgments.is_empty() || p.judgments.len() > 100 {
            return Err(ToolError::invalid(format!(
                "judgments must hold 1 to 100 verdicts, got {}",
                p.judgments.len()
            )));
        }
        let judgments: Vec<Judgment> = p
            .judgments
            .iter()
            .map(|j| {
                Ok(Judgment {
                    a_id: text("a_id", &j.a_id, MAX_ID_CHARS).map_err(ToolError::invalid)?,
                    b_id: text("b_id", &j.b_id, MAX_ID_CHARS).map_err(ToolError::invalid)?,
                    verdict: match j.verdict {
                        VerdictParam::Merge => Verdict::Merge,
                        VerdictParam::Contradict => Verdict::Contradict,
                        VerdictParam::Distinct => Verdict::Distinct,
                    },
                })
            })
            .collect::<Result<_, ToolError>>()?;
        let r = self
            .service()
            .await?
            .apply_judgments(&judgments, self.now())
            .await
            .map_err(ToolError::from)?;
        let skipped: Vec<Value> = r
            .skipped
            .iter()
            .map(|s| json!({"a_id": s.a_id, "b_id": s.b_id, "reason": s.reason}))
            .collect();
        Ok(
            json!({"ok": true, "merged": r.merged, "contradictions_resolved": r.contradictions_resolved,
                  "skipped": skipped.len(), "skipped_judgments": skipped}),
        )
    }

    /// sediment_stats: counts and entries by effective confidence, with the
    /// log's telemetry when asked.
    pub async fn stats(&self, args: Map<String, Value>) -> ToolOutcome {
        let p: StatsParams = parse(args)?;
        let limit = range("limit", p.limit, 1, 500)?;
        let now = self.now();
        let mut service = self.service().await?;
        let entries = service
            .stats(p.include_retired, limit, now)
            .await
            .map_err(ToolError::from)?;
        let all = service.store.all().map_err(ToolError::from)?;
        let active = all
            .iter()
            .filter(|e| e.status == silt_core::ledger::Status::Active)
            .count();
        let mut out = json!({
            "ok": true,
            "path": silt_ledger_service::store::describe(&self.path),
            "total": all.len(),
            "active": active,
            "entries": entries.iter().map(|e| view(e, now)).collect::<Vec<_>>(),
        });
        if p.telemetry {
            out["telemetry"] = telemetry(&service.store, &all).map_err(|e| format!("{e:#}"))?;
        }
        Ok(out)
    }
}

/// The steps of a sleep pass that retired a lesson, with the log numbers
/// `sediment_undo` takes back.
fn undoable(events: &[silt_core::ledger::events::Event], seqs: &[i64]) -> Vec<Value> {
    use silt_core::ledger::events::EventKind;
    events
        .iter()
        .zip(seqs)
        .filter(|(e, _)| {
            matches!(
                e.kind,
                EventKind::Merged | EventKind::Resolved | EventKind::Abstracted
            )
        })
        .map(|(e, seq)| json!({"event": seq, "kind": e.kind, "kept": e.id, "retired": e.others}))
        .collect()
}

/// What the judge suspects of a pair, as `suspected` (`relation` in a
/// capture's near lessons) and `p`. A judge that reads only words gives
/// "distinct" (or "sibling") to whatever shares few words, at a
/// probability that reads as sure; that is no finding, so it is left
/// out, and its merge or contradict is kept as the lean it is (`usage`
/// says the judge reads words).
fn suspicion(pair: &mut Value, key: &str, by: &JudgedBy, relation: Verdict, p: f64) {
    let leans = matches!(relation, Verdict::Merge | Verdict::Contradict);
    if by.reads_meaning || leans {
        pair[key] = json!(verdict_word(relation));
        pair["p"] = json!(p);
    }
}

/// A relation as the tools say it.
fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Merge => "merge",
        Verdict::Contradict => "contradict",
        Verdict::Sibling => "sibling",
        Verdict::Distinct => "distinct",
    }
}

/// What fires most, what was pruned (and why), and how the ledger drifted.
pub fn telemetry(store: &Store, all: &[silt_core::ledger::Entry]) -> anyhow::Result<Value> {
    let mut firing: Vec<&silt_core::ledger::Entry> =
        all.iter().filter(|e| e.hit_count > 0).collect();
    firing.sort_by_key(|e| std::cmp::Reverse(e.hit_count));
    let pruned: Vec<Value> = all
        .iter()
        .filter(|e| e.status == silt_core::ledger::Status::Retired)
        .take(50)
        .map(|e| json!({"id": e.id, "when": e.when, "note": e.note}))
        .collect();
    let counts: Map<String, Value> = store
        .event_counts()?
        .into_iter()
        .map(|(k, n)| (k, json!(n)))
        .collect();
    Ok(json!({
        "fires_most": firing.iter().take(10).map(|e| json!({"id": e.id, "when": e.when, "hits": e.hit_count})).collect::<Vec<_>>(),
        "pruned": pruned,
        "events": counts,
        "drift": drift(store)?,
    }))
}

/// Days of the event log that saw activity (the last 30): what happened
/// each day and how it moved the number of active lessons.
fn drift(store: &Store) -> anyhow::Result<Vec<Value>> {
    use silt_core::ledger::events::{EventKind, day_label};
    let mut days: Vec<(i64, Map<String, Value>, i64)> = Vec::new();
    for (day, kind, n, others) in store.daily_events(30)? {
        if days.last().is_none_or(|d| d.0 != day) {
            days.push((day, Map::new(), 0));
        }
        let today = days.last_mut().expect("pushed above");
        if let Ok(k) = serde_json::from_value::<EventKind>(Value::String(kind.clone())) {
            today.2 += k.active_delta(n, others);
        }
        today.1.insert(kind, json!(n));
    }
    Ok(days
        .into_iter()
        .map(|(day, counts, net)| json!({"day": day_label(day), "events": counts, "net_active": net}))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use silt_core::ledger::Status;

    /// A verdict's ids are read as every other id argument is: an
    /// all-digit id a client parsed into a number comes back as its digits.
    #[test]
    fn a_verdict_takes_ids_a_client_parsed_as_numbers() {
        let j: JudgmentParam = serde_json::from_value(
            serde_json::json!({"a_id": 123, "b_id": "b7", "verdict": "distinct"}),
        )
        .unwrap();
        assert_eq!((j.a_id.as_str(), j.b_id.as_str()), ("123", "b7"));
        let fraction = serde_json::json!({"a_id": 1.5, "b_id": "b7", "verdict": "merge"});
        assert!(serde_json::from_value::<JudgmentParam>(fraction).is_err());
    }

    /// Ledger tools on a ledger in `dir`, auto-sleep at `pressure`.
    fn tools_in(dir: &std::path::Path, pressure: f64) -> Arc<LedgerTools> {
        Arc::new(bare_tools_in(dir, pressure))
    }

    fn bare_tools_in(dir: &std::path::Path, pressure: f64) -> LedgerTools {
        let config = Config {
            cache_dir: Some(dir.join("cache")),
            ..Default::default()
        };
        let app = silt_runtime::app::App::with_config(config, true).unwrap();
        let mut tools = LedgerTools::at(
            app.runtime.clone(),
            app.config.clone(),
            dir.join("ledger.db"),
            None,
            None,
        );
        tools.sleep_pressure = Some(pressure);
        tools
    }

    /// A key with spaces at its ends (a silt before the limits imported
    /// files unchecked) is forgotten as given; a known key given with
    /// stray spaces is forgotten trimmed, as before.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_key_with_spaces_at_its_ends_can_be_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let tools = tools_in(dir.path(), 0.0);
        let entry = |id: &str| {
            silt_core::ledger::Entry::new(id.into(), "w".into(), "p".into(), 0.5, 0, 1e9)
        };
        {
            let mut service = tools.service().await.unwrap();
            service.store.begin_write().unwrap();
            service
                .store
                .commit(&[entry(" old key "), entry("abc")], &[])
                .unwrap();
        }
        let forget = |id: &str| {
            let tools = tools.clone();
            let args = json!({"id": id}).as_object().unwrap().clone();
            async move { tools.forget(args).await }
        };
        assert!(forget("old key").await.is_err(), "no such key");
        let out = forget(" old key ").await.unwrap();
        assert_eq!(out["forgotten"], " old key ");
        let out = forget(" abc ").await.unwrap();
        assert_eq!(out["forgotten"], "abc");
        let service = tools.service().await.unwrap();
        assert!(service.store.all().unwrap().is_empty());
    }

    /// A pass computed apart from the lock is written over recalls of the
    /// lessons it changed, keeping their hits, and computed again over a
    /// confirm of one of them.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_pass_is_written_over_recalls_but_not_over_a_confirm() {
        let dir = tempfile::tempdir().unwrap();
        let tools = tools_in(dir.path(), 0.0);
        let args = |v: Value| v.as_object().unwrap().clone();
        let mut ids = vec![];
        for prefer in [
            "inject explicit step-by-step CoT",
            "do not inject CoT, keep it terse",
        ] {
            let when = "non-reasoning GPT target";
            let out = tools
                .capture(args(json!({"when": when, "prefer": prefer})))
                .await
                .unwrap();
            ids.push(out["captured"]["id"].as_str().unwrap().to_string());
        }
        let rows = async |tools: &LedgerTools| {
            let service = tools.service().await.unwrap();
            service.store.changed_since(0).unwrap()
        };
        let apart = async |tools: &LedgerTools| {
            let snapshot = tools
                .service()
                .await
                .unwrap()
                .sleep_snapshot("lexical")
                .unwrap();
            let (report, change) =
                LedgerService::sleep_apart(&tools.runtime, &snapshot, tools.now(), None)
                    .await
                    .unwrap();
            assert_eq!(report.contradictions_resolved, 1);
            (snapshot, change)
        };
        let recall = args(json!({"context": "non-reasoning GPT target", "k": 5}));
        let commit = async |tools: &LedgerTools, snapshot, change| {
            tools
                .service()
                .await
                .unwrap()
                .commit_sleep(snapshot, change)
                .unwrap()
        };

        // a confirm between the snapshot and the commit: computed again
        let (snapshot, change) = apart(&tools).await;
        tools
            .feedback(args(json!({"id": ids[0]})), false)
            .await
            .unwrap();
        let outcome = commit(&tools, &snapshot, &change).await;
        assert!(matches!(outcome, SleepCommit::Stale));
        assert!(
            rows(&tools)
                .await
                .iter()
                .all(|e| e.status == Status::Active)
        );

        // recalls between them: written, with the recalls' hits
        let (snapshot, change) = apart(&tools).await;
        let hits_before: Vec<u64> = rows(&tools).await.iter().map(|e| e.hit_count).collect();
        for _ in 0..2 {
            let out = tools.recall(recall.clone()).await.unwrap();
            assert_eq!(out["count"], 2, "{out}");
        }
        let outcome = commit(&tools, &snapshot, &change).await;
        assert!(matches!(outcome, SleepCommit::Done(_)));
        let after = rows(&tools).await;
        assert_eq!(
            after.iter().filter(|e| e.status == Status::Active).count(),
            1,
            "the contradiction was resolved"
        );
        for (e, before) in after.iter().zip(hits_before) {
            assert!(e.hit_count >= before + 2, "{} lost its recalls", e.id);
        }
    }

    /// While an auto-sleep pass runs, a capture over the threshold starts
    /// no second one; the first capture after it does.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_capture_starts_no_pass_while_one_is_under_way() {
        let dir = tempfile::tempdir().unwrap();
        let tools = tools_in(dir.path(), 0.2);
        let capture = async |tools: &Arc<LedgerTools>, when: &str, prefer: &str| {
            let args = json!({"when": when, "prefer": prefer});
            tools
                .capture(args.as_object().unwrap().clone())
                .await
                .unwrap()
        };
        // 1 candidate pair among 4, then 5, active lessons: 0.25, then 0.2
        let lessons = [
            ("deploying to production", "run the smoke tests first"),
            ("writing release notes", "link the changelog"),
            (
                "non-reasoning GPT target",
                "inject explicit step-by-step CoT",
            ),
        ];
        for (when, prefer) in lessons {
            capture(&tools, when, prefer).await;
        }
        let turn = tools.auto_sleeping.lock().await;
        let out = capture(
            &tools,
            "non-reasoning GPT target",
            "do not inject CoT, keep it terse",
        )
        .await;
        assert!(out.get("auto_sleep").is_none(), "{out}");
        drop(turn);
        let out = capture(&tools, "reviewing a pull request", "read the tests first").await;
        assert_eq!(out["auto_sleep"]["contradictions_resolved"], 1, "{out}");
    }

    /// A server's capture that starts a pass answers before the pass has
    /// run (on one thread the spawned pass cannot run until the test
    /// awaits), and the next capture says what it did.
    #[tokio::test(flavor = "current_thread")]
    async fn a_server_answers_the_capture_before_its_pass_runs() {
        let dir = tempfile::tempdir().unwrap();
        let tools = Arc::new(bare_tools_in(dir.path(), 0.2).sleeping_in_background());
        let capture = async |when: &str, prefer: &str| {
            let args = json!({"when": when, "prefer": prefer});
            tools
                .capture(args.as_object().unwrap().clone())
                .await
                .unwrap()
        };
        capture("deploying to production", "run the smoke tests first").await;
        capture("writing release notes", "link the changelog").await;
        capture(
            "non-reasoning GPT target",
            "inject explicit step-by-step CoT",
        )
        .await;
        // 1 candidate pair among 4 active lessons: a pass starts
        let out = capture(
            "non-reasoning GPT target",
            "do not inject CoT, keep it terse",
        )
        .await;
        assert_eq!(out["auto_sleep"]["started"], true, "{out}");
        assert!(out["auto_sleep"].get("merged").is_none(), "{out}");
        let active = |path: &std::path::Path| {
            Store::open(path)
                .unwrap()
                .all()
                .unwrap()
                .iter()
                .filter(|e| e.status == Status::Active)
                .count()
        };
        let path = dir.path().join("ledger.db");
        assert_eq!(active(&path), 4, "the pass ran before the answer");
        tools.settle().await;
        assert_eq!(active(&path), 3, "the pass resolved the contradiction");
        let out = capture("reviewing a pull request", "read the tests first").await;
        assert_eq!(
            out["last_auto_sleep"]["contradictions_resolved"], 1,
            "{out}"
        );
        assert_eq!(
            out["last_auto_sleep"]["undoable"].as_array().unwrap().len(),
            1
        );
        let out = capture("choosing a font for slides", "use a sans serif face").await;
        assert!(out.get("last_auto_sleep").is_none(), "told once: {out}");
    }

    /// Recalls and captures that wait for the ledger together are run in
    /// one commit, each answered with its own result, and the kept pair
    /// count adds every new lesson's pairs once.
    #[tokio::test(flavor = "multi_thread")]
    async fn waiting_recalls_and_captures_share_one_commit() {
        let dir = tempfile::tempdir().unwrap();
        // the check runs (and keeps its count) but never sleeps
        let tools = tools_in(dir.path(), 1e9);
        let args = |v: Value| v.as_object().unwrap().clone();
        for (when, prefer) in [
            (
                "editing the parser in repo r1",
                "run the focused tests first",
            ),
            ("editing the lexer in repo r1", "keep the change small"),
            ("deploying the API in repo r1", "take a backup first"),
        ] {
            tools
                .capture(args(json!({"when": when, "prefer": prefer})))
                .await
                .unwrap();
        }
        let version = || async { tools.service().await.unwrap().store.version().unwrap() };
        let before = version().await;
        let held = tools.service().await.unwrap();
        let mut calls = Vec::new();
        for i in 0..12 {
            let tools = tools.clone();
            calls.push(tokio::spawn(async move {
                let a = if i % 3 == 0 {
                    json!({"context": "editing the parser", "k": 5})
                } else {
                    json!({"when": format!("editing the parser in repo q{i}"),
                           "prefer": format!("run the focused tests first, take {i}")})
                };
                let out = if i % 3 == 0 {
                    tools.recall(a.as_object().unwrap().clone()).await
                } else {
                    tools.capture(a.as_object().unwrap().clone()).await
                };
                (i, out.unwrap())
            }));
        }
        let started = std::time::Instant::now();
        while tools.waiting.lock().unwrap().len() < 12 {
            assert!(started.elapsed().as_secs() < 30, "the calls never queued");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        drop(held);
        let mut ids = std::collections::HashSet::new();
        for call in calls {
            let (i, out) = call.await.unwrap();
            assert_eq!(out["ok"], true, "{out}");
            if i % 3 == 0 {
                assert!(out["count"].as_u64().unwrap() >= 1, "{out}");
            } else {
                assert!(
                    out["captured"]["prefer"]
                        .as_str()
                        .unwrap()
                        .ends_with(&format!("take {i}")),
                    "each capture gets its own lesson back: {out}"
                );
                ids.insert(out["captured"]["id"].as_str().unwrap().to_string());
            }
        }
        assert_eq!(ids.len(), 8, "eight distinct lessons");
        assert_eq!(version().await, before + 1, "one commit for the twelve");
        let mut service = tools.service().await.unwrap();
        assert_eq!(service.store.all().unwrap().len(), 11);
        let kept = service
            .store
            .pressure()
            .unwrap()
            .expect("the count is kept");
        let truth = service.recount().await.unwrap();
        assert_eq!(kept.pairs, u64::from(truth.candidate_pairs));
        assert!(
            truth.candidate_pairs > 8,
            "the new lessons pair with each other"
        );
    }

    /// The caller whose turn it is to run the waiting calls may go away
    /// at any moment: the others are still answered, each lesson stored
    /// once, and the one that went away is stored whole or not at all.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_batch_whose_runner_goes_away_still_answers_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let tools = tools_in(dir.path(), 0.0);
        let capture = |i: usize| {
            let tools = tools.clone();
            tokio::spawn(async move {
                let a = json!({"when": format!("situation {i}"), "prefer": format!("action {i}")});
                tools.capture(a.as_object().unwrap().clone()).await
            })
        };
        for round in 0..20 {
            let held = tools.service().await.unwrap();
            // the first to wait for the lock runs the batch
            let first = capture(round * 10);
            while tools.waiting.lock().unwrap().is_empty() {
                tokio::task::yield_now().await;
            }
            let others: Vec<_> = (1..4).map(|i| capture(round * 10 + i)).collect();
            while tools.waiting.lock().unwrap().len() < 4 {
                tokio::task::yield_now().await;
            }
            drop(held);
            // a varying moment: before, during or after its batch
            for _ in 0..round {
                tokio::task::yield_now().await;
            }
            first.abort();
            for call in others {
                let out = call.await.unwrap().unwrap();
                assert_eq!(out["ok"], true, "{out}");
            }
        }
        let rows = tools.service().await.unwrap().store.all().unwrap();
        let mut whens: Vec<&str> = rows.iter().map(|e| e.when.as_str()).collect();
        whens.sort_unstable();
        let before = whens.len();
        whens.dedup();
        assert_eq!(whens.len(), before, "a lesson stored twice");
        for round in 0..20 {
            for i in 1..4 {
                let when = format!("situation {}", round * 10 + i);
                assert!(whens.contains(&when.as_str()), "{when} lost");
            }
        }
        // a runner that took the waiting calls and went away before its
        // commit (its batch dropped with it): the call left behind finds
        // its answer gone and runs alone
        let held = tools.service().await.unwrap();
        let left = capture(999);
        while tools.waiting.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        drop(std::mem::take(&mut *tools.waiting.lock().unwrap()));
        drop(held);
        let out = left.await.unwrap().unwrap();
        assert_eq!(out["captured"]["when"], "situation 999", "{out}");
        let rows = tools.service().await.unwrap().store.all().unwrap();
        assert_eq!(rows.iter().filter(|e| e.when == "situation 999").count(), 1);
        // every stored lesson is whole and the engine agrees with the store
        let out = tools
            .stats(json!({}).as_object().unwrap().clone())
            .await
            .unwrap();
        assert_eq!(
            out["active"].as_u64().unwrap() as usize,
            rows.len(),
            "{out}"
        );
    }
}
