//! The connections `rea serve` holds: accepted, timed and capped here
//! rather than by `axum::serve`, which has neither a header timeout nor a
//! connection cap (round-3 finding R3-7).
//!
//! - **Timeouts.** hyper's header-read timeout runs whenever a connection
//!   waits for a request head: a client that sends its headers too slowly,
//!   or a keep-alive connection idle that long between requests, is
//!   closed. (A request in flight, or a stream being sent, is not idle.)
//!   Bodies have their own deadline where they are read
//!   ([`super::check_request`]).
//! - **A cap.** At most `max` connections are held. When a new one would
//!   pass it, the oldest connection that has not yet shown a valid token
//!   is closed to make room; when every held connection has, the new one is
//!   closed at once. Idle strangers therefore cannot starve the analysts.
//! - **Revocation.** Each connection remembers the tokens its requests
//!   authenticated with, so a token taken out of the tokens file closes
//!   every connection that used it (its streams and calls end with them).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::server::tokens::Credential;

/// How long a client may take to send a request's headers, or leave a
/// connection idle between requests, unless the operator says otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections held at once, unless the operator says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// How long a stopping server waits for its connections to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The tokens a connection's requests authenticated with; the
/// authentication layer finds it in each request's extensions.
#[derive(Clone, Default)]
pub struct ConnectionMark(Arc<Mutex<Vec<Credential>>>);

impl ConnectionMark {
    /// Notes that a request on this connection showed `credential`.
    pub fn authenticated(&self, credential: Credential) {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !seen.contains(&credential) {
            seen.push(credential);
        }
    }

    fn is_authenticated(&self) -> bool {
        !self.0.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    fn used_any(&self, credentials: &[Credential]) -> bool {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        seen.iter().any(|c| credentials.contains(c))
    }
}

struct Held {
    mark: ConnectionMark,
    close: CancellationToken,
}

/// The connections held now, in the order they were accepted.
pub struct Connections {
    held: Mutex<HashMap<u64, Held>>,
    next: AtomicU64,
    max: usize,
}

/// A connection admitted under the cap.
struct Admitted {
    id: u64,
    mark: ConnectionMark,
    close: CancellationToken,
}

impl Connections {
    pub fn new(max: usize) -> Connections {
        Connections {
            held: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            max: max.max(1),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Held>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Room for one more connection: at once under the cap, else by
    /// closing the oldest unauthenticated one; `None` when every held
    /// connection is an analyst's.
    fn admit(&self) -> Option<Admitted> {
        let mut held = self.held();
        if held.len() >= self.max {
            let stranger = held
                .iter()
                .filter(|(_, h)| !h.mark.is_authenticated())
                .map(|(id, _)| *id)
                .min()?;
            if let Some(h) = held.remove(&stranger) {
                h.close.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (mark, close) = (ConnectionMark::default(), CancellationToken::new());
        held.insert(
            id,
            Held {
                mark: mark.clone(),
                close: close.clone(),
            },
        );
        Some(Admitted { id, mark, close })
    }

    fn leave(&self, id: u64) {
        self.held().remove(&id);
    }

    /// Closes every connection a request of which showed one of
    /// `credentials`; how many.
    pub fn close_used_by(&self, credentials: &[Credential]) -> usize {
        let held = self.held();
        let mut closed = 0;
        for h in held.values().filter(|h| h.mark.used_any(credentials)) {
            h.close.cancel();
            closed += 1;
        }
        closed
    }

    /// How many connections are held now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held().len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Serves `router` on `listener` until `shutdown`, then lets connections
/// finish for at most [`SHUTDOWN_GRACE`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    connections: Arc<Connections>,
    header_timeout: Duration,
    shutdown: CancellationToken,
) {
    let graceful = GracefulShutdown::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, most likely: wait for some to
                    // close rather than spin.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        // Answers are small and written whole: send them at once rather
        // than wait on Nagle's algorithm (as `axum::serve` did).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY could not be set: {e}");
        }
        let Some(admitted) = connections.admit() else {
            tracing::debug!("connection refused: every held connection is an analyst's");
            continue;
        };
        let mark = admitted.mark.clone();
        let service =
            router
                .clone()
                .map_request(move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut request = request.map(axum::body::Body::new);
                    request.extensions_mut().insert(mark.clone());
                    request
                });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        let connections = connections.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = admitted.close.cancelled() => {}
            }
            connections.leave(admitted.id);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after the stop request were closed",
            SHUTDOWN_GRACE.as_secs()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_server_sheds_the_oldest_stranger_and_keeps_analysts() {
        let connections = Connections::new(2);
        let first = connections.admit().unwrap();
        let second = connections.admit().unwrap();
        first.mark.authenticated(Credential::LOCAL);
        // Full: the unauthenticated `second` makes room.
        let third = connections.admit().unwrap();
        assert!(second.close.is_cancelled());
        assert!(!first.close.is_cancelled());
        assert_eq!(connections.len(), 2);
        // Full of analysts: a newcomer is refused.
        third.mark.authenticated(Credential::LOCAL);
        assert!(connections.admit().is_none());
        assert_eq!(connections.close_used_by(&[Credential::LOCAL]), 2);
        assert!(first.close.is_cancelled() && third.close.is_cancelled());
        connections.leave(first.id);
        connections.leave(third.id);
        assert!(connections.is_empty());
    }
}
