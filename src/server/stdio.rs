//! A thin guard between stdio and the MCP library, for what it leaves
//! unanswered or answers misleadingly (hostile-input finding F9):
//!
//! - a line that is not one JSON-RPC message is answered as
//!   [`super::message::check`] says (`-32700` for what is not JSON, never
//!   ending the connection, not even as the first line; `-32600` *with its
//!   id* for `params` that is not an object, so a waiting client is
//!   answered; `-32602` for `params` that do not fit a method rea serves);
//! - a request to a method rea serves that the library still refuses as
//!   "method not found" (it does so when a field has the wrong type) gets
//!   `-32602 Invalid params` instead;
//! - a request that needs a session before `initialize` is told to send
//!   `initialize` first (or to carry the 2026-07-28 `_meta`);
//! - a line longer than [`MAX_LINE_BYTES`] is dropped with `-32600`.
//!
//! Everything else passes through unchanged, byte for byte.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::Mutex;

use super::message::{self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, SERVED, error};

/// Longest JSON-RPC line read whole (a capture's stdin of 1 MiB, escaped,
/// fits many times over).
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Requests whose method is remembered until their answer passes.
const MAX_PENDING: usize = 10_000;

/// Shared state of the two pumps.
#[derive(Default)]
struct Guard {
    /// Request id (as JSON text) → method, until answered.
    pending: std::sync::Mutex<HashMap<String, String>>,
    /// Whether an `initialize` succeeded.
    initialized: AtomicBool,
}

/// The transport the MCP library serves on: stdio, guarded. The returned
/// streams are the library's side; two tasks pump between them and the
/// process's stdin and stdout. Await the handle after the service ends:
/// it finishes once everything the library wrote has reached stdout.
pub fn guarded() -> ((DuplexStream, DuplexStream), tokio::task::JoinHandle<()>) {
    let (library_in, mut to_library) = tokio::io::duplex(1 << 20);
    let (library_out, from_library) = tokio::io::duplex(1 << 20);
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    let guard = Arc::new(Guard::default());
    {
        let (stdout, guard) = (stdout.clone(), guard.clone());
        tokio::spawn(async move {
            let mut input = tokio::io::BufReader::new(tokio::io::stdin());
            while let Ok(Some(line)) = next_line(&mut input).await {
                match inbound(&guard, line) {
                    Inbound::Forward(bytes) => {
                        if to_library.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                    Inbound::Answer(reply) => {
                        if write_line(&stdout, &reply).await.is_err() {
                            break;
                        }
                    }
                    Inbound::Skip => {}
                }
            }
            let _ = to_library.shutdown().await;
        });
    }
    let flushed = tokio::spawn(pump_replies(from_library, stdout, guard));
    ((library_in, library_out), flushed)
}

/// Copies the library's replies to stdout, line by line, until the library
/// closes its side or stdout is gone. A reply is never read back through the
/// input's cap ([`MAX_LINE_BYTES`]): the library has already built it, and
/// a reply it cannot pass on whole would silence the server for good
/// (round-3 finding R3-1). How large a reply may grow is bounded where
/// answers are made (`tools::MAX_ANSWER_BYTES`).
async fn pump_replies(
    from_library: impl tokio::io::AsyncRead + Unpin,
    stdout: Arc<Mutex<impl tokio::io::AsyncWrite + Unpin>>,
    guard: Arc<Guard>,
) {
    let mut output = tokio::io::BufReader::new(from_library);
    loop {
        let mut line = Vec::new();
        match output.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = outbound(&guard, line);
        let mut out = stdout.lock().await;
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            break;
        }
    }
}

async fn write_line(
    stdout: &Mutex<impl tokio::io::AsyncWrite + Unpin>,
    reply: &Value,
) -> std::io::Result<()> {
    let mut bytes = reply.to_string().into_bytes();
    bytes.push(b'\n');
    let mut out = stdout.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

/// One line of input: whole (with its newline), or too long (dropped).
enum Line {
    Whole(Vec<u8>),
    TooLong,
}

/// The next line, at most [`MAX_LINE_BYTES`]; the rest of a longer one is
/// read and dropped.
async fn next_line(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (true, false) => None,
                (_, true) => Some(Line::TooLong),
                (false, false) => Some(Line::Whole(line)),
            });
        }
        let (part, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        if !too_long && line.len() + part.len() <= MAX_LINE_BYTES {
            line.extend_from_slice(part);
        } else {
            too_long = true;
            line = Vec::new();
        }
        let used = part.len();
        input.consume(used);
        if end {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                Line::Whole(line)
            }));
        }
    }
}

enum Inbound {
    Forward(Vec<u8>),
    Answer(Value),
    Skip,
}

fn inbound(guard: &Guard, line: Line) -> Inbound {
    let line = match line {
        Line::TooLong => {
            return Inbound::Answer(error(
                Value::Null,
                INVALID_REQUEST,
                format!("the request is longer than {MAX_LINE_BYTES} bytes; it was dropped"),
            ));
        }
        Line::Whole(line) => line,
    };
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Skip;
    }
    let value = match message::check(&line) {
        Ok(value) => value,
        Err(answer) => return Inbound::Answer(answer),
    };
    if let (Some(method), Some(id)) = (value.get("method").and_then(Value::as_str), value.get("id"))
    {
        let mut pending = guard.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.len() < MAX_PENDING {
            pending.insert(id.to_string(), method.to_owned());
        }
    }
    Inbound::Forward(line)
}

/// A line the library wrote, rewritten when it is one of the misleading
/// answers the module doc lists.
fn outbound(guard: &Guard, line: Vec<u8>) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    let Some(id) = value.get("id").map(Value::to_string) else {
        return line;
    };
    let method = guard
        .pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id);
    let Some(method) = method else {
        return line;
    };
    if method == "initialize" && value.get("result").is_some() {
        guard.initialized.store(true, Ordering::Relaxed);
    }
    let Some(error) = value.get_mut("error") else {
        return line;
    };
    let code = error.get("code").and_then(Value::as_i64);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if code == Some(METHOD_NOT_FOUND) && SERVED.contains(&method.as_str()) {
        error["code"] = json!(INVALID_PARAMS);
        error["message"] = json!(format!(
            "Invalid params for {method}: a field is missing or has the wrong type (see the method's schema; tools/list has each tool's input schema)"
        ));
    } else if message.contains("_meta is missing") && !guard.initialized.load(Ordering::Relaxed) {
        error["message"] = json!(format!(
            "{message}. No session is open: a client of protocol 2025-11-25 or earlier sends initialize first; a 2026-07-28 client gives every request this _meta"
        ));
    } else {
        return line;
    }
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::message::PARSE_ERROR;

    fn answer(guard: &Guard, text: &str) -> Option<Value> {
        match inbound(guard, Line::Whole(text.as_bytes().to_vec())) {
            Inbound::Answer(v) => Some(v),
            _ => None,
        }
    }

    #[test]
    fn non_json_and_non_object_params_are_answered() {
        let g = Guard::default();
        let parse = answer(&g, "not json\n").unwrap();
        assert_eq!(parse["error"]["code"], PARSE_ERROR);
        assert_eq!(parse["id"], Value::Null);
        let bad = answer(
            &g,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}"#,
        )
        .unwrap();
        assert_eq!(
            (bad["id"].clone(), bad["error"]["code"].clone()),
            (json!(7), json!(INVALID_REQUEST))
        );
        assert!(answer(&g, r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).is_none());
        assert!(answer(&g, "   \n").is_none());
        assert!(matches!(inbound(&g, Line::TooLong), Inbound::Answer(_)));
    }

    #[test]
    fn method_not_found_for_a_served_method_becomes_invalid_params() {
        let g = Guard::default();
        // Caught on the way in where the check knows the method's params.
        let early = answer(
            &g,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#,
        )
        .expect("answered at once");
        assert_eq!(early["error"]["code"], INVALID_PARAMS);
        // Otherwise the library's answer is rewritten on the way out.
        assert!(
            answer(
                &g,
                r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"cursor":5}}"#,
            )
            .is_none()
        );
        answer(&g, r#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#);
        let out = |text: &str| -> Value {
            serde_json::from_slice(&outbound(&g, text.as_bytes().to_vec())).unwrap()
        };
        let fixed =
            out(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"prompts/list"}}"#);
        assert_eq!(fixed["error"]["code"], INVALID_PARAMS);
        let kept =
            out(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"resources/list"}}"#);
        assert_eq!(
            kept["error"]["code"], METHOD_NOT_FOUND,
            "an unserved method stays not found"
        );
        let passthrough = br#"{"jsonrpc":"2.0","id":9,"result":{}}"#.to_vec();
        assert_eq!(outbound(&g, passthrough.clone()), passthrough);
    }

    #[test]
    fn a_request_before_initialize_is_told_to_initialize() {
        let g = Guard::default();
        answer(&g, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let line = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"request _meta is missing or has malformed required fields"}}"#;
        let fixed: Value = serde_json::from_slice(&outbound(&g, line.to_vec())).unwrap();
        assert!(
            fixed["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize first")
        );
    }

    #[tokio::test]
    async fn a_reply_longer_than_the_input_cap_passes_and_later_replies_follow() {
        let (mut library, from_library) = tokio::io::duplex(1 << 16);
        let stdout = Arc::new(Mutex::new(Vec::<u8>::new()));
        let pump = tokio::spawn(pump_replies(
            from_library,
            stdout.clone(),
            Arc::new(Guard::default()),
        ));
        let mut long = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#.to_vec();
        long.resize(long.len() + MAX_LINE_BYTES + 10, b'x');
        long.extend_from_slice(b"\"}}\n");
        let after = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n";
        library.write_all(&long).await.unwrap();
        library.write_all(after).await.unwrap();
        drop(library);
        pump.await.unwrap();
        let out = stdout.lock().await;
        assert_eq!(out.len(), long.len() + after.len());
        assert!(
            out.ends_with(after),
            "the reply after the long one got through"
        );
    }

    #[tokio::test]
    async fn lines_are_bounded() {
        let mut text = vec![b'x'; MAX_LINE_BYTES + 5];
        text.extend_from_slice(b"\n{\"a\":1}\n");
        let mut input = tokio::io::BufReader::new(&text[..]);
        assert!(matches!(
            next_line(&mut input).await.unwrap(),
            Some(Line::TooLong)
        ));
        let Some(Line::Whole(line)) = next_line(&mut input).await.unwrap() else {
            panic!("the next line is whole");
        };
        assert_eq!(line, b"{\"a\":1}\n");
        assert!(next_line(&mut input).await.unwrap().is_none());
    }
}
