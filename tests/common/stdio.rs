//! `rea mcp` as a child process speaking newline-delimited JSON-RPC over
//! stdio, for tests that need the real binary (its stdout, its exit, its
//! own memory and children).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// `rea mcp` as a child speaking newline-delimited JSON-RPC.
pub struct McpChild {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every stdout line seen so far.
    seen: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl McpChild {
    pub fn spawn(args: &[&std::ffi::OsStr], log: &str) -> McpChild {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rea"))
            .arg("mcp")
            .args(args)
            .env("REA_LOG", log)
            // The built-in provider, whatever radare2 this machine has.
            .env("REA_ANALYSIS_PROVIDER", "native")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rea mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        McpChild {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            stderr: Some(stderr),
        }
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to rea mcp");
        stdin.flush().expect("flush");
    }

    /// Reads stdout lines until one satisfies `want`; every line must be a
    /// JSON-RPC 2.0 message.
    pub fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no {what} from rea mcp ({e}); stdout so far:\n{}",
                    self.seen.join("\n")
                )
            });
            self.seen.push(line.clone());
            let value = json_rpc(&line);
            if want(&value) {
                return value;
            }
        }
    }

    pub fn response(&mut self, id: u64) -> Value {
        let value = self.until(&format!("response {id}"), |v| v["id"] == json!(id));
        assert!(value.get("error").is_none(), "request {id} failed: {value}");
        value["result"].clone()
    }

    /// Closes stdin, waits for exit, and returns the remaining stdout lines
    /// and stderr.
    pub fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "rea mcp did not exit on EOF");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(line);
        }
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        (status.code(), rest, stderr)
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        // Only reached with the child still running when a test failed.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Parses one stdout line, which must be a JSON-RPC 2.0 message.
pub fn json_rpc(line: &str) -> Value {
    let value: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
    assert_eq!(value["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
    assert!(
        value.get("method").is_some() || value.get("id").is_some(),
        "neither request, notification nor response: {line}"
    );
    value
}

pub fn initialize(server: &mut McpChild) -> Value {
    server.send(json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "rea-cli-test", "version": "0"}
        }
    }));
    let result = server.response(1);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    result
}
