//! Load profile of `rea serve`: 32 analysts at once, each in a legacy
//! session (a workspace of its own) over streamable HTTP, each opening the
//! pinned real binary and issuing a fixed mix of completions, prompt
//! renders and tool calls; then the same mix over stdio with one client.
//!
//! Prints requests, errors, cross-workspace identifiers (each workspace
//! records an unknown with its own question, then lists unknowns and
//! Evidence, and must see only its own), p50/p99 latency, throughput and
//! the server's peak RSS. Figures go to the README; nothing here is a timed
//! assertion.
//!
//! `cargo bench --bench http_load` (after `tests/fixtures/fetch.sh`);
//! `-- --workspaces N` changes the count.

#[path = "common/stdio.rs"]
mod stdio;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stdio::StdioServer;

const FIXTURE: &str = "watcher-linux-x64.node";
const TOKEN: &str = "load-bench-token-0123456789";

/// The mix one analyst runs, after `initialize`. `{me}` in a string is
/// replaced by the analyst's number.
fn mix(fixture: &Path) -> Vec<(&'static str, Value)> {
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let complete = |prompt: &str, argument: &str, value: &str| {
        json!({"ref": {"type": "ref/prompt", "name": prompt},
               "argument": {"name": argument, "value": value}})
    };
    vec![
        ("tools/call", call("open_binary", json!({"path": fixture}))),
        ("tools/call", call("list_documents", json!({}))),
        (
            "completion/complete",
            complete("investigate_feature", "document", ""),
        ),
        (
            "completion/complete",
            complete("investigate_feature", "procedure", "0x1"),
        ),
        (
            "prompts/get",
            json!({"name": "investigate_feature", "arguments": {"feature": "file watching"}}),
        ),
        ("tools/call", call("list_procedures", json!({"limit": 50}))),
        (
            "tools/call",
            call("search_procedures", json!({"pattern": "watch"})),
        ),
        (
            "tools/call",
            call("search_strings", json!({"pattern": "inotify"})),
        ),
        ("tools/call", call("inspect_binary_layout", json!({}))),
        (
            "tools/call",
            call(
                "record_unknown",
                json!({
                        "domain": "behavior",
                "severity": "low",
                        "question": "what does analyst {me} see?",
                        "approved": true,
                    }),
            ),
        ),
        ("tools/call", call("list_unknowns", json!({}))),
        ("tools/call", call("list_evidence", json!({"limit": 100}))),
        (
            "completion/complete",
            complete("audit_residual_unknowns", "unknown_id", ""),
        ),
    ]
}

fn with_me(value: &Value, me: usize) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{me}", &me.to_string())),
        Value::Array(items) => Value::Array(items.iter().map(|v| with_me(v, me)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), with_me(v, me)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One POST to `/mcp`; the JSON-RPC message the answer carries (plain JSON
/// or the first `data:` line of an event stream) and the session id header.
fn post(port: u16, session: Option<&str>, body: &Value) -> (Option<Value>, Option<String>) {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        request.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut reader = BufReader::new(stream);
    let mut session_id = None;
    let mut line = String::new();
    // Headers.
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("mcp-session-id")
        {
            session_id = Some(value.trim().to_owned());
        }
    }
    // The body, chunked or not: the first `data:` line that holds JSON.
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    let message = rest.lines().find_map(|l| {
        let l = l.strip_prefix("data:").unwrap_or(l).trim();
        l.starts_with('{')
            .then(|| serde_json::from_str::<Value>(l).ok())
            .flatten()
    });
    (message, session_id)
}

struct Outcome {
    latencies: Vec<Duration>,
    errors: usize,
    leaks: usize,
}

/// One analyst's run: initialize, the mix, and the isolation checks.
fn analyst(port: u16, me: usize, fixture: &Path) -> Outcome {
    let mut latencies = Vec::new();
    let mut errors = 0;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": format!("load-{me}"), "version": "1"}}});
    let started = Instant::now();
    let (answer, session) = post(port, None, &init);
    latencies.push(started.elapsed());
    let Some(session) = session.filter(|_| answer.is_some()) else {
        return Outcome {
            latencies,
            errors: 1,
            leaks: 0,
        };
    };
    post(
        port,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let mut answers = Vec::new();
    for (n, (method, params)) in mix(fixture).into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": n + 1, "method": method,
                          "params": with_me(&params, me)});
        let started = Instant::now();
        let (answer, _) = post(port, Some(&session), &body);
        latencies.push(started.elapsed());
        let failed = match &answer {
            None => true,
            Some(a) => a.get("error").is_some() || a["result"]["isError"] == json!(true),
        };
        if failed {
            errors += 1;
        }
        answers.push(answer.unwrap_or(Value::Null));
    }
    // Isolation: the one unknown listed is this analyst's own question.
    let listed = answers[10]["result"]["structuredContent"].to_string();
    let mine = format!("what does analyst {me} see?");
    let others = listed.matches("what does analyst ").count();
    let leaks = usize::from(!listed.contains(&mine)) + others.saturating_sub(1);
    let _ = post(
        port,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "close_binary", "arguments": {}}}),
    );
    Outcome {
        latencies,
        errors,
        leaks,
    }
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn report(label: &str, outcomes: &[Outcome], wall: Duration, rss: Option<u64>) {
    let mut all: Vec<Duration> = outcomes.iter().flat_map(|o| o.latencies.clone()).collect();
    all.sort();
    let errors: usize = outcomes.iter().map(|o| o.errors).sum();
    let leaks: usize = outcomes.iter().map(|o| o.leaks).sum();
    println!(
        "{label:<24} requests {:>5}  errors {errors}  cross-workspace {leaks}  p50 {:>7.1} ms  \
         p99 {:>7.1} ms  {:>6.1} req/s  peak RSS {} MiB",
        all.len(),
        percentile(&all, 0.50).as_secs_f64() * 1000.0,
        percentile(&all, 0.99).as_secs_f64() * 1000.0,
        all.len() as f64 / wall.as_secs_f64(),
        rss.map_or("?".to_owned(), |k| (k / 1024).to_string()),
    );
}

struct Serve {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(workspaces: usize) -> Serve {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        format!("[[token]]\nname = \"load\"\ntoken = \"{TOKEN}\"\n"),
    )
    .expect("tokens");
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea"))
        .args(["serve", "--listen", "127.0.0.1:0", "--tokens-file"])
        .arg(&tokens)
        .args(["--max-workspaces", &(workspaces + 8).to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rea serve");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("start line");
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("a port in the start line");
    Serve {
        child,
        port,
        _dir: dir,
    }
}

/// The same mix over stdio with one client, for comparison.
fn stdio_run(fixture: &Path) -> (Outcome, Duration, Option<u64>) {
    let mut server = StdioServer::spawn();
    let wall = Instant::now();
    let mut latencies = Vec::new();
    let started = Instant::now();
    server.initialize("load-stdio");
    latencies.push(started.elapsed());
    let mut errors = 0;
    for (method, params) in mix(fixture) {
        let started = Instant::now();
        let answer = server.ask(method, with_me(&params, 0));
        latencies.push(started.elapsed());
        if answer.get("error").is_some() || answer["result"]["isError"] == json!(true) {
            errors += 1;
            let shown = answer.to_string();
            println!("stdio: {method} failed: {}", &shown[..shown.len().min(300)]);
        }
    }
    let wall = wall.elapsed();
    let rss = peak_rss_kib(server.pid());
    (
        Outcome {
            latencies,
            errors,
            leaks: 0,
        },
        wall,
        rss,
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workspaces = args
        .iter()
        .position(|a| a == "--workspaces")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(32usize);
    let fixture: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(FIXTURE);
    if !fixture.is_file() {
        println!(
            "http_load: {} is missing; run tests/fixtures/fetch.sh",
            fixture.display()
        );
        return;
    }
    let served = serve(workspaces);
    let port = served.port;
    let wall = Instant::now();
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workspaces)
            .map(|me| {
                let fixture = fixture.clone();
                scope.spawn(move || analyst(port, me, &fixture))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("analyst thread"))
            .collect()
    });
    let wall = wall.elapsed();
    let rss = peak_rss_kib(served.child.id());
    println!(
        "http_load: {} x ({} requests) on {FIXTURE}",
        workspaces,
        mix(&fixture).len() + 1
    );
    report(
        &format!("http, {workspaces} workspaces"),
        &outcomes,
        wall,
        rss,
    );
    let (one, wall, rss) = stdio_run(&fixture);
    report("stdio, 1 client", &[one], wall, rss);
}
