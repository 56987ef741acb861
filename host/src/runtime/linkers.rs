//! Which capabilities each kind of plugin is linked to. A plugin can only
//! reach what its world imports; this is where each import is tied to the
//! capability that serves it.

use wasmtime::Engine;
use wasmtime::component::Linker;

use super::capability::{basics, exec, files, judge_calls, progress, sources};
use super::state::PluginState;

/// One linker per kind of plugin, built once per engine.
pub struct Linkers {
    /// Judges and web search backends: WASI and `wasi:http` (narrowed per
    /// plugin by its grants and the HTTP policy).
    pub web: Linker<PluginState>,
    /// The ask engine (ask, rank, route, grep, triage): WASI without
    /// grants, the judge, the repository's files, progress.
    pub ask: Linker<PluginState>,
    /// The verify engine: as the ask engine, with `sources` for `files`.
    pub verify: Linker<PluginState>,
    /// The ledger engine: the judge's `relate` and `embed`, ids, the log.
    pub ledger: Linker<PluginState>,
    /// CLI search backends: WASI (no network) and `exec`.
    pub cli: Linker<PluginState>,
}

impl Linkers {
    pub fn new(engine: &Engine) -> wasmtime::Result<Self> {
        let wasi = || -> wasmtime::Result<Linker<PluginState>> {
            let mut l = Linker::new(engine);
            wasmtime_wasi::p2::add_to_linker_async(&mut l)?;
            Ok(l)
        };

        let mut web = wasi()?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut web)?;

        let sieve = |l: &mut Linker<PluginState>| -> wasmtime::Result<()> {
            basics::add_to_linker(l, basics::Imports::Sieve, |s| &mut s.basics)?;
            judge_calls::add_to_linker(l, judge_calls::Imports::Judge, |s| &mut s.judge)?;
            progress::add_to_linker(l, |s| &mut s.progress)
        };
        let mut ask = wasi()?;
        sieve(&mut ask)?;
        files::add_to_linker(&mut ask, |s| &mut s.files)?;

        let mut verify = wasi()?;
        sieve(&mut verify)?;
        sources::add_to_linker(&mut verify, |s| &mut s.sources)?;

        let mut ledger = wasi()?;
        basics::add_to_linker(&mut ledger, basics::Imports::Ledger, |s| &mut s.basics)?;
        judge_calls::add_to_linker(&mut ledger, judge_calls::Imports::RelateAndEmbed, |s| {
            &mut s.judge
        })?;

        let mut cli = wasi()?;
        basics::add_to_linker(&mut cli, basics::Imports::Search, |s| &mut s.basics)?;
        exec::add_to_linker(&mut cli, |s| &mut s.exec)?;

        Ok(Linkers {
            web,
            ask,
            verify,
            ledger,
            cli,
        })
    }
}
