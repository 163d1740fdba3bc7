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
//! and work in their analyst's workspace ([`super::workspaces`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::handler::{ReaServer, SERVER_FULL};
use super::hub::Hub;
use super::message;
use super::sessions::BoundedSessions;
use super::tokens::Tokens;
use super::workspaces::{Analyst, LOCAL_ANALYST};

/// Largest request body, unless the operator says otherwise.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// How long a session or workspace may sit idle, unless the operator says
/// otherwise.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);

/// How `rea serve` listens.
pub struct HttpOptions {
    pub listen: SocketAddr,
    /// `None`: loopback only, one local analyst.
    pub tokens: Option<Tokens>,
    /// Host names clients may use beyond the listen address and loopback
    /// names (a DNS name the server is reached by).
    pub allowed_hosts: Vec<String>,
    pub max_body_bytes: usize,
    pub idle: Duration,
    /// Most legacy sessions live at once (each is a workspace).
    pub max_sessions: usize,
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
    #[error("the HTTP server stopped: {0}")]
    Serve(String),
}

/// Checks the options, binds, and returns the bound address and a future
/// that serves until `shutdown` is cancelled.
pub async fn bind(
    hub: Arc<Hub>,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(SocketAddr, impl Future<Output = Result<(), ServeError>>), ServeError> {
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
    let router = router(hub, options, bound, shutdown.clone());
    let serving = async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
            .map_err(|e| ServeError::Serve(e.to_string()))
    };
    Ok((bound, serving))
}

fn router(
    hub: Arc<Hub>,
    options: HttpOptions,
    bound: SocketAddr,
    shutdown: CancellationToken,
) -> Router {
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
    let service = StreamableHttpService::new(
        move || Ok(ReaServer::new(hub.clone())),
        sessions.clone(),
        config,
    );
    let tokens = Arc::new(options.tokens);
    let check = Arc::new(RequestCheck {
        sessions,
        max_body_bytes: options.max_body_bytes,
    });
    Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(check, check_request))
        .layer(middleware::from_fn_with_state(tokens, authenticate))
}

/// What [`check_request`] needs.
struct RequestCheck {
    sessions: Arc<BoundedSessions>,
    max_body_bytes: usize,
}

/// Reads a POST's body (bounded) and answers what should not reach the
/// MCP library with a JSON-RPC error of its own: a body over the limit
/// (413), one that cannot be read or is not one well-formed message (see
/// [`message::check`]: 400, or 200 with the error for a request with an
/// id; the library would answer 415 or "session ID is required"), and an `initialize` that would open a session beyond the
/// cap (503 with `Retry-After`, where the session manager's refusal would
/// become a bare 500). Everything else goes on with the same bytes. (A
/// session opened by another request between this check and the
/// manager's still meets the manager's refusal.) A DELETE that ends a
/// session is answered 200.
async fn check_request(
    State(check): State<Arc<RequestCheck>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == axum::http::Method::DELETE {
        // The library accepts a session's end with 202; the Python SDK
        // takes anything but 200 or 204 for a failed termination and warns
        // the analyst. The session is gone either way: say 200.
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, check.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let (status, why) = if e.into_inner().is::<http_body_util::LengthLimitError>() {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body exceeds {} bytes", check.max_body_bytes),
                )
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read".to_owned(),
                )
            };
            let answer = message::error(Value::Null, message::INVALID_REQUEST, why);
            return json_response(status, &answer);
        }
    };
    let value = match message::check(&bytes) {
        Ok(value) => value,
        // An error for a request the client can match (it has an id)
        // travels in-band with 200, as the library sends its own, so SDKs
        // hand the client the JSON-RPC error rather than a bare HTTP one;
        // what cannot be matched is a 400.
        Err(answer) if answer["id"].is_null() => {
            return json_response(StatusCode::BAD_REQUEST, &answer);
        }
        Err(answer) => return json_response(StatusCode::OK, &answer),
    };
    let opens_session =
        !parts.headers.contains_key("mcp-session-id") && value["method"] == "initialize";
    if opens_session && let Some(full) = check.sessions.full().await {
        let answer = message::error(value["id"].clone(), SERVER_FULL.0.into(), full.to_string());
        let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, &answer);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Names the analyst a request comes from, or answers 401.
async fn authenticate(
    State(tokens): State<Arc<Option<Tokens>>>,
    mut request: Request,
    next: Next,
) -> Response {
    let analyst = match tokens.as_ref() {
        None => Some(LOCAL_ANALYST.to_owned()),
        Some(tokens) => request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| tokens.analyst(v))
            .map(str::to_owned),
    };
    match analyst {
        Some(name) => {
            request.extensions_mut().insert(Analyst(name));
            next.run(request).await
        }
        None => unauthorized(),
    }
}

fn unauthorized() -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        Body::from("a bearer token from the operator's tokens file is required\n"),
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"rea\""),
    );
    response
}
