//! Watching files that a running server reads again when they change:
//! `--prompts-dir` (valid edits reload the prompt catalog) and, for `rea
//! serve`, the tokens file.
//!
//! The watcher only decides *when* to look; the reader decides *whether*
//! what it finds is acceptable ([`Hub::reload`] runs the same validator as
//! build and lint, plus the compiled argument shapes). Events are debounced
//! so an editor's save-as-rename burst causes one reload.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::hub::Hub;

/// Quiet time after the last change before reloading.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Starts watching `dir` (not its subdirectories) and sends on `changed`
/// whenever something in it changes that `relevant` accepts. The returned
/// watcher must be kept alive.
pub(crate) fn watch_dir(
    dir: &Path,
    relevant: impl Fn(&notify::Event) -> bool + Send + 'static,
    changed: UnboundedSender<()>,
) -> notify::Result<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !event.kind.is_access()
            && relevant(&event)
        {
            let _ = changed.send(());
        }
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// Waits for the next change and for the burst it starts to settle;
/// `false` once no change can come any more.
pub(crate) async fn settled(changes: &mut UnboundedReceiver<()>) -> bool {
    if changes.recv().await.is_none() {
        return false;
    }
    while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, changes.recv()).await {}
    true
}

/// Starts watching the prompts directory `dir`; the returned watcher must
/// be kept alive.
pub fn watch(hub: Arc<Hub>, dir: PathBuf) -> notify::Result<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = watch_dir(&dir, |_| true, tx)?;
    tokio::spawn(async move {
        while settled(&mut rx).await {
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
