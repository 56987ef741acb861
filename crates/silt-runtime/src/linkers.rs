//! Which capabilities each kind of plugin is linked to. A plugin can only
//! reach what its world imports; this is where each import is tied to the
//! capability that serves it.

use wasmtime::Engine;
use wasmtime::component::Linker;

use super::capability::{
    basics, exec, files, judge_calls, progress, sampling, search_ahead, sources,
};
use super::state::PluginState;

/// One linker per kind of plugin, built once per engine.
pub struct Linkers {
    /// Judges and web search backends: WASI and `wasi:http` (narrowed per
    /// plugin by its grants and the HTTP policy).
    pub web: Linker<PluginState>,
    /// Judges granted sampling: WASI (no network) and the model of the
    /// client whose call they serve.
    pub sampling: Linker<PluginState>,
    /// The ask engine (ask, rank, route, grep, triage): WASI without
    /// grants, the judge, the repository's files, progress.
    pub ask: Linker<PluginState>,
    /// The verify engine: as the ask engine, with `sources` for `files`.
    pub verify: Linker<PluginState>,
    /// The ledger engine: the judge's `relations` and `embed`, ids, the
    /// log, and searches run ahead on a second instance.
    pub ledger: Linker<PluginState>,
    /// CLI search backends and judges granted programs (the agent judge):
    /// WASI (no network) and `exec`.
    pub cli: Linker<PluginState>,
}

impl Linkers {
    /// Builds every linker for `engine`.
    pub fn new(engine: &Engine) -> wasmtime::Result<Self> {
        let wasi = || -> wasmtime::Result<Linker<PluginState>> {
            let mut l = Linker::new(engine);
            wasmtime_wasi::p2::add_to_linker_async(&mut l)?;
            Ok(l)
        };

        let mut web = wasi()?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut web)?;

        let mut sampling = wasi()?;
        sampling::add_to_linker(&mut sampling, |s| &mut s.sampling)?;

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
        judge_calls::add_to_linker(&mut ledger, judge_calls::Imports::RelationsAndEmbed, |s| {
            &mut s.judge
        })?;
        search_ahead::add_to_linker(&mut ledger, |s| &mut s.search_ahead)?;

        let mut cli = wasi()?;
        basics::add_to_linker(&mut cli, basics::Imports::Search, |s| &mut s.basics)?;
        exec::add_to_linker(&mut cli, |s| &mut s.exec)?;

        Ok(Linkers {
            web,
            sampling,
            ask,
            verify,
            ledger,
            cli,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The sandbox worlds (`wit/sandbox`) against what is linked, both
    //! ways: every interface a world declares is defined in the linker of
    //! its kind, and each built-in component imports only what its world
    //! declares.

    use std::path::Path;

    use wasm_encoder::{
        ComponentImportSection, ComponentTypeRef, ComponentTypeSection, InstanceType, TypeBounds,
    };
    use wasmparser::{Parser, Payload};
    use wit_parser::{FunctionKind, InterfaceId, PackageId, Resolve, TypeDefKind, WorldItem};

    use super::*;
    use silt_plugins::registry::Registry;

    /// silt's packages in dependency order, then the sandbox worlds with
    /// the WASI they include.
    fn sandbox() -> (Resolve, PackageId) {
        let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        let mut resolve = Resolve::default();
        for package in ["judge", "host", "embed", "search", "sieve", "ledger"] {
            resolve.push_dir(wit.join(package)).expect(package);
        }
        let (sandbox, _) = resolve.push_dir(wit.join("sandbox")).expect("sandbox");
        (resolve, sandbox)
    }

    /// The interfaces world `name` imports, by their versioned names.
    fn imports(resolve: &Resolve, sandbox: PackageId, name: &str) -> Vec<(String, InterfaceId)> {
        let world = resolve.packages[sandbox].worlds[name];
        resolve.worlds[world]
            .imports
            .iter()
            .map(|(key, item)| match item {
                WorldItem::Interface { id, .. } => (resolve.name_world_key(key), *id),
                other => panic!("world {name} imports {other:?}: only interfaces are linked"),
            })
            .collect()
    }

    /// One item of an interface that a linker defining it must hold.
    enum Probe {
        Func(String),
        Resource(String),
    }

    /// A freestanding function of the interface, else one of its resources;
    /// none for an interface of plain types, which needs nothing linked.
    fn probe(resolve: &Resolve, id: InterfaceId) -> Option<Probe> {
        let interface = &resolve.interfaces[id];
        let func = interface
            .functions
            .values()
            .find(|f| matches!(f.kind, FunctionKind::Freestanding))
            .map(|f| Probe::Func(f.name.clone()));
        func.or_else(|| {
            interface
                .types
                .iter()
                .find(|(_, t)| matches!(resolve.types[**t].kind, TypeDefKind::Resource))
                .map(|(name, _)| Probe::Resource(name.clone()))
        })
    }

    /// Whether `linker` defines interface `name`: a component importing
    /// the probed item (a function typed `func()`, whatever its real type)
    /// either loads or fails on its type, which it can only do when the
    /// linker has the item; an interface it lacks fails as missing.
    fn defines(engine: &Engine, linker: &Linker<PluginState>, name: &str, probe: &Probe) -> bool {
        let mut instance = InstanceType::new();
        match probe {
            Probe::Func(f) => {
                instance
                    .ty()
                    .function()
                    .params(std::iter::empty::<(&str, wasm_encoder::ComponentValType)>())
                    .result(None);
                instance.export(f.as_str(), ComponentTypeRef::Func(0));
            }
            Probe::Resource(r) => {
                instance.export(r.as_str(), ComponentTypeRef::Type(TypeBounds::SubResource));
            }
        }
        let mut types = ComponentTypeSection::new();
        types.instance(&instance);
        let mut section = ComponentImportSection::new();
        section.import(name, ComponentTypeRef::Instance(0));
        let mut component = wasm_encoder::Component::new();
        component.section(&types).section(&section);
        let component = wasmtime::component::Component::new(engine, component.finish())
            .expect("a probe component compiles");
        match linker.instantiate_pre(&component) {
            Ok(_) => true,
            Err(e) => {
                let e = format!("{e:#}");
                if e.contains("type mismatch") {
                    true
                } else if e.contains("implementation is missing") {
                    false
                } else {
                    panic!("probing {name}: {e}")
                }
            }
        }
    }

    fn kinds(linkers: &Linkers) -> [(&'static str, &Linker<PluginState>); 10] {
        [
            ("sampling-judge", &linkers.sampling),
            ("cli-judge", &linkers.cli),
            ("judge", &linkers.web),
            ("lesson-judge", &linkers.web),
            ("embedding-judge", &linkers.web),
            ("search-backend", &linkers.web),
            ("cli-search-backend", &linkers.cli),
            ("ask-engine", &linkers.ask),
            ("verify-engine", &linkers.verify),
            ("ledger-engine", &linkers.ledger),
        ]
    }

    #[test]
    fn every_interface_a_world_declares_is_linked_for_its_kind() {
        let (resolve, sandbox) = sandbox();
        let engine = Engine::default();
        let linkers = Linkers::new(&engine).unwrap();
        let mut declared: Vec<&str> = resolve.packages[sandbox]
            .worlds
            .keys()
            .map(String::as_str)
            .filter(|w| !["base", "web"].contains(w))
            .collect();
        declared.sort();
        let mut checked: Vec<&str> = kinds(&linkers).iter().map(|(w, _)| *w).collect();
        checked.sort();
        assert_eq!(declared, checked, "each sandbox world names a kind");
        for (world, linker) in kinds(&linkers) {
            let mut probed = 0;
            for (name, id) in imports(&resolve, sandbox, world) {
                let Some(probe) = probe(&resolve, id) else {
                    continue;
                };
                assert!(
                    defines(&engine, linker, &name, &probe),
                    "world {world} declares {name}, which its linker lacks"
                );
                probed += 1;
            }
            // wasi:cli/imports alone has over twenty interfaces to link
            assert!(probed > 20, "{world}: only {probed} interfaces probed");
        }
    }

    #[test]
    fn interfaces_outside_a_world_are_not_linked() {
        let (resolve, _) = sandbox();
        let engine = Engine::default();
        let linkers = Linkers::new(&engine).unwrap();
        let id = |name: &str| {
            resolve
                .interfaces
                .iter()
                .find(|(id, _)| resolve.id_of(*id).as_deref() == Some(name))
                .map(|(id, _)| id)
                .unwrap_or_else(|| panic!("{name} is not in the WIT"))
        };
        // a judge has no repository files, a CLI backend no network, the
        // ledger no sieve judge, an ordinary judge no client's model and
        // a sampling judge no network; and each is linked where it belongs
        for (absent_from, present_in, name) in [
            (&linkers.web, &linkers.ask, "silt:host/files@0.2.1"),
            (
                &linkers.cli,
                &linkers.web,
                "wasi:http/outgoing-handler@0.2.12",
            ),
            (&linkers.ledger, &linkers.verify, "silt:judge/judge@0.1.2"),
            (&linkers.web, &linkers.sampling, "silt:host/sampling@0.2.1"),
            (
                &linkers.sampling,
                &linkers.web,
                "wasi:http/outgoing-handler@0.2.12",
            ),
        ] {
            let probe = probe(&resolve, id(name)).expect("an interface with functions");
            assert!(!defines(&engine, absent_from, name, &probe), "{name}");
            assert!(defines(&engine, present_in, name, &probe), "{name}");
        }
    }
    /// The interfaces a component's top level imports.
    fn component_imports(bytes: &[u8]) -> Vec<String> {
        let mut depth = 0usize;
        let mut names = Vec::new();
        for payload in Parser::new(0).parse_all(bytes) {
            match payload.expect("a built component parses") {
                Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
                Payload::End(_) if depth > 0 => depth -= 1,
                Payload::ComponentImportSection(section) if depth == 0 => {
                    for import in section {
                        names.push(import.expect("an import").name.name.to_string());
                    }
                }
                _ => {}
            }
        }
        names
    }

    /// Whether `import` (`ns:pkg/iface@x.y.z`) is served by `declared`:
    /// the same interface at a version no newer, as wasmtime's semver
    /// matching links it (0.x.* or x.*.* alike).
    fn served(import: &str, declared: &str) -> bool {
        let split = |n: &str| -> Option<(String, Vec<u64>)> {
            let (iface, version) = n.split_once('@')?;
            let v = version
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u64>>>()?;
            Some((iface.to_string(), v))
        };
        match (split(import), split(declared)) {
            (Some((a, va)), Some((b, vb))) => {
                let line = |v: &[u64]| {
                    if v[0] == 0 {
                        v[..2].to_vec()
                    } else {
                        v[..1].to_vec()
                    }
                };
                a == b && line(&va) == line(&vb) && va <= vb
            }
            _ => import == declared,
        }
    }

    #[test]
    fn built_in_components_import_only_what_their_world_declares() {
        let (resolve, sandbox) = sandbox();
        let world_of = |name: &str| match name {
            "lexical" | "openai" | "llm" => "lesson-judge",
            "sampling" => "sampling-judge",
            "embedding" | "embedding-static" => "embedding-judge",
            "searxng" | "brave" => "search-backend",
            "claude" | "codex" => "cli-search-backend",
            "agent" => "cli-judge",
            "ask" => "ask-engine",
            "verify" => "verify-engine",
            "ledger" => "ledger-engine",
            other => panic!("built-in '{other}' has no sandbox world here: add it"),
        };
        let registry = Registry::discover(&[], &Default::default()).unwrap();
        let mut seen = 0;
        for entry in registry.entries() {
            let name = &entry.manifest.plugin.name;
            let world = world_of(name);
            let declared: Vec<String> = imports(&resolve, sandbox, world)
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            let bytes = entry.bytes().unwrap();
            let imported = component_imports(&bytes);
            assert!(!imported.is_empty(), "{name} imports nothing?");
            for import in imported {
                assert!(
                    declared.iter().any(|d| served(&import, d)),
                    "built-in '{name}' imports {import}, which world {world} does not declare"
                );
            }
            seen += 1;
        }
        assert!(seen >= 9, "only {seen} built-ins");
    }

    #[test]
    fn versions_match_as_wasmtime_links_them() {
        assert!(served("wasi:io/poll@0.2.0", "wasi:io/poll@0.2.12"));
        assert!(!served("wasi:io/poll@0.2.13", "wasi:io/poll@0.2.12"));
        assert!(!served("wasi:io/poll@0.3.0", "wasi:io/poll@0.2.12"));
        assert!(!served("wasi:io/streams@0.2.0", "wasi:io/poll@0.2.12"));
        assert!(served("silt:judge/judge@0.1.0", "silt:judge/judge@0.1.2"));
    }
}
