//! A model judge's lesson relations kept in the answer cache, so a pair
//! judged once is not asked again while neither lesson changes.
//!
//! Review relates every candidate pair for each page it ranks, and sleep
//! relates them again on each pass: against a model server that was a
//! thousand prompts a page (measured on docs/eval/ledger-review.jsonl,
//! 152 lessons: 468,084 prompts for one review loop). Only judges whose
//! relations read meaning are kept: the lexical judge relates a pair in
//! microseconds, less than a cache lookup costs.

use std::sync::Arc;

use super::judge_calls::{BoundJudge, Pending};
use crate::answer_cache::AnswerCache;
use crate::bindings::embedding_judge::exports::silt::embed::embed::Embedding as JudgeEmbedding;
use crate::bindings::ledger_engine::silt::judge::relations as relations_import;
use crate::bindings::relations_by_index_judge::exports::silt::judge::relations_by_index as by_index;
use crate::bindings::types::{Item, JudgeError, JudgeInfo, Question, Response};

/// `inner`, with its relations read from and kept in `cache`.
pub struct CachedRelations {
    inner: Arc<dyn BoundJudge>,
    cache: Arc<AnswerCache>,
}

impl CachedRelations {
    /// Wraps `inner`; only a deterministic judge's relations may be kept
    /// (the caller checks).
    pub fn new(inner: Arc<dyn BoundJudge>, cache: Arc<AnswerCache>) -> Self {
        CachedRelations { inner, cache }
    }

    fn key(&self, a: (&str, &str), b: (&str, &str)) -> String {
        AnswerCache::relation_key(self.inner.info(), self.inner.build(), a, b)
    }

    /// The relations for `keys`: the kept ones, and the rest from
    /// `ask(misses)`, which are kept when they are probabilities.
    async fn answer<'a, F>(
        &'a self,
        keys: Vec<String>,
        ask: F,
    ) -> Result<Vec<relations_import::Relation>, JudgeError>
    where
        F: FnOnce(Vec<usize>) -> Pending<'a, Result<Vec<relations_import::Relation>, JudgeError>>,
    {
        let kept = self.cache.get_relations(&keys);
        let misses: Vec<usize> = (0..keys.len()).filter(|&i| kept[i].is_none()).collect();
        if misses.is_empty() {
            return Ok(kept.into_iter().flatten().map(relation).collect());
        }
        let fresh = ask(misses.clone()).await?;
        if fresh.len() != misses.len() {
            // the engine refuses a wrong count with the judge's name
            return Ok(fresh);
        }
        let valid: Vec<(String, [f64; 4])> = misses
            .iter()
            .zip(&fresh)
            .map(|(&i, r)| (keys[i].clone(), four(r)))
            .filter(|(_, p)| p.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x)))
            .collect();
        self.cache.put_relations(&valid);
        let mut fresh = fresh.into_iter();
        Ok(kept
            .into_iter()
            .map(|k| match k {
                Some(p) => relation(p),
                None => fresh.next().expect("one fresh relation a miss"),
            })
            .collect())
    }
}

fn four(r: &relations_import::Relation) -> [f64; 4] {
    [r.merge, r.contradict, r.sibling, r.distinct]
}

fn relation([merge, contradict, sibling, distinct]: [f64; 4]) -> relations_import::Relation {
    relations_import::Relation {
        merge,
        contradict,
        sibling,
        distinct,
    }
}

impl BoundJudge for CachedRelations {
    fn info(&self) -> &JudgeInfo {
        self.inner.info()
    }

    fn build(&self) -> &str {
        self.inner.build()
    }

    fn ask<'a>(
        &'a self,
        question: &'a Question,
        items: &'a [Item],
    ) -> Pending<'a, Result<Response, JudgeError>> {
        self.inner.ask(question, items)
    }

    fn relate(
        &self,
        pairs: Vec<relations_import::LessonPair>,
    ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>> {
        let keys = pairs
            .iter()
            .map(|p| self.key((&p.a.when, &p.a.prefer), (&p.b.when, &p.b.prefer)))
            .collect();
        Box::pin(self.answer(keys, move |misses| {
            let mut pairs: Vec<Option<_>> = pairs.into_iter().map(Some).collect();
            let asked = misses.iter().filter_map(|&i| pairs[i].take()).collect();
            self.inner.relate(asked)
        }))
    }

    fn relate_by_index<'a>(
        &'a self,
        lessons: &'a [by_index::Lesson],
        pairs: &'a [(u32, u32)],
    ) -> Pending<'a, Result<Vec<relations_import::Relation>, JudgeError>> {
        let text = |i: u32| {
            let l = &lessons[i as usize];
            (l.when.as_str(), l.prefer.as_str())
        };
        let keys = pairs
            .iter()
            .map(|&(a, b)| self.key(text(a), text(b)))
            .collect();
        Box::pin(self.answer(keys, move |misses| {
            let asked: Vec<(u32, u32)> = misses.iter().map(|&i| pairs[i]).collect();
            Box::pin(async move { self.inner.relate_by_index(lessons, &asked).await })
        }))
    }

    fn embed(&self, texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>> {
        self.inner.embed(texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A judge that relates every pair as a merge at 0.9 and records how
    /// many pairs each call asked.
    struct Counting {
        info: JudgeInfo,
        asked: Mutex<Vec<usize>>,
    }

    impl BoundJudge for Counting {
        fn info(&self) -> &JudgeInfo {
            &self.info
        }
        fn ask<'a>(
            &'a self,
            _question: &'a Question,
            _items: &'a [Item],
        ) -> Pending<'a, Result<Response, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no ask".into())) })
        }
        fn relate(
            &self,
            pairs: Vec<relations_import::LessonPair>,
        ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>> {
            self.asked.lock().unwrap().push(pairs.len());
            let out = pairs
                .iter()
                .map(|p| {
                    // a pair about NaN answers NaN, which is never kept
                    let m = if p.a.when == "nan" { f64::NAN } else { 0.9 };
                    relation([m, 0.05, 0.0, 0.05])
                })
                .collect();
            Box::pin(async move { Ok(out) })
        }
        fn embed(&self, _texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no vectors".into())) })
        }
    }

    fn judge(version: &str) -> Arc<Counting> {
        Arc::new(Counting {
            info: JudgeInfo {
                name: "model".into(),
                version: version.into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 8,
            },
            asked: Mutex::new(Vec::new()),
        })
    }

    fn pair(a: &str, b: &str) -> relations_import::LessonPair {
        let lesson = |w: &str| relations_import::Lesson {
            when: w.into(),
            prefer: "do it".into(),
        };
        relations_import::LessonPair {
            a: lesson(a),
            b: lesson(b),
        }
    }

    #[tokio::test]
    async fn a_pair_is_asked_once_then_read_back_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Arc::new(AnswerCache::open(&dir.path().join("answers.sqlite")).unwrap());
        let inner = judge("1");
        let cached = CachedRelations::new(inner.clone(), cache.clone());
        let first = cached.relate(vec![pair("a", "b")]).await.unwrap();
        let again = cached
            .relate(vec![pair("c", "d"), pair("a", "b"), pair("nan", "x")])
            .await
            .unwrap();
        // only the new pairs went to the judge, and the kept one sits in
        // its place
        assert_eq!(*inner.asked.lock().unwrap(), [1, 2]);
        assert_eq!(four(&again[1]), four(&first[0]));
        assert_eq!(again.len(), 3);
        // the order of the two lessons is part of the pair; a relation
        // that is not a probability is asked again
        cached
            .relate(vec![pair("b", "a"), pair("nan", "x")])
            .await
            .unwrap();
        assert_eq!(*inner.asked.lock().unwrap(), [1, 2, 2]);
        // another version of the judge never reads these
        let other = judge("2");
        CachedRelations::new(other.clone(), cache)
            .relate(vec![pair("a", "b")])
            .await
            .unwrap();
        assert_eq!(*other.asked.lock().unwrap(), [1]);
    }

    #[tokio::test]
    async fn by_index_pairs_share_the_kept_relations() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Arc::new(AnswerCache::open(&dir.path().join("answers.sqlite")).unwrap());
        let inner = judge("1");
        let cached = CachedRelations::new(inner.clone(), cache);
        cached.relate(vec![pair("a", "b")]).await.unwrap();
        let lessons: Vec<by_index::Lesson> = ["a", "b", "c"]
            .iter()
            .map(|w| by_index::Lesson {
                when: w.to_string(),
                prefer: "do it".into(),
            })
            .collect();
        let out = cached
            .relate_by_index(&lessons, &[(0, 1), (1, 2)])
            .await
            .unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(*inner.asked.lock().unwrap(), [1, 1]);
    }
}
