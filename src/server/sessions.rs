//! Legacy HTTP sessions, bounded in number: rmcp's local session manager,
//! refusing a new session while the server holds its most. Each session is
//! a workspace (its handler owns a `Session`), so this bounds them as
//! `--max-workspaces` bounds the per-analyst ones; idle sessions end by
//! themselves (the manager's keep-alive), which frees room.

use std::sync::Arc;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

/// Why a session call failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(
        "the server holds its most sessions ({max}); an idle one ends by itself, or ask the \
         operator for a higher --max-workspaces"
    )]
    Full { max: usize },
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// [`LocalSessionManager`] with a cap on live sessions.
pub struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
}

impl BoundedSessions {
    pub fn new(inner: LocalSessionManager, max: usize) -> BoundedSessions {
        BoundedSessions {
            inner,
            max: max.max(1),
        }
    }

    /// How many sessions are live now.
    pub async fn live(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// The ids of the sessions live now.
    pub async fn live_ids(&self) -> std::collections::HashSet<String> {
        let sessions = self.inner.sessions.read().await;
        sessions.keys().map(|id| id.to_string()).collect()
    }

    /// Why a new session cannot be had now, if it cannot.
    pub async fn full(&self) -> Option<SessionsError> {
        (self.live().await >= self.max).then_some(SessionsError::Full { max: self.max })
    }
}

type Transport = <LocalSessionManager as SessionManager>::Transport;

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = Transport;

    async fn create_session(&self) -> Result<(SessionId, Transport), SessionsError> {
        if let Some(full) = self.full().await {
            return Err(full);
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionsError> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionsError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionsError> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Transport>, SessionsError> {
        Ok(self.inner.restore_session(id).await?)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
