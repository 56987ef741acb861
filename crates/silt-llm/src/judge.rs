//! The language-model judge: silt's closed-question prompts
//! (`silt_core::closed`) run on a local model, each answer read from the
//! log-probabilities of its first token, exactly as the HTTP judge reads a
//! server's. One forward pass per prompt, no sampling.

use std::path::Path;

use silt_core::closed::{Debias, Outcome, Plan, ReadError, label_probabilities};
use silt_core::ledger::relate::{Lesson, RELATIONS};
use silt_core::types::{Answer, Item, Judge, JudgeError, JudgeInfo, Question, Response, Usage};
use silt_core::validate::validate_question;

use crate::model::Model;
use crate::runner::Runner;

/// How many next tokens are read for the labels (as many as OpenAI's API
/// returns, so both judges see the same candidates).
pub const TOP_TOKENS: usize = 20;

/// An item (or a lesson's WHEN or PREFER) longer than this many tokens is
/// cut to its first this-many: the judge reads the head of a long text.
/// It bounds a prompt's cost (a 135M model runs ~100 tokens/s in the
/// sandbox) and keeps every prompt inside the smallest models' context.
pub const MAX_ITEM_TOKENS: usize = 512;

/// A GGUF model judging closed questions.
pub struct LlmJudge {
    /// The loaded model.
    pub model: Model,
    /// Runs its prompts, keeping shared heads between calls.
    pub runner: Runner,
    /// How label bias is corrected; part of the judge's version (the
    /// answer cache's key), set once at load.
    pub debias: Debias,
    version: String,
}

impl LlmJudge {
    /// Loads the model at `path`; `debias` corrects its lean to some labels.
    pub fn load(path: &Path, debias: Debias) -> Result<LlmJudge, JudgeError> {
        let model = Model::load(path)?;
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(LlmJudge {
            model,
            runner: Runner::default(),
            debias,
            // the answer cache keys on this: another file or correction
            // never reuses these answers
            version: format!(
                "{}+{file}:{bytes}/{}",
                env!("CARGO_PKG_VERSION"),
                debias.name()
            ),
        })
    }

    /// `text`, cut to its first [`MAX_ITEM_TOKENS`] tokens.
    fn capped<'a>(&self, text: &'a str) -> Result<std::borrow::Cow<'a, str>, JudgeError> {
        // the text's own tokens: `Model::encode` would prepend a BOS on
        // models that ask for one, and decoding would put it in the item
        let encoding = self
            .model
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| JudgeError::Internal(e.to_string()))?;
        let ids = encoding.get_ids();
        if ids.len() <= MAX_ITEM_TOKENS {
            return Ok(text.into());
        }
        self.model
            .tokenizer
            .decode(&ids[..MAX_ITEM_TOKENS], false)
            .map(Into::into)
            .map_err(|e| JudgeError::Internal(e.to_string()))
    }

    /// Runs a plan's prompts; each item's outcome and the tokens read.
    fn run(&mut self, plan: &Plan) -> Result<(Vec<Outcome>, u64), JudgeError> {
        let mut prompts = Vec::with_capacity(plan.prompts.len());
        let mut shared = Vec::with_capacity(plan.prompts.len());
        for p in &plan.prompts {
            let (tokens, head) = self.model.prompt_tokens(p)?;
            prompts.push(tokens);
            shared.push(head);
        }
        let tokens = prompts.iter().map(|p| p.len() as u64).sum();
        let tops = self
            .runner
            .next_tokens(&self.model, &prompts, &shared, TOP_TOKENS)?;
        let labels = plan.labels();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        let read: Vec<_> = tops
            .iter()
            .map(|top| label_probabilities(top, &labels))
            .collect();
        let outcomes = plan.outcomes(&read).map_err(|e| match e {
            // a local run always has its logits
            ReadError::NoLogprobs => JudgeError::Internal("no log-probabilities".into()),
            other => JudgeError::Internal(other.to_string()),
        })?;
        Ok((outcomes, tokens))
    }

    /// Each pair's probabilities of the four relations, in
    /// [`RELATIONS`]' order.
    pub fn relate(
        &mut self,
        pairs: &[(Lesson<'_>, Lesson<'_>)],
    ) -> Result<Vec<[f64; 4]>, JudgeError> {
        let texts: Vec<[std::borrow::Cow<'_, str>; 4]> = pairs
            .iter()
            .map(|(a, b)| {
                Ok([
                    self.capped(a.when)?,
                    self.capped(a.prefer)?,
                    self.capped(b.when)?,
                    self.capped(b.prefer)?,
                ])
            })
            .collect::<Result<_, JudgeError>>()?;
        let lessons: Vec<(Lesson<'_>, Lesson<'_>)> = texts
            .iter()
            .map(|[aw, ap, bw, bp]| {
                (
                    Lesson {
                        when: aw,
                        prefer: ap,
                    },
                    Lesson {
                        when: bw,
                        prefer: bp,
                    },
                )
            })
            .collect();
        let plan = Plan::relate(&lessons, self.debias);
        let (outcomes, _) = self.run(&plan)?;
        Ok(outcomes
            .into_iter()
            .map(|o| {
                let p = o.probabilities(RELATIONS.len());
                [p[0], p[1], p[2], p[3]]
            })
            .collect())
    }
}

impl Judge for LlmJudge {
    fn info(&mut self) -> JudgeInfo {
        JudgeInfo {
            name: "llm".into(),
            version: self.version.clone(),
            deterministic: true,
            cost_per_million_input_tokens: 0.0,
            preferred_batch_size: 16,
        }
    }

    fn ask(&mut self, question: &Question, items: &[Item]) -> Result<Response, JudgeError> {
        validate_question(question).map_err(JudgeError::InvalidQuestion)?;
        let n = question.space.criteria().len();
        if n > silt_core::closed::prompt::MAX_OPTIONS {
            return Err(JudgeError::Unsupported(format!(
                "{n} options; this judge labels at most {}",
                silt_core::closed::prompt::MAX_OPTIONS
            )));
        }
        let texts = items
            .iter()
            .map(|i| self.capped(&i.text))
            .collect::<Result<Vec<_>, _>>()?;
        let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        let plan = Plan::ask(question, &texts, self.debias);
        let (outcomes, tokens) = self.run(&plan)?;
        let answers = outcomes
            .into_iter()
            .map(|o| Answer::from_probabilities(&question.space, o.probabilities(n)))
            .collect();
        Ok(Response {
            answers,
            usage: Usage {
                units: items.len() as u32,
                input_tokens: tokens,
                output_tokens: plan.prompts.len() as u64,
                cost_usd: 0.0,
            },
        })
    }
}
