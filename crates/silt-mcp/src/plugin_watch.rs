//! Plugins swapped under a running server: a watch on the plugin folders
//! (polled, since a folder may sit on any filesystem) and SIGHUP reload
//! the registry; calls in flight finish on the instances they hold, new
//! calls load the new plugins, and a client whose tools' schemas change
//! (they name the installed judges) is sent `notifications/tools/list_changed`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::{Peer, RoleServer};

use silt_plugins::manifest::PluginKind;
use silt_runtime::Runtime;

/// How often the plugin folders are looked at: `silt plugins add` is
/// seen within this long.
const POLL: Duration = Duration::from_secs(1);

/// The judges installed now, which the tools' schemas list.
pub fn judge_names(runtime: &Runtime) -> Vec<String> {
    runtime
        .registry()
        .entries()
        .filter(|e| e.manifest.plugin.kind == PluginKind::Judge)
        .map(|e| e.manifest.plugin.name.clone())
        .collect()
}

/// Reloads the plugins whenever their folders change or SIGHUP arrives,
/// until dropped; tells `peer` (a stdio client) when the tool list changed.
pub async fn watch(runtime: Arc<Runtime>, peer: Option<Peer<RoleServer>>) {
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        #[cfg(unix)]
        let signalled = async {
            match &mut hangup {
                Some(h) => {
                    h.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let signalled = std::future::pending::<()>();
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = signalled => tracing::info!("SIGHUP: reloading plugins"),
        }
        let before: BTreeSet<String> = judge_names(&runtime).into_iter().collect();
        let reloading = runtime.clone();
        let changed = match tokio::task::spawn_blocking(move || reloading.reload()).await {
            Ok(Ok(changed)) => changed,
            Ok(Err(e)) => {
                tracing::warn!("plugins not reloaded: {e:#}");
                continue;
            }
            Err(_) => continue,
        };
        if changed.is_empty() {
            continue;
        }
        let after: BTreeSet<String> = judge_names(&runtime).into_iter().collect();
        if before != after
            && let Some(peer) = &peer
            && let Err(e) = peer.notify_tool_list_changed().await
        {
            tracing::debug!("tools/list_changed not delivered: {e}");
        }
    }
}
