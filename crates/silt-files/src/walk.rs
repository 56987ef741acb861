//! The repository walk grep scores: ignore files honoured as git does,
//! symlinks never followed, VCS folders and silt's cache skipped, binary
//! files flagged, names in order. The matching is ripgrep's `ignore`
//! crate; silt writes no gitignore matcher of its own.
//!
//! The walk goes entry by entry from the folder's open handle (each
//! subfolder opened from its parent's handle, never following a symlink),
//! never by path: a folder swapped for a symlink while silt walks can
//! neither list nor open anything outside the root. Every file is opened
//! without blocking and its descriptor's type checked before it is read, so
//! a FIFO, a socket or a device is listed as skipped and never waited on.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cap_primitives::fs::{FileTypeExt, FollowSymlinks};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::beneath::{Beneath, BeneathError, open_regular};

/// The folder name of grep's cache inside a repository; never walked.
pub const CACHE_DIR: &str = ".silt-cache";

/// Bytes looked at for a NUL to call a file binary.
pub const BINARY_PROBE: usize = 8192;

/// Folders never walked.
const SKIPPED_DIRS: [&str; 3] = [".git", ".hg", ".svn"];

/// The most of one file grep reads: a larger file is scored on its head
/// (and listed as such), so one huge log cannot exhaust an engine's memory.
pub const MAX_READ_BYTES: usize = 1 << 20;

/// Folders nested deeper than this below the root are listed as skipped:
/// each level holds one open descriptor while its children are walked, so
/// a hostile tree cannot take all of the server's.
pub const MAX_DEPTH: usize = 128;

/// The most of one ignore file read; rules past it are not applied.
const MAX_RULES_BYTES: usize = 1 << 20;

/// One file the walk found.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkedFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// Relative to the root, as the file system names it.
    pub relative: PathBuf,
    /// Its first [`BINARY_PROBE`] bytes hold a NUL.
    pub binary: bool,
}

/// Something the walk could not take in, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    /// Relative to the root, `/`-separated, bytes that are not UTF-8 replaced.
    pub path: String,
    /// In words, for the caller: "cannot be read (...)", "not a regular file ...".
    pub reason: String,
}

/// What a walk found: the files, and what it had to leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Walk {
    /// The files to read, depth first, each folder's children by name.
    pub files: Vec<WalkedFile>,
    /// Entries left out for a reason the caller should hear (ignore rules,
    /// symlinks and VCS folders are left out silently).
    pub skipped: Vec<Skipped>,
}

/// Every file beneath `root` that the ignore rules keep, depth first with
/// each folder's children sorted by name.
/// `cache_dir` names a folder (silt's grep cache) to skip as well.
/// An entry that cannot be read (permissions, a name too long, a clash of
/// non-UTF-8 names, a FIFO or a device) is listed in `skipped`; the rest is
/// still walked.
pub fn walk(root: &Beneath, cache_dir: &str) -> Result<Walk> {
    let shown = root.root().to_path_buf();
    let mut walker = Walker {
        above: ancestor_rules(root),
        shown,
        cache_dir,
        levels: Vec::new(),
        names: Default::default(),
        out: Walk::default(),
    };
    let entries =
        list(root.dir()).with_context(|| format!("cannot read {}", root.root().display()))?;
    walker.visit(root.dir(), Path::new(""), entries, 0);
    Ok(walker.out)
}

/// What kind of entry a listing holds (its type as listed, never followed).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, a socket or a device.
    Special,
}

/// One folder's entries, sorted by name; entries whose type cannot be
/// read come back as errors to list.
fn list(dir: &std::fs::File) -> std::io::Result<Vec<(OsString, std::io::Result<Kind>)>> {
    let mut entries = Vec::new();
    for entry in cap_primitives::fs::read_base_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type().map(|t| {
            if t.is_symlink() {
                Kind::Symlink
            } else if t.is_dir() {
                Kind::Dir
            } else if t.is_file() {
                Kind::File
            } else {
                debug_assert!(
                    t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device()
                );
                Kind::Special
            }
        });
        entries.push((entry.file_name(), kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// The ignore files of one folder on the way down.
struct Level {
    /// `.ignore`: over any `.gitignore`, at any depth (as ripgrep has it).
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
}

struct Walker<'a> {
    /// The root's resolved name: ignore patterns match against paths under it.
    shown: PathBuf,
    cache_dir: &'a str,
    /// Rules of the repository's folders above the root, nearest first.
    above: Vec<Gitignore>,
    /// Rules of the folders from the root down to the one being walked.
    levels: Vec<Level>,
    /// Paths given out so far (two non-UTF-8 names can read alike).
    names: std::collections::HashSet<String>,
    out: Walk,
}

impl Walker<'_> {
    fn visit(
        &mut self,
        dir: &std::fs::File,
        rel: &Path,
        entries: Vec<(OsString, std::io::Result<Kind>)>,
        depth: usize,
    ) {
        let here = self.shown.join(rel);
        self.levels.push(Level {
            ignore: rules_in(dir, &here, ".ignore"),
            gitignore: rules_in(dir, &here, ".gitignore"),
        });
        for (name, kind) in entries {
            let child = rel.join(&name);
            let kind = match kind {
                Ok(k) => k,
                Err(e) => {
                    self.skip(&child, format!("cannot be read ({e})"));
                    continue;
                }
            };
            let is_dir = kind == Kind::Dir;
            if kind == Kind::Symlink
                || (is_dir && (SKIPPED_DIRS.iter().any(|d| name == *d) || name == self.cache_dir))
                || self.ignored(&self.shown.join(&child), is_dir)
            {
                continue;
            }
            match kind {
                Kind::Dir if depth + 1 > MAX_DEPTH => {
                    self.skip(&child, format!("nested deeper than {MAX_DEPTH} folders"))
                }
                Kind::Dir => {
                    let opened = cap_primitives::fs::open_dir_nofollow(dir, Path::new(&name))
                        .and_then(|sub| Ok((list(&sub)?, sub)));
                    match opened {
                        Ok((entries, sub)) => self.visit(&sub, &child, entries, depth + 1),
                        Err(e) => self.skip(&child, format!("cannot be read ({e})")),
                    }
                }
                Kind::File => self.take_file(dir, &name, child),
                Kind::Special => self.skip(
                    &child,
                    "not a regular file (a FIFO, socket or device)".into(),
                ),
                Kind::Symlink => unreachable!("symlinks are passed over above"),
            }
        }
        self.levels.pop();
    }

    fn take_file(&mut self, dir: &std::fs::File, name: &OsString, relative: PathBuf) {
        let path = lossy(&relative);
        if !self.names.insert(path.clone()) {
            self.out.skipped.push(Skipped {
                path,
                reason: "its name is not UTF-8 and reads the same as another file's".into(),
            });
            return;
        }
        match probe_binary(dir, Path::new(name)) {
            Ok(binary) => self.out.files.push(WalkedFile {
                path,
                relative,
                binary,
            }),
            Err(BeneathError::NotAFile) => self.out.skipped.push(Skipped {
                path,
                reason: "not a regular file (a FIFO, socket or device)".into(),
            }),
            Err(e) => self.out.skipped.push(Skipped {
                path,
                reason: format!("cannot be read ({e})"),
            }),
        }
    }

    fn skip(&mut self, relative: &Path, reason: String) {
        self.out.skipped.push(Skipped {
            path: lossy(relative),
            reason,
        });
    }

    /// Whether the ignore rules leave `path` out. The repository's rules
    /// above the root come first (a negation inside the tree cannot
    /// re-include what they ignore); then, as ripgrep's `ignore` crate
    /// orders them, the nearest `.ignore` with an opinion, then the nearest
    /// `.gitignore`.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for rules in &self.above {
            match rules.matched_path_or_any_parents(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => break,
                Match::None => {}
            }
        }
        let ignore = self.levels.iter().rev().filter_map(|l| l.ignore.as_ref());
        let git = self
            .levels
            .iter()
            .rev()
            .filter_map(|l| l.gitignore.as_ref());
        for rules in ignore.chain(git) {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// The rules of the ignore file `name` in `dir` (named `here`), read from
/// the folder's handle; None when there is none. A symlinked ignore file
/// is not followed.
fn rules_in(dir: &std::fs::File, here: &Path, name: &str) -> Option<Gitignore> {
    let file = open_regular(dir, Path::new(name), false).ok()?;
    let mut text = String::new();
    if let Err(e) = file.take(MAX_RULES_BYTES as u64).read_to_string(&mut text) {
        tracing::warn!("ignore file {} unread: {e}", here.join(name).display());
        return None;
    }
    let mut b = GitignoreBuilder::new(here);
    for line in text.lines() {
        if let Err(e) = b.add_line(Some(here.join(name)), line) {
            tracing::warn!(
                "ignore file {} partly unused: {e}",
                here.join(name).display()
            );
        }
    }
    b.build().ok()
}

/// `p` as a `/`-separated string, names that are not UTF-8 replaced.
fn lossy(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// When the root is inside a repository but not its top, the rules of the
/// folders above it up to the one holding `.git`, nearest first, each
/// matching relative to its own folder (`.ignore` over `.gitignore`).
/// Outside any repository, none: other folders' rules are not this tree's.
/// They are read by name: they lie outside the root and only ever narrow
/// what the walk lists from the root's own handle.
fn ancestor_rules(root: &Beneath) -> Vec<Gitignore> {
    if cap_primitives::fs::stat(root.dir(), Path::new(".git"), FollowSymlinks::No).is_ok() {
        return vec![];
    }
    let mut dirs = Vec::new();
    let mut at = root.root().parent();
    while let Some(dir) = at {
        dirs.push(dir);
        if dir.join(".git").exists() {
            return dirs
                .into_iter()
                .filter_map(|d| {
                    let mut b = GitignoreBuilder::new(d);
                    let mut any = false;
                    // later files take precedence: .gitignore, then .ignore
                    for name in [".gitignore", ".ignore"] {
                        let f = d.join(name);
                        if f.is_file() {
                            any = true;
                            if let Some(e) = b.add(&f) {
                                tracing::warn!("ignore file {} partly unused: {e}", f.display());
                            }
                        }
                    }
                    any.then(|| b.build().ok()).flatten()
                })
                .collect();
        }
        at = dir.parent();
    }
    vec![]
}

/// True when the first `BINARY_PROBE` bytes of the regular file `name` in
/// `dir` hold a NUL.
fn probe_binary(dir: &std::fs::File, name: &Path) -> Result<bool, BeneathError> {
    let mut f = open_regular(dir, name, false)?;
    let mut buf = vec![0u8; BINARY_PROBE];
    let mut filled = 0;
    while filled < buf.len() {
        let n = f.read(&mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(buf[..filled].contains(&0))
}

/// A text file's contents beneath `root`, invalid UTF-8 replaced; past
/// [`MAX_READ_BYTES`] only its head, cut at the last line break, and
/// `true` for "cut".
pub fn read_text(root: &crate::beneath::Beneath, relative: &Path) -> Result<(String, bool)> {
    let head = root
        .read_head(relative, MAX_READ_BYTES)
        .with_context(|| format!("cannot read {}", relative.display()))?;
    let mut bytes = head.bytes;
    if head.cut
        && let Some(end) = bytes.iter().rposition(|b| *b == b'\n')
    {
        bytes.truncate(end + 1);
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), head.cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, body) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        dir
    }

    fn walk_at(root: &Path) -> Result<Walk> {
        walk(&Beneath::open(root).unwrap(), ".silt-cache")
    }

    fn paths(root: &Path) -> Vec<String> {
        walk_at(root)
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.path)
            .collect()
    }

    #[test]
    fn gitignore_rules_apply_without_a_git_folder() {
        // the spec's case
        let t = tree(&[
            (".gitignore", "build/\n*.log\n"),
            ("a.py", "x"),
            ("pkg/b.py", "x"),
            ("build/c.py", "x"),
            ("debug.log", "x"),
        ]);
        assert_eq!(paths(t.path()), [".gitignore", "a.py", "pkg/b.py"]);
    }

    #[test]
    fn a_nested_ignore_applies_below_it_and_negation_re_includes() {
        let t = tree(&[
            (".gitignore", "*.log\n"),
            ("keep.log", "x"),
            ("sub/.gitignore", "!keep.log\n"),
            ("sub/keep.log", "x"),
            ("sub/other.log", "x"),
            ("sub/deeper/keep.log", "x"),
            (".ignore", "secret.txt\n"),
            ("secret.txt", "x"),
        ]);
        assert_eq!(
            paths(t.path()),
            [
                ".gitignore",
                ".ignore",
                "sub/.gitignore",
                "sub/deeper/keep.log",
                "sub/keep.log"
            ]
        );
    }

    #[test]
    fn vcs_and_cache_folders_are_skipped_and_binaries_flagged() {
        let t = tree(&[
            (".git/config", "x"),
            (".hg/x", "x"),
            (".svn/x", "x"),
            (".silt-cache/answers", "x"),
            ("img.bin", "GIF\0\0data"),
            ("z.txt", "text"),
        ]);
        let files = walk_at(t.path()).unwrap().files;
        let got: Vec<(&str, bool)> = files.iter().map(|f| (f.path.as_str(), f.binary)).collect();
        assert_eq!(got, [("img.bin", true), ("z.txt", false)]);
    }

    #[test]
    fn ancestors_ignore_files_apply_up_to_the_repository_root() {
        let t = tree(&[
            (
                ".gitignore",
                "*.md
",
            ),
            ("repo/.git/HEAD", "x"),
            (
                "repo/.gitignore",
                "*.tmp
",
            ),
            ("repo/inner/a.tmp", "x"),
            ("repo/inner/b.md", "x"),
            ("repo/inner/c.py", "x"),
        ]);
        // above the .git folder, the outer .gitignore is not the repo's
        assert_eq!(paths(&t.path().join("repo/inner")), ["b.md", "c.py"]);
        // patterns stay relative to the folder of their file
        std::fs::write(t.path().join("repo/.gitignore"), "inner/c.py\n").unwrap();
        assert_eq!(paths(&t.path().join("repo/inner")), ["a.tmp", "b.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_never_followed() {
        let outside = tree(&[("secret.txt", "x")]);
        let t = tree(&[("a.txt", "x")]);
        std::os::unix::fs::symlink(outside.path(), t.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), t.path().join("s.txt"))
            .unwrap();
        assert_eq!(paths(t.path()), ["a.txt"]);
    }

    #[test]
    fn children_come_sorted_by_name_depth_first() {
        let t = tree(&[("a.py", "x"), ("a/b.py", "x"), ("B.txt", "x")]);
        assert_eq!(paths(t.path()), ["B.txt", "a/b.py", "a.py"]);
    }

    #[test]
    fn text_is_read_with_replacement() {
        let t = tree(&[]);
        std::fs::write(t.path().join("bad.txt"), b"ok \xff end").unwrap();
        let root = crate::beneath::Beneath::open(t.path()).unwrap();
        assert_eq!(
            read_text(&root, Path::new("bad.txt")).unwrap(),
            ("ok \u{fffd} end".to_string(), false)
        );
    }

    #[test]
    fn a_huge_file_is_read_only_up_to_the_cap_on_a_line_break() {
        let t = tree(&[]);
        let line = "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n";
        let big = line.repeat(MAX_READ_BYTES / line.len() * 3);
        std::fs::write(t.path().join("big.log"), &big).unwrap();
        let root = crate::beneath::Beneath::open(t.path()).unwrap();
        let (text, cut) = read_text(&root, Path::new("big.log")).unwrap();
        assert!(cut);
        assert!(text.len() <= MAX_READ_BYTES && text.len() > MAX_READ_BYTES - line.len());
        assert!(text.ends_with('\n'));
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_entries_are_listed_and_the_rest_is_walked() {
        use std::os::unix::fs::PermissionsExt;
        let t = tree(&[
            ("a.txt", "x"),
            ("locked/b.txt", "x"),
            ("secret.txt", "x"),
            ("z.txt", "x"),
        ]);
        let mode = |p: &str, m: u32| {
            std::fs::set_permissions(t.path().join(p), std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode("locked", 0o000);
        mode("secret.txt", 0o000);
        // root reads everything: then nothing is unreadable to test
        let as_root = std::fs::read_dir(t.path().join("locked")).is_ok();
        let w = walk_at(t.path()).unwrap();
        mode("locked", 0o755);
        mode("secret.txt", 0o644);
        let files: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
        if as_root {
            eprintln!("NOTE: running as root; permissions cannot make entries unreadable");
            assert_eq!(files, ["a.txt", "locked/b.txt", "secret.txt", "z.txt"]);
            return;
        }
        assert_eq!(files, ["a.txt", "z.txt"]);
        let skipped: Vec<&str> = w.skipped.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(skipped, ["locked", "secret.txt"], "{:?}", w.skipped);
        assert!(
            w.skipped
                .iter()
                .all(|s| s.reason.contains("cannot be read"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_tree_deeper_than_a_path_may_be_long_still_walks() {
        let t = tree(&[("top.txt", "x")]);
        // 3000 levels made relative to each parent's handle: the full path
        // outgrows PATH_MAX (4096) long before the bottom
        let c = std::ffi::CString::new(t.path().to_str().unwrap()).unwrap();
        let mut fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
        let d = std::ffi::CString::new("d").unwrap();
        for _ in 0..3000 {
            assert_eq!(unsafe { libc::mkdirat(fd, d.as_ptr(), 0o755) }, 0);
            let next = unsafe { libc::openat(fd, d.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
            assert!(next >= 0);
            unsafe { libc::close(fd) };
            fd = next;
        }
        unsafe { libc::close(fd) };
        let w = walk_at(t.path());
        // remove_dir_all cannot name the deepest folders; rm walks by handle
        let removed = std::process::Command::new("rm")
            .arg("-rf")
            .arg(t.path().join("d"))
            .status();
        let w = w.unwrap();
        assert_eq!(w.files.len(), 1);
        assert_eq!(w.files[0].path, "top.txt");
        assert!(!w.skipped.is_empty());
        assert!(removed.unwrap().success());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn names_that_are_not_utf8_and_read_alike_are_not_hidden() {
        use std::os::unix::ffi::OsStrExt;
        let t = tree(&[]);
        let a = std::ffi::OsStr::from_bytes(b"n\xff.txt");
        let b = std::ffi::OsStr::from_bytes(b"n\xfe.txt");
        std::fs::write(t.path().join(a), "one").unwrap();
        std::fs::write(t.path().join(b), "two").unwrap();
        let w = walk_at(t.path()).unwrap();
        assert_eq!(w.files.len(), 1);
        assert_eq!(w.skipped.len(), 1);
        assert_eq!(w.skipped[0].path, "n\u{fffd}.txt");
        assert!(w.skipped[0].reason.contains("not UTF-8"), "{:?}", w.skipped);
    }

    /// A FIFO and a socket in the tree are listed as skipped, not walked
    /// into or waited on: a plain open of the FIFO would block until a
    /// writer came.
    #[cfg(unix)]
    #[test]
    fn fifos_and_sockets_are_skipped_without_blocking() {
        let t = tree(&[("a.txt", "x")]);
        let fifo = std::ffi::CString::new(t.path().join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let _sock = std::os::unix::net::UnixListener::bind(t.path().join("sock")).unwrap();
        let w = walk_at(t.path()).unwrap();
        let files: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["a.txt"]);
        let skipped: Vec<(&str, bool)> = w
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason.contains("not a regular file")))
            .collect();
        assert_eq!(skipped, [("pipe", true), ("sock", true)]);
    }

    /// A regular file swapped for a FIFO after it was listed is opened
    /// without blocking and refused on its descriptor's type.
    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_fifo_is_refused_on_its_descriptor() {
        let t = tree(&[]);
        let fifo = std::ffi::CString::new(t.path().join("f").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let dir = Beneath::open(t.path()).unwrap();
        assert!(matches!(
            probe_binary(dir.dir(), Path::new("f")),
            Err(BeneathError::NotAFile)
        ));
    }

    /// A subfolder swapped with a symlink to an outside folder (atomic
    /// `renameat2` exchanges, as fast as they go) while the tree is walked
    /// again and again: no walk ever lists a name from outside. The root
    /// itself is swapped too, after it was opened: the walk stays in the
    /// folder it opened.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_swapped_for_a_symlink_never_lists_outside_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("d/inside.txt"), "inside").unwrap();
        std::fs::write(outside.join("SECRET.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("d.link")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("root.link")).unwrap();
        let opened = Beneath::open(&root).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swap = |a: PathBuf, b: PathBuf| crate::beneath::swap_until(a, b, stop.clone());
        let inner = swap(root.join("d"), root.join("d.link"));
        let base = swap(root.clone(), dir.path().join("root.link"));
        let (mut walks, mut saw_inside) = (0, 0);
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(20) && walks < 3000 {
            let w = walk(&opened, ".silt-cache").unwrap();
            let names: Vec<&str> = w
                .files
                .iter()
                .map(|f| f.path.as_str())
                .chain(w.skipped.iter().map(|s| s.path.as_str()))
                .collect();
            assert!(
                !names.iter().any(|n| n.contains("SECRET")),
                "a walk listed a name from outside: {names:?}"
            );
            saw_inside += usize::from(names.contains(&"d/inside.txt"));
            walks += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let swaps = (inner.join().unwrap(), base.join().unwrap());
        assert!(
            swaps.0 > 100 && swaps.1 > 100,
            "too few swaps to prove anything: {swaps:?}"
        );
        assert!(saw_inside > 0, "no walk ever saw the folder in place");
    }
}
