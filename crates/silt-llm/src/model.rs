//! Loading a GGUF model into candle's quantized llama, and running it to
//! the distribution of its next token.
//!
//! Weights stored in a type without a WebAssembly SIMD kernel in candle
//! (Q4_1, Q5_x, ...) are requantized to Q8_0 as they load: SmolLM2's
//! Q4_1 file runs about 5x faster that way (measured natively: 22–25
//! against 107–155 prompt tokens/s), and Q8_0 holds the Q4_1 values to
//! within its own rounding (top-5 log-probabilities within 0.17 of
//! llama.cpp's on the same file).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::{self, ModelWeights};
use silt_core::closed::{Prompt, TopToken};
use silt_core::types::JudgeError;
use tokenizers::Tokenizer;

use crate::gguf::Gguf;
use crate::template::ChatTemplate;

fn internal(e: impl std::fmt::Display) -> JudgeError {
    JudgeError::Internal(e.to_string())
}

/// Weight types candle multiplies with WebAssembly SIMD (and AVX/NEON):
/// kept as they are. Every other 2-D weight becomes Q8_0.
const FAST: &[GgmlDType] = &[
    GgmlDType::F32,
    GgmlDType::Q4_0,
    GgmlDType::Q8_0,
    GgmlDType::Q2K,
    GgmlDType::Q4K,
    GgmlDType::Q6K,
    GgmlDType::Q8K,
];

/// A loaded model: weights, tokenizer and chat template.
pub struct Model {
    /// The GGUF file it was loaded from.
    pub path: PathBuf,
    /// The weights as loaded, slow types already Q8_0; each run starts
    /// from a clone, so its key/value cache stays empty.
    pub weights: ModelWeights,
    /// The file's own vocabulary, or the `tokenizer.json` beside it.
    pub tokenizer: Tokenizer,
    /// The file's chat template, which turns a prompt into the text run.
    pub template: ChatTemplate,
    /// Prepended to every prompt when the file asks for it
    /// (`tokenizer.ggml.add_bos_token`) and the template did not print it.
    bos: Option<u32>,
    /// The model's context length, in tokens.
    pub context: usize,
    /// How many weight tensors were requantized to Q8_0 on load.
    pub requantized: usize,
}

/// The one `.gguf` file in `dir`.
pub fn find_gguf(dir: &Path) -> Result<PathBuf, JudgeError> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| JudgeError::Unavailable(format!("cannot list {} ({e})", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(JudgeError::Unavailable(format!(
            "{} holds no .gguf file; install a model with `silt models install smollm2`",
            dir.display()
        ))),
        _ => Err(JudgeError::Unavailable(format!(
            "{} holds {} .gguf files; keep one model per folder",
            dir.display(),
            found.len()
        ))),
    }
}

impl Model {
    /// Loads the GGUF model at `path`.
    pub fn load(path: &Path) -> Result<Model, JudgeError> {
        let gguf = Gguf::open(path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let tokenizer = crate::tokenizer::load(&gguf, dir)?;
        let token_text = |key: &str| {
            gguf.u32(key)
                .and_then(|id| tokenizer.id_to_token(id))
                .unwrap_or_default()
        };
        let source = gguf.string("tokenizer.chat_template").ok_or_else(|| {
            JudgeError::Unsupported(format!(
                "{}: the file carries no chat template (tokenizer.chat_template); use an \
                 instruct model's GGUF",
                path.display()
            ))
        })?;
        let template = ChatTemplate::new(
            &source,
            &token_text("tokenizer.ggml.bos_token_id"),
            &token_text("tokenizer.ggml.eos_token_id"),
        )?;
        let bos = match gguf.bool("tokenizer.ggml.add_bos_token") {
            Some(true) => gguf.u32("tokenizer.ggml.bos_token_id"),
            _ => None,
        };
        // candle's rotary table stops at MAX_SEQ_LEN positions
        let context = (gguf.u32("llama.context_length").unwrap_or(2048) as usize)
            .min(quantized_llama::MAX_SEQ_LEN);
        let (weights, requantized) = load_weights(gguf)?;
        Ok(Model {
            path: path.to_path_buf(),
            weights,
            tokenizer,
            template,
            bos,
            context,
            requantized,
        })
    }

    /// The token ids of a rendered prompt.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, JudgeError> {
        let encoding = self.tokenizer.encode_fast(text, false).map_err(internal)?;
        let mut ids = Vec::with_capacity(encoding.len() + 1);
        if let Some(bos) = self.bos
            && encoding.get_ids().first() != Some(&bos)
        {
            ids.push(bos);
        }
        ids.extend_from_slice(encoding.get_ids());
        Ok(ids)
    }

    /// A prompt's tokens, and how many of them are its shared head
    /// (`Prompt::shared`): the tokens the head alone encodes to, as far as
    /// they agree with the whole prompt's (a BPE merge may straddle the
    /// boundary; the head then ends before it).
    pub fn prompt_tokens(&self, prompt: &Prompt) -> Result<(Vec<u32>, usize), JudgeError> {
        let text = self.template.render(prompt)?;
        let tokens = self.encode(&text)?;
        let head = match text.find(&prompt.user) {
            Some(start) if prompt.shared > 0 => {
                let head = self.encode(&text[..start + prompt.shared])?;
                head.iter().zip(&tokens).take_while(|(a, b)| a == b).count()
            }
            // the template rewrote the message: nothing is shared
            _ => 0,
        };
        Ok((tokens, head))
    }

    /// The `k` most probable next tokens after a run ended in `logits`,
    /// as text with their log-probabilities.
    pub fn top_tokens(&self, logits: &Tensor, k: usize) -> Result<Vec<TopToken>, JudgeError> {
        let logits: Vec<f32> = logits
            .flatten_all()
            .and_then(|t| t.to_vec1())
            .map_err(internal)?;
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let log_sum = logits
            .iter()
            .map(|&l| f64::from(l - max).exp())
            .sum::<f64>()
            .ln()
            + f64::from(max);
        let mut order: Vec<usize> = (0..logits.len()).collect();
        let k = k.min(order.len());
        order.select_nth_unstable_by(k.saturating_sub(1), |&a, &b| {
            logits[b].total_cmp(&logits[a])
        });
        order.truncate(k);
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
        order
            .into_iter()
            .map(|id| {
                Ok(TopToken {
                    token: self
                        .tokenizer
                        .decode(&[id as u32], false)
                        .map_err(internal)?,
                    logprob: f64::from(logits[id]) - log_sum,
                })
            })
            .collect()
    }
}

/// The model's weights, with slow weight types requantized to Q8_0; the
/// number requantized. Takes the header `Gguf::open` already read.
fn load_weights(gguf: Gguf) -> Result<(ModelWeights, usize), JudgeError> {
    let Gguf {
        path,
        content,
        mut reader,
    } = gguf;
    let device = Device::Cpu;
    let path = path.display().to_string();
    let failed = |e: candle_core::Error| {
        JudgeError::Unavailable(format!("{path}: cannot load the weights ({e})"))
    };
    let slow: Vec<String> = content
        .tensor_infos
        .iter()
        .filter(|(_, t)| !FAST.contains(&t.ggml_dtype) && requantizable(t.shape.dims()))
        .map(|(name, _)| name.clone())
        .collect();
    if slow.is_empty() {
        let weights = ModelWeights::from_gguf(content, &mut reader, &device).map_err(failed)?;
        return Ok((weights, 0));
    }
    // Rewrite the file in memory with the slow tensors as Q8_0, then load
    // that: candle's loader reads tensors from a reader, so this is the
    // one place to change their type.
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(names.len());
    for name in names {
        let t = content.tensor(&mut reader, name, &device).map_err(failed)?;
        let t = if slow.contains(name) {
            let values = t.dequantize(&device).map_err(failed)?;
            QTensor::quantize(&values, GgmlDType::Q8_0).map_err(failed)?
        } else {
            t
        };
        tensors.push((name.clone(), t));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    // sized up front: doubling a 145 MB buffer would need both copies
    let bytes: usize = refs
        .iter()
        .map(|(_, t)| t.storage_size_in_bytes() + 32)
        .sum();
    let mut buffer = Cursor::new(Vec::with_capacity(bytes + (8 << 20)));
    gguf_file::write(&mut buffer, &metadata, &refs).map_err(failed)?;
    drop(refs);
    drop(tensors);
    buffer.set_position(0);
    let content = Content::read(&mut buffer).map_err(failed)?;
    let weights = ModelWeights::from_gguf(content, &mut buffer, &device).map_err(failed)?;
    Ok((weights, slow.len()))
}

/// Q8_0 packs rows in blocks of 32: only matrices whose rows divide.
fn requantizable(dims: &[usize]) -> bool {
    dims.len() == 2 && dims[1].is_multiple_of(GgmlDType::Q8_0.block_size())
}
