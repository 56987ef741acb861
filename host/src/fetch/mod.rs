//! What verify's `sources` import does on the host: a locator is an
//! http(s) URL, fetched under the network policy, or a file path, read
//! only from under the call's base path. Either way the raw bytes are
//! hashed (the source version) and turned into text.

pub mod html;
pub mod net;
pub mod pdf;

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use net::NetPolicy;

/// A source as verify reads it.
#[derive(Debug, Clone)]
pub struct SourceText {
    pub text: String,
    /// sha256 of the raw bytes, hex.
    pub version: String,
}

/// Fetches the sources of one verify call.
pub struct SourceFetcher {
    /// Canonical; None when file locators are not allowed (no base path).
    base: Option<PathBuf>,
    policy: NetPolicy,
    client: reqwest::Client,
}

impl SourceFetcher {
    /// `base` must be an existing folder; it is canonicalised so a symlink
    /// inside it cannot lead out.
    pub fn new(base: Option<&Path>, policy: NetPolicy) -> Result<Self, String> {
        let base = match base {
            Some(b) => Some(
                std::fs::canonicalize(b)
                    .map_err(|e| format!("base_path {} cannot be opened: {e}", b.display()))?,
            ),
            None => None,
        };
        if let Some(b) = &base
            && !b.is_dir()
        {
            return Err(format!("base_path {} is not a folder", b.display()));
        }
        let client = net::client(&policy).map_err(|e| format!("cannot set up HTTP: {e}"))?;
        Ok(SourceFetcher {
            base,
            policy,
            client,
        })
    }

    pub async fn fetch(&self, locator: &str) -> Result<SourceText, String> {
        let lower = locator.to_ascii_lowercase();
        let (bytes, content_type) = if lower.starts_with("http://") || lower.starts_with("https://")
        {
            let f = net::fetch(&self.client, &self.policy, locator).await?;
            (f.bytes, f.content_type)
        } else if lower.contains("://") {
            return Err(format!(
                "{locator}: only http(s) URLs and file paths can be cited"
            ));
        } else {
            (self.read_file(locator)?, String::new())
        };
        let version = hex::encode(Sha256::digest(&bytes));
        let text = if pdf::is_pdf(&bytes) {
            pdf::to_text(&bytes)
                .await
                .map_err(|e| format!("{locator}: {e}"))?
        } else if content_type.contains("html") || looks_like_html(&bytes) {
            // off the async threads (and the plugin's fiber): a large page
            // is a few ms of CPU per megabyte
            let page = String::from_utf8_lossy(&bytes).into_owned();
            tokio::task::spawn_blocking(move || html::to_text(&page))
                .await
                .map_err(|e| format!("{locator}: HTML to text failed ({e})"))?
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Ok(SourceText { text, version })
    }

    /// A file under the base path, within the size cap for its kind.
    fn read_file(&self, locator: &str) -> Result<Vec<u8>, String> {
        let Some(base) = &self.base else {
            return Err(format!(
                "{locator}: file sources need an absolute base_path to resolve against"
            ));
        };
        let given = Path::new(locator);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            base.join(given)
        };
        let real = std::fs::canonicalize(&joined)
            .map_err(|e| format!("{locator}: cannot open {} ({e})", joined.display()))?;
        // canonical paths: `..` and symlinks are already resolved here
        if !real.starts_with(base) {
            return Err(format!(
                "{locator}: refused, it lies outside the base path {}",
                base.display()
            ));
        }
        if !real.is_file() {
            return Err(format!("{locator}: not a file"));
        }
        let file = std::fs::File::open(&real).map_err(|e| format!("{locator}: {e}"))?;
        let mut bytes = Vec::new();
        file.take(net::MAX_PDF_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{locator}: {e}"))?;
        let cap = if pdf::is_pdf(&bytes) {
            net::MAX_PDF_BYTES
        } else {
            net::MAX_BYTES
        };
        if bytes.len() > cap {
            return Err(format!(
                "{locator}: larger than the {} MB cap for this kind of source",
                cap >> 20
            ));
        }
        Ok(bytes)
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
        SourceFetcher::new(Some(base), NetPolicy::default()).unwrap()
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
        assert!(err.contains("outside the base path"), "{err}");
        let abs = dir.path().join("secret.txt");
        assert!(
            f.fetch(abs.to_str().unwrap())
                .await
                .unwrap_err()
                .contains("outside")
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), base.join("link")).unwrap();
            let err = f.fetch("link").await.unwrap_err();
            assert!(err.contains("outside the base path"), "{err}");
        }
        assert!(
            f.fetch("missing.md")
                .await
                .unwrap_err()
                .contains("cannot open")
        );
        assert!(
            f.fetch("file:///etc/passwd")
                .await
                .unwrap_err()
                .contains("only http")
        );
        let none = SourceFetcher::new(None, NetPolicy::default()).unwrap();
        assert!(none.fetch("a.md").await.unwrap_err().contains("base_path"));
    }

    #[tokio::test]
    async fn oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.txt"), vec![b'x'; net::MAX_BYTES + 1]).unwrap();
        let err = fetcher(dir.path()).fetch("big.txt").await.unwrap_err();
        assert!(err.contains("2 MB cap"), "{err}");
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
