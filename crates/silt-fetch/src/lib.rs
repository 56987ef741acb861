//! What verify's `sources` import does on the host: a locator is an
//! http(s) URL, fetched under the network policy, or a file path, read
//! only from under the call's base path. Either way the raw bytes are
//! hashed (the source version) and turned into text.

#![deny(missing_docs)]

pub mod addresses;

mod error;

pub mod html;
pub mod net;
pub mod pdf;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

pub use error::{FetchError, PdfError};
pub use net::NetPolicy;

use silt_files::beneath::{Beneath, BeneathError};

/// A source as verify reads it.
#[derive(Debug, Clone)]
pub struct SourceText {
    /// The readable text: a PDF's text layer, an HTML page's visible text,
    /// else the bytes as UTF-8 (invalid sequences replaced).
    pub text: String,
    /// sha256 of the raw bytes, hex.
    pub version: String,
}

/// The folder file sources are read beneath.
pub struct Base {
    /// As the caller wrote it (absolute locators may start with it).
    given: PathBuf,
    /// The folder reads are confined to, open; its name is the resolved one.
    folder: Arc<Beneath>,
}

impl Base {
    /// The open `folder`, which the caller named `given`.
    pub fn new(given: &Path, folder: Beneath) -> Base {
        Base {
            given: given.to_path_buf(),
            folder: Arc::new(folder),
        }
    }
}

/// The longest a local source's read may take.
const READ_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Sources fetched at once ahead of a verify call (the rest as the engine
/// asks), so a call citing slow URLs waits about as long as the slowest.
pub const PREFETCH_CONCURRENCY: usize = 8;
/// The most sources fetched ahead: their text waits in memory until the
/// engine takes it.
pub const PREFETCH_MAX: usize = 64;

/// Fetches the sources of one verify call.
pub struct SourceFetcher {
    /// Sources fetched ahead, by locator; each taken once by `fetch`.
    ahead: std::sync::Mutex<std::collections::HashMap<String, Result<SourceText, FetchError>>>,
    /// None when file locators are not allowed (no base path).
    base: Option<Base>,
    policy: NetPolicy,
    client: reqwest::Client,
}

impl SourceFetcher {
    /// File locators are read beneath `base` (none without one).
    pub fn new(base: Option<Base>, policy: NetPolicy) -> Result<Self, reqwest::Error> {
        let client = net::client(&policy)?;
        Ok(SourceFetcher {
            ahead: Default::default(),
            base,
            policy,
            client,
        })
    }

    /// Fetches up to [`PREFETCH_MAX`] distinct `locators` concurrently
    /// ([`PREFETCH_CONCURRENCY`] at a time) and keeps the outcomes for
    /// [`SourceFetcher::fetch`], errors included.
    pub async fn prefetch(
        &self,
        locators: impl IntoIterator<Item = String>,
        progress: Option<&silt_progress::Stages>,
    ) {
        use futures::StreamExt;
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<String> = locators
            .into_iter()
            .filter(|l| seen.insert(l.clone()))
            .take(PREFETCH_MAX)
            .collect();
        if let Some(p) = progress {
            p.stage("fetching sources", unique.len() as u64);
        }
        let done: Vec<(String, Result<SourceText, FetchError>)> = futures::stream::iter(unique)
            .map(|l| async move {
                let r = self.fetch_now(&l).await;
                if let Some(p) = progress {
                    p.advance(1);
                }
                (l, r)
            })
            .buffer_unordered(PREFETCH_CONCURRENCY)
            .collect()
            .await;
        self.ahead
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(done);
    }

    /// A source: the one fetched ahead if there is one, else fetched now.
    pub async fn fetch(&self, locator: &str) -> Result<SourceText, FetchError> {
        let ahead = self
            .ahead
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(locator);
        match ahead {
            Some(r) => r,
            None => self.fetch_now(locator).await,
        }
    }

    async fn fetch_now(&self, locator: &str) -> Result<SourceText, FetchError> {
        let lower = locator.to_ascii_lowercase();
        let (bytes, content_type) = if lower.starts_with("http://") || lower.starts_with("https://")
        {
            let f = net::fetch(&self.client, &self.policy, locator).await?;
            (f.bytes, f.content_type)
        } else if lower.contains("://") {
            return Err(FetchError::refused(
                locator,
                "only http(s) URLs and file paths can be cited",
            ));
        } else {
            (self.read_file(locator).await?, String::new())
        };
        let version = hex::encode(Sha256::digest(&bytes));
        let text = if pdf::is_pdf(&bytes) {
            pdf::to_text(&bytes)
                .await
                .map_err(|e| FetchError::unreadable(locator, e.to_string()))?
        } else if content_type.contains("html") || looks_like_html(&bytes) {
            // off the async threads (and the plugin's fiber): a large page
            // is a few ms of CPU per megabyte
            let page = String::from_utf8_lossy(&bytes).into_owned();
            tokio::task::spawn_blocking(move || html::to_text(&page))
                .await
                .map_err(|e| {
                    FetchError::unreadable(locator, format!("HTML to text failed ({e})"))
                })?
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Ok(SourceText { text, version })
    }

    /// A file under the base path, within the size cap for its kind. The
    /// file is opened beneath the base folder's handle, so a symlink
    /// swapped in while silt reads cannot lead out of it, and the read runs
    /// off the async workers under a deadline.
    async fn read_file(&self, locator: &str) -> Result<Vec<u8>, FetchError> {
        let Some(base) = &self.base else {
            return Err(FetchError::refused(
                locator,
                "file sources need an absolute base_path to resolve against",
            ));
        };
        let resolved = base.folder.root();
        let outside = || {
            FetchError::refused(
                locator,
                format!(
                    "refused, it lies outside the base path {}",
                    resolved.display()
                ),
            )
        };
        let given = Path::new(locator);
        let rel = if given.is_absolute() {
            // an absolute path names the base as given or as resolved
            match given
                .strip_prefix(resolved)
                .or_else(|_| given.strip_prefix(&base.given))
            {
                Ok(rel) => rel.to_path_buf(),
                Err(_) => return Err(outside()),
            }
        } else {
            given.to_path_buf()
        };
        let folder = base.folder.clone();
        let read = {
            let rel = rel.clone();
            tokio::task::spawn_blocking(move || folder.read_head(&rel, net::MAX_PDF_BYTES))
        };
        let head = match tokio::time::timeout(READ_DEADLINE, read).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return Err(FetchError::unreadable(
                    locator,
                    format!("the read failed ({e})"),
                ));
            }
            Err(_) => {
                return Err(FetchError::unreachable(
                    locator,
                    format!(
                        "the file system did not answer within {} s",
                        READ_DEADLINE.as_secs()
                    ),
                ));
            }
        };
        let head = head.map_err(|e| match e {
            BeneathError::Outside(_) => outside(),
            BeneathError::NotAFile => FetchError::unreadable(locator, "not a regular file"),
            BeneathError::Io(e) => FetchError::unreadable(
                locator,
                format!("cannot open {} ({e})", resolved.join(&rel).display()),
            ),
        })?;
        let cap = if pdf::is_pdf(&head.bytes) {
            net::MAX_PDF_BYTES
        } else {
            net::MAX_BYTES
        };
        if head.cut || head.bytes.len() > cap {
            return Err(FetchError::too_large(locator, cap));
        }
        Ok(head.bytes)
    }
}

fn looks_like_html(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetcher(base: &Path) -> SourceFetcher {
        let folder = Beneath::open(&std::fs::canonicalize(base).unwrap()).unwrap();
        SourceFetcher::new(Some(Base::new(base, folder)), NetPolicy::default()).unwrap()
    }

    #[tokio::test]
    async fn files_resolve_under_the_base_and_never_outside_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        std::fs::create_dir_all(base.join("sub")).unwrap();
        std::fs::write(base.join("sub/a.md"), "alpha").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        let f = fetcher(&base);
        let got = f.fetch("sub/a.md").await.unwrap();
        assert_eq!(got.text, "alpha");
        assert_eq!(got.version, hex::encode(Sha256::digest(b"alpha")));
        assert!(
            f.fetch(base.join("sub/a.md").to_str().unwrap())
                .await
                .is_ok()
        );

        let err = f.fetch("../secret.txt").await.unwrap_err();
        assert!(matches!(err, FetchError::Refused { .. }), "{err:?}");
        assert!(err.to_string().contains("outside the base path"), "{err}");
        let abs = dir.path().join("secret.txt");
        assert!(
            f.fetch(abs.to_str().unwrap())
                .await
                .unwrap_err()
                .to_string()
                .contains("outside")
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), base.join("link")).unwrap();
            let err = f.fetch("link").await.unwrap_err().to_string();
            assert!(err.contains("outside the base path"), "{err}");
        }
        let missing = f.fetch("missing.md").await.unwrap_err();
        assert!(
            matches!(missing, FetchError::Unreadable { .. }),
            "{missing:?}"
        );
        assert!(missing.to_string().contains("cannot open"), "{missing}");
        let scheme = f.fetch("file:///etc/passwd").await.unwrap_err();
        assert!(matches!(scheme, FetchError::Refused { .. }), "{scheme:?}");
        assert!(scheme.to_string().contains("only http"), "{scheme}");
        let none = SourceFetcher::new(None, NetPolicy::default()).unwrap();
        let no_base = none.fetch("a.md").await.unwrap_err();
        assert!(matches!(no_base, FetchError::Refused { .. }), "{no_base:?}");
        assert!(no_base.to_string().contains("base_path"), "{no_base}");
    }

    /// Six sources that each take 1 s arrive in about 1 s, not 6: they
    /// are fetched ahead concurrently, and each is then served once.
    #[tokio::test]
    async fn slow_sources_are_fetched_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = served.clone();
        tokio::spawn(async move {
            loop {
                let (mut sock, _) = listener.accept().await.unwrap();
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut buf = [0u8; 2048];
                    let _ = sock.read(&mut buf).await;
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    let _ = sock
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                        )
                        .await;
                });
            }
        });
        let policy = NetPolicy {
            allow_hosts: std::sync::Arc::new(vec!["127.0.0.1".into()]),
            ..NetPolicy::default()
        };
        let f = SourceFetcher::new(None, policy).unwrap();
        let urls: Vec<String> = (0..6).map(|i| format!("http://{addr}/s{i}")).collect();
        let started = std::time::Instant::now();
        f.prefetch(urls.iter().cloned().chain(urls.iter().cloned()), None)
            .await;
        for u in &urls {
            assert_eq!(f.fetch(u).await.unwrap().text, "ok");
        }
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(4), "{took:?}");
        assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.txt"), vec![b'x'; net::MAX_BYTES + 1]).unwrap();
        let err = fetcher(dir.path()).fetch("big.txt").await.unwrap_err();
        assert_eq!(
            err,
            FetchError::TooLarge {
                locator: "big.txt".into(),
                cap_mb: 2
            }
        );
        assert!(err.to_string().contains("2 MB cap"), "{err}");
    }

    #[tokio::test]
    async fn html_files_become_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.html"), "<!DOCTYPE html><p>a</p><p>b</p>").unwrap();
        assert_eq!(
            fetcher(dir.path()).fetch("p.html").await.unwrap().text,
            "a\n\nb"
        );
    }
}
