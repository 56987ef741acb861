//! Reading files beneath a folder with no window between the check and the
//! read. A path is resolved by the kernel relative to an open handle of the
//! folder (`openat2` with `RESOLVE_BENEATH`, or cap-primitives' own
//! component-by-component walk where that call is missing), so swapping a
//! folder for a symlink while silt reads can never hand out a byte from
//! outside: the file that was opened is the file that was checked.

use std::io::Read;
use std::path::{Path, PathBuf};

use cap_primitives::fs::{OpenOptions, OpenOptionsExt};

/// Why a file beneath the folder could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// The path (through `..`, an absolute path or a symlink) leads out.
    #[error("it lies outside {0}")]
    Outside(PathBuf),
    /// A folder, a device, a FIFO or a socket.
    #[error("it is not a regular file")]
    NotAFile,
    /// Any other failure to open or read it (missing, no permission, ...).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// An open folder that files are read beneath.
#[derive(Debug)]
pub struct Beneath {
    dir: std::fs::File,
    root: PathBuf,
}

/// The first bytes of a file and whether there was more.
#[derive(Debug)]
pub struct Head {
    /// At most the cap asked for.
    pub bytes: Vec<u8>,
    /// The file held more than the cap; `bytes` is its head.
    pub cut: bool,
}

impl Beneath {
    /// Opens `root` (a folder) as the boundary for later reads. The path is
    /// read once, here; every later open resolves from the handle.
    pub fn open(root: &Path) -> std::io::Result<Beneath> {
        let dir = cap_primitives::fs::open_ambient_dir(root, cap_primitives::ambient_authority())?;
        Ok(Beneath {
            dir,
            root: root.to_path_buf(),
        })
    }

    /// The folder's name as it was resolved when opened (for messages and
    /// keys only: never opened again by it).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The open folder itself, for walking it entry by entry.
    pub fn dir(&self) -> &std::fs::File {
        &self.dir
    }

    /// The folder at `rel` beneath this one (symlinks followed only while
    /// they stay inside), opened as a boundary of its own named `shown`.
    pub fn open_folder(&self, rel: &Path, shown: PathBuf) -> Result<Beneath, BeneathError> {
        if rel.is_absolute() {
            return Err(BeneathError::Outside(self.root.clone()));
        }
        // the root itself is "." (an empty path names nothing)
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let dir = cap_primitives::fs::open_dir(&self.dir, rel).map_err(|e| self.refusal(e))?;
        Ok(Beneath { dir, root: shown })
    }

    /// Reads at most `cap` bytes of the regular file at `rel` (relative to
    /// the root). Symlinks that stay inside are followed; anything that
    /// leads out is refused as [`BeneathError::Outside`].
    pub fn read_head(&self, rel: &Path, cap: usize) -> Result<Head, BeneathError> {
        if rel.is_absolute() {
            return Err(BeneathError::Outside(self.root.clone()));
        }
        let file = open_regular(&self.dir, rel, true).map_err(|e| match e {
            BeneathError::Io(e) => self.refusal(e),
            other => other,
        })?;
        let mut bytes = Vec::new();
        file.take(cap as u64 + 1).read_to_end(&mut bytes)?;
        let cut = bytes.len() > cap;
        bytes.truncate(cap);
        Ok(Head { bytes, cut })
    }

    /// An open error as the caller should hear it: an escape is `Outside`.
    fn refusal(&self, e: std::io::Error) -> BeneathError {
        // the escape refusal is cap-primitives' own error, never an errno:
        // a real EACCES carries its OS code
        let refused =
            e.kind() == std::io::ErrorKind::PermissionDenied && e.raw_os_error().is_none();
        if refused || e.raw_os_error() == Some(libc::EXDEV) {
            BeneathError::Outside(self.root.clone())
        } else {
            BeneathError::Io(e)
        }
    }
}

/// Opens the regular file at `rel` beneath `dir` for reading, never
/// blocking on the open (a FIFO would wait for a writer) and checking the
/// type of the descriptor that was opened, not of the name: a file swapped
/// for a FIFO, a socket or a device between a listing and the open is
/// [`BeneathError::NotAFile`]. With `follow` false a symlink is refused.
pub fn open_regular(
    dir: &std::fs::File,
    rel: &Path,
    follow: bool,
) -> Result<std::fs::File, BeneathError> {
    let mut options = OpenOptions::new();
    options.read(true);
    if !follow {
        // cap-primitives' own switch (the one cap-fs-ext's trait calls)
        options._cap_fs_ext_follow(cap_primitives::fs::FollowSymlinks::No);
    }
    // a terminal must not become ours either
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = cap_primitives::fs::open(dir, rel, &options)?;
    if !file.metadata()?.is_file() {
        return Err(BeneathError::NotAFile);
    }
    Ok(file)
}

/// Exchanges `a` and `b` (a folder and a symlink) with `renameat2` as
/// fast as it can until `stop`, so the path always exists but is now one,
/// now the other; returns how many exchanges it made. For race tests,
/// here and in the crates that read beneath a folder (built always, since
/// a test-only feature would rebuild every dependent for `cargo test`).
#[cfg(target_os = "linux")]
#[doc(hidden)]
pub fn swap_until(
    a: PathBuf,
    b: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let a = std::ffi::CString::new(a.to_str().unwrap()).unwrap();
        let b = std::ffi::CString::new(b.to_str().unwrap()).unwrap();
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: two valid C strings; the call only renames
            let r = unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            };
            swaps += u64::from(r == 0);
        }
        swaps
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_beneath_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "alpha").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("sub/a.txt", root.join("in")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("abs")).unwrap();
        let b = Beneath::open(&root).unwrap();
        let read = |p: &str| b.read_head(Path::new(p), 1 << 20);
        assert_eq!(read("sub/a.txt").unwrap().bytes, b"alpha");
        assert_eq!(read("in").unwrap().bytes, b"alpha");
        for p in [
            "../secret.txt",
            "out",
            "abs",
            "/etc/passwd",
            "sub/../../secret.txt",
        ] {
            assert!(
                matches!(read(p), Err(BeneathError::Outside(_))),
                "{p}: {:?}",
                read(p)
            );
        }
        assert!(matches!(read("sub"), Err(BeneathError::NotAFile)));
        assert!(matches!(read("missing"), Err(BeneathError::Io(_))));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let b = Beneath::open(dir.path()).unwrap();
        assert!(matches!(
            b.read_head(Path::new("fifo"), 10),
            Err(BeneathError::NotAFile)
        ));
    }

    #[test]
    fn a_large_file_gives_its_head() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let b = Beneath::open(dir.path()).unwrap();
        let h = b.read_head(Path::new("big"), 10).unwrap();
        assert_eq!((h.bytes.len(), h.cut), (10, true));
        let h = b.read_head(Path::new("big"), 100).unwrap();
        assert_eq!((h.bytes.len(), h.cut), (100, false));
    }

    /// Swaps a folder with a symlink to an outside folder (one atomic
    /// `renameat2` exchange, so the path always exists) as fast as it can
    /// while reading through it two ways: the old check-then-open by path
    /// (canonicalise, check the prefix, open), as a control that shows the
    /// race is being won, and `read_head`, which must never leak.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_symlink_swap_race_never_leaks_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("d/f.txt"), "inside").unwrap();
        std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("d.link")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = swap_until(root.join("d"), root.join("d.link"), stop.clone());
        let naive = |rel: &str| -> Option<String> {
            let real = std::fs::canonicalize(root.join(rel)).ok()?;
            if !real.starts_with(&root) {
                return None;
            }
            std::fs::read_to_string(real).ok()
        };
        let b = Beneath::open(&root).unwrap();
        let (mut control_leaks, mut reads, mut inside) = (0, 0, 0);
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(30)
            && (control_leaks < 5 || reads < 20_000)
        {
            if naive("d/f.txt").as_deref() == Some("OUTSIDE") {
                control_leaks += 1;
            }
            if let Ok(h) = b.read_head(Path::new("d/f.txt"), 100) {
                assert_eq!(h.bytes, b"inside", "a read left the root");
                inside += 1;
            }
            reads += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(
            control_leaks > 0,
            "the race was never won against the old reader in {reads} tries: the test proves nothing"
        );
        assert!(inside > 0, "no read got through at all");
    }
}
