//! Reloading the tokens file while `rea serve` runs (round-3 finding
//! R3-10): on SIGHUP, or when the file changes. A token taken out stops
//! working at once (the next request with it gets 401), the legacy sessions
//! opened with it end, the connections that used it close (so its streams
//! and calls in flight end too), and an analyst no longer named loses their
//! workspace. A file that cannot be used keeps the tokens in force, and the
//! log says why. SIGHUP never stops the server, with or without a tokens
//! file.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::SessionManager;
use tokio_util::sync::CancellationToken;

use super::Front;
use crate::server::reload::{settled, watch_dir};
use crate::server::workspaces::Analyst;

/// Starts listening for SIGHUP and watching the tokens file, until
/// `shutdown`. The returned watcher must be kept alive.
pub(super) fn watch(
    front: Arc<Front>,
    shutdown: CancellationToken,
) -> Option<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = front.tokens.as_ref().and_then(|store| {
        let path = store.path();
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
        let name = path.file_name()?.to_owned();
        // Editors replace a file by renaming another over it: watch its
        // directory and pick the events that name it.
        let relevant =
            move |event: &notify::Event| event.paths.iter().any(|p| p.file_name() == Some(&name));
        watch_dir(dir, relevant, tx.clone())
            .inspect_err(|e| {
                tracing::warn!(
                    "cannot watch the tokens file for changes ({e}); SIGHUP still reloads it"
                )
            })
            .ok()
    });
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::hangup()) {
            Ok(mut hangup) => {
                let (tx, shutdown) = (tx.clone(), shutdown.clone());
                tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            got = hangup.recv() => if got.is_none() || tx.send(()).is_err() { break },
                            () = shutdown.cancelled() => break,
                        }
                    }
                });
            }
            Err(e) => tracing::warn!("cannot listen for SIGHUP ({e}); tokens reload on change"),
        }
    }
    drop(tx);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                more = settled(&mut rx) => if !more { break },
                () = shutdown.cancelled() => break,
            }
            apply(&front).await;
        }
    });
    watcher
}

/// Reads the tokens file again and ends what the tokens it no longer holds
/// had opened.
async fn apply(front: &Front) {
    let Some(store) = &front.tokens else {
        tracing::info!("SIGHUP: this server has no tokens file; nothing to reload");
        return;
    };
    let revoked = match store.reload() {
        Ok(revoked) => revoked,
        Err(e) => {
            tracing::warn!("the tokens file was not reloaded; the tokens in force stay: {e}");
            return;
        }
    };
    let ended = front.owners.take_opened_with(&revoked.credentials);
    for id in &ended {
        let _ = front.sessions.close_session(&Arc::from(id.as_str())).await;
    }
    let closed = front.connections.close_used_by(&revoked.credentials);
    if let Some(workspaces) = front.hub.workspaces() {
        for name in revoked.names {
            workspaces.forget(&Analyst(name));
        }
    }
    tracing::warn!(
        analysts = store.current().names().count(),
        tokens_revoked = revoked.credentials.len(),
        sessions_ended = ended.len(),
        connections_closed = closed,
        "tokens file reloaded"
    );
}
