//! `silt:host/files`: the repository a grep call names, as the host walked
//! it. The engine sees only the files the walk kept (ignore rules
//! honoured, symlinks never followed) and reads and parses them only
//! through here, beneath the root, so it cannot leave it. The walk and
//! every read run on tokio's blocking threads under a deadline: a slow or
//! hung file system holds this call, never the server's async workers.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};

use super::progress::Progress;
use crate::bindings::ask_engine::silt::host::files::{self, FileEntry, FileSyntax, FunctionSpan};
use silt_files::beneath::Beneath;
use silt_files::walk::{Skipped, WalkedFile};

/// The longest a walk may take before the call is answered with an error.
pub const WALK_DEADLINE: Duration = Duration::from_secs(60);
/// The longest one file read may take.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);

/// A folder an engine may walk and read for this call only.
#[derive(Debug, Clone)]
pub struct RepoGrant {
    /// The folder, opened by the caller: the walk and every read resolve
    /// beneath this handle.
    root: Arc<Beneath>,
    /// The name of a cache folder inside the root, never walked.
    pub cache_dir: String,
    walked: Option<Vec<WalkedFile>>,
    /// The walk's text files by path (relative): all `read` may open.
    readable: HashMap<String, PathBuf>,
    /// What the call could not read in full, for its answer.
    pub notes: Arc<Mutex<WalkNotes>>,
}

/// What a grep left out or read only in part.
#[derive(Debug, Clone, Default)]
pub struct WalkNotes {
    /// Entries not ranked at all, and why.
    pub skipped: Vec<Skipped>,
    /// Files over the read cap, ranked on their head only.
    pub read_in_part: BTreeSet<String>,
}

impl RepoGrant {
    /// A grant of the open folder `root`, not yet walked.
    pub fn new(root: Beneath, cache_dir: &str) -> Self {
        RepoGrant {
            root: Arc::new(root),
            cache_dir: cache_dir.to_string(),
            walked: None,
            readable: Default::default(),
            notes: Default::default(),
        }
    }
}

/// One store's files capability: a grant for grep calls, none otherwise.
#[derive(Default)]
pub struct Files {
    repo: Option<RepoGrant>,
    progress: Progress,
}

impl Files {
    /// The folder this call may walk (None: none), each read counted as progress.
    pub fn new(repo: Option<RepoGrant>, progress: Progress) -> Self {
        Files { repo, progress }
    }

    /// Where a path of this call's walk is, relative to its root; an error
    /// for anything the walk did not keep as text: no `..`, no symlink,
    /// nothing ignored.
    fn walked_path(&self, path: &str) -> Result<PathBuf, String> {
        self.repo
            .as_ref()
            .and_then(|r| r.readable.get(path))
            .cloned()
            .ok_or_else(|| format!("'{path}' is not a text file of this walk"))
    }

    /// A walked text file's contents (its head, past the read cap), read
    /// beneath the root so a symlink swapped in since the walk leads nowhere.
    async fn read_walked(&self, path: &str) -> Result<String, String> {
        let relative = self.walked_path(path)?;
        let repo = self.repo.as_ref().expect("a walked path has a grant");
        let root = repo.root.clone();
        let read = off_the_workers(READ_DEADLINE, move || {
            silt_files::walk::read_text(&root, &relative).map_err(|e| format!("{e:#}"))
        })
        .await
        .and_then(|r| r);
        let (text, cut) = read.inspect_err(|reason| {
            let mut notes = lock_notes(&repo.notes);
            if !notes.skipped.iter().any(|s| s.path == path) {
                notes.skipped.push(Skipped {
                    path: path.to_string(),
                    reason: reason.clone(),
                });
            }
        })?;
        if cut {
            lock_notes(&repo.notes)
                .read_in_part
                .insert(path.to_string());
        }
        Ok(text)
    }
}

impl files::Host for Files {
    async fn walk(&mut self) -> wasmtime::Result<Result<Vec<FileEntry>, String>> {
        let Some(repo) = self.repo.as_mut() else {
            return Ok(Err("this call names no folder to walk".into()));
        };
        if repo.walked.is_none() {
            let (root, cache_dir) = (repo.root.clone(), repo.cache_dir.clone());
            let walked = off_the_workers(WALK_DEADLINE, move || {
                silt_files::walk::walk(&root, &cache_dir).map_err(|e| format!("{e:#}"))
            })
            .await
            .and_then(|r| r);
            match walked {
                Ok(walk) => {
                    repo.readable = walk
                        .files
                        .iter()
                        .filter(|f| !f.binary)
                        .map(|f| (f.path.clone(), f.relative.clone()))
                        .collect();
                    repo.walked = Some(walk.files);
                    lock_notes(&repo.notes).skipped.extend(walk.skipped);
                }
                Err(e) => return Ok(Err(e)),
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
        self.progress.step(1);
        Ok(self.read_walked(&path).await)
    }

    async fn syntax(
        &mut self,
        path: String,
    ) -> wasmtime::Result<Result<Option<FileSyntax>, String>> {
        if crate::syntax::language_for(&path).is_none() {
            // no grammar: known without reading, but only for a walked path
            return Ok(self.walked_path(&path).map(|_| None));
        }
        Ok(self.read_walked(&path).await.map(|text| {
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

/// Runs blocking file work on tokio's blocking threads, waiting at most
/// `deadline` for it (the work itself cannot be stopped, but the call and
/// the async workers go on).
async fn off_the_workers<T: Send + 'static>(
    deadline: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    match tokio::time::timeout(deadline, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(format!("reading the folder failed ({e})")),
        Err(_) => Err(format!(
            "the file system did not answer within {} s",
            deadline.as_secs()
        )),
    }
}

/// The notes, even if a panicking holder poisoned the lock (they are plain
/// lists, never half-written).
fn lock_notes(notes: &Mutex<WalkNotes>) -> MutexGuard<'_, WalkNotes> {
    notes.lock().unwrap_or_else(|p| p.into_inner())
}

/// Links `silt:host/files` to the [`Files`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Files,
) -> wasmtime::Result<()> {
    files::add_to_linker::<T, HasSelf<Files>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use files::Host;

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

        // no grant: nothing to walk or read
        let mut files = Files::default();
        assert!(files.walk().await.unwrap().is_err());
        assert!(files.read("a.txt".into()).await.unwrap().is_err());

        let mut files = Files::new(
            Some(RepoGrant::new(Beneath::open(&root).unwrap(), ".silt-cache")),
            Progress::default(),
        );
        let walked: Vec<String> = files
            .walk()
            .await
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(walked, [".gitignore", "a.txt"]);
        assert_eq!(
            files.read("a.txt".into()).await.unwrap().unwrap(),
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
            let r = files.read(path.into()).await.unwrap();
            assert!(r.is_err(), "{path} was readable");
            let r = files.syntax(path.into()).await.unwrap();
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
        let mut files = Files::new(
            Some(RepoGrant::new(Beneath::open(&root).unwrap(), ".silt-cache")),
            Progress::default(),
        );
        // nothing is parsed before the walk
        assert!(files.syntax("x.go".into()).await.unwrap().is_err());
        files.walk().await.unwrap().unwrap();
        let go = files.syntax("x.go".into()).await.unwrap().unwrap().unwrap();
        assert_eq!(go.definitions, [3]);
        let spans: Vec<(String, u32, u32)> = go
            .functions
            .into_iter()
            .map(|f| (f.name, f.line_start, f.line_end))
            .collect();
        assert_eq!(spans, [("Add".to_string(), 3, 5)]);
        assert!(matches!(
            files.syntax("notes.txt".into()).await.unwrap(),
            Ok(None)
        ));
        assert!(files.syntax("hidden.py".into()).await.unwrap().is_err());
        assert!(files.syntax("missing.py".into()).await.unwrap().is_err());
    }
}
