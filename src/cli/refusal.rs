//! When `rea mcp` cannot start (a read root that does not exist, a catalog
//! that does not validate), the client that launched it would see only a
//! closed connection. Instead every request on stdin gets a JSON-RPC error
//! carrying the reason, until stdin closes. Nothing else is served.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// Longest request line read whole; longer ones are skipped unanswered
/// (their id cannot be read without holding them).
const MAX_LINE_BYTES: usize = 1 << 20;

/// JSON-RPC "internal error": the server is not able to serve.
const NOT_SERVING: i64 = -32603;

/// Answers every request read from stdin with `why`, then returns at EOF.
pub fn answer_until_eof(why: &str) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line_bounded(&mut input, &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if let Some(reply) = reply(&line, why) {
            let mut out = stdout.lock();
            if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    }
}

/// The error reply to one line, when it is a request (it has an id).
fn reply(line: &[u8], why: &str) -> Option<Value> {
    let request: Value = serde_json::from_slice(line).ok()?;
    let id = request.get("id")?.clone();
    request.get("method")?.as_str()?;
    Some(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": NOT_SERVING, "message": format!("rea mcp is not serving: {why}")},
    }))
}

/// One line into `out` (without its newline), at most [`MAX_LINE_BYTES`]:
/// the rest of a longer line is read and dropped, and `out` is cleared.
fn read_line_bounded(input: &mut impl BufRead, out: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    let mut overflow = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if !overflow && out.len() + part.len() <= MAX_LINE_BYTES {
            out.extend_from_slice(part);
        } else {
            overflow = true;
            out.clear();
        }
        let used = done.unwrap_or(chunk.len());
        total += used;
        input.consume(used);
        if done.is_some() {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_get_the_reason_and_notifications_nothing() {
        let r = reply(
            br#"{"jsonrpc":"2.0","id":7,"method":"initialize"}"#,
            "read root /x cannot be used",
        )
        .unwrap();
        assert_eq!(r["id"], 7);
        assert_eq!(r["error"]["code"], NOT_SERVING);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("read root /x")
        );
        assert!(
            reply(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "x"
            )
            .is_none()
        );
        assert!(reply(b"not json", "x").is_none());
    }

    #[test]
    fn long_lines_are_dropped_whole() {
        let mut text = vec![b'a'; MAX_LINE_BYTES + 10];
        text.extend_from_slice(b"\n{\"id\":1}\n");
        let mut input = std::io::Cursor::new(text);
        let mut line = Vec::new();
        assert!(read_line_bounded(&mut input, &mut line).unwrap() > MAX_LINE_BYTES);
        assert!(line.is_empty());
        line.clear();
        read_line_bounded(&mut input, &mut line).unwrap();
        assert_eq!(line, b"{\"id\":1}");
    }
}
