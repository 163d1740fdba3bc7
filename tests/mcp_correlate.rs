//! Runtime evidence over MCP, in process: real captures of a crashing C
//! program (through `rea capture-host`) recorded as
//! `capture_process_scenario` Evidence, compared with
//! `compare_process_captures`, and tied back to the crashing function with
//! `correlate_static_and_runtime`.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};

use common::{Era, call, connect_to, hub, llvm_nm, open_dir, open_program as program};
use rea::capture::{Capture, RunAs, Scenario};
use rea::server::ReaServer;
use rea::session::{Confidence, EvidenceDraft, ProviderIdentity};
use serde_json::{Value, json};

const CRASH: &str = r#"
#include <stdio.h>
int crash_here(volatile int *p) { return *p; }
int main(void) { puts("about to crash"); fflush(stdout); return crash_here(0); }
"#;

const EXIT3: &str = r#"
#include <stdio.h>
int main(void) { puts("about to crash"); return 3; }
"#;

/// One run of `exe` in `dir` through the real capture engine.
fn capture(exe: &Path, dir: &Path) -> Capture {
    let mut scenario: Scenario = serde_json::from_value(json!({
        "executable": exe,
        "working_directory": dir,
        "timeout_ms": 5000,
        "idle_timeout_ms": 5000,
    }))
    .expect("scenario");
    scenario.run_as = Some(RunAs {
        uid: 65534,
        gid: 65534,
    });
    let c =
        rea::capture::run(&scenario, Some(Path::new(env!("CARGO_BIN_EXE_rea")))).expect("capture");
    c.validate().expect("valid capture");
    c
}

/// Records `capture` as `capture_process_scenario` Evidence, the way the
/// capture tool does, and returns its evidence_id.
fn record(server: &ReaServer, capture: &Capture) -> String {
    record_result(server, serde_json::to_value(capture).expect("capture JSON"))
}

/// Records `result` as if it were a capture's.
fn record_result(server: &ReaServer, result: Value) -> String {
    let draft = EvidenceDraft {
        operation: "capture_process_scenario".into(),
        subject: None,
        provider: ProviderIdentity {
            id: "rea-process".into(),
            name: "rea process capture".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        parameters: json!({"question": "does it crash?"}),
        result,
        confidence: Confidence::Observed,
        limitations: Vec::new(),
        locations: Vec::new(),
        local_path: None,
    };
    let mut session = server.session().lock().expect("session lock");
    session.record(draft).expect("recorded").evidence_id
}

fn ok(outcome: &(Value, bool)) -> &Value {
    assert!(!outcome.1, "tool failed: {}", outcome.0);
    &outcome.0["result"]
}

fn dimension(result: &Value, name: &str) -> String {
    result["dimensions"][name]["status"]
        .as_str()
        .expect("a dimension status")
        .to_owned()
}

fn hex(v: &str) -> u64 {
    u64::from_str_radix(v.trim_start_matches("0x"), 16).expect("hex")
}

#[tokio::test]
async fn captures_compare_and_a_crash_correlates_to_its_function() {
    let dir = open_dir();
    let (Some(crash), Some(exit3)) = (
        program(dir.path(), "crash", CRASH),
        program(dir.path(), "exit3", EXIT3),
    ) else {
        return;
    };
    let first = capture(&crash, dir.path());
    let second = capture(&crash, dir.path());
    let third = capture(&exit3, dir.path());
    assert!(first.crash.is_some(), "{first:?}");
    assert!(
        first.tracing.attached,
        "ptrace is needed for a PC: {:?}",
        first.tracing
    );

    let hub = hub();
    let (client, server, _) = connect_to(&hub, Era::Modern).await;
    let [a, b, c] = [&first, &second, &third].map(|capture| record(&server, capture));

    // Two runs of the crashing program: the same outcome.
    let same = call(
        &client,
        "compare_process_captures",
        json!({"left_evidence_id": a, "right_evidence_id": b}),
    )
    .await;
    let result = ok(&same);
    for name in ["exit", "signal", "stdout", "stderr", "files"] {
        assert_eq!(dimension(result, name), "unchanged", "{name}: {result}");
    }
    assert_eq!(result["status"], "unchanged");
    assert_eq!(same.0["evidence"]["confidence"], "derived");
    common::assert_said_once(&same.0);
    assert_eq!(
        same.0["evidence"]["parameters"],
        json!({"left_evidence_id": a, "right_evidence_id": b})
    );

    // The variant exits 3 without a signal, printing the same line.
    let changed = call(
        &client,
        "compare_process_captures",
        json!({"left_evidence_id": a, "right_evidence_id": c}),
    )
    .await;
    let result = ok(&changed);
    assert_eq!(dimension(result, "exit"), "changed");
    assert_eq!(dimension(result, "signal"), "changed");
    assert_eq!(dimension(result, "stdout"), "unchanged");
    assert_eq!(result["status"], "changed");
    assert_eq!(result["dimensions"]["exit"]["right"]["code"], 3);

    // Not a capture: refused with a typed error.
    let opened = call(&client, "open_binary", json!({"path": crash})).await;
    let open_id = opened.0["evidence"]["evidence_id"]
        .as_str()
        .expect("open evidence")
        .to_owned();
    let wrong = call(
        &client,
        "compare_process_captures",
        json!({"left_evidence_id": a, "right_evidence_id": open_id}),
    )
    .await;
    assert!(wrong.1);
    assert_eq!(wrong.0["error"]["code"], "wrong_evidence_kind");
    // Capture Evidence whose result breaks the capture invariants: refused.
    let mut broken = serde_json::to_value(&first).expect("capture JSON");
    broken["exit"]["code"] = json!(0);
    let broken = record_result(&server, broken);
    let invalid = call(
        &client,
        "compare_process_captures",
        json!({"left_evidence_id": broken, "right_evidence_id": b}),
    )
    .await;
    assert!(invalid.1);
    assert_eq!(
        invalid.0["error"]["code"], "invalid_evidence",
        "{}",
        invalid.0
    );

    // The crash, tied to crash_here and its caller main.
    let correlated = call(
        &client,
        "correlate_static_and_runtime",
        json!({"capture_evidence_id": a}),
    )
    .await;
    let result = ok(&correlated);
    assert_eq!(result["status"], "correlated", "{result}");
    assert_eq!(result["observed"]["signal_name"], "SIGSEGV");
    assert_eq!(result["observed"]["fault_address"], "0x0");
    let derived = &result["derived"];
    assert_eq!(derived["procedure"]["procedure"]["name"], "crash_here");
    let callers: Vec<&str> = derived["callers"]["items"]
        .as_array()
        .expect("callers")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(callers, ["main"], "{derived}");
    let inferred = result["inferred"]["statement"].as_str().expect("inference");
    assert!(
        inferred.starts_with("Inference")
            && inferred.contains("null pointer dereference in crash_here"),
        "{inferred}"
    );
    assert_eq!(correlated.0["evidence"]["confidence"], "derived");
    common::assert_said_once(&correlated.0);
    assert!(correlated.0["evidence"]["subject"]["sha256"].is_string());

    // llvm-nm's view: the derived virtual address lies inside crash_here.
    if let Some(symbols) = llvm_nm(&[], &crash) {
        let code: Vec<(u64, char, String)> = symbols
            .into_iter()
            .filter(|(_, kind, _)| matches!(kind, 'T' | 't'))
            .collect();
        let symbols = code;
        let start = symbols
            .iter()
            .find(|(_, _, name)| name == "crash_here")
            .map(|(address, _, _)| *address)
            .expect("crash_here in the symbol table");
        let next = symbols
            .iter()
            .map(|(address, _, _)| *address)
            .filter(|a| *a > start)
            .min()
            .expect("a symbol after crash_here");
        let va = hex(derived["virtual_address"]
            .as_str()
            .expect("virtual address"));
        assert!(
            (start..next).contains(&va),
            "{va:#x} not in {start:#x}..{next:#x}"
        );
        assert_eq!(
            hex(derived["procedure"]["start"].as_str().expect("start")),
            start
        );
    }

    // A capture that did not crash: unknown, with the reason.
    let no_crash = call(
        &client,
        "correlate_static_and_runtime",
        json!({"capture_evidence_id": c}),
    )
    .await;
    let result = ok(&no_crash);
    assert_eq!(result["status"], "unknown");
    assert!(
        result["reasons"][0]
            .as_str()
            .expect("reason")
            .contains("no crash"),
        "{result}"
    );
    assert!(result["inferred"].is_null());

    // Opened another program: the PC is in a module that is not the target.
    let other = call(&client, "open_binary", json!({"path": exit3})).await;
    assert!(!other.1, "{}", other.0);
    let mismatch = call(
        &client,
        "correlate_static_and_runtime",
        json!({"capture_evidence_id": a}),
    )
    .await;
    let result = ok(&mismatch);
    assert_eq!(result["status"], "unknown");
    let real = std::fs::canonicalize(&crash).expect("canonical");
    assert_eq!(
        result["derived"]["module"].as_str().map(PathBuf::from),
        Some(real)
    );
}
