//! Sentence embeddings for silt's embedding judge.
//!
//! One crate for both sides of the sandbox: the wasm judge
//! (`judges/embedding`) runs it on the files of the folder it was granted,
//! and native examples run the same code for calibration and for the
//! native-versus-component benchmark.

#![deny(missing_docs)]

pub mod calibration;
pub mod judge;
pub mod model;
pub mod readable;
mod text_map;

pub use judge::EmbeddingJudge;
pub use model::{Encoder, Kind, ModelError};
pub use silt_core::text::cosine;
