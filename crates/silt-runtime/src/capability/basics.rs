//! What every engine may use: the host's log, the clock and fresh ids;
//! and the types-only interfaces the worlds import for their records
//! (they carry no functions, but an import must still be defined).

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::ask_engine::silt::host::{clock, log};
use crate::bindings::ledger_engine::silt::host::ids;

/// The plugin's name, for its log lines.
#[derive(Clone, Default)]
pub struct Basics {
    plugin: String,
}

impl Basics {
    /// The basics of plugin `plugin`.
    pub fn new(plugin: &str) -> Self {
        Basics {
            plugin: plugin.to_string(),
        }
    }
}

impl log::Host for Basics {
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

impl clock::Host for Basics {
    async fn now(&mut self) -> wasmtime::Result<f64> {
        Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0))
    }
}

impl ids::Host for Basics {
    async fn next_id(&mut self) -> wasmtime::Result<String> {
        Ok(silt_core::ids::new_id())
    }
}

impl crate::bindings::judge::silt::judge::types::Host for Basics {}
impl crate::bindings::ask_engine::silt::sieve::types::Host for Basics {}
impl crate::bindings::ledger_engine::silt::ledger::types::Host for Basics {}
impl crate::bindings::search_backend::silt::search::types::Host for Basics {}

/// Which of the basic interfaces a world imports.
#[derive(Debug, Clone, Copy)]
pub enum Imports {
    /// The ask and verify engines: log, clock, judge and sieve types.
    Sieve,
    /// The ledger engine: log, ids, judge and ledger types.
    Ledger,
    /// A CLI search backend: the search types `exec` uses.
    Search,
}

/// Links the basic interfaces `imports` names to the [`Basics`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    imports: Imports,
    get: fn(&mut T) -> &mut Basics,
) -> wasmtime::Result<()> {
    use crate::bindings::{ask_engine, judge, ledger_engine, search_backend};
    match imports {
        Imports::Sieve => {
            judge::silt::judge::types::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            ask_engine::silt::sieve::types::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            log::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            clock::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
        }
        Imports::Ledger => {
            judge::silt::judge::types::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            ledger_engine::silt::ledger::types::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            log::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
            ids::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
        }
        Imports::Search => {
            search_backend::silt::search::types::add_to_linker::<T, HasSelf<Basics>>(linker, get)?;
        }
    }
    Ok(())
}
