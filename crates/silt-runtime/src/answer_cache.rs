//! The answer cache: a judge's validated answer to one item of one
//! question (and a model judge's relation of two lessons), kept in SQLite
//! so asking again (or grep over unchanged files) costs no judge call.
//! Keyed on sha256 of (judge name, judge version, question, kind,
//! criteria, item text), NUL-separated so ("a","b") and ("ab","") differ. Shared safely by concurrent processes (WAL, a busy
//! timeout, one statement per write).
//!
//! The cache is disposable: a file it cannot use is left alone and the
//! call goes to the judge.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::bindings::types::{Answer, AnswerSpace, Distribution, JudgeInfo, Question};

/// Cached answers, one row per (judge, question, item).
pub struct AnswerCache {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl AnswerCache {
    /// Opens (or creates) the cache at `path`.
    pub fn open(path: &Path) -> Result<AnswerCache> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            silt_files::private::folder(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        // questions and items are the caller's: 0600, and so its -wal and -shm
        silt_files::private::sqlite_file(path)
            .with_context(|| format!("cannot create answer cache {}", path.display()))?;
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open answer cache {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // disposable: an answer lost to a power cut is asked again, so a
        // put need not wait for an fsync (with FULL, each new answer cost
        // one, and a busy server's asks queued behind them)
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS answers (
                 key TEXT PRIMARY KEY,
                 answer TEXT NOT NULL,
                 stored REAL NOT NULL)",
        )
        .with_context(|| format!("{} is not a usable answer cache", path.display()))?;
        Ok(AnswerCache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// The SQLite file it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key of `item_text` under `question` asked of `judge`, whose
    /// component is `build` (its digest for a plugin from a folder, so a
    /// replacement reporting the same version is not answered from the
    /// old one's cache; empty for a built-in, whose version is silt's).
    pub fn key(judge: &JudgeInfo, build: &str, question: &Question, item_text: &str) -> String {
        let mut parts: Vec<&str> = vec![&question.text];
        match &question.space {
            AnswerSpace::Judge(yn) => parts.extend(["judge", yn.yes.as_str(), yn.no.as_str()]),
            AnswerSpace::Choose(options) => {
                parts.push("choose");
                for o in options {
                    parts.extend([o.label.as_str(), o.criterion.as_str()]);
                }
            }
            AnswerSpace::Score(levels) => {
                parts.push("score");
                parts.extend(levels.iter().map(String::as_str));
            }
        }
        parts.push(item_text);
        digest(judge, build, &parts)
    }

    /// The key of the relation between lessons `a` and `b` (each (when,
    /// prefer), in this order) as `judge` built as `build` relates them.
    pub fn relation_key(
        judge: &JudgeInfo,
        build: &str,
        a: (&str, &str),
        b: (&str, &str),
    ) -> String {
        // a tag no question's text can take the place of: a question's
        // parts are followed by its kind, never by four lesson texts
        digest(judge, build, &["relate", a.0, a.1, b.0, b.1])
    }

    /// The cached answer for each key (None: not cached, or unreadable).
    pub fn get(&self, keys: &[String]) -> Vec<Option<Answer>> {
        self.get_texts(keys)
            .into_iter()
            .map(|t| t.and_then(|text| answer_from_json(&text)))
            .collect()
    }

    /// The cached relation (merge, contradict, sibling, distinct) for each
    /// key of [`AnswerCache::relation_key`].
    pub fn get_relations(&self, keys: &[String]) -> Vec<Option<[f64; 4]>> {
        self.get_texts(keys)
            .into_iter()
            .map(|t| {
                let v: Value = serde_json::from_str(&t?).ok()?;
                let p: Vec<f64> = v["relation"]
                    .as_array()?
                    .iter()
                    .map(Value::as_f64)
                    .collect::<Option<_>>()?;
                p.try_into().ok()
            })
            .collect()
    }

    fn get_texts(&self, keys: &[String]) -> Vec<Option<String>> {
        let Ok(conn) = self.conn.lock() else {
            return vec![None; keys.len()];
        };
        let Ok(mut stmt) = conn.prepare_cached("SELECT answer FROM answers WHERE key = ?1") else {
            return vec![None; keys.len()];
        };
        keys.iter()
            .map(|k| {
                stmt.query_row(params![k], |r| r.get::<_, String>(0))
                    .optional()
                    .ok()
                    .flatten()
            })
            .collect()
    }

    /// Stores validated answers; a failure to store is logged, not fatal.
    pub fn put(&self, entries: &[(String, Answer)]) {
        let texts: Vec<(&str, String)> = entries
            .iter()
            .map(|(k, a)| (k.as_str(), answer_to_json(a).to_string()))
            .collect();
        self.put_texts(&texts);
    }

    /// Stores relations that are probabilities (the caller checks).
    pub fn put_relations(&self, entries: &[(String, [f64; 4])]) {
        let texts: Vec<(&str, String)> = entries
            .iter()
            .map(|(k, p)| (k.as_str(), json!({ "relation": p }).to_string()))
            .collect();
        self.put_texts(&texts);
    }

    fn put_texts(&self, entries: &[(&str, String)]) {
        if entries.is_empty() {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let Ok(mut conn) = self.conn.lock() else {
            return;
        };
        let stored = conn.transaction().and_then(|tx| {
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT OR REPLACE INTO answers (key, answer, stored) VALUES (?1, ?2, ?3)",
                )?;
                for (key, text) in entries {
                    stmt.execute(params![key, text, now])?;
                }
            }
            tx.commit()
        });
        if let Err(e) = stored {
            tracing::warn!("answer cache {}: could not store: {e}", self.path.display());
        }
    }
}

/// sha256 of the judge's name and version, its build (when it has one)
/// and `parts`, each followed by a NUL.
fn digest(judge: &JudgeInfo, build: &str, parts: &[&str]) -> String {
    let mut all: Vec<&str> = vec![&judge.name, &judge.version];
    if !build.is_empty() {
        all.push(build);
    }
    all.extend(parts);
    let mut h = Sha256::new();
    for p in all {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

/// Where grep keeps a repository's answers: under silt's own cache folder,
/// `<user_cache>/<sha256(canonical root)[..16]>/answers.sqlite`, never in
/// the repository (grep is read-only; the seed appended its cache folder
/// to the repository's `.gitignore`). The answers themselves are keyed by
/// the text judged, so an edited file is judged afresh.
pub fn grep_cache_path(root: &Path, user_cache: &Path) -> PathBuf {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let key = hex::encode(Sha256::digest(root.to_string_lossy().as_bytes()));
    user_cache.join(&key[..16]).join("answers.sqlite")
}

fn answer_to_json(a: &Answer) -> Value {
    match a {
        Answer::YesProbability(p) => json!({"yes": p}),
        Answer::Distribution(d) => json!({"probabilities": d.probabilities, "pick": d.pick}),
    }
}

fn answer_from_json(text: &str) -> Option<Answer> {
    let v: Value = serde_json::from_str(text).ok()?;
    if let Some(p) = v.get("yes") {
        return p.as_f64().map(Answer::YesProbability);
    }
    let probabilities = v
        .get("probabilities")?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect::<Option<Vec<f64>>>()?;
    let pick = match v.get("pick") {
        None | Some(Value::Null) => None,
        Some(p) => Some(u32::try_from(p.as_u64()?).ok()?),
    };
    Some(Answer::Distribution(Distribution {
        probabilities,
        pick,
    }))
}

/// The WIT question and answers as `silt_core` types, for validation.
pub fn core_question(q: &Question) -> silt_core::types::Question {
    use silt_core::types as core;
    core::Question {
        text: q.text.clone(),
        space: match &q.space {
            AnswerSpace::Judge(yn) => core::AnswerSpace::Judge {
                yes: yn.yes.clone(),
                no: yn.no.clone(),
            },
            AnswerSpace::Choose(options) => core::AnswerSpace::Choose(
                options
                    .iter()
                    .map(|o| core::ChoiceOption {
                        label: o.label.clone(),
                        criterion: o.criterion.clone(),
                    })
                    .collect(),
            ),
            AnswerSpace::Score(levels) => core::AnswerSpace::Score(levels.clone()),
        },
    }
}

/// A WIT answer as a `silt_core` answer, for validation.
pub fn core_answer(a: &Answer) -> silt_core::types::Answer {
    match a {
        Answer::YesProbability(p) => silt_core::types::Answer::YesProbability(*p),
        Answer::Distribution(d) => silt_core::types::Answer::Distribution {
            probabilities: d.probabilities.clone(),
            pick: d.pick,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{ChoiceOption, YesNo};

    fn info(version: &str) -> JudgeInfo {
        JudgeInfo {
            name: "lexical".into(),
            version: version.into(),
            deterministic: true,
            cost_per_million_input_tokens: 0.0,
            preferred_batch_size: 40,
        }
    }

    fn judge_q(yes: &str, no: &str) -> Question {
        Question {
            text: "q".into(),
            space: AnswerSpace::Judge(YesNo {
                yes: yes.into(),
                no: no.into(),
            }),
        }
    }

    #[test]
    fn keys_separate_every_part() {
        let k = |v: &str, q: &Question, t: &str| AnswerCache::key(&info(v), "", q, t);
        let q = judge_q("a", "b");
        assert_ne!(k("1", &q, "x"), k("2", &q, "x"), "judge version");
        assert_ne!(
            AnswerCache::key(&info("1"), "sha256:aa", &q, "x"),
            AnswerCache::key(&info("1"), "sha256:ab", &q, "x"),
            "component"
        );
        assert_ne!(
            k("1", &q, "x"),
            k("1", &judge_q("ab", ""), "x"),
            "NUL-separated"
        );
        assert_ne!(k("1", &q, "x"), k("1", &q, "y"), "item");
        let choose = Question {
            text: "q".into(),
            space: AnswerSpace::Choose(vec![ChoiceOption {
                label: "a".into(),
                criterion: "b".into(),
            }]),
        };
        assert_ne!(k("1", &q, "x"), k("1", &choose, "x"), "kind");
        assert_eq!(k("1", &q, "x"), k("1", &judge_q("a", "b"), "x"));
    }

    #[test]
    fn grep_caches_live_in_silts_cache_never_in_the_repository() {
        let user = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join(".gitignore"), "target").unwrap();
        let p = grep_cache_path(repo.path(), user.path());
        assert!(p.starts_with(user.path()), "{}", p.display());
        // the same folder by another spelling is the same cache
        let dotted = repo.path().join(".");
        assert_eq!(grep_cache_path(&dotted, user.path()), p);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(p, grep_cache_path(other.path(), user.path()));
        assert_eq!(
            std::fs::read_to_string(repo.path().join(".gitignore")).unwrap(),
            "target"
        );
    }

    #[test]
    fn answers_round_trip_and_garbage_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::open(&dir.path().join("answers.sqlite")).unwrap();
        let d = Answer::Distribution(Distribution {
            probabilities: vec![0.25, 0.75],
            pick: Some(1),
        });
        cache.put(&[
            ("a".into(), Answer::YesProbability(0.5)),
            ("b".into(), d.clone()),
        ]);
        cache
            .conn
            .lock()
            .unwrap()
            .execute("INSERT INTO answers VALUES ('c', 'not json', 0)", [])
            .unwrap();
        let got = cache.get(&["a".into(), "b".into(), "c".into(), "d".into()]);
        assert!(matches!(got[0], Some(Answer::YesProbability(p)) if p == 0.5));
        assert!(
            matches!(&got[1], Some(Answer::Distribution(x)) if x.pick == Some(1) && x.probabilities == [0.25, 0.75])
        );
        assert!(got[2].is_none() && got[3].is_none());
    }
}
