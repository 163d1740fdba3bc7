//! `--prompts-dir`: watch a prompts directory and reload valid changes.
//!
//! The watcher only decides *when* to look; [`Hub::reload`] decides *whether*
//! the directory is acceptable (the same validator as build and lint, plus
//! the compiled argument shapes). Events are debounced so an editor's
//! save-as-rename burst causes one reload.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::hub::Hub;

/// Quiet time after the last change before reloading.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Starts watching `dir`; the returned watcher must be kept alive.
pub fn watch(hub: Arc<Hub>, dir: PathBuf) -> notify::Result<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !event.kind.is_access()
        {
            let _ = tx.send(());
        }
    })?;
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Drain the burst.
            while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, rx.recv()).await {}
            match hub.reload(&dir).await {
                Ok(told) => {
                    tracing::info!(dir = %dir.display(), notified = told, "prompt catalog reloaded")
                }
                Err(diags) => {
                    tracing::warn!(dir = %dir.display(), "prompt change rejected; keeping the previous catalog");
                    for d in diags {
                        tracing::warn!("{d}");
                    }
                }
            }
        }
    });
    Ok(watcher)
}
