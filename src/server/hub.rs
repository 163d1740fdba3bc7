//! State shared by every connection: the current prompt catalog and who to
//! tell when it changes.
//!
//! Legacy clients (protocol ≤ 2025-11-25) receive
//! `notifications/prompts/list_changed` directly; 2026-07-28 clients receive it
//! only through a `subscriptions/listen` stream on which they asked for prompt
//! changes (the spec forbids unrequested notifications to them).

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer, SubscriptionSink};

use super::workspaces::{Analyst, Workspaces};
use crate::catalog::render::LoadedCatalog;
use crate::catalog::validate::Diagnostic;
use crate::session::{
    CapturePolicy, DeepProviders, OpenPolicy, Policies, ReadRoots, Session, WriteRoots,
};

/// How long one listener may take to accept a catalog-change notification.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
enum Listener {
    Legacy {
        connection: u64,
        peer: Peer<RoleServer>,
    },
    Subscription(SubscriptionSink),
}

pub struct Hub {
    catalog: RwLock<Arc<LoadedCatalog>>,
    listeners: Mutex<Vec<Listener>>,
    policies: Policies,
    deep: Arc<DeepProviders>,
    /// Per-analyst workspaces of a shared HTTP server (`rea serve`).
    workspaces: Option<Workspaces>,
}

impl Hub {
    /// A hub whose sessions offer only the built-in provider.
    pub fn new(catalog: Arc<LoadedCatalog>, read_roots: ReadRoots) -> Arc<Hub> {
        Hub::with_deep_providers(catalog, read_roots, DeepProviders::none())
    }

    /// A hub whose sessions offer `deep` (detected once, at server start).
    pub fn with_deep_providers(
        catalog: Arc<LoadedCatalog>,
        read_roots: ReadRoots,
        deep: DeepProviders,
    ) -> Arc<Hub> {
        Hub::with_policies(
            catalog,
            Policies {
                read_roots,
                ..Policies::default()
            },
            deep,
        )
    }

    /// A hub whose sessions run under the operator's `policies` (read and
    /// write roots, process capture) and offer `deep`.
    pub fn with_policies(
        catalog: Arc<LoadedCatalog>,
        policies: Policies,
        deep: DeepProviders,
    ) -> Arc<Hub> {
        Hub::build(catalog, policies, deep, None)
    }

    /// A hub for a shared HTTP server: requests without a session work in
    /// the workspace of their analyst.
    pub fn serving(
        catalog: Arc<LoadedCatalog>,
        policies: Policies,
        deep: DeepProviders,
        workspaces: Workspaces,
    ) -> Arc<Hub> {
        Hub::build(catalog, policies, deep, Some(workspaces))
    }

    fn build(
        catalog: Arc<LoadedCatalog>,
        policies: Policies,
        deep: DeepProviders,
        workspaces: Option<Workspaces>,
    ) -> Arc<Hub> {
        Arc::new(Hub {
            catalog: RwLock::new(catalog),
            listeners: Mutex::new(Vec::new()),
            policies,
            deep: Arc::new(deep),
            workspaces,
        })
    }

    /// A new, empty session under the operator's policies: what each
    /// connection, and each analyst's workspace, starts from.
    pub fn new_session(&self) -> Session {
        Session::new(self.read_roots().clone(), self.deep_providers())
            .with_write_roots(self.write_roots().clone())
            .with_capture_policy(self.capture_policy().clone())
            .with_open_policy(self.open_policy())
    }

    /// A new, empty session for `analyst`: on a server of several analysts
    /// its write roots are the analyst's own directories in the operator's
    /// (made on first use); otherwise as [`Hub::new_session`]. When those
    /// cannot be made, writing is off for the session and the log says why.
    pub fn new_session_for(&self, analyst: &Analyst) -> Session {
        let session = self.new_session();
        let own = self
            .workspaces
            .as_ref()
            .is_some_and(Workspaces::own_write_dirs);
        if !own || !self.write_roots().is_enabled() {
            return session;
        }
        match self.write_roots().for_user(&analyst.directory()) {
            Ok(roots) => session.with_write_roots(roots),
            Err(e) => {
                tracing::warn!(analyst = %analyst.0, "writing is off for this analyst: {e}");
                session.with_write_roots(WriteRoots::default())
            }
        }
    }

    /// The per-analyst workspaces, on a shared HTTP server.
    pub fn workspaces(&self) -> Option<&Workspaces> {
        self.workspaces.as_ref()
    }

    pub fn read_roots(&self) -> &ReadRoots {
        &self.policies.read_roots
    }

    pub fn write_roots(&self) -> &WriteRoots {
        &self.policies.write_roots
    }

    pub fn capture_policy(&self) -> &CapturePolicy {
        &self.policies.capture
    }

    pub fn open_policy(&self) -> OpenPolicy {
        self.policies.open
    }

    pub fn deep_providers(&self) -> Arc<DeepProviders> {
        self.deep.clone()
    }

    /// The catalog every request of the moment renders from.
    pub fn catalog(&self) -> Arc<LoadedCatalog> {
        self.catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn register_legacy(&self, connection: u64, peer: Peer<RoleServer>) {
        let mut listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        let known = listeners
            .iter()
            .any(|l| matches!(l, Listener::Legacy { connection: c, .. } if *c == connection));
        if !known {
            listeners.push(Listener::Legacy { connection, peer });
        }
    }

    pub(crate) fn register_subscription(&self, sink: SubscriptionSink) {
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Listener::Subscription(sink));
    }

    pub(crate) fn forget_connection(&self, connection: u64) {
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|l| !matches!(l, Listener::Legacy { connection: c, .. } if *c == connection));
    }

    pub(crate) fn forget_subscription(&self, sink: &SubscriptionSink) {
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|l| !matches!(l, Listener::Subscription(s) if s.id() == sink.id()));
    }

    /// Validates `dir` and, if it passes, swaps it in and notifies every
    /// listener. An invalid directory keeps the old catalog and notifies nobody.
    pub async fn reload(&self, dir: &Path) -> Result<usize, Vec<Diagnostic>> {
        let catalog = LoadedCatalog::from_dir(dir)?;
        Ok(self.install(catalog).await)
    }

    /// Swaps the catalog and notifies; returns how many listeners were told.
    ///
    /// Every listener is told at once, each within [`NOTIFY_TIMEOUT`], so a
    /// client that stopped reading its stream delays no one else. One that
    /// takes nothing in that time misses this notice but stays a listener
    /// (it sees the new catalog on its next `prompts/list`); one whose
    /// connection closed is forgotten.
    pub async fn install(&self, catalog: Arc<LoadedCatalog>) -> usize {
        *self.catalog.write().unwrap_or_else(|p| p.into_inner()) = catalog;
        let listeners: Vec<Listener> = self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut telling = tokio::task::JoinSet::new();
        for listener in listeners {
            telling.spawn(async move {
                let telling = async {
                    match &listener {
                        Listener::Legacy { peer, .. } => {
                            !peer.is_transport_closed()
                                && peer.notify_prompt_list_changed().await.is_ok()
                        }
                        Listener::Subscription(sink) => {
                            sink.notify_prompt_list_changed().await.is_ok()
                        }
                    }
                };
                let told = match tokio::time::timeout(NOTIFY_TIMEOUT, telling).await {
                    Ok(true) => Told::Yes,
                    Ok(false) => Told::Closed,
                    Err(_) => Told::TooSlow,
                };
                (listener, told)
            });
        }
        let mut told = 0;
        while let Some(outcome) = telling.join_next().await {
            match outcome {
                Ok((_, Told::Yes)) => told += 1,
                Ok((Listener::Legacy { connection, .. }, Told::Closed)) => {
                    self.forget_connection(connection)
                }
                Ok((Listener::Subscription(sink), Told::Closed)) => self.forget_subscription(&sink),
                // Too slow this time, or a panicked task: kept.
                Ok((_, Told::TooSlow)) | Err(_) => {}
            }
        }
        told
    }
}

/// How telling one listener went.
enum Told {
    Yes,
    Closed,
    TooSlow,
}
