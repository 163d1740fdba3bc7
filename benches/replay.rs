//! What an agent pays to read: a fixed analyst sequence replayed against
//! the built `rea mcp` on a pinned real binary (the stripped parcel-watcher
//! addon from `tests/fixtures/fetch.sh`), printing the bytes of text each
//! answer hands the model, the total against the recorded baseline, the
//! size of `tools/list`, and whether every address and name the baseline's
//! answers carried is still present.
//!
//! ```sh
//! cargo bench --bench replay                 # compare with benches/replay-baseline.json
//! cargo bench --bench replay -- --record     # write the baseline from this build
//! ```
//!
//! A bench, not a test: it prints figures and never fails on them.

#[path = "common/stdio.rs"]
mod stdio;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use stdio::StdioServer;

/// The pinned binary: `@parcel/watcher-linux-x64-glibc@2.6.0`, stripped.
const FIXTURE: &str = "watcher-linux-x64.node";
const FIXTURE_SHA256: &str = "f5a86a5231fb33c6c1830649eafd2c9e72647edb45aad753148d08cee6a42dea";
/// A C++ method of the addon, by its symbol name.
const SUBSCRIBE: &str = "_ZN14InotifyBackend9subscribeESt10shared_ptrI7WatcherE";

/// One step of the analyst's sequence: what they want, as tool calls.
struct Step {
    label: &'static str,
    calls: Vec<(&'static str, Value)>,
}

/// The sequence. A step may take several calls (a summary and the pages it
/// points to) as long as together they carry what the baseline's one
/// answer carried.
fn steps(fixture: &Path) -> Vec<Step> {
    let one = |label, tool, arguments| Step {
        label,
        calls: vec![(tool, arguments)],
    };
    vec![
        one("open", "open_binary", json!({"path": fixture})),
        one("session", "binary_session", json!({})),
        one("inventory page", "list_procedures", json!({"limit": 100})),
        one(
            "name search",
            "search_procedures",
            json!({"pattern": "subscribe"}),
        ),
        one(
            "string search",
            "search_strings",
            json!({"pattern": "error"}),
        ),
        one("layout", "inspect_binary_layout", json!({})),
        one(
            "function dossier",
            "analyze_function",
            json!({"procedure": SUBSCRIBE}),
        ),
        one(
            "callers",
            "procedure_callers",
            json!({"procedure": "inotify_add_watch"}),
        ),
        one(
            "callees",
            "procedure_callees",
            json!({"procedure": SUBSCRIBE}),
        ),
        one(
            "feature trace",
            "trace_feature",
            json!({"query": "inotify"}),
        ),
        one("evidence list", "list_evidence", json!({})),
    ]
}

/// The built `rea mcp`, initialized, for one replay.
struct Server(StdioServer);

impl Server {
    fn start() -> Server {
        let mut server = StdioServer::spawn();
        server.initialize("replay");
        Server(server)
    }

    /// The `result` of a request; panics on a JSON-RPC error.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let message = self.0.ask(method, params);
        assert!(!message.is_null(), "rea exited");
        assert!(message.get("error").is_none(), "{method}: {message}");
        message["result"].clone()
    }

    /// The text a tool answer hands the model.
    fn call(&mut self, tool: &str, arguments: &Value) -> String {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
        result["content"][0]["text"]
            .as_str()
            .expect("a text content block")
            .to_string()
    }
}

/// The addresses (`0x…` strings) and names (`name`, `demangled` members)
/// an answer carries.
fn facts(text: &str) -> BTreeSet<String> {
    fn walk(value: &Value, key: Option<&str>, out: &mut BTreeSet<String>) {
        match value {
            Value::String(s) => {
                let address = s.len() > 2
                    && s.starts_with("0x")
                    && s[2..].bytes().all(|b| b.is_ascii_hexdigit());
                if address || matches!(key, Some("name" | "demangled")) {
                    out.insert(s.clone());
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, key, out)),
            Value::Object(members) => {
                for (k, v) in members {
                    walk(v, Some(k), out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        walk(&value, None, &mut out);
    }
    out
}

/// Whether `fact` occurs in `text` as a whole token (an address not
/// followed by another hex digit, a name not inside a longer identifier).
fn carries(text: &str, fact: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.';
    text.match_indices(fact).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + fact.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

struct Measured {
    label: &'static str,
    bytes: usize,
    largest: usize,
    text: String,
}

fn replay(fixture: &Path) -> (usize, Vec<Measured>) {
    let mut server = Server::start();
    let tools = server.request("tools/list", json!({}));
    let tools_bytes = serde_json::to_string(&tools).expect("JSON").len();
    let mut measured = Vec::new();
    for step in steps(fixture) {
        let mut text = String::new();
        let mut largest = 0;
        let mut calls: Vec<(&str, Value)> = step.calls.clone();
        let mut made = 0;
        while let Some((tool, arguments)) = calls.pop() {
            let answer = server.call(tool, &arguments);
            largest = largest.max(answer.len());
            text.push_str(&answer);
            text.push('\n');
            made += 1;
            calls.extend(layout_pages(tool, &arguments, &answer));
        }
        measured.push(Measured {
            label: step.label,
            bytes: text.len() - made,
            largest,
            text,
        });
    }
    (tools_bytes, measured)
}

/// The layout summary shows the first items of each long list: the pages
/// that carry the rest (default size), as an agent that wants every name
/// would ask for them, page after page.
fn layout_pages(tool: &str, arguments: &Value, answer: &str) -> Vec<(&'static str, Value)> {
    if tool != "inspect_binary_layout" {
        return Vec::new();
    }
    let answer: Value = serde_json::from_str(answer).unwrap_or_default();
    let lists: Vec<&str> = match arguments.get("list").and_then(Value::as_str) {
        Some(list) => vec![list],
        None => vec!["segments", "sections", "imports", "exports"],
    };
    lists
        .into_iter()
        .filter_map(|list| {
            let next = answer["result"][list].get("next_offset")?.as_u64()?;
            let list = ["segments", "sections", "imports", "exports"]
                .into_iter()
                .find(|l| *l == list)?;
            Some((
                "inspect_binary_layout",
                json!({"list": list, "offset": next}),
            ))
        })
        .collect()
}

fn baseline_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/replay-baseline.json")
}

fn main() {
    let record = std::env::args().any(|a| a == "--record");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(FIXTURE);
    if !fixture.is_file() {
        println!(
            "replay: {} is missing; run tests/fixtures/fetch.sh",
            fixture.display()
        );
        return;
    }
    let (tools_bytes, measured) = replay(&fixture);

    if record {
        let steps: Vec<Value> = measured
            .iter()
            .map(|m| {
                let facts: Vec<String> = m.text.lines().flat_map(facts).collect();
                json!({"label": m.label, "bytes": m.bytes, "facts": facts})
            })
            .collect();
        let baseline = json!({
            "fixture": FIXTURE,
            "fixture_sha256": FIXTURE_SHA256,
            "tools_list_bytes": tools_bytes,
            "steps": steps,
        });
        let text = serde_json::to_string_pretty(&baseline).expect("JSON") + "\n";
        std::fs::write(baseline_path(), text).expect("write the baseline");
        println!("replay: baseline written to {}", baseline_path().display());
    }

    let baseline: Value = serde_json::from_str(
        &std::fs::read_to_string(baseline_path()).expect("read benches/replay-baseline.json"),
    )
    .expect("baseline JSON");
    println!(
        "{:<18} {:>10} {:>10} {:>7} {:>10} {:>9}",
        "step", "baseline", "now", "ratio", "largest", "missing"
    );
    let (mut before, mut now, mut missing_total) = (0usize, 0usize, 0usize);
    let mut largest = 0;
    for (m, b) in measured
        .iter()
        .zip(baseline["steps"].as_array().expect("steps"))
    {
        let bytes = b["bytes"].as_u64().expect("bytes") as usize;
        let missing: Vec<&str> = b["facts"]
            .as_array()
            .expect("facts")
            .iter()
            .filter_map(Value::as_str)
            .filter(|fact| !carries(&m.text, fact))
            .collect();
        println!(
            "{:<18} {:>10} {:>10} {:>7.2} {:>10} {:>9}",
            m.label,
            bytes,
            m.bytes,
            m.bytes as f64 / bytes as f64,
            m.largest,
            missing.len()
        );
        for fact in missing.iter().take(3) {
            println!("{:<18}   missing: {fact}", "");
        }
        before += bytes;
        now += m.bytes;
        missing_total += missing.len();
        largest = largest.max(m.largest);
    }
    println!(
        "{:<18} {:>10} {:>10} {:>7.2}   (goal ≤ 0.50 with nothing missing: {missing_total} missing)",
        "total",
        before,
        now,
        now as f64 / before as f64
    );
    println!("largest single answer: {largest} bytes (goal ≤ 32768)");
    println!(
        "tools/list: {} bytes, baseline {} (goal ≤ 40960)",
        tools_bytes, baseline["tools_list_bytes"]
    );
}
