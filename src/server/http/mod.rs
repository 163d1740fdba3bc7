//! One server for a team: MCP over streamable HTTP at `/mcp` (`rea serve`).
//!
//! rmcp's streamable HTTP service runs under axum. In front of it, every
//! request is authenticated: with a tokens file, `Authorization: Bearer`
//! must carry one of its tokens (else HTTP 401 with `WWW-Authenticate:
//! Bearer`) and the analyst it names rides in the request's extensions;
//! without one, the server binds loopback only and everyone is the one
//! local analyst. Host and Origin are checked against DNS rebinding, bodies
//! are bounded, a malformed message gets its JSON-RPC error here (as over
//! stdio, [`super::message`]), and sessions idle past the timeout end.
//!
//! Legacy clients (`initialize`, `Mcp-Session-Id`) get a handler, and so a
//! workspace, per session; 2026-07-28 clients send each request on its own
//! and work in their analyst's workspace ([`super::workspaces`]). Every
//! request that names a session is served only for the token that opened
//! it ([`owners`]); another token, or an id never handed out, gets the same
//! 404. Connections are accepted, timed and capped in [`connections`]; the
//! tokens file is reloaded on SIGHUP or a change ([`token_reload`]); every
//! error answer is JSON ([`json_errors`]).

mod connections;
mod json_errors;
mod owners;
mod token_reload;

pub use connections::{DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, SHUTDOWN_GRACE};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::connections::{ConnectionMark, Connections};
use self::owners::{Owner, SessionOwners};
use super::handler::{ReaServer, SERVER_FULL};
use super::hub::Hub;
use super::message;
use super::sessions::BoundedSessions;
use super::tokens::{Credential, TokenStore};
use super::workspaces::{Analyst, LOCAL_ANALYST};

/// Largest request body, unless the operator says otherwise.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// How long a session or workspace may sit idle, unless the operator says
/// otherwise.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);
/// How long a client may take to send a request body, unless the operator
/// says otherwise.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The header naming a legacy session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How `rea serve` listens.
pub struct HttpOptions {
    pub listen: SocketAddr,
    /// `None`: loopback only, one local analyst.
    pub tokens: Option<TokenStore>,
    /// Host names clients may use beyond the listen address and loopback
    /// names (a DNS name the server is reached by).
    pub allowed_hosts: Vec<String>,
    pub max_body_bytes: usize,
    pub idle: Duration,
    /// Most legacy sessions live at once (each is a workspace).
    pub max_sessions: usize,
    /// Most connections held at once.
    pub max_connections: usize,
    /// How long a request's headers (or an idle connection) may take.
    pub header_timeout: Duration,
    /// How long a request's body may take.
    pub body_timeout: Duration,
}

/// Why `rea serve` does not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "{listen} is not a loopback address, and without --tokens-file anyone who can reach it \
         could use this server; pass --tokens-file, or listen on 127.0.0.1"
    )]
    OpenWithoutTokens { listen: SocketAddr },
    #[error("cannot listen on {listen}: {reason}")]
    Bind { listen: SocketAddr, reason: String },
}

/// What every request passes through before the MCP library: who it comes
/// from, which sessions are whose, and the limits.
struct Front {
    hub: Arc<Hub>,
    tokens: Option<TokenStore>,
    owners: SessionOwners,
    sessions: Arc<BoundedSessions>,
    connections: Arc<Connections>,
    max_body_bytes: usize,
    body_timeout: Duration,
    max_sessions: usize,
}

impl Front {
    /// How many analysts the server answers to now.
    fn analysts(&self) -> usize {
        self.tokens
            .as_ref()
            .map_or(1, |t| t.current().names().count())
    }
}

/// Checks the options, binds, and returns the bound address and a future
/// that serves until `shutdown` is cancelled.
pub async fn bind(
    hub: Arc<Hub>,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(SocketAddr, impl Future<Output = ()>), ServeError> {
    let listen = options.listen;
    if options.tokens.is_none() && !listen.ip().is_loopback() {
        return Err(ServeError::OpenWithoutTokens { listen });
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| ServeError::Bind {
            listen,
            reason: e.to_string(),
        })?;
    let bound = listener.local_addr().map_err(|e| ServeError::Bind {
        listen,
        reason: e.to_string(),
    })?;
    let header_timeout = options.header_timeout;
    let (router, front) = router(hub, options, bound, shutdown.clone());
    let reloads = token_reload::watch(front.clone(), shutdown.clone());
    let serving = async move {
        let _reloads = reloads;
        connections::serve(
            listener,
            router,
            front.connections.clone(),
            header_timeout,
            shutdown,
        )
        .await;
    };
    Ok((bound, serving))
}

fn router(
    hub: Arc<Hub>,
    options: HttpOptions,
    bound: SocketAddr,
    shutdown: CancellationToken,
) -> (Router, Arc<Front>) {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    hosts.push(bound.ip().to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    hosts.sort();
    hosts.dedup();
    let origins: Vec<String> = hosts
        .iter()
        .flat_map(|h| {
            let host = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{host}:*"), format!("https://{host}:*")]
        })
        .collect();
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    config.max_request_body_bytes = options.max_body_bytes;
    config.cancellation_token = shutdown;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.idle);
    let sessions = Arc::new(BoundedSessions::new(sessions, options.max_sessions));
    let service = {
        let hub = hub.clone();
        StreamableHttpService::new(
            move || Ok(ReaServer::new(hub.clone())),
            sessions.clone(),
            config,
        )
    };
    let front = Arc::new(Front {
        hub,
        tokens: options.tokens,
        owners: SessionOwners::default(),
        sessions,
        connections: Arc::new(Connections::new(options.max_connections)),
        max_body_bytes: options.max_body_bytes,
        body_timeout: options.body_timeout,
        max_sessions: options.max_sessions,
    });
    let router = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(front.clone(), check_request))
        .layer(middleware::from_fn_with_state(front.clone(), authenticate))
        .layer(middleware::from_fn(json_errors::as_json));
    (router, front)
}

/// The session a request names, if it names one.
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// What stands between an authenticated request and the MCP library:
///
/// - a request naming a session not opened with this request's token gets
///   the 404 an unknown session gets, whatever its method (GET, DELETE and
///   notifications as well as calls);
/// - a POST's body is read here, bounded in size (413 at once when its
///   declared length is over the limit) and time (408); one that is not one
///   well-formed message gets its JSON-RPC error (see [`message::check`]:
///   400, or 200 with the error for a request with an id; the library
///   would answer 415 or "session ID is required");
/// - an `initialize` that would pass the server's cap on sessions gets 503,
///   and one that would pass the analyst's share of it 429, both with
///   `Retry-After` (the session manager's refusal would be a bare 500);
/// - a session the library opens is noted as this token's; a DELETE that
///   ends one is answered 200 (the Python SDK takes the library's 202 for a
///   failed termination).
async fn check_request(State(front): State<Arc<Front>>, request: Request, next: Next) -> Response {
    let owner = request
        .extensions()
        .get::<Owner>()
        .cloned()
        .unwrap_or_else(|| Owner {
            analyst: Analyst(LOCAL_ANALYST.to_owned()),
            credential: Credential::LOCAL,
        });
    let named = session_id(request.headers());
    if let Some(id) = &named
        && !front.owners.owned_by(id, &owner)
    {
        return json_errors::session_not_found();
    }
    if request.method() == Method::DELETE {
        let mut response = next.run(request).await;
        if response.status().is_success()
            && let Some(id) = &named
        {
            front.owners.forget(id);
        }
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&front, &parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let value = match message::check(&bytes) {
        Ok(value) => value,
        // An error for a request the client can match (it has an id)
        // travels in-band with 200, as the library sends its own, so SDKs
        // hand the client the JSON-RPC error rather than a bare HTTP one;
        // what cannot be matched is a 400.
        Err(answer) if answer["id"].is_null() => {
            return json_errors::json_response(StatusCode::BAD_REQUEST, &answer);
        }
        Err(answer) => return json_errors::json_response(StatusCode::OK, &answer),
    };
    let opens_session = named.is_none() && value["method"] == "initialize";
    if opens_session && let Some(refusal) = session_refusal(&front, &owner, &value).await {
        return refusal;
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if opens_session
        && response.status().is_success()
        && let Some(id) = session_id(response.headers())
    {
        front.owners.record(&id, owner);
    }
    response
}

/// A POST's body, read whole within the size and time limits, or the
/// answer that refuses it.
async fn read_body(
    front: &Front,
    headers: &HeaderMap,
    body: Body,
) -> Result<axum::body::Bytes, Response> {
    let too_large = || {
        let why = format!("the request body exceeds {} bytes", front.max_body_bytes);
        let answer = message::error(Value::Null, message::INVALID_REQUEST, why);
        json_errors::json_response(StatusCode::PAYLOAD_TOO_LARGE, &answer)
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > front.max_body_bytes as u64) {
        return Err(too_large());
    }
    let read = axum::body::to_bytes(body, front.max_body_bytes);
    match tokio::time::timeout(front.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e))
            if std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>()) =>
        {
            Err(too_large())
        }
        Ok(Err(_)) => {
            let why = "the request body could not be read".to_owned();
            let answer = message::error(Value::Null, message::INVALID_REQUEST, why);
            Err(json_errors::json_response(StatusCode::BAD_REQUEST, &answer))
        }
        Err(_) => {
            let why = format!(
                "the request body did not arrive within {} s",
                front.body_timeout.as_secs()
            );
            let answer = message::error(Value::Null, message::INVALID_REQUEST, why);
            Err(json_errors::json_response(
                StatusCode::REQUEST_TIMEOUT,
                &answer,
            ))
        }
    }
}

/// Why `owner` may not open another session now, as the answer to send:
/// the server holds its most (503), or `owner`'s analyst holds their share
/// (429).
async fn session_refusal(front: &Front, owner: &Owner, initialize: &Value) -> Option<Response> {
    let live = front.sessions.live_ids().await;
    front.owners.retain_live(|id| live.contains(id));
    let (status, why) = if let Some(full) = front.sessions.full().await {
        (StatusCode::SERVICE_UNAVAILABLE, full.to_string())
    } else {
        let share = owners::share(front.max_sessions, front.analysts());
        if front.owners.held_by(&owner.analyst) < share {
            return None;
        }
        (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "you hold your share of this server's sessions ({share}); end one (DELETE) or let \
                 one sit idle until it ends, then initialize again"
            ),
        )
    };
    let answer = message::error(initialize["id"].clone(), SERVER_FULL.0.into(), why);
    let mut response = json_errors::json_response(status, &answer);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    Some(response)
}

/// Names the analyst and the token a request comes from, or answers 401.
async fn authenticate(
    State(front): State<Arc<Front>>,
    mut request: Request,
    next: Next,
) -> Response {
    let owner = match &front.tokens {
        None => Some(Owner {
            analyst: Analyst(LOCAL_ANALYST.to_owned()),
            credential: Credential::LOCAL,
        }),
        Some(store) => {
            let tokens = store.current();
            request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| tokens.authenticate(v))
                .map(|(name, credential)| Owner {
                    analyst: Analyst(name.to_owned()),
                    credential,
                })
        }
    };
    let Some(owner) = owner else {
        return json_errors::unauthorized();
    };
    if let Some(mark) = request.extensions().get::<ConnectionMark>() {
        mark.authenticated(owner.credential);
    }
    request.extensions_mut().insert(owner.analyst.clone());
    request.extensions_mut().insert(owner);
    next.run(request).await
}
