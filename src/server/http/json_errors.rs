//! Every error `rea serve` answers is a JSON-RPC error object, whoever made
//! it: rea's own checks, or the MCP library and the router, which answer
//! some errors in plain text (415 "fail to deserialize …", 404 "Session
//! not found", 403 for a Host it refuses). A client then always has one
//! shape to read, and no answer quotes what the request sent.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::server::message;

/// `response`, unless it is an error in another shape than JSON: then the
/// JSON-RPC error for its status, with the same status and headers.
pub async fn as_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let body = message::error(Value::Null, code(status), explain(status).to_owned()).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The JSON-RPC code of an HTTP refusal: the request as sent cannot be
/// served (`-32600`), or the server cannot serve it now (`-32001`, as for a
/// full server).
fn code(status: StatusCode) -> i64 {
    if status.is_server_error() {
        -32001
    } else {
        message::INVALID_REQUEST
    }
}

/// What a client should know of each refusal, in rea's words.
fn explain(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED => {
            "a bearer token from the operator's tokens file is required (Authorization: Bearer …)"
        }
        StatusCode::FORBIDDEN => {
            "the Host or Origin of this request is not one this server answers to; use the \
             address it listens on, a loopback name, or a name the operator allowed"
        }
        StatusCode::NOT_FOUND => SESSION_NOT_FOUND,
        StatusCode::METHOD_NOT_ALLOWED => "/mcp takes POST, GET and DELETE",
        StatusCode::NOT_ACCEPTABLE => {
            "send Accept: application/json, text/event-stream (and text/event-stream for a GET)"
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send Content-Type: application/json",
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is over this server's limit",
        StatusCode::CONFLICT => "a stream for this session is already open",
        s if s.is_server_error() => "the server could not serve this request now; try again",
        _ => "the request could not be served as sent",
    }
}

const SESSION_NOT_FOUND: &str = "no such session: it ended, or it was not opened with your \
                                 token; send initialize to open one";

/// The answer to a request naming a session that does not exist, or that
/// another token opened: the two are indistinguishable.
pub fn session_not_found() -> Response {
    let body = message::error(
        Value::Null,
        message::INVALID_REQUEST,
        SESSION_NOT_FOUND.to_owned(),
    );
    json_response(StatusCode::NOT_FOUND, &body)
}

/// HTTP 401 with `WWW-Authenticate: Bearer`.
pub fn unauthorized() -> Response {
    let body = message::error(
        Value::Null,
        message::INVALID_REQUEST,
        explain(StatusCode::UNAUTHORIZED).to_owned(),
    );
    let mut response = json_response(StatusCode::UNAUTHORIZED, &body);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"rea\""),
    );
    response
}

pub fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_plain_text_refusal_becomes_json_and_keeps_its_headers() {
        let router = axum::Router::new()
            .route(
                "/text",
                axum::routing::get(|| async {
                    (
                        StatusCode::NOT_FOUND,
                        [(header::RETRY_AFTER, "5")],
                        "Not Found: Session not found",
                    )
                }),
            )
            .route(
                "/ok",
                axum::routing::get(|| async { "plain success stays" }),
            )
            .layer(axum::middleware::from_fn(as_json));
        use tower::ServiceExt;
        let response = router
            .clone()
            .oneshot(Request::get("/text").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let sent: Value = serde_json::from_slice(&bytes).unwrap();
        let own: Value = serde_json::from_slice(
            &axum::body::to_bytes(session_not_found().into_body(), 1 << 16)
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(sent, own, "the library's 404 reads as rea's own");
        let fine = router
            .oneshot(Request::get("/ok").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(fine.status(), StatusCode::OK);
    }
}
