//! The model's tokenizer: a `tokenizer.json` beside the weights when there
//! is one, else built from the vocabulary and merges the GGUF file carries.
//!
//! candle's own GGUF-to-tokenizer conversion does not build for wasm32 and
//! reads SmolLM2's pre-tokenizer as plain GPT-2 (digits then come out
//! grouped, unlike llama.cpp's). The pre-tokenizers built here are the
//! ones llama.cpp applies for the named `tokenizer.ggml.pre`, checked
//! token for token against llama-server's `/tokenize` in the tests.

use std::path::Path;

use silt_core::types::JudgeError;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, Tokenizer};

use crate::gguf::Gguf;

/// The file that, beside a GGUF model, overrides its built-in vocabulary.
pub const TOKENIZER_JSON: &str = "tokenizer.json";

/// llama.cpp's token types for control tokens and user-defined tokens:
/// both are matched whole in the text (`<|im_start|>` is one token).
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;

/// The tokenizer for the model at `gguf`: `dir/tokenizer.json` if present,
/// else one built from the file's metadata.
pub fn load(gguf: &Gguf, dir: &Path) -> Result<Tokenizer, JudgeError> {
    let json = dir.join(TOKENIZER_JSON);
    if json.is_file() {
        return Tokenizer::from_file(&json).map_err(|e| {
            JudgeError::Unavailable(format!("{}: not a tokenizer ({e})", json.display()))
        });
    }
    from_gguf(gguf)
}

fn missing(gguf: &Gguf, what: &str) -> JudgeError {
    JudgeError::Unavailable(format!(
        "{}: the file carries no {what}; put the model's {TOKENIZER_JSON} beside it",
        gguf.path.display()
    ))
}

/// A byte-level BPE tokenizer from GGUF metadata (`tokenizer.ggml.*`).
pub fn from_gguf(gguf: &Gguf) -> Result<Tokenizer, JudgeError> {
    let model = gguf.string("tokenizer.ggml.model").unwrap_or_default();
    if model != "gpt2" {
        return Err(JudgeError::Unsupported(format!(
            "{}: its tokenizer is '{model}', which silt builds only for byte-level BPE ('gpt2'); \
             put the model's {TOKENIZER_JSON} beside the file",
            gguf.path.display()
        )));
    }
    let pre = gguf
        .string("tokenizer.ggml.pre")
        .unwrap_or_else(|| "default".into());
    let pre_tokenizer: PreTokenizerWrapper = match pre.as_str() {
        // GPT-2's split, with every digit on its own
        "smollm" => Sequence::new(vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ])
        .into(),
        "default" | "gpt2" => ByteLevel::new(false, true, true).into(),
        other => {
            return Err(JudgeError::Unsupported(format!(
                "{}: pre-tokenizer '{other}' is not built in (silt knows smollm and gpt2); put \
                 the model's {TOKENIZER_JSON} beside the file",
                gguf.path.display()
            )));
        }
    };
    let tokens = gguf
        .strings("tokenizer.ggml.tokens")
        .ok_or_else(|| missing(gguf, "vocabulary"))?;
    let merges = gguf
        .strings("tokenizer.ggml.merges")
        .ok_or_else(|| missing(gguf, "BPE merges"))?;
    let mut vocab = Vocab::default();
    for (id, token) in tokens.iter().enumerate() {
        vocab.insert((*token).to_string(), id as u32);
    }
    let merges = merges
        .iter()
        .map(|m| {
            m.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| missing(gguf, "well-formed BPE merges"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| JudgeError::Unavailable(format!("{}: {e}", gguf.path.display())))?;
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    let types = gguf
        .integers("tokenizer.ggml.token_type")
        .unwrap_or_default();
    let special: Vec<AddedToken> = tokens
        .iter()
        .zip(&types)
        .filter(|(_, t)| matches!(**t, CONTROL | USER_DEFINED))
        .map(|(token, _)| AddedToken::from(token.to_string(), true))
        .collect();
    tokenizer
        .add_special_tokens(special)
        .map_err(|e| JudgeError::Unavailable(format!("{}: {e}", gguf.path.display())))?;
    Ok(tokenizer)
}
