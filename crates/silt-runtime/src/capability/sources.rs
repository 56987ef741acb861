//! `silt:host/sources`: the verify engine's one way to fetch a cited
//! source, through the host's fetcher and its network policy (no internal
//! addresses, size and time caps, PDF text extraction).

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

use super::progress::Progress;
use crate::bindings::verify_engine::silt::host::sources::{self, Source};
use silt_fetch::SourceFetcher;

/// One store's sources capability: a fetcher for verify calls only.
#[derive(Default)]
pub struct Sources {
    plugin: String,
    fetcher: Option<Arc<SourceFetcher>>,
    progress: Progress,
}

impl Sources {
    /// Fetches for engine `plugin` through `fetcher` (None: every fetch is
    /// refused), each counted as progress.
    pub fn new(plugin: &str, fetcher: Option<Arc<SourceFetcher>>, progress: Progress) -> Self {
        Sources {
            plugin: plugin.to_string(),
            fetcher,
            progress,
        }
    }
}

impl sources::Host for Sources {
    async fn fetch(&mut self, locator: String) -> wasmtime::Result<Result<Source, String>> {
        let Some(fetcher) = self.fetcher.clone() else {
            return Ok(Err(format!(
                "engine '{}' has no sources granted for this call",
                self.plugin
            )));
        };
        let fetched = fetcher.fetch(&locator).await;
        self.progress.step(1);
        // the WIT result carries a line of text: the kind ends here
        Ok(fetched
            .map(|s| Source {
                text: s.text,
                version: s.version,
            })
            .map_err(|e| e.to_string()))
    }
}

/// Links `silt:host/sources` to the [`Sources`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Sources,
) -> wasmtime::Result<()> {
    sources::add_to_linker::<T, HasSelf<Sources>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sources::Host;

    #[tokio::test]
    async fn a_store_without_a_fetcher_fetches_nothing_and_says_so() {
        let mut s = Sources::new("verify", None, Progress::default());
        let err = s
            .fetch("https://example.com".into())
            .await
            .unwrap()
            .unwrap_err();
        assert!(err.contains("no sources granted"), "{err}");
    }
}
