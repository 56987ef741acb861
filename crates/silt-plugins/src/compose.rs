//! Composes the ledger engine with a judge and a WASI-only `silt:host`
//! into one self-contained component that runs outside silt (`wasmtime
//! run`, jco, any component host): `silt ledger standalone`.

use anyhow::{Context, Result, bail};
use wac_graph::types::{ItemKind, Package};
use wac_graph::{CompositionGraph, EncodeOptions};

/// `silt:host` over plain WASI (components/host-over-wasi).
const HOST_OVER_WASI: &[u8] = include_bytes!(env!("SILT_WASM_SILT_HOST_OVER_WASI"));
/// The command that drives a ledger (components/ledger-cli).
const LEDGER_CLI: &[u8] = include_bytes!(env!("SILT_WASM_SILT_LEDGER_CLI"));

/// Plugs the exports of `plugs` into `socket`'s imports and encodes the
/// result; fails if any import other than WASI is left unsatisfied.
fn plug(socket: (&str, &[u8]), plugs: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    plug_leaving(socket, plugs, false)
}

/// [`plug`], optionally leaving imports no plug satisfies for a later
/// stage (so a later plug fills only what an earlier one did not).
fn plug_leaving(socket: (&str, &[u8]), plugs: &[(&str, &[u8])], leave: bool) -> Result<Vec<u8>> {
    let mut graph = CompositionGraph::new();
    let register = |graph: &mut CompositionGraph, name: &str, bytes: &[u8]| {
        let package = Package::from_bytes(name, None, bytes.to_vec(), graph.types_mut())
            .with_context(|| format!("{name} is not a component wac can read"))?;
        graph
            .register_package(package)
            .with_context(|| format!("cannot register {name}"))
    };
    let socket_id = register(&mut graph, socket.0, socket.1)?;
    let plug_ids = plugs
        .iter()
        .map(|(name, bytes)| register(&mut graph, name, bytes))
        .collect::<Result<Vec<_>>>()?;
    wac_graph::plug(&mut graph, plug_ids, socket_id)
        .with_context(|| format!("cannot plug into {}", socket.0))?;
    // WASI is the outer host's to give; an instance of types alone needs
    // nothing from it. Anything else left means a plug was missing.
    let types = graph.types();
    let left: Vec<String> = graph
        .imports()
        .filter(|(name, kind, _)| {
            let types_only = matches!(kind, ItemKind::Instance(id)
                if types[*id].exports.values().all(|e| matches!(e, ItemKind::Type(_))));
            !name.starts_with("wasi:") && !types_only
        })
        .map(|(name, _, _)| name.to_string())
        .collect();
    if !left.is_empty() && !leave {
        bail!(
            "{} still imports {} after composition; the judge must export silt:judge/relations (a judge built against silt:judge 0.1.0 has only the deprecated relate: rebuild it against 0.1.1 or later)",
            socket.0,
            left.join(", ")
        );
    }
    graph
        .encode(EncodeOptions::default())
        .with_context(|| format!("cannot encode the composition around {}", socket.0))
}

/// The ledger engine with `judge` and `silt:host` over WASI: a component
/// exporting `silt:ledger/engine` and importing WASI only.
pub fn ledger_library(ledger: &[u8], judge: &[u8]) -> Result<Vec<u8>> {
    // the judge first: its vectors (if it has any) win over the
    // standalone "no vectors" answer, which only fills what is left
    let judged = plug_leaving(("silt:ledger", ledger), &[("silt:judge", judge)], true)
        .context("the judge must export silt:judge/relations")?;
    plug(
        ("silt:ledger", &judged),
        &[("silt:host-over-wasi", HOST_OVER_WASI)],
    )
}

/// [`ledger_library`] driven by the `silt-ledger-cli` command: a WASI
/// command (`wasi:cli/run`) taking `demo` or `script`.
pub fn ledger_command(ledger: &[u8], judge: &[u8]) -> Result<Vec<u8>> {
    let library = ledger_library(ledger, judge)?;
    plug(
        ("silt:ledger-cli", LEDGER_CLI),
        &[("silt:ledger", &library)],
    )
}
