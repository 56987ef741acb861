//! The repository walk grep scores: ignore files honoured as git does,
//! symlinks never followed, VCS folders and silt's cache skipped, binary
//! files flagged, names in order. The matching is ripgrep's `ignore`
//! crate; silt writes no gitignore matcher of its own.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The folder name of grep's cache inside a repository; never walked.
pub const CACHE_DIR: &str = ".silt-cache";

/// Bytes looked at for a NUL to call a file binary.
pub const BINARY_PROBE: usize = 8192;

/// Folders never walked.
const SKIPPED_DIRS: [&str; 3] = [".git", ".hg", ".svn"];

/// The most of one file grep reads: a larger file is scored on its head
/// (and listed as such), so one huge log cannot exhaust an engine's memory.
pub const MAX_READ_BYTES: usize = 1 << 20;

/// One file the walk found.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkedFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// Relative to the root, as the file system names it.
    pub relative: PathBuf,
    pub binary: bool,
}

/// Something the walk could not take in, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What a walk found: the files, and what it had to leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Walk {
    pub files: Vec<WalkedFile>,
    pub skipped: Vec<Skipped>,
}

/// Every file under `root` that the ignore rules keep, depth first with
/// each folder's children sorted by name.
/// `cache_dir` names a folder (silt's grep cache) to skip as well.
/// An entry that cannot be read (permissions, a name too long, a clash of
/// non-UTF-8 names) is listed in `skipped`; the rest is still walked.
pub fn walk(root: &Path, cache_dir: &str) -> Result<Walk> {
    if !root.is_dir() {
        bail!("{} is not a folder", root.display());
    }
    let cache_dir = cache_dir.to_string();
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let root = root.as_path();
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        // the crate would read every ancestor's ignore files (it only stops
        // at a .git folder when it requires one); the repository's own are
        // added below instead
        .parents(false)
        .ignore(true)
        .git_ignore(true);
    let above = ancestor_rules(root);
    let walker = builder
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if is_dir && (SKIPPED_DIRS.contains(&name.as_ref()) || name == cache_dir) {
                return false;
            }
            // the nearest ancestor with an opinion decides
            for rules in &above {
                match rules.matched_path_or_any_parents(e.path(), is_dir) {
                    ignore::Match::Ignore(_) => return false,
                    ignore::Match::Whitelist(_) => return true,
                    ignore::Match::None => {}
                }
            }
            true
        })
        .build();
    let mut out = Walk::default();
    let mut names = std::collections::HashSet::new();
    let lossy = |p: &Path| {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    };
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = walk_error_path(&e)
                    .map(|p| lossy(p.strip_prefix(root).unwrap_or(p)))
                    .unwrap_or_default();
                out.skipped.push(Skipped {
                    path,
                    reason: walk_error_reason(&e),
                });
                continue;
            }
        };
        // symlinks are reported but never followed, and never read
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_path_buf();
        let path = lossy(&relative);
        if !names.insert(path.clone()) {
            // two names that differ only in bytes that are not UTF-8
            out.skipped.push(Skipped {
                path,
                reason: "its name is not UTF-8 and reads the same as another file's".into(),
            });
            continue;
        }
        match is_binary(entry.path()) {
            Ok(binary) => out.files.push(WalkedFile {
                path,
                relative,
                binary,
            }),
            Err(e) => out.skipped.push(Skipped {
                path,
                reason: format!("cannot be read ({})", e.root_cause()),
            }),
        }
    }
    Ok(out)
}

/// The path an `ignore` error is about, if it names one.
fn walk_error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// An `ignore` error without the path it names (listed beside it).
fn walk_error_reason(e: &ignore::Error) -> String {
    match e {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => walk_error_reason(err),
        ignore::Error::Io(io) => format!("cannot be read ({io})"),
        other => format!("cannot be walked ({other})"),
    }
}

/// When `root` is inside a repository but not its top, the rules of the
/// folders above it up to the one holding `.git`, nearest first, each
/// matching relative to its own folder (`.ignore` over `.gitignore`).
/// Outside any repository, none: other folders' rules are not this tree's.
/// A negation inside the tree cannot re-include what these ignore.
fn ancestor_rules(root: &Path) -> Vec<ignore::gitignore::Gitignore> {
    if root.join(".git").exists() {
        return vec![];
    }
    let mut dirs = Vec::new();
    let mut at = root.parent();
    while let Some(dir) = at {
        dirs.push(dir);
        if dir.join(".git").exists() {
            return dirs
                .into_iter()
                .filter_map(|d| {
                    let mut b = ignore::gitignore::GitignoreBuilder::new(d);
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

/// True when the first `BINARY_PROBE` bytes hold a NUL.
pub fn is_binary(path: &Path) -> Result<bool> {
    let mut buf = vec![0u8; BINARY_PROBE];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
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

    fn paths(root: &Path) -> Vec<String> {
        walk(root, ".silt-cache")
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
        let files = walk(t.path(), ".silt-cache").unwrap().files;
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
        let w = walk(t.path(), ".silt-cache").unwrap();
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
        let w = walk(t.path(), ".silt-cache");
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
        let w = walk(t.path(), ".silt-cache").unwrap();
        assert_eq!(w.files.len(), 1);
        assert_eq!(w.skipped.len(), 1);
        assert_eq!(w.skipped[0].path, "n\u{fffd}.txt");
        assert!(w.skipped[0].reason.contains("not UTF-8"), "{:?}", w.skipped);
    }
}
