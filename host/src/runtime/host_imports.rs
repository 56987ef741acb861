//! The imports engines see: the judge (forwarded to the chosen judge
//! plugin), the log, the clock, and for grep the repository's files (the
//! walk, reads and the parser's syntax).

use std::sync::Arc;

use crate::bindings::ask_engine::silt::host::{clock, log};
use crate::bindings::ask_engine::silt::judge::judge as judge_import;
use crate::bindings::judge::silt::judge::types;
use crate::bindings::types::{Answer, Item, JudgeError, JudgeInfo, Question, Response, Usage};

use super::answer_cache::{AnswerCache, core_answer, core_question};

use super::state::PluginState;

impl types::Host for PluginState {}

impl crate::bindings::ledger_engine::silt::ledger::types::Host for PluginState {}

impl judge_import::Host for PluginState {
    async fn info(&mut self) -> wasmtime::Result<JudgeInfo> {
        match &self.judge {
            Some(judge) => Ok(judge.info.clone()),
            None => wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            ),
        }
    }

    async fn ask(
        &mut self,
        question: Question,
        items: Vec<Item>,
    ) -> wasmtime::Result<Result<Response, JudgeError>> {
        let Some(judge) = self.judge.clone() else {
            wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            );
        };
        self.step(items.len() as u64);
        let Some(cache) = self.answers.clone() else {
            self.judge_calls += 1;
            return Ok(judge.ask(&question, &items).await);
        };
        let keys: Vec<String> = items
            .iter()
            .map(|i| AnswerCache::key(&judge.info, &question, &i.text))
            .collect();
        let cached = cache.get(&keys);
        let misses: Vec<usize> = (0..items.len()).filter(|&i| cached[i].is_none()).collect();
        self.cache_hits += (items.len() - misses.len()) as u32;
        let mut usage = Usage {
            units: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
        };
        let mut fresh = Vec::new();
        if !misses.is_empty() {
            let asked: Vec<Item> = misses.iter().map(|&i| items[i].clone()).collect();
            self.judge_calls += 1;
            let response = match judge.ask(&question, &asked).await {
                Ok(r) => r,
                Err(e) => return Ok(Err(e)),
            };
            if response.answers.len() != asked.len() {
                // the engine refuses this with the judge's name attached
                return Ok(Ok(response));
            }
            // only answers that pass validation are remembered
            let valid = silt_core::validate::validate_response(
                &core_question(&question),
                asked.len(),
                &silt_core::types::Response {
                    answers: response.answers.iter().map(core_answer).collect(),
                    usage: Default::default(),
                },
            )
            .is_ok();
            if valid {
                let entries: Vec<(String, Answer)> = misses
                    .iter()
                    .map(|&i| keys[i].clone())
                    .zip(response.answers.iter().cloned())
                    .collect();
                cache.put(&entries);
            }
            usage = response.usage;
            fresh = response.answers;
        }
        let mut fresh = fresh.into_iter();
        let answers = cached
            .into_iter()
            .map(|c| c.or_else(|| fresh.next()))
            .collect::<Option<Vec<Answer>>>()
            .unwrap_or_default();
        Ok(Ok(Response { answers, usage }))
    }
}

impl log::Host for PluginState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let plugin = &self.plugin;
        match level {
            log::Level::Debug => tracing::debug!(plugin, "{message}"),
            log::Level::Info => tracing::info!(plugin, "{message}"),
            log::Level::Warn => tracing::warn!(plugin, "{message}"),
            log::Level::Error => tracing::error!(plugin, "{message}"),
        }
        Ok(())
    }
}

impl clock::Host for PluginState {
    async fn now(&mut self) -> wasmtime::Result<f64> {
        Ok(self.fixed_now.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)
        }))
    }
}

impl crate::bindings::ledger_engine::silt::host::ids::Host for PluginState {
    async fn next_id(&mut self) -> wasmtime::Result<String> {
        Ok(silt_core::ids::new_id())
    }
}

impl crate::bindings::ledger_engine::silt::judge::relate::Host for PluginState {
    async fn relate(
        &mut self,
        pairs: Vec<crate::bindings::ledger_engine::silt::judge::relate::LessonPair>,
    ) -> wasmtime::Result<Result<Vec<types::Distribution>, JudgeError>> {
        let Some(judge) = self.judge.clone() else {
            wasmtime::bail!(
                "engine '{}' asked for a judge but none was bound",
                self.plugin
            );
        };
        let n = pairs.len() as u64;
        let out = judge.relate(pairs).await;
        if let Some(counter) = &self.related_pairs {
            counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(out)
    }
}

impl crate::bindings::ledger_engine::silt::embed::embed::Host for PluginState {
    async fn embed(
        &mut self,
        texts: Vec<String>,
    ) -> wasmtime::Result<
        Result<crate::bindings::ledger_engine::silt::embed::embed::Embedding, JudgeError>,
    > {
        use crate::bindings::ledger_engine::silt::embed::embed::Embedding;
        let Some(judge) = self.judge.clone() else {
            wasmtime::bail!(
                "engine '{}' asked for vectors but no judge was bound",
                self.plugin
            );
        };
        let answer = |vectors, c: [f64; 3]| Embedding {
            vectors,
            same_above: c[0],
            related_above: c[1],
            unrelated_below: c[2],
        };
        let Some(keeper) = self.vectors.clone() else {
            return Ok(judge.embed(texts).await.map(|e| {
                answer(
                    e.vectors,
                    [e.same_above, e.related_above, e.unrelated_below],
                )
            }));
        };
        // the judge embeds only what the ledger has not kept
        let model = format!("{}\u{0}{}", judge.info.name, judge.info.version);
        let (mut found, calibration) = keeper.lookup(&model, &texts);
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        if let Some(c) = calibration
            && missing.is_empty()
        {
            return Ok(Ok(answer(found.into_iter().flatten().collect(), c)));
        }
        let asked: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        let e = match judge.embed(asked.clone()).await {
            Ok(e) => e,
            Err(err) => return Ok(Err(err)),
        };
        let c = [e.same_above, e.related_above, e.unrelated_below];
        if e.vectors.len() != asked.len() {
            // the engine reports the mismatch
            return Ok(Ok(answer(e.vectors, c)));
        }
        keeper.remember(&model, &asked, &e.vectors, c);
        for (&i, v) in missing.iter().zip(e.vectors) {
            found[i] = Some(v);
        }
        Ok(Ok(answer(found.into_iter().flatten().collect(), c)))
    }
}

impl crate::bindings::ask_engine::silt::sieve::types::Host for PluginState {}

impl crate::bindings::verify_engine::silt::host::sources::Host for PluginState {
    async fn fetch(
        &mut self,
        locator: String,
    ) -> wasmtime::Result<Result<crate::bindings::verify_engine::silt::host::sources::Source, String>>
    {
        let Some(fetcher) = self.sources.clone() else {
            return Ok(Err(format!(
                "engine '{}' has no sources granted for this call",
                self.plugin
            )));
        };
        let fetched = fetcher.fetch(&locator).await;
        self.step(1);
        Ok(fetched.map(
            |s| crate::bindings::verify_engine::silt::host::sources::Source {
                text: s.text,
                version: s.version,
            },
        ))
    }
}

impl crate::bindings::ask_engine::silt::host::files::Host for PluginState {
    async fn walk(
        &mut self,
    ) -> wasmtime::Result<
        Result<Vec<crate::bindings::ask_engine::silt::host::files::FileEntry>, String>,
    > {
        use crate::bindings::ask_engine::silt::host::files::FileEntry;
        let Some(repo) = self.repo.as_mut() else {
            return Ok(Err("this call names no folder to walk".into()));
        };
        if repo.walked.is_none() {
            let beneath = match crate::beneath::Beneath::open(&repo.root) {
                Ok(b) => Arc::new(b),
                Err(e) => return Ok(Err(format!("cannot open {}: {e}", repo.root.display()))),
            };
            match crate::walk::walk(&repo.root, &repo.cache_dir) {
                Ok(walk) => {
                    repo.readable = walk
                        .files
                        .iter()
                        .filter(|f| !f.binary)
                        .map(|f| (f.path.clone(), f.relative.clone()))
                        .collect();
                    repo.walked = Some(walk.files);
                    repo.beneath = Some(beneath);
                    lock_notes(&repo.notes).skipped.extend(walk.skipped);
                }
                Err(e) => return Ok(Err(format!("{e:#}"))),
            }
        }
        Ok(Ok(repo
            .walked
            .iter()
            .flatten()
            .map(|f| FileEntry {
                path: f.path.clone(),
                binary: f.binary,
            })
            .collect()))
    }

    async fn read(&mut self, path: String) -> wasmtime::Result<Result<String, String>> {
        self.step(1);
        Ok(self.read_walked(&path))
    }

    async fn syntax(
        &mut self,
        path: String,
    ) -> wasmtime::Result<
        Result<Option<crate::bindings::ask_engine::silt::host::files::FileSyntax>, String>,
    > {
        use crate::bindings::ask_engine::silt::host::files::{FileSyntax, FunctionSpan};
        if crate::syntax::language_for(&path).is_none() {
            // no grammar: known without reading, but only for a walked path
            return Ok(self.walked_path(&path).map(|_| None));
        }
        Ok(self.read_walked(&path).map(|text| {
            crate::syntax::parse(&path, &text).map(|s| FileSyntax {
                definitions: s.definitions.into_iter().map(|n| n as u32).collect(),
                functions: s
                    .functions
                    .into_iter()
                    .map(|f| FunctionSpan {
                        name: f.name,
                        line_start: f.line_start as u32,
                        line_end: f.line_end as u32,
                    })
                    .collect(),
            })
        }))
    }
}

impl PluginState {
    /// Where a path of this call's walk is, relative to its root; an error
    /// for anything the walk did not keep as text: no `..`, no symlink,
    /// nothing ignored.
    fn walked_path(&self, path: &str) -> Result<std::path::PathBuf, String> {
        self.repo
            .as_ref()
            .and_then(|r| r.readable.get(path))
            .cloned()
            .ok_or_else(|| format!("'{path}' is not a text file of this walk"))
    }

    /// A walked text file's contents (its head, past the read cap), read
    /// beneath the root so a symlink swapped in since the walk leads nowhere.
    fn read_walked(&self, path: &str) -> Result<String, String> {
        let relative = self.walked_path(path)?;
        let repo = self.repo.as_ref().expect("a walked path has a grant");
        let beneath = repo
            .beneath
            .as_ref()
            .expect("a walked grant has its root open");
        let (text, cut) = crate::walk::read_text(beneath, &relative).map_err(|e| {
            let reason = format!("{e:#}");
            let mut notes = lock_notes(&repo.notes);
            if !notes.skipped.iter().any(|s| s.path == path) {
                notes.skipped.push(crate::walk::Skipped {
                    path: path.to_string(),
                    reason: reason.clone(),
                });
            }
            reason
        })?;
        if cut {
            lock_notes(&repo.notes)
                .read_in_part
                .insert(path.to_string());
        }
        Ok(text)
    }
}

/// The notes, even if a panicking holder poisoned the lock (they are plain
/// lists, never half-written).
fn lock_notes(
    notes: &std::sync::Mutex<super::state::WalkNotes>,
) -> std::sync::MutexGuard<'_, super::state::WalkNotes> {
    notes.lock().unwrap_or_else(|p| p.into_inner())
}

/// The longest stage name shown: a plugin's words reach the user's screen.
const MAX_STAGE_CHARS: usize = 80;

impl crate::bindings::ask_engine::silt::sieve::progress::Host for PluginState {
    async fn stage(&mut self, name: String, total: u64) -> wasmtime::Result<()> {
        if let Some(p) = &self.steps {
            let name: String = name
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_STAGE_CHARS)
                .collect();
            p.stage(&name, total);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::ask_engine::silt::host::files::Host as Files;
    use crate::plugins::manifest::Manifest;
    use crate::runtime::state::RepoGrant;

    #[tokio::test]
    async fn an_engine_reads_only_what_the_walk_kept() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(outer.path().join("secret.txt"), "secret").unwrap();
        std::fs::write(root.join(".gitignore"), "hidden.txt\n").unwrap();
        std::fs::write(root.join("a.txt"), "visible").unwrap();
        std::fs::write(root.join("hidden.txt"), "ignored").unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret.txt"), root.join("s.txt")).unwrap();
        let manifest =
            Manifest::parse(include_str!("../../builtin/ask.toml"), "built-in manifest").unwrap();
        let mut state = PluginState::new(&manifest).unwrap();

        // no grant: nothing to walk or read
        assert!(state.walk().await.unwrap().is_err());
        assert!(state.read("a.txt".into()).await.unwrap().is_err());

        state.repo = Some(RepoGrant::new(root.clone(), ".silt-cache"));
        let walked: Vec<String> = state
            .walk()
            .await
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(walked, [".gitignore", "a.txt"]);
        assert_eq!(
            state.read("a.txt".into()).await.unwrap().unwrap(),
            "visible"
        );
        for path in [
            "../secret.txt",
            "hidden.txt",
            "s.txt",
            "/etc/passwd",
            "./a.txt",
            "../repo/f.py",
        ] {
            let r = state.read(path.into()).await.unwrap();
            assert!(r.is_err(), "{path} was readable");
            let r = state.syntax(path.into()).await.unwrap();
            assert!(r.is_err(), "{path} was parsed");
        }
    }

    #[tokio::test]
    async fn an_engine_gets_the_syntax_of_walked_sources_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::write(root.join(".gitignore"), "hidden.py\n").unwrap();
        std::fs::write(
            root.join("x.go"),
            "package x\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
        )
        .unwrap();
        std::fs::write(root.join("hidden.py"), "def f(): pass\n").unwrap();
        std::fs::write(root.join("notes.txt"), "def f(): pass\n").unwrap();
        let manifest =
            Manifest::parse(include_str!("../../builtin/ask.toml"), "built-in manifest").unwrap();
        let mut state = PluginState::new(&manifest).unwrap();
        state.repo = Some(RepoGrant::new(root, ".silt-cache"));
        // nothing is parsed before the walk
        assert!(state.syntax("x.go".into()).await.unwrap().is_err());
        state.walk().await.unwrap().unwrap();
        let go = state.syntax("x.go".into()).await.unwrap().unwrap().unwrap();
        assert_eq!(go.definitions, [3]);
        let spans: Vec<(String, u32, u32)> = go
            .functions
            .into_iter()
            .map(|f| (f.name, f.line_start, f.line_end))
            .collect();
        assert_eq!(spans, [("Add".to_string(), 3, 5)]);
        assert!(matches!(
            state.syntax("notes.txt".into()).await.unwrap(),
            Ok(None)
        ));
        assert!(state.syntax("hidden.py".into()).await.unwrap().is_err());
        assert!(state.syntax("missing.py".into()).await.unwrap().is_err());
    }
}
