//! The two kinds of sentence encoder behind one judge, told apart by what
//! their folder holds, and loaded the same way natively and in the wasm
//! judge (through `std::fs`, which WASI confines to the granted folder).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use rustc_hash::FxHashMap;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::readable::{ReadCount, readable_share};

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
    /// A BERT-family encoder ([`Kind::Transformer`]).
    Transformer(Transformer),
    /// A model2vec table ([`Kind::Static`]).
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

    /// Which kind of model it is.
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

    /// The length of its vectors (384 for all-MiniLM-L6-v2, 256 for
    /// potion-base-8M).
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

    /// Each word of `text` as the tokenizer splits words (as written)
    /// with the number of tokens it cuts that word into, `usize::MAX` for
    /// a word it has no tokens for (WordPiece reads a word it cannot cut
    /// as one unknown token): what [`crate::readable`] counts, from one
    /// tokenizer call (see [`Encoder::readable_share`] for the share read
    /// a word at a time). Offsets are the tokenizer's byte offsets into
    /// `text`.
    pub fn word_pieces<'t>(&self, text: &'t str) -> Result<Vec<(&'t str, usize)>, ModelError> {
        let tokenizer = match self {
            Encoder::Transformer(t) => &t.tokenizer,
            Encoder::Static(s) => &s.tokenizer,
        };
        let encoding = ctx!(tokenizer.encode(text, false), "tokenizing")?;
        Ok(words_of(tokenizer, &encoding, text))
    }

    /// [`readable_share`] of `text`'s [`Encoder::word_pieces`]; 0 for a
    /// text the tokenizer fails on (text the model cannot read). A static
    /// model that reads words apart sums the counts it keeps for each
    /// word, read when it tokenized the word for a vector: one tokenizer
    /// call a word for both, where tokenizing each text again for its
    /// share cost some 30 µs a trigger in the sandbox (1.2 s of a sleep
    /// over 100k lessons written from 308 words).
    pub fn readable_share(&self, text: &str) -> f64 {
        if let Encoder::Static(s) = self
            && let Some(count) = s.read_count(text)
        {
            return count.map_or(0.0, ReadCount::share);
        }
        self.word_pieces(text).map_or(0.0, readable_share)
    }

    /// Whether [`Encoder::encode`] and [`Encoder::readable_share`] read a
    /// text word by word, from what they kept of each word.
    pub fn reads_words_apart(&self) -> bool {
        matches!(self, Encoder::Static(s) if s.words.is_some())
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

/// Each word of an `encoding` of `text` with the number of its tokens
/// (`usize::MAX` for an unknown token): see [`Encoder::word_pieces`].
fn words_of<'t>(
    tokenizer: &Tokenizer,
    encoding: &Encoding,
    text: &'t str,
) -> Vec<(&'t str, usize)> {
    let unknown: Vec<u32> = ["[UNK]", "<unk>"]
        .iter()
        .filter_map(|t| tokenizer.token_to_id(t))
        .collect();
    let mut out: Vec<(&str, usize)> = Vec::new();
    let mut last: Option<(u32, usize)> = None;
    for ((word, &(start, end)), id) in encoding
        .get_word_ids()
        .iter()
        .zip(encoding.get_offsets())
        .zip(encoding.get_ids())
    {
        let Some(word) = *word else { continue };
        let pieces = if unknown.contains(id) { usize::MAX } else { 1 };
        match (last, out.last_mut()) {
            (Some((w, from)), Some(entry)) if w == word => {
                *entry = (
                    text.get(from..end).unwrap_or(entry.0),
                    entry.1.saturating_add(pieces),
                );
            }
            _ => {
                out.push((text.get(start..end).unwrap_or_default(), pieces));
                last = Some((word, start));
            }
        }
    }
    out
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
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from
    /// `dir`; texts are cut at [`MAX_TOKENS`].
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
    /// The token ids and [`ReadCount`] of each space-separated word read
    /// so far, when the tokenizer reads words apart (see
    /// [`reads_words_apart`]): a text is then the concatenation of its
    /// words' tokens, and a ledger's texts reuse few words. Tokenizing was
    /// two thirds of the embedding judge's time in a 100k-lesson sleep,
    /// which relates texts its vector cache had to let go.
    words: Option<Mutex<WordTokens>>,
}

/// What one space-separated word reads as: its token ids, and its
/// content words read and not ([`ReadCount`]; None where the tokenizer
/// failed on it).
struct WordReading {
    ids: Box<[u32]>,
    count: Option<ReadCount>,
}

/// Word readings by word.
type WordTokens = FxHashMap<Box<str>, WordReading>;

/// The most words [`StaticModel`] keeps the readings of (some 24 MiB); it
/// starts afresh when full.
const MAX_WORDS: usize = 1 << 18;

/// Whether `tokenizer` splits a text at every ASCII space and reads each
/// piece without looking at the others, so that tokenizing word by word
/// gives the whole text's tokens: a BERT-style normalizer (per character:
/// clean-up, CJK spacing, lowercasing, accents) or none, a pre-tokenizer
/// that splits at whitespace, and no post-processing asked for. Others
/// (a metaspace marking the first word, a byte-level BPE that keeps the
/// space in the next token) are tokenized whole.
fn reads_words_apart(tokenizer: &Tokenizer) -> bool {
    use tokenizers::{NormalizerWrapper as N, PreTokenizerWrapper as P};
    let normalizer = matches!(
        tokenizer.get_normalizer(),
        None | Some(N::BertNormalizer(_) | N::Lowercase(_))
    );
    let pre = matches!(
        tokenizer.get_pre_tokenizer(),
        Some(P::BertPreTokenizer(_) | P::Whitespace(_) | P::WhitespaceSplit(_))
    );
    // an added token is matched in the raw text, before any split; one
    // that strips the spaces beside it takes them into its word
    let added = tokenizer
        .get_added_tokens_decoder()
        .values()
        .all(|t| !t.content.contains(' ') && !t.lstrip && !t.rstrip);
    normalizer && pre && added
}

impl StaticModel {
    /// Loads `tokenizer.json` and the `embeddings` table of
    /// `model.safetensors` from `dir`; texts are never cut.
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
        Ok(StaticModel::new(dir, tokenizer, table, dim))
    }

    fn new(dir: &Path, tokenizer: Tokenizer, table: Vec<f32>, dim: usize) -> StaticModel {
        let words = reads_words_apart(&tokenizer).then(|| Mutex::new(FxHashMap::default()));
        StaticModel {
            dir: dir.to_path_buf(),
            tokenizer,
            table,
            dim,
            words,
        }
    }

    fn encode(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dim];
        let by_word = self.each_word(text, |reading| self.add_rows(&mut sum, &reading.ids));
        if by_word.is_none() {
            self.add_rows(&mut sum, &self.token_ids(text));
        }
        // the mean and the sum point the same way: normalising is enough
        normalised(sum)
    }

    /// The [`ReadCount`] of `text`, from its words' readings, when the
    /// tokenizer reads words apart (None otherwise); Some(None) when it
    /// failed on a word.
    fn read_count(&self, text: &str) -> Option<Option<ReadCount>> {
        let mut total = Some(ReadCount::default());
        self.each_word(text, |reading| {
            total = total.zip(reading.count).map(|(t, c)| t + c);
        })?;
        Some(total)
    }

    /// Calls `each` with the reading of each space-separated word of
    /// `text` in order, reading (and keeping) those not read before; None,
    /// without calling it, when the tokenizer does not read words apart.
    fn each_word(&self, text: &str, mut each: impl FnMut(&WordReading)) -> Option<()> {
        let words = self.words.as_ref()?;
        let mut words = words.lock().unwrap_or_else(PoisonError::into_inner);
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            if let Some(reading) = words.get(word) {
                each(reading);
                continue;
            }
            let reading = self.read_word(word);
            each(&reading);
            if words.len() >= MAX_WORDS {
                words.clear();
            }
            words.insert(word.into(), reading);
        }
        Some(())
    }

    /// One tokenizer call for a word's ids and its [`ReadCount`].
    fn read_word(&self, word: &str) -> WordReading {
        match self.tokenizer.encode(word, false) {
            Ok(encoding) => WordReading {
                count: Some(ReadCount::of(words_of(&self.tokenizer, &encoding, word))),
                ids: encoding.get_ids().into(),
            },
            Err(_) => WordReading {
                ids: Box::default(),
                count: None,
            },
        }
    }

    fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }

    /// Adds the rows of `ids` to `sum`, in order (so the floats come out
    /// the same however the ids were found).
    fn add_rows(&self, sum: &mut [f32], ids: &[u32]) {
        let rows = self.table.len() / self.dim;
        for id in ids.iter().map(|&i| i as usize).filter(|&i| i < rows) {
            for (s, v) in sum
                .iter_mut()
                .zip(&self.table[id * self.dim..(id + 1) * self.dim])
            {
                *s += v;
            }
        }
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small WordPiece tokenizer of the kind model2vec models ship
    /// (BERT normalizer and pre-tokenizer).
    fn bert_like(pre_tokenizer: &str) -> Tokenizer {
        let vocab = [
            "[UNK]", "[CLS]", "[SEP]", "the", "run", "##s", "test", "##ing", "a", "b", "中", "e",
            "σ", "ς", ".", ",", "-", "repo", "r", "##3", "1", "##2", "o", "##σ", "##ς",
        ];
        let vocab: Vec<String> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{t:?}: {i}"))
            .collect();
        let json = format!(
            r###"{{"version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [
              {{"id": 0, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}},
              {{"id": 1, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}}
            ],
            "normalizer": {{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true}},
            "pre_tokenizer": {pre_tokenizer},
            "post_processor": null, "decoder": null,
            "model": {{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 12,
              "vocab": {{{}}}}}}}"###,
            vocab.join(", ")
        );
        Tokenizer::from_bytes(json.as_bytes()).unwrap()
    }

    fn model(tokenizer: Tokenizer) -> StaticModel {
        let rows = tokenizer.get_vocab_size(true);
        let dim = 5;
        let mut seed = 7u32;
        let table = (0..rows * dim)
            .map(|_| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (seed >> 8) as f32 / (1 << 24) as f32 - 0.5
            })
            .collect();
        StaticModel::new(Path::new("."), tokenizer, table, dim)
    }

    #[test]
    fn word_by_word_tokens_are_the_whole_texts_tokens() {
        // spaces of every kind, characters the normalizer drops or spaces
        // out, accents, a final sigma, words too long for WordPiece
        let pieces = [
            "the",
            "runs",
            "testing",
            "Testing",
            " ",
            "  ",
            "\t",
            "\n",
            "\u{85}",
            "\u{a0}",
            "\u{3000}",
            "中",
            "é",
            "É",
            "ΟΣ",
            "οσ",
            ".",
            "-,",
            "a",
            "b",
            "r3",
            "12",
            "\u{0}",
            "\u{fffd}",
            "\u{200b}",
            "\u{301}",
            "repo",
            "runsrunsrunsruns",
            "zz",
            "[CLS]",
        ];
        let chunked = model(bert_like(r#"{"type": "BertPreTokenizer"}"#));
        let whole = model(bert_like(r#"{"type": "BertPreTokenizer"}"#));
        assert!(chunked.words.is_some());
        let mut seed = 11u64;
        let mut checked = 0;
        for _ in 0..3000 {
            let mut text = String::new();
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for k in 0..(seed >> 60) + 1 {
                let pick = (seed >> (k * 5 % 55)) as usize % pieces.len();
                text.push_str(pieces[pick]);
            }
            let mut sum = vec![0f32; whole.dim];
            whole.add_rows(&mut sum, &whole.token_ids(&text));
            // equal to the bit, not merely close: the same rows in order
            assert_eq!(chunked.encode(&text), normalised(sum), "{text:?}");
            // and the words' counts add up to the whole text's
            let encoding = whole.tokenizer.encode(text.as_str(), false).unwrap();
            let counted = ReadCount::of(words_of(&whole.tokenizer, &encoding, &text));
            assert_eq!(chunked.read_count(&text), Some(Some(counted)), "{text:?}");
            checked += 1;
        }
        assert_eq!(checked, 3000);
        assert!(chunked.words.as_ref().unwrap().lock().unwrap().len() > 20);
    }

    #[test]
    fn other_tokenizers_are_read_whole() {
        let metaspace = r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}"#;
        assert!(model(bert_like(metaspace)).words.is_none());
        assert_eq!(model(bert_like(metaspace)).read_count("the runs"), None);
        // an added token that takes the space before it into its match
        let mut stripping = bert_like(r#"{"type": "BertPreTokenizer"}"#);
        stripping
            .add_tokens([tokenizers::AddedToken::from("runs", false).lstrip(true)])
            .unwrap();
        assert!(model(stripping).words.is_none());
        let mut plain = bert_like(r#"{"type": "BertPreTokenizer"}"#);
        plain
            .add_tokens([tokenizers::AddedToken::from("runs", false)])
            .unwrap();
        assert!(model(plain).words.is_some());
        assert!(
            model(bert_like(r#"{"type": "WhitespaceSplit"}"#))
                .words
                .is_some()
        );
    }
}
