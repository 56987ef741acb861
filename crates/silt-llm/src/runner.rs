//! Running a batch of prompts to their first answer token, computing what
//! they share only once.
//!
//! The prompts of one question differ only after the options (every item
//! is asked the same question), so the model runs the common head once,
//! keeps its key/value cache, and continues each prompt from a copy.
//! Attention is causal, so the cache after a head depends on the head
//! alone and the answers are those of whole runs, up to rounding: candle
//! picks its matmul kernel by the number of rows, so a prompt run in two
//! pieces rounds differently (measured: label log-probabilities move by
//! up to 0.08 on SmolLM2 with Q8_0 weights). Each prompt is split where
//! its own text says (`Prompt::shared`), never by what else is in the
//! batch, so an item gets the same answer in any batch.
//!
//! Heads are kept between calls (a few, least recently used first out),
//! so a ledger's sleep pass, which asks the same question batch after
//! batch, pays for its head once.

use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::ModelWeights;
use silt_core::closed::TopToken;
use silt_core::types::JudgeError;

use crate::model::Model;

/// Fewer shared tokens than this are not worth a snapshot.
const MIN_SHARED: usize = 8;
/// Prefix snapshots kept between calls. Each costs its tokens' keys and
/// values: 46 KB a token for SmolLM2-135M (30 layers, 3 KV heads of 64).
const MAX_SNAPSHOTS: usize = 16;

/// The model's state after a prefix.
struct Snapshot {
    tokens: Vec<u32>,
    weights: ModelWeights,
    used: u64,
}

/// Token counts of the runs so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tokens the model ran.
    pub run: u64,
    /// Prompt tokens served from a shared prefix instead.
    pub reused: u64,
}

/// Runs prompts to their next-token distribution.
pub struct Runner {
    snapshots: Vec<Snapshot>,
    clock: u64,
    /// Whether to share prefixes (off only to measure what sharing saves).
    pub share: bool,
    /// Tokens run and reused since the runner was made.
    pub counts: Counts,
}

impl Default for Runner {
    fn default() -> Self {
        Runner {
            snapshots: Vec::new(),
            clock: 0,
            share: true,
            counts: Counts::default(),
        }
    }
}

fn internal(e: candle_core::Error) -> JudgeError {
    JudgeError::Internal(format!("the model failed to run ({e})"))
}

/// Runs `tokens` on `weights`, whose cache already holds `at` tokens; the
/// logits of the last one.
fn forward(weights: &mut ModelWeights, tokens: &[u32], at: usize) -> Result<Tensor, JudgeError> {
    let input = Tensor::new(tokens, &Device::Cpu)
        .and_then(|t| t.unsqueeze(0))
        .map_err(internal)?;
    weights.forward(&input, at).map_err(internal)
}

impl Runner {
    /// The `k` most probable first tokens after each prompt, each run
    /// from the kept state after its first `shared[i]` tokens.
    pub fn next_tokens(
        &mut self,
        model: &Model,
        prompts: &[Vec<u32>],
        shared: &[usize],
        k: usize,
    ) -> Result<Vec<Vec<TopToken>>, JudgeError> {
        for p in prompts {
            if p.is_empty() {
                return Err(JudgeError::Internal("an empty prompt".into()));
            }
            if p.len() > model.context {
                return Err(JudgeError::LimitExceeded(format!(
                    "a prompt of {} tokens; the model reads at most {}: shorten the question \
                     or its options",
                    p.len(),
                    model.context
                )));
            }
        }
        // at least the last token runs, and a short head is not worth keeping
        let shared: Vec<usize> = prompts
            .iter()
            .zip(shared)
            .map(|(p, &n)| match n.min(p.len() - 1) {
                n if n < MIN_SHARED || !self.share => 0,
                n => n,
            })
            .collect();
        let mut out = Vec::with_capacity(prompts.len());
        for (p, &n) in prompts.iter().zip(&shared) {
            let mut weights = match n {
                0 => model.weights.clone(),
                _ => self.head(model, &p[..n])?,
            };
            let logits = forward(&mut weights, &p[n..], n)?;
            self.counts.run += (p.len() - n) as u64;
            self.counts.reused += n as u64;
            out.push(model.top_tokens(&logits, k)?);
        }
        self.evict();
        Ok(out)
    }

    /// A copy of the state after `head`, run from the start the first
    /// time (never from a shorter head: the state must not depend on what
    /// ran before).
    fn head(&mut self, model: &Model, head: &[u32]) -> Result<ModelWeights, JudgeError> {
        self.clock += 1;
        if let Some(s) = self.snapshots.iter_mut().find(|s| s.tokens == head) {
            s.used = self.clock;
            return Ok(s.weights.clone());
        }
        let mut weights = model.weights.clone();
        forward(&mut weights, head, 0)?;
        self.counts.run += head.len() as u64;
        self.snapshots.push(Snapshot {
            tokens: head.to_vec(),
            weights: weights.clone(),
            used: self.clock,
        });
        Ok(weights)
    }

    fn evict(&mut self) {
        if self.snapshots.len() > MAX_SNAPSHOTS {
            self.snapshots.sort_by_key(|s| std::cmp::Reverse(s.used));
            self.snapshots.truncate(MAX_SNAPSHOTS);
        }
    }
}
