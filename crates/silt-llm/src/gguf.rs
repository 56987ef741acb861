//! Opening a GGUF file: refusing what is not one, what is cut short and
//! what this crate cannot run, with a message that says which; and the
//! metadata the other modules read.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{Content, Value};
use silt_core::types::JudgeError;

/// Model families `candle_transformers::models::quantized_llama` runs.
pub const ARCHITECTURES: &[&str] = &["llama"];

/// An opened GGUF file whose header has been read and checked.
pub struct Gguf {
    /// The file, for messages.
    pub path: PathBuf,
    /// Its header: metadata and where each tensor lies.
    pub content: Content,
    /// The open file, from which tensors are read at absolute offsets.
    pub reader: BufReader<File>,
}

fn unavailable(path: &Path, why: impl std::fmt::Display) -> JudgeError {
    JudgeError::Unavailable(format!("{}: {why}", path.display()))
}

impl Gguf {
    /// Opens `path` and checks that it is a complete GGUF file of a
    /// supported architecture.
    pub fn open(path: &Path) -> Result<Gguf, JudgeError> {
        let file = File::open(path).map_err(|e| unavailable(path, format!("cannot read ({e})")))?;
        let len = file
            .metadata()
            .map_err(|e| unavailable(path, format!("cannot read ({e})")))?
            .len();
        let mut reader = BufReader::new(file);
        let content = Content::read(&mut reader).map_err(|e| {
            unavailable(
                path,
                format!(
                    "not a GGUF model file ({e}); reinstall it with `silt models install`, or \
                     point the judge at a .gguf file"
                ),
            )
        })?;
        let needed = data_end(&content);
        if needed > len {
            return Err(unavailable(
                path,
                format!(
                    "the file is cut short: its header describes {needed} bytes of tensors but \
                     it holds {len}; the download or copy was interrupted, so reinstall it"
                ),
            ));
        }
        let arch = string(&content.metadata, "general.architecture").unwrap_or_default();
        if !ARCHITECTURES.contains(&arch.as_str()) {
            return Err(JudgeError::Unsupported(format!(
                "{}: architecture '{arch}' is not supported; this judge runs llama-family GGUF \
                 models ({}), such as SmolLM2, TinyLlama and Llama 3.x",
                path.display(),
                ARCHITECTURES.join(", ")
            )));
        }
        // tensors are read at absolute offsets: no need to rewind
        Ok(Gguf {
            path: path.to_path_buf(),
            content,
            reader,
        })
    }

    /// A metadata string (`general.architecture`, the chat template).
    pub fn string(&self, key: &str) -> Option<String> {
        string(&self.content.metadata, key)
    }

    /// A metadata value stored as a u32 (token ids, context length); None
    /// for any other type.
    pub fn u32(&self, key: &str) -> Option<u32> {
        self.content.metadata.get(key).and_then(|v| v.to_u32().ok())
    }

    /// A metadata flag (`tokenizer.ggml.add_bos_token`).
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.content
            .metadata
            .get(key)
            .and_then(|v| v.to_bool().ok())
    }

    /// A metadata array of strings (the vocabulary, the merges).
    pub fn strings(&self, key: &str) -> Option<Vec<&str>> {
        let values = self.content.metadata.get(key)?.to_vec().ok()?;
        values
            .iter()
            .map(|v| v.to_string().ok().map(String::as_str))
            .collect()
    }

    /// A metadata array of integers (token types).
    pub fn integers(&self, key: &str) -> Option<Vec<i64>> {
        let values = self.content.metadata.get(key)?.to_vec().ok()?;
        values
            .iter()
            .map(|v| match v {
                Value::I32(x) => Some(i64::from(*x)),
                Value::U32(x) => Some(i64::from(*x)),
                Value::I64(x) => Some(*x),
                Value::U8(x) => Some(i64::from(*x)),
                Value::I8(x) => Some(i64::from(*x)),
                _ => None,
            })
            .collect()
    }
}

fn string(metadata: &HashMap<String, Value>, key: &str) -> Option<String> {
    metadata.get(key).and_then(|v| v.to_string().ok()).cloned()
}

/// Where the last tensor's bytes end, counted from the file's start.
fn data_end(content: &Content) -> u64 {
    content
        .tensor_infos
        .values()
        .map(|t| {
            let dtype = t.ggml_dtype;
            let bytes = t.shape.elem_count() / dtype.block_size() * dtype.type_size();
            t.offset + bytes as u64
        })
        .max()
        .unwrap_or(0)
        + content.tensor_data_offset
}
