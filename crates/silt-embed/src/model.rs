//! The two kinds of sentence encoder behind one judge, told apart by what
//! their folder holds, and loaded the same way natively and in the wasm
//! judge (through `std::fs`, which WASI confines to the granted folder).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use tokenizers::{Tokenizer, TruncationParams};

/// Tokens a transformer reads per text; longer texts are cut (the length
/// all-MiniLM-L6-v2 was trained to).
pub const MAX_TOKENS: usize = 256;

/// Texts run through the transformer together; sorted by length first, so
/// a batch pads little.
const BATCH: usize = 16;

/// Which kind of model a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A BERT-family sentence encoder: `config.json`, `tokenizer.json`,
    /// `model.safetensors`; mean pooling over the last layer.
    Transformer,
    /// A model2vec static model: one vector per token, averaged.
    Static,
}

/// Why a model could not be loaded or run.
#[derive(Debug)]
pub struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

fn err(context: impl std::fmt::Display) -> impl FnOnce(&dyn std::fmt::Display) -> ModelError {
    move |e| ModelError(format!("{context}: {e}"))
}

macro_rules! ctx {
    ($e:expr, $($fmt:tt)*) => {
        $e.map_err(|e| err(format!($($fmt)*))(&e))
    };
}

/// Reads the folder's config and says which kind it holds, or why neither.
pub fn detect(dir: &Path) -> Result<Kind, ModelError> {
    let has = |f: &str| dir.join(f).is_file();
    for f in ["tokenizer.json", "model.safetensors"] {
        if !has(f) {
            return Err(ModelError(format!(
                "{} has no {f}; a model folder needs tokenizer.json and model.safetensors (install one with `silt models install minilm`)",
                dir.display()
            )));
        }
    }
    let config: serde_json::Value = match std::fs::read(dir.join("config.json")) {
        Ok(bytes) => ctx!(
            serde_json::from_slice(&bytes),
            "{}/config.json is not JSON",
            dir.display()
        )?,
        Err(_) => serde_json::Value::Null,
    };
    let model_type = config["model_type"].as_str().unwrap_or_default();
    match model_type {
        "model2vec" => Ok(Kind::Static),
        "bert" => Ok(Kind::Transformer),
        "" => Err(ModelError(format!(
            "{}/config.json is missing or names no model_type; expected \"bert\" (a sentence transformer) or \"model2vec\" (a static model)",
            dir.display()
        ))),
        other => Err(ModelError(format!(
            "{} holds a '{other}' model; the embedding judge runs BERT-family encoders and model2vec static models",
            dir.display()
        ))),
    }
}

/// A loaded encoder of either kind (one per judge, so the size gap
/// between the variants costs nothing).
#[allow(clippy::large_enum_variant)]
pub enum Encoder {
    Transformer(Transformer),
    Static(StaticModel),
}

impl Encoder {
    /// Loads the model in `dir`, of whichever kind it holds.
    pub fn load(dir: &Path) -> Result<Encoder, ModelError> {
        Ok(match detect(dir)? {
            Kind::Transformer => Encoder::Transformer(Transformer::load(dir)?),
            Kind::Static => Encoder::Static(StaticModel::load(dir)?),
        })
    }

    pub fn kind(&self) -> Kind {
        match self {
            Encoder::Transformer(_) => Kind::Transformer,
            Encoder::Static(_) => Kind::Static,
        }
    }

    /// The folder it was loaded from.
    pub fn dir(&self) -> &Path {
        match self {
            Encoder::Transformer(t) => &t.dir,
            Encoder::Static(s) => &s.dir,
        }
    }

    pub fn dimensions(&self) -> usize {
        match self {
            Encoder::Transformer(t) => t.hidden,
            Encoder::Static(s) => s.dim,
        }
    }

    /// Unit-length vectors, one per text, in order. An empty text (or one
    /// of only unknown tokens, for a static model) gets the zero vector,
    /// whose cosine with anything is 0.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        match self {
            Encoder::Transformer(t) => t.encode(texts),
            Encoder::Static(s) => Ok(texts.iter().map(|t| s.encode(t)).collect()),
        }
    }

    /// Tokens the model reads for `text` (after its own cut).
    pub fn count_tokens(&self, text: &str) -> usize {
        let (tokenizer, special) = match self {
            Encoder::Transformer(t) => (&t.tokenizer, true),
            Encoder::Static(s) => (&s.tokenizer, false),
        };
        tokenizer
            .encode(text, special)
            .map(|e| e.get_ids().len())
            .unwrap_or(0)
    }
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>, ModelError> {
    let path: PathBuf = dir.join(file);
    ctx!(std::fs::read(&path), "cannot read {}", path.display())
}

fn tokenizer(dir: &Path) -> Result<Tokenizer, ModelError> {
    let bytes = read(dir, "tokenizer.json")?;
    ctx!(
        Tokenizer::from_bytes(&bytes),
        "{}/tokenizer.json is not a tokenizer",
        dir.display()
    )
}

/// A BERT-family encoder with mean pooling.
pub struct Transformer {
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    hidden: usize,
}

impl Transformer {
    pub fn load(dir: &Path) -> Result<Transformer, ModelError> {
        let config: BertConfig = ctx!(
            serde_json::from_slice(&read(dir, "config.json")?),
            "{}/config.json is not a BERT config",
            dir.display()
        )?;
        let mut tokenizer = tokenizer(dir)?;
        // Some published tokenizer.json files pad every text to a fixed
        // length; batches are padded here, to the longest text in each.
        tokenizer.with_padding(None);
        ctx!(
            tokenizer.with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            })),
            "setting the tokenizer's cut"
        )?;
        let weights = read(dir, "model.safetensors")?;
        let vb = ctx!(
            VarBuilder::from_slice_safetensors(&weights, DType::F32, &Device::Cpu),
            "{}/model.safetensors is not a safetensors file",
            dir.display()
        )?;
        let model = ctx!(
            BertModel::load(vb, &config),
            "{}/model.safetensors does not fit its config.json",
            dir.display()
        )?;
        Ok(Transformer {
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            hidden: config.hidden_size,
        })
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encodings: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| {
                ctx!(self.tokenizer.encode(*t, true), "tokenizing").map(|e| e.get_ids().to_vec())
            })
            .collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let vectors = ctx!(self.forward(batch, &encodings), "running the encoder")?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One padded batch through the model, mean-pooled over real tokens
    /// and normalised.
    fn forward(
        &self,
        batch: &[usize],
        encodings: &[Vec<u32>],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch
            .iter()
            .map(|&i| encodings[i].len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = Vec::with_capacity(batch.len() * len);
        let mut mask = Vec::with_capacity(batch.len() * len);
        for &i in batch {
            let e = &encodings[i];
            ids.extend(e.iter().copied());
            ids.extend(std::iter::repeat_n(0u32, len - e.len()));
            mask.extend(std::iter::repeat_n(1u32, e.len()));
            mask.extend(std::iter::repeat_n(0u32, len - e.len()));
        }
        let shape = (batch.len(), len);
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1.0, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        Ok(mean.to_vec2::<f32>()?.into_iter().map(normalised).collect())
    }
}

/// A model2vec static model: the mean of the tokens' vectors.
pub struct StaticModel {
    dir: PathBuf,
    tokenizer: Tokenizer,
    /// Row-major `[vocabulary, dim]`.
    table: Vec<f32>,
    dim: usize,
}

impl StaticModel {
    pub fn load(dir: &Path) -> Result<StaticModel, ModelError> {
        let mut tokenizer = tokenizer(dir)?;
        tokenizer.with_padding(None);
        ctx!(
            tokenizer.with_truncation(None),
            "clearing the tokenizer's cut"
        )?;
        let weights = read(dir, "model.safetensors")?;
        let tensors = ctx!(
            candle_core::safetensors::load_buffer(&weights, &Device::Cpu),
            "{}/model.safetensors is not a safetensors file",
            dir.display()
        )?;
        let table = tensors.get("embeddings").ok_or_else(|| {
            ModelError(format!(
                "{}/model.safetensors has no 'embeddings' tensor, so it is not a model2vec model",
                dir.display()
            ))
        })?;
        let (rows, dim) = ctx!(table.dims2(), "the embeddings tensor")?;
        let table = ctx!(
            table
                .to_dtype(DType::F32)
                .and_then(|t| t.flatten_all())
                .and_then(|t| t.to_vec1::<f32>()),
            "reading the embeddings"
        )?;
        if rows == 0 || dim == 0 {
            return Err(ModelError(format!(
                "{}/model.safetensors holds an empty embeddings table",
                dir.display()
            )));
        }
        Ok(StaticModel {
            dir: dir.to_path_buf(),
            tokenizer,
            table,
            dim,
        })
    }

    fn encode(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dim];
        let rows = self.table.len() / self.dim;
        let ids = self
            .tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default();
        for id in ids.into_iter().map(|i| i as usize).filter(|&i| i < rows) {
            for (s, v) in sum
                .iter_mut()
                .zip(&self.table[id * self.dim..(id + 1) * self.dim])
            {
                *s += v;
            }
        }
        // the mean and the sum point the same way: normalising is enough
        normalised(sum)
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}
