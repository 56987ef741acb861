//! The repository walk grep scores: ignore files honoured as git does,
//! symlinks never followed, VCS folders and silt's cache skipped, binary
//! files flagged, names in order. The matching is ripgrep's `ignore`
//! crate; silt writes no gitignore matcher of its own.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Bytes looked at for a NUL to call a file binary.
pub const BINARY_PROBE: usize = 8192;

/// Folders never walked.
const SKIPPED_DIRS: [&str; 3] = [".git", ".hg", ".svn"];

/// One file the walk found.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkedFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub absolute: PathBuf,
    pub binary: bool,
}

/// Every file under `root` that the ignore rules keep, depth first with
/// each folder's children sorted by name.
/// `cache_dir` names a folder (silt's grep cache) to skip as well.
pub fn walk(root: &Path, cache_dir: &str) -> Result<Vec<WalkedFile>> {
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
    let mut out = Vec::new();
    for entry in walker {
        let entry = entry.with_context(|| format!("walking {}", root.display()))?;
        // symlinks are reported but never followed, and never read
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        out.push(WalkedFile {
            binary: is_binary(entry.path())?,
            path: rel,
            absolute: entry.path().to_path_buf(),
        });
    }
    Ok(out)
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

/// A text file's contents, invalid UTF-8 replaced.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
        let files = walk(t.path(), ".silt-cache").unwrap();
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
        assert_eq!(
            read_text(&t.path().join("bad.txt")).unwrap(),
            "ok \u{fffd} end"
        );
    }
}
