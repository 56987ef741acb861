//! Opening silt: config, plugin registry and runtime, as every command and
//! the server need them.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::Runtime;
use crate::cache::CompileCache;
use silt_config::Config;
use silt_plugins::registry::Registry;

/// Everything a command needs.
pub struct App {
    /// The configuration it was opened with.
    pub config: Arc<Config>,
    /// The runtime, its plugins found and set to be found again on reload.
    pub runtime: Arc<Runtime>,
}

impl App {
    /// Reads the config, finds the plugins and starts the runtime.
    /// `compile_cache` false turns the on-disk compile cache off.
    pub fn open(compile_cache: bool) -> Result<App> {
        let config = Config::discover()?;
        App::with_config(config, compile_cache)
    }

    /// [`App::open`] with a config already read.
    pub fn with_config(config: Config, compile_cache: bool) -> Result<App> {
        let dir = compile_cache.then(|| config.compile_cache_dir());
        App::with_compile_cache(config, dir)
    }

    /// [`App::with_config`] with compiled components cached in
    /// `compile_cache` (none: compiled on every run).
    pub fn with_compile_cache(config: Config, compile_cache: Option<PathBuf>) -> Result<App> {
        let trust = silt_plugins::signature::Trust::from_config(&config.plugins.trusted_keys)?;
        let registry = Registry::discover(&config.plugin_dirs(), &trust)?;
        for problem in &registry.problems {
            tracing::warn!("plugin skipped: {problem}");
        }
        let cache = CompileCache::new(compile_cache);
        let answers = if config.answer_cache_enabled() {
            let path = config.cache_dir().join("answers.sqlite");
            match crate::answer_cache::AnswerCache::open(&path) {
                Ok(c) => Some(Arc::new(c)),
                Err(e) => {
                    tracing::warn!("answer cache off: {e:#}");
                    None
                }
            }
        } else {
            None
        };
        let mut runtime = Runtime::new(registry, cache, answers)?;
        runtime.set_discovery(config.plugin_dirs(), trust);
        Ok(App {
            config: Arc::new(config),
            runtime,
        })
    }
}
