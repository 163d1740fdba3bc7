//! A `rea mcp` child spoken to over stdio, one JSON-RPC line at a time:
//! the one client the benches compare with or replay through. Each bench
//! uses its own part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

pub struct StdioServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    /// The built `rea mcp`, started and not yet initialized.
    pub fn spawn() -> StdioServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rea"))
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rea mcp");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        StdioServer {
            child,
            input,
            output,
            next_id: 0,
        }
    }

    /// The legacy handshake, as `client`: `initialize`, then `initialized`.
    pub fn initialize(&mut self, client: &str) -> Value {
        let answer = self.ask(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": client, "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").expect("write to rea");
        self.input.flush().expect("flush");
    }

    /// The whole answer to one request (`Null` if the server closed first).
    pub fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            if self.output.read_line(&mut line).unwrap_or(0) == 0 {
                return Value::Null;
            }
            let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
