//! The two relation exports of a judge that relates lessons, written once.

/// Implements `silt:judge/relations` and `silt:judge/relations-by-index`
/// on `$judge` from `$relate`, a function from lesson pairs
/// (`&[(silt_core::ledger::relate::Lesson, Lesson)]`) to each pair's
/// `[merge, contradict, sibling, distinct]` or a `JudgeError`: a model
/// judge writes only how it relates a batch. A macro because each
/// component's bindings generate their own export modules (`exports::…`
/// at the call site).
#[macro_export]
macro_rules! lesson_relations {
    ($judge:ty, $relate:path) => {
        impl exports::silt::judge::relations::Guest for $judge {
            fn relate(
                pairs: Vec<exports::silt::judge::relations::LessonPair>,
            ) -> Result<Vec<exports::silt::judge::relations::Relation>, $crate::types::JudgeError>
            {
                fn view(
                    l: &exports::silt::judge::relations::Lesson,
                ) -> silt_core::ledger::relate::Lesson<'_> {
                    silt_core::ledger::relate::Lesson {
                        when: &l.when,
                        prefer: &l.prefer,
                    }
                }
                let lessons: Vec<_> = pairs.iter().map(|p| (view(&p.a), view(&p.b))).collect();
                Ok($relate(&lessons)?
                    .into_iter()
                    .map(|[merge, contradict, sibling, distinct]| {
                        exports::silt::judge::relations::Relation {
                            merge,
                            contradict,
                            sibling,
                            distinct,
                        }
                    })
                    .collect())
            }
        }

        impl exports::silt::judge::relations_by_index::Guest for $judge {
            fn relate(
                lessons: Vec<exports::silt::judge::relations_by_index::Lesson>,
                pairs: Vec<(u32, u32)>,
            ) -> Result<
                Vec<exports::silt::judge::relations_by_index::Relation>,
                $crate::types::JudgeError,
            > {
                let pairs = silt_core::ledger::relate::pairs_by_index(&lessons, &pairs, |l| {
                    silt_core::ledger::relate::Lesson {
                        when: &l.when,
                        prefer: &l.prefer,
                    }
                })
                .map_err($crate::types::JudgeError::InvalidQuestion)?;
                Ok($relate(&pairs)?
                    .into_iter()
                    .map(|[merge, contradict, sibling, distinct]| {
                        exports::silt::judge::relations_by_index::Relation {
                            merge,
                            contradict,
                            sibling,
                            distinct,
                        }
                    })
                    .collect())
            }
        }
    };
}
