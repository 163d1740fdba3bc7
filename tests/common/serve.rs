//! `rea serve` for tests: a server on a free loopback port with two
//! analysts' tokens, and raw HTTP/1.1 exchanges with it (the status line
//! and headers matter to these tests, so no client library hides them).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea");

/// `rea serve` on a free loopback port with two analysts' tokens; killed
/// when dropped unless the test stopped it. Its stderr goes to a file the
/// test can read ([`Served::log`]).
pub struct Served {
    pub child: std::process::Child,
    pub url: String,
    pub port: u16,
    /// The tokens file the server answers to.
    pub tokens: std::path::PathBuf,
    dir: tempfile::TempDir,
}

pub const ANA: &str = "ana-token-0123456789abcdef";
pub const BEN: &str = "ben-token-0123456789abcdef";

/// The tokens file of ana and ben.
pub fn two_tokens() -> String {
    format!(
        "[[token]]\nname = \"ana\"\ntoken = \"{ANA}\"\n\n[[token]]\nname = \"ben\"\ntoken = \"{BEN}\"\n"
    )
}

pub fn serve_two_analysts() -> Served {
    serve_two_analysts_with::<&str>(&[])
}

/// [`serve_two_analysts`] with more `rea serve` arguments.
pub fn serve_two_analysts_with<S: AsRef<std::ffi::OsStr>>(extra: &[S]) -> Served {
    serve_two_analysts_logging(extra, "warn")
}

/// [`serve_two_analysts_with`], logging at `REA_LOG=level`.
pub fn serve_two_analysts_logging<S: AsRef<std::ffi::OsStr>>(extra: &[S], level: &str) -> Served {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, two_tokens()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let log = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
    let child = Command::new(REA)
        .args(["serve", "--listen", "127.0.0.1:0", "--tokens-file"])
        .arg(&tokens)
        .args(extra)
        .env("REA_LOG", level)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("rea serve starts");
    let mut served = Served {
        child,
        url: String::new(),
        port: 0,
        tokens,
        dir,
    };
    let line = super::wait_for("the start line", || {
        served
            .log()
            .lines()
            .find(|l| l.starts_with("rea serve: listening"))
            .map(str::to_owned)
    });
    assert!(!line.contains(ANA) && !line.contains(BEN), "{line}");
    served.url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    served.port = served
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("no port in {}", served.url));
    served
}

impl Served {
    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 POST of a legacy `initialize` to `/mcp`; the status
/// line and headers.
pub fn post(port: u16, authorization: Option<&str>) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let headers: Vec<(&str, &str)> = authorization
        .map(|a| ("Authorization", a))
        .into_iter()
        .collect();
    let answer = exchange(port, &headers, body);
    answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// One raw HTTP/1.1 POST to `/mcp` with `headers` and `body`; the whole
/// answer, as far as it came within a few seconds.
pub fn exchange(port: u16, headers: &[(&str, &str)], body: &str) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    send(port, &request)
}

/// Sends the whole HTTP/1.1 `request`; the whole answer, as far as it came
/// within a few seconds.
pub fn send(port: u16, request: &str) -> String {
    send_within(port, request, std::time::Duration::from_secs(5))
}

/// [`send`], waiting up to `patience` between bytes of the answer. A
/// request whose work must outlive a busy machine's few seconds uses a long
/// one: closing the connection is a disconnect, which stops the call.
pub fn send_within(port: u16, request: &str, patience: std::time::Duration) -> String {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects");
    stream.set_read_timeout(Some(patience)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The `Mcp-Session-Id` a response's headers carry.
pub fn session_id(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"))
}

/// A 2026-07-28 request's JSON-RPC body: `method` with `params` and the
/// per-request metadata that era requires.
pub fn modern_body(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// How a raw request stands: a 2026-07-28 request on its own, or one in
/// the legacy session with this `Mcp-Session-Id`.
#[derive(Clone, Copy)]
pub enum Via<'a> {
    Modern,
    Session(&'a str),
}

/// The whole HTTP/1.1 request of a `tools/call` of `tool` under `token`.
pub fn call_request(port: u16, token: &str, via: Via<'_>, tool: &str, arguments: Value) -> String {
    let params = json!({"name": tool, "arguments": arguments});
    match via {
        Via::Modern => modern_request(port, token, "tools/call", Some(tool), params),
        Via::Session(id) => {
            let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
            let headers = format!("MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {id}\r\n");
            request(port, token, &headers, &body.to_string())
        }
    }
}

/// The whole HTTP/1.1 request of a 2026-07-28 `method` under `token`;
/// `name` is the tool's or prompt's a `tools/call` or `prompts/get` names.
pub fn modern_request(
    port: u16,
    token: &str,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> String {
    let mut headers = format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n");
    if let Some(name) = name {
        headers.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    request(port, token, &headers, &modern_body(1, method, params))
}

fn request(port: u16, token: &str, headers: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A legacy session opened under `token` (initialize, then initialized):
/// its `Mcp-Session-Id`.
pub fn open_legacy_session(port: u16, token: &str) -> String {
    let authorization = format!("Bearer {token}");
    let session = session_id(&post(port, Some(&authorization)));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = [
        ("Authorization", authorization.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let answer = exchange(port, &headers, initialized);
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    session
}

/// A 2026-07-28 `tools/call` of `tool` under `token`, answered in full:
/// the JSON-RPC result of the answer's one message.
pub fn modern_call(port: u16, token: &str, tool: &str, arguments: Value) -> Value {
    let answer = send(
        port,
        &call_request(port, token, Via::Modern, tool, arguments),
    );
    message_of(&answer)["result"].clone()
}

/// The one JSON-RPC message of an SSE answer.
pub fn message_of(answer: &str) -> Value {
    let data = answer
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_else(|| panic!("no message in {answer}"));
    serde_json::from_str(data).expect("a whole JSON-RPC message")
}

/// `rea serve` arguments that allow capturing programs under `root`
/// (running them as nobody when the tests run as root).
pub fn capture_arguments(root: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec![
        "--enable-process-capture".into(),
        "--capture-executable-root".into(),
        root.into(),
        "--capture-working-root".into(),
        root.into(),
    ];
    if super::running_as_root() {
        args.extend(["--capture-user".into(), "nobody".into()]);
    }
    args
}
