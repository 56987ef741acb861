//! Which folders a call may read, and the one place they are opened.
//!
//! A folder a call names (grep's `path`, verify's `base_path`) is resolved
//! and opened here once, as a handle; the walk, every file read and every
//! local source are then resolved by the kernel beneath that handle. Over
//! HTTP the owner's roots are opened when the server starts and a caller's
//! folder is opened beneath the root that holds it, so swapping the folder
//! (or any folder above it inside the root) for a symlink between the
//! check and the read can never lead out of the roots.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::CallError;
use silt_files::beneath::{Beneath, BeneathError};

/// The `[server] roots` of a shared server, each opened once.
#[derive(Debug)]
pub struct Roots(Vec<Beneath>);

impl Roots {
    /// Opens each canonical, absolute folder in `canonical`.
    pub fn open(canonical: &[PathBuf]) -> std::io::Result<Roots> {
        canonical
            .iter()
            .map(|r| Beneath::open(r))
            .collect::<std::io::Result<Vec<_>>>()
            .map(Roots)
    }

    /// Each root's canonical path, in the order given.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(Beneath::root)
    }

    /// The root whose folder holds the canonical path `real`, and the part
    /// of `real` below it.
    fn holding<'a>(&self, real: &'a Path) -> Option<(&Beneath, &'a Path)> {
        self.0
            .iter()
            .find_map(|r| real.strip_prefix(r.root()).ok().map(|rel| (r, rel)))
    }
}

/// Where a call's folders come from.
#[derive(Debug, Clone)]
pub enum Folders {
    /// Over stdio and on the command line: any folder the user can open,
    /// relative paths resolved under `caller_dir` (None: refused).
    Local {
        /// Where relative paths resolve; None refuses them.
        caller_dir: Option<PathBuf>,
    },
    /// Over HTTP: absolute paths only, and only under the owner's roots.
    Roots(Arc<Roots>),
}

impl Folders {
    /// Local access resolving relative paths under `caller_dir`.
    pub fn local(caller_dir: Option<&Path>) -> Folders {
        Folders::Local {
            caller_dir: caller_dir.map(Path::to_path_buf),
        }
    }

    /// Where relative paths resolve, and the default base of a call that
    /// names none (None over HTTP).
    pub fn caller_dir(&self) -> Option<&Path> {
        match self {
            Folders::Local { caller_dir } => caller_dir.as_deref(),
            Folders::Roots(_) => None,
        }
    }

    /// Opens the folder `path` names, refusing what this access does not
    /// allow with what to do instead.
    pub fn open(&self, path: &str) -> Result<Beneath, CallError> {
        self.open_path(Path::new(path))
    }

    /// [`Folders::open`] for a path that may not be UTF-8.
    pub fn open_path(&self, given: &Path) -> Result<Beneath, CallError> {
        let bad = |m: String| Err(CallError::InvalidRequest(m));
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            match self.caller_dir() {
                Some(b) => b.join(given),
                None => {
                    return bad(format!(
                        "path '{}' is relative; pass an absolute path",
                        given.display()
                    ));
                }
            }
        };
        // the resolved name locates the root and names the folder in
        // answers; the folder itself is then opened from a handle
        let real = match std::fs::canonicalize(&joined) {
            Ok(p) if p.is_dir() => p,
            Ok(p) => {
                return bad(format!(
                    "{} is not a folder; pass the repository's folder",
                    p.display()
                ));
            }
            Err(e) => return bad(format!("cannot open {}: {e}", joined.display())),
        };
        let roots = match self {
            Folders::Local { .. } => {
                return Beneath::open(&real)
                    .or_else(|e| bad(format!("cannot open {}: {e}", real.display())));
            }
            Folders::Roots(roots) => roots,
        };
        let Some((root, rel)) = roots.holding(&real) else {
            return bad(outside_roots(&real, roots));
        };
        match root.open_folder(rel, real.clone()) {
            Ok(b) => Ok(b),
            Err(BeneathError::Outside(_)) => bad(outside_roots(&real, roots)),
            Err(e) => bad(format!("cannot open {}: {e}", real.display())),
        }
    }
}

/// The refusal of a folder outside the roots, naming the rule.
fn outside_roots(real: &Path, roots: &Roots) -> String {
    let listed: Vec<String> = roots.paths().map(|r| r.display().to_string()).collect();
    let hint = if listed.is_empty() {
        "this server lists no folders callers may read; its owner adds them to `roots` \
         under [server] in silt.toml"
            .to_string()
    } else {
        format!(
            "over HTTP only folders under [server] roots may be read ({})",
            listed.join(", ")
        )
    };
    format!(
        "{} is not under a folder this server may read: {hint}",
        real.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_folders_resolve_or_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::write(dir.path().join("file.txt"), "x").unwrap();
        let local = Folders::local(Some(dir.path()));
        assert!(local.open("repo").unwrap().root().ends_with("repo"));
        let abs = dir.path().join("repo");
        let none = Folders::local(None);
        assert!(none.open(abs.to_str().unwrap()).is_ok());
        let err = |f: &Folders, p: &str| f.open(p).unwrap_err().to_string();
        assert!(err(&none, "repo").contains("relative"));
        assert!(err(&local, "file.txt").contains("not a folder"));
        assert!(err(&local, "missing").contains("cannot open"));
    }

    #[test]
    fn only_folders_under_the_roots_open() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let root = top.join("root");
        std::fs::create_dir_all(root.join("repo")).unwrap();
        std::fs::create_dir_all(top.join("private")).unwrap();
        std::os::unix::fs::symlink(top.join("private"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("repo"), top.join("alias")).unwrap();
        let roots = Folders::Roots(Arc::new(Roots::open(std::slice::from_ref(&root)).unwrap()));
        let open = |p: &Path| roots.open(p.to_str().unwrap());
        assert_eq!(open(&root.join("repo")).unwrap().root(), root.join("repo"));
        assert_eq!(open(&root).unwrap().root(), root);
        // a name outside that resolves inside is the folder inside
        assert_eq!(open(&top.join("alias")).unwrap().root(), root.join("repo"));
        for p in [
            top.join("private"),
            root.join("out"),
            root.join("repo/../.."),
        ] {
            let e = open(&p).unwrap_err().to_string();
            assert!(e.contains("[server] roots"), "{}: {e}", p.display());
        }
        assert!(
            roots
                .open("repo")
                .unwrap_err()
                .to_string()
                .contains("relative")
        );
        let none = Folders::Roots(Arc::new(Roots::open(&[]).unwrap()));
        let e = none.open(root.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("lists no folders"), "{e}");
    }

    /// The folder a caller names, swapped with a symlink to a folder
    /// outside the roots (atomic `renameat2` exchanges, as fast as they
    /// go) while it is opened again and again: every open either lands in
    /// the real folder or is refused, never outside. The old check
    /// (canonicalise, compare, open by path) runs beside it as the control
    /// that shows the race is being won.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_swapped_folder_never_opens_outside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let root = top.join("root");
        let outside = top.join("outside");
        std::fs::create_dir_all(root.join("base")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("base/f.txt"), "inside").unwrap();
        std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("base.link")).unwrap();
        let roots = Folders::Roots(Arc::new(Roots::open(std::slice::from_ref(&root)).unwrap()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = silt_files::beneath::swap_until(
            root.join("base"),
            root.join("base.link"),
            stop.clone(),
        );
        let base = root.join("base");
        let naive = || -> Option<String> {
            let real = std::fs::canonicalize(&base).ok()?;
            if !real.starts_with(&root) {
                return None;
            }
            std::fs::read_to_string(real.join("f.txt")).ok()
        };
        let (mut control_leaks, mut tries, mut inside) = (0, 0, 0);
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(30)
            && (control_leaks < 5 || tries < 20_000)
        {
            if naive().as_deref() == Some("OUTSIDE") {
                control_leaks += 1;
            }
            if let Ok(b) = roots.open(base.to_str().unwrap())
                && let Ok(h) = b.read_head(Path::new("f.txt"), 100)
            {
                assert_eq!(h.bytes, b"inside", "a read left the roots");
                inside += 1;
            }
            tries += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(
            control_leaks > 0,
            "the race was never won against the old check in {tries} tries: the test proves nothing"
        );
        assert!(inside > 0, "no open got through at all");
    }
}
