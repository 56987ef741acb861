//! The judge's vectors for lesson texts, kept in the ledger file itself
//! (table `vectors`, keyed by the judge's name and version, which name its
//! model, and the text's sha256): a restart or another process reads them
//! back instead of embedding unchanged lessons again.
//!
//! The engine asks for vectors in the middle of an operation, while this
//! process may hold the ledger's write lock on its own connection; a second
//! connection writing then would wait on that lock. So lookups read through
//! a connection of their own (WAL readers never wait), and new vectors wait
//! in memory until the service writes them inside its next transaction
//! ([`super::store::Store::save_vectors`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::store::VectorReader as Reader;
use super::store::vector_rows::Stored;
pub use super::store::vector_rows::{Calibration, Pending, text_key};

/// Reads stored vectors; holds new ones until they are saved.
pub struct VectorStore {
    /// Opened on first use. None when the ledger has no vectors table yet
    /// (made by an older silt, which adds it on its next write) or cannot
    /// be read: every lookup then misses and the judge is asked.
    reader: Mutex<Option<Reader>>,
    path: std::path::PathBuf,
    pending: Mutex<Pending>,
    /// The keys of every lesson text this process has seen: only these are
    /// written, never a recall's context (a task, not a lesson).
    lesson_texts: Mutex<std::collections::HashSet<[u8; 32]>>,
}

fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

impl VectorStore {
    /// The vectors of the ledger at `path` (a file or a database URL);
    /// nothing is opened until the first lookup.
    pub fn open(path: &Path) -> VectorStore {
        VectorStore {
            reader: Mutex::new(None),
            path: path.to_path_buf(),
            pending: Mutex::new(Pending::default()),
            lesson_texts: Mutex::new(std::collections::HashSet::new()),
        }
    }

    /// What the store holds for `keys`; None when it cannot be read.
    fn stored(&self, model: &str, keys: Vec<Vec<u8>>) -> Option<Stored> {
        let mut reader = self.reader.lock().expect("vector store lock");
        if reader.is_none() {
            match Reader::open(&self.path) {
                Ok(r) => *reader = Some(r),
                Err(e) => {
                    tracing::debug!("ledger vectors not read: {e}");
                    return None;
                }
            }
        }
        match reader.as_ref().expect("opened above").read(model, keys) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::debug!("ledger vectors not read: {e}");
                None
            }
        }
    }

    /// The stored (or pending) vector of each text, and the model's
    /// calibration when it is known.
    pub fn lookup(
        &self,
        model: &str,
        texts: &[String],
    ) -> (Vec<Option<Vec<f32>>>, Option<Calibration>) {
        let (waiting, mut calibration) = {
            let pending = self.pending.lock().expect("vector store lock");
            let calibration = pending
                .models
                .iter()
                .rev()
                .find(|(m, _)| m == model)
                .map(|(_, c)| *c);
            let waiting: HashMap<[u8; 32], Vec<u8>> = pending
                .rows
                .iter()
                .filter(|(m, _, _)| m == model)
                .map(|(_, k, v)| (*k, v.clone()))
                .collect();
            (waiting, calibration)
        };
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| text_key(t)).collect();
        let missing: Vec<Vec<u8>> = keys
            .iter()
            .filter(|k| !waiting.contains_key(*k))
            .map(|k| k.to_vec())
            .collect();
        let stored = if missing.is_empty() && calibration.is_some() {
            None
        } else {
            self.stored(model, missing)
        };
        let mut found_in_store = HashMap::new();
        if let Some((c, found)) = stored {
            calibration = calibration.or(c);
            found_in_store = found;
        }
        let found = keys
            .iter()
            .map(|k| match waiting.get(k) {
                Some(v) => decode(v),
                None => found_in_store.get(&k[..]).and_then(|v| decode(v)),
            })
            .collect();
        (found, calibration)
    }

    /// Holds vectors a judge just gave until the next save.
    pub fn remember(&self, model: &str, texts: &[String], vectors: &[Vec<f32>], c: Calibration) {
        let mut pending = self.pending.lock().expect("vector store lock");
        if !pending
            .models
            .iter()
            .any(|(m, have)| m == model && *have == c)
        {
            pending.models.push((model.to_string(), c));
        }
        for (t, v) in texts.iter().zip(vectors) {
            pending
                .rows
                .push((model.to_string(), text_key(t), encode(v)));
        }
    }

    /// Notes texts of lessons (WHEN and PREFER of stored entries): their
    /// vectors may be written.
    pub fn note_lessons<'a>(&self, texts: impl IntoIterator<Item = &'a str>) {
        let mut known = self.lesson_texts.lock().expect("vector store lock");
        known.extend(texts.into_iter().map(text_key));
    }

    /// The vectors of lesson texts waiting to be written (emptied); any
    /// other text's (a recall's context) is dropped, so a task an agent
    /// described never lands in the ledger file.
    pub fn take_pending(&self) -> Pending {
        let mut p = std::mem::take(&mut *self.pending.lock().expect("vector store lock"));
        let known = self.lesson_texts.lock().expect("vector store lock");
        p.rows.retain(|(_, key, _)| known.contains(key));
        p
    }

    /// Puts back vectors whose write was rolled back.
    pub fn restore(&self, mut p: Pending) {
        let mut pending = self.pending.lock().expect("vector store lock");
        p.rows.append(&mut pending.rows);
        p.models.append(&mut pending.models);
        *pending = p;
    }
}

impl silt_runtime::capability::judge_calls::VectorKeeper for VectorStore {
    fn lookup(&self, model: &str, texts: &[String]) -> (Vec<Option<Vec<f32>>>, Option<[f64; 3]>) {
        let (found, c) = VectorStore::lookup(self, model, texts);
        (
            found,
            c.map(|c| [c.same_above, c.related_above, c.unrelated_below]),
        )
    }

    fn remember(&self, model: &str, texts: &[String], vectors: &[Vec<f32>], c: [f64; 3]) {
        let c = Calibration {
            same_above: c[0],
            related_above: c[1],
            unrelated_below: c[2],
        };
        VectorStore::remember(self, model, texts, vectors, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_exactly() {
        let v = vec![0.5f32, -0.25, 1e-7, f32::MIN_POSITIVE];
        assert_eq!(decode(&encode(&v)), Some(v));
        assert_eq!(decode(&[1, 2, 3]), None);
    }

    #[test]
    fn pending_vectors_answer_before_they_are_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(&dir.path().join("none.db"));
        let c = Calibration {
            same_above: 0.7,
            related_above: 0.45,
            unrelated_below: 0.3,
        };
        let texts = vec!["a".to_string(), "b".to_string()];
        store.remember("m", &texts[..1], &[vec![1.0, 0.0]], c);
        let (found, cal) = store.lookup("m", &texts);
        assert_eq!(found, vec![Some(vec![1.0, 0.0]), None]);
        assert_eq!(cal, Some(c));
        // another model's are not this one's
        assert_eq!(store.lookup("n", &texts).0, vec![None, None]);
        // only lesson texts are written
        store.remember("m", &texts[1..], &[vec![0.0, 1.0]], c);
        store.note_lessons(["b"]);
        let pending = store.take_pending();
        assert_eq!(pending.rows.len(), 1);
        assert_eq!(pending.rows[0].1, text_key("b"));
    }
}
