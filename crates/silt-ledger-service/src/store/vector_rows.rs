//! The rows that hold a judge's vectors: their key and their calibration. The cache that decides what to
//! look up and what to write is the ledger's `vectors` module; this module is
//! only storage, so the store never reaches back up to it.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// How a judge's cosines read (what `silt:embed` reports beside vectors).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The cosine from which two texts say the same thing.
    pub same_above: f64,
    /// The cosine from which two texts are about the same thing.
    pub related_above: f64,
    /// The cosine below which two texts are almost surely unrelated.
    pub unrelated_below: f64,
}

/// Vectors waiting to be written: (model, text sha256, little-endian f32s).
#[derive(Debug, Default)]
pub struct Pending {
    /// (model, [`text_key`], vector as little-endian f32 bytes), in the
    /// order given.
    pub rows: Vec<(String, [u8; 32], Vec<u8>)>,
    /// Each model's calibration, as the judge reported it beside the
    /// vectors.
    pub models: Vec<(String, Calibration)>,
}

impl Pending {
    /// Nothing to write: no vectors and no calibration.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.models.is_empty()
    }
}

/// The key of a text.
pub fn text_key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// What the store holds for some texts: the model's calibration and the
/// vectors found, by key.
pub type Stored = (Option<Calibration>, HashMap<Vec<u8>, Vec<u8>>);
