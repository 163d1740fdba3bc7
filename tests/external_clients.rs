//! The real `rea` binary over stdio, driven by MCP clients that are not ours:
//! the Python SDK (`mcp` 2.3.x: `ClientSession` legacy and `Client` in auto
//! mode, which negotiates 2026-07-28) and the npm SDK
//! (`@modelcontextprotocol/sdk` 1.32.x, 2025-11-25). Expectations come from
//! `llvm-nm` on a real ELF shared library nobody here wrote.
//!
//! `.ci/run` installs both clients under `target/ci/`; with
//! `REA_REQUIRE_EXTERNALS=1` a missing client, fixture or tool fails.

mod common;

use common::serve::{ANA, BEN, serve_two_analysts, serve_two_analysts_with};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea");
const FIXTURE: &str = "watcher-linux-x64.node";
/// ELF entry point of the fixture (`llvm-readelf -h`).
const FIXTURE_ENTRY: u64 = 0x1ed60;

fn ci_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci")
}

fn python() -> Option<PathBuf> {
    let python = std::env::var_os("REA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_dir().join("venv/bin/python"));
    let ok = Command::new(&python)
        .args(["-c", "import mcp.client.client"])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some(python)
    } else {
        common::skip(&format!(
            "{} cannot import the Python `mcp` SDK; run .ci/run's install step",
            python.display()
        ));
        None
    }
}

fn node_modules() -> Option<PathBuf> {
    let dir = std::env::var_os("REA_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_dir().join("npm/node_modules"));
    let ok = dir.join("@modelcontextprotocol/sdk/package.json").is_file()
        && Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        Some(dir)
    } else {
        common::skip(&format!(
            "node or @modelcontextprotocol/sdk missing under {}",
            dir.display()
        ));
        None
    }
}

fn run(cmd: Command, plan: &Value) -> Value {
    run_with_stderr(cmd, plan).0
}

/// [`run`], also returning what the client and the server it started wrote
/// to stderr (the SDK passes the server's stderr through).
fn run_with_stderr(mut cmd: Command, plan: &Value) -> (Value, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(plan.to_string().as_bytes())
        .expect("plan written");
    let out = child.wait_with_output().expect("client finishes");
    assert!(
        out.status.success(),
        "client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (value, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/external")
        .join(name)
}

/// What the fixture must produce, from llvm-nm.
struct Oracle {
    path: PathBuf,
    document: String,
    candidates: Vec<String>,
    unique_name: String,
    address: String,
}

fn oracle() -> Option<Oracle> {
    let path = common::fixture(FIXTURE)?;
    // The inventory is the dynamic symbols plus discovered starts (this
    // stripped file's .eh_frame and call targets); `rea procedures` prints
    // it, and llvm-nm pins the named part.
    let listed = common::rea_procedures(&path);
    let functions: Vec<(u64, String)> = listed
        .iter()
        .filter_map(|(a, n)| n.clone().map(|n| (*a, n)))
        .collect();
    let addresses: Vec<u64> = listed.iter().map(|(a, _)| *a).collect();
    for symbol in common::nm_functions(&["-D"], &path)? {
        assert!(
            functions.contains(&symbol),
            "{symbol:?} missing from rea procedures"
        );
    }
    assert!(addresses.contains(&FIXTURE_ENTRY));
    let candidates = common::expected_candidates(&functions, &addresses);
    // A unique name whose lowercase prefix matches nothing else.
    let unique_name = candidates
        .iter()
        .filter(|c| !c.starts_with("0x"))
        .find(|c| {
            let key = c.to_lowercase();
            candidates
                .iter()
                .filter(|o| o.to_lowercase().starts_with(&key))
                .count()
                == 1
        })?
        .clone();
    let address = functions
        .iter()
        .find(|(_, n)| *n == unique_name)
        .map(|(a, _)| format!("{a:#x}"))?;
    Some(Oracle {
        path,
        document: FIXTURE.to_string(),
        candidates,
        unique_name,
        address,
    })
}

fn plan(o: &Oracle) -> Value {
    let ctx = json!({"document": o.document});
    json!([
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "investigate_feature", "arguments": {"feature": "file watching\n```\n# injected"}},
        {"op": "complete", "prompt": "investigate_feature", "argument": "document", "value": ""},
        {"op": "call", "tool": "open_binary", "arguments": {"path": o.path}},
        {"op": "complete", "prompt": "investigate_feature", "argument": "document", "value": "WATCHER"},
        {"op": "complete", "prompt": "investigate_feature", "argument": "procedure", "value": o.unique_name, "context": ctx},
        {"op": "complete", "prompt": "trace_crash", "argument": "procedure", "value": "0x", "context": ctx},
        {"op": "complete", "prompt": "trace_crash", "argument": "procedure", "value": o.address, "context": ctx},
        {"op": "complete", "prompt": "investigate_feature", "argument": "procedure", "value": ""},
        {"op": "call", "tool": "list_procedures", "arguments": {"limit": 500}},
        {"op": "complete", "prompt": "audit_residual_unknowns", "argument": "evidence_id", "value": "ev_"},
        {"op": "call", "tool": "close_binary", "arguments": {}},
        {"op": "complete", "prompt": "investigate_feature", "argument": "document", "value": ""},
        {"op": "complete", "prompt": "investigate_feature", "argument": "procedure", "value": "0x"},
        {"op": "complete", "prompt": "audit_residual_unknowns", "argument": "evidence_id", "value": ""},
        {"op": "get_prompt", "name": "nope", "arguments": {}},
    ])
}

fn completion(v: &Value) -> &Value {
    &v["completion"]
}

fn assert_results(client: &str, o: &Oracle, results: &[Value]) {
    let names: Vec<&str> = results[0]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "investigate_feature", "{client}");
    assert_eq!(names.len(), 6);
    let text = results[1]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("\"file watching\\n\\u0060\\u0060\\u0060\\n# injected\""),
        "{client}: {text}"
    );
    assert!(!text.contains("\n# injected"));
    assert_eq!(completion(&results[2])["total"], 0, "{client}: before open");
    assert_eq!(results[3]["isError"], false, "{client}: {}", results[3]);
    assert!(
        results[3]["structuredContent"]["evidence"]["evidence_id"]
            .as_str()
            .unwrap()
            .starts_with("ev_")
    );
    assert_eq!(
        completion(&results[4])["values"],
        json!([o.document]),
        "{client}"
    );

    let unique = completion(&results[5]);
    assert_eq!(unique["values"], json!([o.unique_name]), "{client}");
    assert_eq!(
        (unique["total"].clone(), unique["hasMore"].clone()),
        (json!(1), json!(false))
    );

    let addresses: Vec<&String> = o
        .candidates
        .iter()
        .filter(|c| c.starts_with("0x"))
        .collect();
    let all = completion(&results[6]);
    assert_eq!(
        all["total"],
        json!(addresses.len()),
        "{client}: every address completes"
    );
    assert_eq!(all["hasMore"], json!(addresses.len() > 100));
    let first: Vec<&String> = addresses.iter().take(100).copied().collect();
    assert_eq!(
        all["values"],
        json!(first),
        "{client}: first hundred in code-point order"
    );
    assert!(
        completion(&results[7])["values"]
            .as_array()
            .unwrap()
            .contains(&json!(o.address))
    );

    let everything = completion(&results[8]);
    assert_eq!(
        everything["total"],
        json!(o.candidates.len()),
        "{client}: addresses plus unique names, exactly"
    );
    assert_eq!(
        everything["values"],
        json!(o.candidates.iter().take(100).collect::<Vec<_>>())
    );

    let page = &results[9]["structuredContent"]["result"];
    assert_eq!(
        page["total"],
        json!(addresses.len()),
        "{client}: inventory total"
    );
    assert_eq!(
        completion(&results[10])["total"],
        2,
        "{client}: open + one page of Evidence"
    );
    assert_eq!(results[11]["isError"], false);
    for r in &results[12..15] {
        assert_eq!(
            completion(r)["total"],
            0,
            "{client}: empty after close: {r}"
        );
        assert_eq!(completion(r)["values"], json!([]));
    }
    assert_eq!(
        results[15]["error"]["code"], -32602,
        "{client}: {}",
        results[15]
    );
}

#[test]
fn python_sdk_legacy_client_session() {
    let (Some(python), Some(o)) = (python(), oracle()) else {
        return;
    };
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["legacy", REA, "mcp"]);
    let out = run(cmd, &plan(&o));
    assert_eq!(out["protocol_version"], "2025-11-25");
    assert_results("python legacy", &o, out["results"].as_array().unwrap());
}

#[test]
fn python_sdk_modern_client() {
    let (Some(python), Some(o)) = (python(), oracle()) else {
        return;
    };
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp"]);
    let out = run(cmd, &plan(&o));
    assert_eq!(out["protocol_version"], "2026-07-28");
    assert_results("python modern", &o, out["results"].as_array().unwrap());
}

#[test]
fn npm_sdk_client() {
    let (Some(modules), Some(o)) = (node_modules(), oracle()) else {
        return;
    };
    let mut cmd = Command::new("node");
    cmd.env("NODE_PATH", &modules)
        .arg(script("npm_client.mjs"))
        .args([REA, "mcp"]);
    let out = run(cmd, &plan(&o));
    assert_eq!(out["protocol_version"], "2025-11-25");
    assert_results("npm", &o, out["results"].as_array().unwrap());
}

#[test]
fn python_modern_subscriber_receives_a_watched_reload_and_others_do_not() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let file = dir.path().join("trace_crash.toml");
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["reload", REA, "mcp", "--prompts-dir"])
        .arg(dir.path());
    let out = run(
        cmd,
        &json!({"edit": {"file": file, "from": "title = \"Trace a crash\"", "to": "title = \"Trace a crash (edited)\""}, "quiet_seconds": 2}),
    );
    assert_eq!(out["protocol_version"], "2026-07-28");
    assert_eq!(out["event"], "PromptsListChanged", "{out}");
    assert_eq!(
        out["unsolicited"],
        json!([]),
        "the unsubscribed modern client got: {}",
        out["unsolicited"]
    );
    let title = |v: &Value| v["prompts"][3]["title"].as_str().unwrap().to_string();
    assert_eq!(title(&out["before"]), "Trace a crash");
    assert_eq!(title(&out["after"]), "Trace a crash (edited)");
}

/// Completion of the record families (artifact manifests and occurrences,
/// residual unknowns) through a client that is not ours, answered from
/// records the same session created.
fn records_plan(wheel: &Path) -> Value {
    json!([
        {"op": "complete", "prompt": "compare_application_versions", "argument": "left_manifest_id", "value": ""},
        {"op": "call", "tool": "open_binary", "arguments": {"path": wheel}},
        {"op": "call", "tool": "inspect_artifact", "arguments": {"occurrence_limit": 500}},
        {"op": "complete", "prompt": "compare_application_versions", "argument": "left_manifest_id", "value": "AGM_"},
        {"op": "complete", "prompt": "compare_application_versions", "argument": "focus_occurrence_id", "value": "occ_"},
    ])
}

fn assert_records(client: &str, results: &[Value]) {
    assert_eq!(
        completion(&results[0])["total"],
        0,
        "{client}: nothing retained yet"
    );
    assert_eq!(results[1]["isError"], false, "{client}: {}", results[1]);
    assert_eq!(results[2]["isError"], false, "{client}: {}", results[2]);
    let inventory = &results[2]["structuredContent"]["result"];
    let manifest = &inventory["manifest"]["manifest_id"];
    assert_eq!(
        completion(&results[3])["values"],
        json!([manifest]),
        "{client}: the manifest completes, case-insensitively"
    );
    let mut ids: Vec<&str> = inventory["occurrences"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["occurrence_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert!(ids.len() > 10, "{client}: a wheel has many members");
    let offered = completion(&results[4]);
    assert_eq!(offered["total"], json!(ids.len()), "{client}");
    assert_eq!(offered["values"], json!(ids), "{client}: code-point order");
}

#[test]
fn python_sdk_completes_record_families() {
    let (Some(python), Some(wheel)) = (
        python(),
        common::fixture("markupsafe-3.0.2-manylinux-x86_64.whl"),
    ) else {
        return;
    };
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp"]);
    let out = run(cmd, &records_plan(&wheel));
    assert_records("python modern", out["results"].as_array().unwrap());
}

#[test]
fn npm_sdk_completes_record_families() {
    let (Some(modules), Some(wheel)) = (
        node_modules(),
        common::fixture("markupsafe-3.0.2-manylinux-x86_64.whl"),
    ) else {
        return;
    };
    let mut cmd = Command::new("node");
    cmd.env("NODE_PATH", &modules)
        .arg(script("npm_client.mjs"))
        .args([REA, "mcp"]);
    let out = run(cmd, &records_plan(&wheel));
    assert_records("npm", out["results"].as_array().unwrap());
}

/// The whole investigation of issue 4 through a client that is not ours:
/// inspect two real releases, compare them, record what stays unknown,
/// verify a small reconstruction spec and save it all; then a new server
/// process loads the bundle and answers completion, comparisons and the
/// registry exactly as the first one did.
#[test]
fn python_sdk_investigation_survives_a_new_server() {
    let (Some(python), Some(left), Some(right)) = (
        python(),
        common::fixture("markupsafe-2.1.5-manylinux-x86_64.whl"),
        common::fixture("markupsafe-3.0.2-manylinux-x86_64.whl"),
    ) else {
        return;
    };
    let write_root = tempfile::tempdir().unwrap();
    let bundle = write_root.path().join("investigation.json");
    let evidence_of = |step: usize| format!("${step}.structuredContent.evidence.evidence_id");
    let manifest_of =
        |step: usize| format!("${step}.structuredContent.result.manifest.manifest_id");
    let completions = json!([
        {"op": "complete", "prompt": "compare_application_versions", "argument": "left_manifest_id", "value": "agm_"},
        {"op": "complete", "prompt": "compare_application_versions", "argument": "focus_occurrence_id", "value": "occ_"},
        {"op": "complete", "prompt": "audit_residual_unknowns", "argument": "unknown_id", "value": "unk_"},
        {"op": "complete", "prompt": "audit_residual_unknowns", "argument": "evidence_id", "value": "ev_"},
    ]);
    let mut first = json!([
        {"op": "call", "tool": "open_binary", "arguments": {"path": left}},
        {"op": "call", "tool": "inspect_artifact", "arguments": {"occurrence_limit": 500}},
        {"op": "call", "tool": "open_binary", "arguments": {"path": right}},
        {"op": "call", "tool": "inspect_artifact", "arguments": {"occurrence_limit": 500}},
        {"op": "call", "tool": "compare_artifacts", "arguments": {"left": manifest_of(1), "right": manifest_of(3)}},
        {"op": "call", "tool": "record_unknown", "arguments": {
            "question": "Why did the native extension lose about 10 KB between 2.1.5 and 3.0.2?",
            "domain": "native-code", "severity": "medium",
            "supporting_evidence_ids": [evidence_of(4)], "approved": true}},
        {"op": "call", "tool": "verify_reconstruction", "arguments": {"specification": {
            "schema_version": 1, "name": "markupsafe 3.0.2 against 2.1.5",
            "claims": [
                {"claim_id": "native", "title": "The native extension changed", "comparison_evidence_id": evidence_of(4), "dimension": "native_code", "expected": "changed"},
                {"claim_id": "same-files", "title": "No file changed", "comparison_evidence_id": evidence_of(4), "dimension": "occurrences", "expected": "unchanged"},
                {"claim_id": "elsewhere", "title": "A dimension the comparison lacks", "comparison_evidence_id": evidence_of(4), "dimension": "signals", "expected": "unchanged"}
            ]}}},
        {"op": "call", "tool": "export_evidence_bundle", "arguments": {"path": bundle, "approved": true}},
    ]);
    first
        .as_array_mut()
        .unwrap()
        .extend(completions.as_array().unwrap().clone());
    let mut cmd = Command::new(&python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp", "--write-root"])
        .arg(write_root.path());
    let out = run(cmd, &first);
    let a = out["results"].as_array().unwrap();
    for (i, step) in a[..8].iter().enumerate() {
        assert_eq!(step["isError"], false, "step {i}: {step}");
        let content = &step["structuredContent"];
        if i != 7 {
            assert!(
                content["evidence"]["evidence_id"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("ev_")),
                "step {i} carries its Evidence inline: {content}"
            );
        }
    }
    let compared = &a[4]["structuredContent"]["result"];
    assert_eq!(compared["status"], "changed", "{compared}");
    assert_eq!(compared["dimensions"]["native_code"]["status"], "changed");
    let verdict = &a[6]["structuredContent"]["result"];
    let verdicts = common::claim_verdicts(verdict);
    assert_eq!(
        verdicts,
        [
            ("native", "pass"),
            ("same-files", "fail"),
            ("elsewhere", "unknown")
        ],
        "{verdict}"
    );
    assert_eq!(verdict["status"], "fail");
    assert!(bundle.is_file(), "the bundle was written");
    let before: Vec<Value> = a[8..12].iter().map(|r| completion(r).clone()).collect();
    for (i, c) in before.iter().enumerate() {
        assert!(
            c["total"].as_u64().unwrap() > 0,
            "family {i} is non-empty: {c}"
        );
    }
    assert_eq!(before[2]["total"], 1, "one residual unknown");

    // A new server process, a new session: load the bundle and ask again.
    let mut second = json!([
        {"op": "complete", "prompt": "compare_application_versions", "argument": "left_manifest_id", "value": "agm_"},
        {"op": "call", "tool": "import_evidence_bundle", "arguments": {"path": bundle}},
    ]);
    second
        .as_array_mut()
        .unwrap()
        .extend(completions.as_array().unwrap().clone());
    let left_manifest = a[1]["structuredContent"]["result"]["manifest"]["manifest_id"].clone();
    let right_manifest = a[3]["structuredContent"]["result"]["manifest"]["manifest_id"].clone();
    second.as_array_mut().unwrap().extend([
        json!({"op": "call", "tool": "compare_artifacts", "arguments": {"left": left_manifest, "right": right_manifest}}),
        json!({"op": "call", "tool": "list_unknowns", "arguments": {}}),
    ]);
    let mut cmd = Command::new(&python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp"]);
    let out = run(cmd, &second);
    let b = out["results"].as_array().unwrap();
    assert_eq!(completion(&b[0])["total"], 0, "a new server starts empty");
    assert_eq!(b[1]["isError"], false, "{}", b[1]);
    let after: Vec<Value> = b[2..6].iter().map(|r| completion(r).clone()).collect();
    assert_eq!(
        after, before,
        "completion answers the same after the restart"
    );
    assert_eq!(b[6]["isError"], false, "{}", b[6]);
    assert_eq!(
        b[6]["structuredContent"]["result"], a[4]["structuredContent"]["result"],
        "the comparison is recomputed identically from imported Evidence"
    );
    assert_eq!(
        b[6]["structuredContent"]["evidence"]["evidence_id"],
        a[4]["structuredContent"]["evidence"]["evidence_id"]
    );
    let heads = &b[7]["structuredContent"]["result"];
    assert_eq!(heads["total"], 1, "{heads}");
}

/// Issue 5's whole loop through a client that is not ours: with capture
/// enabled for a test root, run a crashing program under limits, see the
/// signal and the function it died in, compare two runs, and find nothing
/// it started still running; its secret is in no answer and no bundle.
#[test]
fn python_sdk_captures_a_crash_and_ties_it_to_code() {
    const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void crash_here(volatile int *p) { *p = 42; }
int main(void) {
    printf("token=%s\n", getenv("API_TOKEN"));
    fflush(stdout);
    crash_here(0);
    return 0;
}
"#;
    const SECRET: &str = "s3cr3t-value-never-recorded";
    let Some(python) = python() else { return };
    let root = common::open_dir();
    let Some(program) = common::open_program(root.path(), "crasher", SOURCE) else {
        return;
    };
    let write_root = tempfile::tempdir().unwrap();
    let bundle = write_root.path().join("capture.json");
    let scenario = json!({
        "executable": program,
        "working_directory": root.path(),
        "environment": [{"name": "API_TOKEN", "value": SECRET, "secret": true}],
        "timeout_ms": 10000,
        "limits": {"processes": 16, "output_bytes": 65536},
        "question": "Does the program crash, and where?",
        "approved": true,
    });
    let plan = json!([
        {"op": "call", "tool": "binary_session", "arguments": {}},
        {"op": "call", "tool": "capture_process_scenario", "arguments": scenario},
        {"op": "call", "tool": "capture_process_scenario", "arguments": scenario},
        {"op": "call", "tool": "compare_process_captures", "arguments": {
            "left_evidence_id": "$1.structuredContent.evidence.evidence_id",
            "right_evidence_id": "$2.structuredContent.evidence.evidence_id"}},
        {"op": "call", "tool": "open_binary", "arguments": {"path": program}},
        {"op": "call", "tool": "correlate_static_and_runtime", "arguments": {
            "capture_evidence_id": "$1.structuredContent.evidence.evidence_id"}},
        {"op": "complete", "prompt": "trace_crash", "argument": "capture_evidence_id", "value": "ev_"},
        {"op": "call", "tool": "export_evidence_bundle", "arguments": {"path": bundle, "approved": true}},
    ]);
    // The server logs at trace level (through `env`, since the SDK starts
    // servers with a minimal environment); its stderr is searched below.
    let mut cmd = Command::new(&python);
    cmd.arg(script("python_client.py"))
        .args([
            "modern",
            "env",
            "REA_LOG=trace",
            REA,
            "mcp",
            "--enable-process-capture",
        ])
        .arg("--capture-executable-root")
        .arg(root.path())
        .arg("--capture-working-root")
        .arg(root.path())
        .arg("--write-root")
        .arg(write_root.path());
    if common::running_as_root() {
        cmd.args(["--capture-user", "nobody"]);
    }
    let (out, stderr) = run_with_stderr(cmd, &plan);
    let raw = out.to_string();
    assert!(!raw.contains(SECRET), "the secret reached the client");
    assert!(
        stderr.contains("TRACE"),
        "trace logging was on: {}",
        &stderr[..stderr.len().min(2000)]
    );
    if let Some(at) = stderr.find(SECRET) {
        let start = stderr[..at].rfind('\n').unwrap_or(0);
        panic!(
            "the secret reached the logs: {}",
            &stderr[start..(at + 200).min(stderr.len())]
        );
    }
    let r = out["results"].as_array().unwrap();
    for (i, step) in r.iter().enumerate().filter(|(i, _)| *i != 6) {
        assert_eq!(step["isError"], false, "step {i}: {step}");
    }
    assert_eq!(
        r[0]["structuredContent"]["result"]["process_capture"]["enabled"],
        true
    );
    let capture = &r[1]["structuredContent"]["result"];
    assert_eq!(capture["exit"]["signal_name"], "SIGSEGV", "{capture}");
    assert!(capture["crash"]["program_counter"].is_string(), "{capture}");
    assert_eq!(capture["cleanup"]["verified"], true, "{capture}");
    assert!(
        capture["stdout"]["text"]
            .as_str()
            .unwrap()
            .contains("[redacted:API_TOKEN]")
    );
    let compared = &r[3]["structuredContent"]["result"];
    assert_eq!(
        compared["dimensions"]["exit"]["status"], "unchanged",
        "{compared}"
    );
    assert_eq!(
        compared["dimensions"]["signal"]["status"], "unchanged",
        "{compared}"
    );
    let correlated = &r[5]["structuredContent"]["result"];
    assert_eq!(correlated["status"], "correlated", "{correlated}");
    assert_eq!(
        correlated["derived"]["procedure"]["procedure"]["name"], "crash_here",
        "{correlated}"
    );
    let offered = completion(&r[6]);
    for step in [1, 2] {
        let id = &r[step]["structuredContent"]["evidence"]["evidence_id"];
        assert!(
            offered["values"].as_array().unwrap().contains(id),
            "capture {step} completes: {offered}"
        );
    }
    let saved = std::fs::read_to_string(&bundle).expect("bundle written");
    assert!(!saved.contains(SECRET), "the secret reached the bundle");
    // Nothing the captures started is still running.
    let program_path = program.canonicalize().unwrap();
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| std::fs::read_link(e.path().join("exe")).is_ok_and(|exe| exe == program_path))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

/// Issue 6 through a client that is not ours: the real electron-api-demos
/// app analysed, viewed and traced from a renderer channel to its main
/// handler, two electron-log releases compared, and `investigate_feature`
/// then starting from the analysis view. Nothing of the app is run.
#[test]
fn python_sdk_analyzes_traces_and_compares_electron_applications() {
    let (Some(python), Some(app), Some(left), Some(right)) = (
        python(),
        common::fixture("electron-api-demos-2.0.1"),
        common::fixture("electron-log-4.4.8"),
        common::fixture("electron-log-5.0.0"),
    ) else {
        return;
    };
    let evidence_of = |step: usize| format!("${step}.structuredContent.evidence.evidence_id");
    let plan = json!([
        {"op": "call", "tool": "analyze_javascript_application", "arguments": {"input_path": app}},
        {"op": "call", "tool": "inspect_analysis_view", "arguments": {"evidence_id": evidence_of(0)}},
        {"op": "call", "tool": "trace_application_feature", "arguments": {
            "evidence_id": evidence_of(0),
            "seed": {"kind": "channel", "value": "asynchronous-message"}}},
        {"op": "call", "tool": "analyze_javascript_application", "arguments": {"input_path": left}},
        {"op": "call", "tool": "analyze_javascript_application", "arguments": {"input_path": right}},
        {"op": "call", "tool": "compare_application_versions", "arguments": {
            "left_evidence_id": evidence_of(3), "right_evidence_id": evidence_of(4)}},
        {"op": "get_prompt", "name": "investigate_feature", "arguments": {
            "feature": "asynchronous messages", "target_path": app}},
    ]);
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp"]);
    let out = run(cmd, &plan);
    let results = out["results"].as_array().unwrap();
    for (i, r) in results.iter().take(6).enumerate() {
        assert_eq!(r["isError"], false, "step {i}: {r}");
    }
    let analysis = &results[0]["structuredContent"]["result"];
    assert_eq!(analysis["package"]["name"], "electron-api-demos");
    let channels: Vec<&str> =
        results[1]["structuredContent"]["result"]["seeds"]["channels"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["value"].as_str().unwrap())
            .collect();
    assert!(channels.contains(&"asynchronous-message"), "{channels:?}");
    let trace = &results[2]["structuredContent"]["result"];
    let ends: Vec<(&str, &str)> = trace["paths"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let last = p["steps"].as_array().unwrap().last().unwrap();
            (
                last["name"].as_str().unwrap(),
                last["layer"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        ends.contains(&("main-process/communication/async-msg.js", "main")),
        "{ends:?}"
    );
    assert!(
        ends.contains(&("renderer-process/communication/async-msg.js", "renderer")),
        "{ends:?}"
    );
    let compared = &results[5]["structuredContent"]["result"];
    assert_eq!(compared["status"], "changed", "{compared}");
    assert_eq!(compared["dimensions"]["package"]["status"], "changed");
    let prompt = results[6]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        prompt.contains("This session already retains an application analysis: start here."),
        "{prompt}"
    );
}

/// The Evidence ID Python's own JSON and hashlib recompute from an answer
/// (`structuredContent`), knowing nothing of rea: sorted keys, no spaces,
/// literal UTF-8 (RFC 8785 for these values: no floats, ASCII keys).
fn python_evidence_id(python: &Path, answer: &Value) -> String {
    const RECOMPUTE: &str = r#"
import hashlib, json, sys
answer = json.load(sys.stdin)
header = answer["evidence"]
projection = {
    "operation": header["operation"],
    "subject": header.get("subject"),
    "provider": {"id": header["provider"]["id"], "version": header["provider"]["version"]},
    "parameters": header["parameters"],
    "result": answer["result"],
}
text = json.dumps(projection, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print("ev_" + hashlib.sha256(text.encode("utf-8")).hexdigest())
"#;
    let mut child = Command::new(python)
        .args(["-c", RECOMPUTE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(answer.to_string().as_bytes())
        .expect("answer written");
    let out = child.wait_with_output().expect("python finishes");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// An analyst's agent reads `investigate_feature` for the stripped system
/// `ls`, which routes it to imports by name and their callers, and asks who
/// calls the imported `opendir`: completion offers the import,
/// `procedure_address` marks it imported from libc, and `procedure_callers`
/// lists every call site objdump shows.
#[test]
fn python_sdk_asks_who_calls_an_imported_function_by_name() {
    let Some(python) = python() else { return };
    let ls = Path::new("/usr/bin/ls");
    let expected = common::objdump_plt_sites(ls, "opendir");
    assert!(!expected.is_empty(), "objdump shows no call to opendir@plt");
    let ctx = json!({"document": "ls"});
    let plan = json!([
        {"op": "get_prompt", "name": "investigate_feature", "arguments": {"feature": "directory listing", "target_path": ls}},
        {"op": "call", "tool": "open_binary", "arguments": {"path": ls}},
        {"op": "complete", "prompt": "investigate_feature", "argument": "procedure", "value": "opendi", "context": ctx},
        {"op": "call", "tool": "procedure_address", "arguments": {"procedure": "opendir"}},
        {"op": "call", "tool": "procedure_callers", "arguments": {"procedure": "opendir", "limit": 500}},
    ]);
    let mut cmd = Command::new(&python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp", "--read-root", "/usr/bin"]);
    let out = run(cmd, &plan);
    let (prompt, results) = out["results"].as_array().unwrap().split_first().unwrap();
    let prompt = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        prompt.contains("An import is a procedure by name even in a stripped binary: `procedure_callers(procedure)`"),
        "{prompt}"
    );
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    assert!(
        completion(&results[1])["values"]
            .as_array()
            .unwrap()
            .contains(&json!("opendir")),
        "{}",
        results[1]
    );
    for answer in &results[2..] {
        let answer = &answer["structuredContent"];
        assert_eq!(
            python_evidence_id(&python, answer),
            answer["evidence"]["evidence_id"].as_str().unwrap(),
            "a client recomputes the Evidence ID from the answer alone"
        );
    }
    let address = &results[2]["structuredContent"]["result"];
    assert_eq!(address["imported"], true, "{address}");
    assert_eq!(address["library"], "libc.so.6");
    let callers = &results[3]["structuredContent"]["result"];
    assert_eq!(callers["has_more"], false);
    let mut sites: Vec<String> = callers["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|item| {
            assert!(item.get("call_sites_omitted").is_none(), "{item}");
            let calls = item["call_sites"].as_array().unwrap().clone();
            let tails = item["tail_call_sites"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            calls.into_iter().chain(tails)
        })
        .map(|site| site.as_str().unwrap().to_owned())
        .collect();
    sites.sort();
    assert_eq!(sites, expected);
}

#[test]
fn two_analysts_over_http_each_see_only_their_own_workspace() {
    let (Some(python), Some(o)) = (python(), oracle()) else {
        return;
    };
    let served = serve_two_analysts();
    let other = Path::new("/bin/true");
    let session = |path: &Path| {
        json!([
            {"op": "call", "tool": "open_binary", "arguments": {"path": path}},
            {"op": "call", "tool": "list_documents", "arguments": {}},
            {"op": "call", "tool": "list_evidence", "arguments": {}},
            {"op": "complete", "prompt": "investigate_feature", "argument": "document", "value": ""},
        ])
    };
    // Ana works statelessly (2026-07-28) with her token, Ben likewise with
    // his; a legacy session under Ana's token is a workspace of its own.
    let plan = json!({"clients": [
        {"token": ANA, "mode": "modern", "steps": session(&o.path)},
        {"token": BEN, "mode": "modern", "steps": session(other)},
        {"token": ANA, "mode": "legacy", "steps": [
            {"op": "call", "tool": "list_evidence", "arguments": {}},
            {"op": "call", "tool": "binary_session", "arguments": {}},
        ]},
    ]});
    let mut cmd = Command::new(python);
    cmd.arg(script("python_http_client.py")).arg(&served.url);
    let (out, stderr) = run_with_stderr(cmd, &plan);
    // The legacy session ends cleanly: the SDK's DELETE gets 200 or 204.
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    let clients = out.as_array().expect("one answer per client");
    assert_eq!(clients[0]["protocol_version"], "2026-07-28");
    assert_eq!(clients[1]["protocol_version"], "2026-07-28");
    assert_eq!(clients[2]["protocol_version"], "2025-11-25");
    let structured =
        |client: usize, step: usize| clients[client]["results"][step]["structuredContent"].clone();
    let opened = |client: usize| structured(client, 0)["evidence"]["evidence_id"].clone();
    let listed = |client: usize| -> Vec<String> {
        structured(client, 2)["result"]["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no evidence list: {}", structured(client, 2)))
            .iter()
            .map(|e| e["evidence_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (ana, ben) = (listed(0), listed(1));
    assert!(
        ana.contains(&opened(0).as_str().unwrap().to_owned()),
        "{ana:?}"
    );
    assert!(
        ben.contains(&opened(1).as_str().unwrap().to_owned()),
        "{ben:?}"
    );
    assert!(ana.iter().all(|id| !ben.contains(id)), "{ana:?} / {ben:?}");
    let documents = |client: usize| structured(client, 1).to_string();
    assert!(documents(0).contains(&o.document), "{}", documents(0));
    assert!(!documents(1).contains(&o.document), "{}", documents(1));
    let completed = |client: usize| clients[client]["results"][3]["completion"]["values"].clone();
    assert!(
        completed(0).to_string().contains(&o.document),
        "{}",
        completed(0)
    );
    assert!(
        !completed(1).to_string().contains(&o.document),
        "{}",
        completed(1)
    );
    // The legacy session under Ana's token has a workspace of its own.
    let legacy_items = &clients[2]["results"][0]["structuredContent"]["result"]["items"];
    assert_eq!(legacy_items, &json!([]), "{}", clients[2]);
    assert!(
        clients[2]["results"][1]["structuredContent"]["result"]["target"].is_null(),
        "{}",
        clients[2]
    );
}

#[test]
fn npm_sdk_over_http_works_in_its_own_session_under_its_token() {
    let (Some(modules), Some(o)) = (node_modules(), oracle()) else {
        return;
    };
    let served = serve_two_analysts();
    let client = |token: &str, steps: Value| {
        let mut cmd = Command::new("node");
        cmd.env("NODE_PATH", &modules)
            .env("REA_TOKEN", token)
            .arg(script("npm_client.mjs"))
            .arg(&served.url);
        run(cmd, &steps)
    };
    let ana = client(
        ANA,
        json!([
            {"op": "call", "tool": "open_binary", "arguments": {"path": o.path}},
            {"op": "call", "tool": "list_documents", "arguments": {}},
            {"op": "call", "tool": "list_evidence", "arguments": {}},
        ]),
    );
    assert_eq!(ana["protocol_version"], "2025-11-25");
    let results = ana["results"].as_array().unwrap();
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    assert!(
        results[1]["structuredContent"]
            .to_string()
            .contains(&o.document),
        "{}",
        results[1]
    );
    let held = results[2]["structuredContent"]["result"]["items"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(held >= 1, "{}", results[2]);
    // Ben's session, at the same server afterwards, holds nothing of Ana's.
    let ben = client(
        BEN,
        json!([
            {"op": "call", "tool": "list_evidence", "arguments": {}},
            {"op": "call", "tool": "list_documents", "arguments": {}},
        ]),
    );
    let results = ben["results"].as_array().unwrap();
    assert_eq!(
        results[0]["structuredContent"]["result"]["items"],
        json!([]),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["isError"], true, "{}", results[1]);
    // Without a token the SDK's requests are refused.
    let refused = {
        let mut cmd = Command::new("node");
        cmd.env("NODE_PATH", &modules)
            .arg(script("npm_client.mjs"))
            .arg(&served.url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("node starts");
        child.stdin.take().unwrap().write_all(b"[]").unwrap();
        child.wait_with_output().expect("node finishes")
    };
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("401"), "{stderr}");
}

#[test]
fn a_prompt_reload_reaches_a_subscribed_http_client_and_not_an_unsubscribed_one() {
    let Some(python) = python() else { return };
    let prompts = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), prompts.path().join(entry.file_name())).unwrap();
    }
    let served = serve_two_analysts_with(&[
        std::ffi::OsStr::new("--prompts-dir"),
        prompts.path().as_os_str(),
    ]);
    let file = prompts.path().join("trace_crash.toml");
    let mut cmd = Command::new(python);
    cmd.arg(script("python_http_client.py"))
        .arg("--reload")
        .arg(&served.url);
    let out = run(
        cmd,
        &json!({"token": ANA, "edit": {"file": file, "from": "title = \"Trace a crash\"", "to": "title = \"Trace a crash (edited)\""}, "quiet_seconds": 2}),
    );
    assert_eq!(out["protocol_version"], "2026-07-28");
    assert_eq!(out["event"], "PromptsListChanged", "{out}");
    assert_eq!(out["unsolicited"], json!([]), "{out}");
    let title = |v: &Value| v["prompts"][3]["title"].as_str().unwrap().to_string();
    assert_eq!(title(&out["before"]), "Trace a crash");
    assert_eq!(title(&out["after"]), "Trace a crash (edited)");
}

/// The first call through a PE import slot in `path`, from llvm-objdump:
/// the import table gives each slot's name (the IAT of each DLL, one
/// pointer per name in table order), the disassembly the calls through
/// slots. Returns (call site, import name).
fn first_pe_import_call(path: &Path) -> Option<(u64, String)> {
    let header = Command::new("llvm-objdump")
        .arg("-p")
        .arg(path)
        .output()
        .ok()?;
    let header = String::from_utf8_lossy(&header.stdout).into_owned();
    let base = header
        .lines()
        .find_map(|l| l.trim().strip_prefix("ImageBase"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())?;
    let mut slots = std::collections::HashMap::new();
    let mut slot = None;
    for line in header.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"lookup") {
            let at = words.iter().position(|w| *w == "addr")?;
            slot = u64::from_str_radix(words[at + 1], 16)
                .ok()
                .map(|rva| base + rva);
        } else if words.len() == 2
            && words[0].parse::<u32>().is_ok()
            && let Some(address) = slot.as_mut()
        {
            slots.insert(*address, words[1].to_owned());
            *address += 8;
        }
    }
    let code = Command::new("llvm-objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(path)
        .output()
        .ok()?;
    String::from_utf8_lossy(&code.stdout)
        .lines()
        .find_map(|line| {
            let (site, rest) = line.trim_start().split_once(':')?;
            if !rest.contains("callq\t*") {
                return None;
            }
            let target = rest.rsplit("# 0x").next()?;
            let name = slots.get(&u64::from_str_radix(target.trim(), 16).ok()?)?;
            Some((u64::from_str_radix(site, 16).ok()?, name.clone()))
        })
}

/// Issue 28: an agent reads C through the Python SDK on real stripped ELF,
/// PE and Mach-O files nobody here wrote, with imports named and called
/// with their arguments, strings as literals, and every line mapped.
#[test]
fn python_sdk_reads_imports_and_strings_as_c_in_elf_pe_and_macho() {
    let (Some(python), Some(elf), Some(pe), Some(macho)) = (
        python(),
        common::fixture(FIXTURE),
        common::fixture("watcher-win32-x64.node"),
        common::fixture("fsevents.node"),
    ) else {
        return;
    };
    // ELF: llvm-nm says the procedure is defined and getenv/popen are
    // imported; the literal is in the file.
    let Some(defined) = common::nm_functions(&["-D"], &elf) else {
        return;
    };
    let procedure = "_Z11getSockPathB5cxx11v";
    assert!(defined.iter().any(|(_, n)| n == procedure));
    let undefined = Command::new("llvm-nm")
        .args(["-D", "-u"])
        .arg(&elf)
        .output()
        .unwrap();
    let undefined = String::from_utf8_lossy(&undefined.stdout).into_owned();
    assert!(
        undefined.contains(" getenv") && undefined.contains(" popen"),
        "{undefined}"
    );
    let bytes = std::fs::read(&elf).unwrap();
    assert!(bytes.windows(14).any(|w| w == b"WATCHMAN_SOCK\0"));
    // PE: the first call through an import slot, by llvm-objdump.
    let (site, import) = first_pe_import_call(&pe).expect("a call through the IAT");
    // Mach-O: the x86_64 slice imports _napi_get_cb_info (llvm-nm -u).
    let macho_undefined = Command::new("llvm-nm")
        .args(["-u", "--arch=x86_64"])
        .arg(&macho)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&macho_undefined.stdout).contains("_napi_get_cb_info"));
    let plan = json!([
        {"op": "call", "tool": "open_binary", "arguments": {"path": elf, "provider_id": "native"}},
        {"op": "call", "tool": "procedure_pseudo_code", "arguments": {"procedures": [procedure]}},
        {"op": "call", "tool": "open_binary", "arguments": {"path": pe, "provider_id": "native"}},
        {"op": "call", "tool": "resolve_containing_procedure", "arguments": {"address": format!("{site:#x}")}},
        {"op": "call", "tool": "procedure_pseudo_code",
         "arguments": {"procedures": ["$3.structuredContent.result.procedure.address"]}},
        {"op": "call", "tool": "open_binary", "arguments": {"path": macho, "provider_id": "native"}},
        {"op": "call", "tool": "procedure_pseudo_code",
         "arguments": {"procedures": ["_FSEStart"], "document": "fsevents.node (x86_64)"}},
    ]);
    let mut cmd = Command::new(python);
    cmd.arg(script("python_client.py"))
        .args(["modern", REA, "mcp"]);
    let out = run(cmd, &plan);
    let results = out["results"].as_array().unwrap();
    let c_of = |step: usize| -> String {
        let item = &results[step]["structuredContent"]["result"]["procedures"][0];
        assert_eq!(item["outcome"], "complete", "{item}");
        let lines: Vec<&str> = item["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let map = item["address_map"].as_str().unwrap();
        assert_eq!(
            map.split(';').count(),
            lines.len(),
            "one map entry per line"
        );
        lines.join("\n")
    };
    let elf_c = c_of(1);
    assert!(elf_c.contains("getenv(\"WATCHMAN_SOCK\")"), "{elf_c}");
    assert!(elf_c.contains("popen(\""), "{elf_c}");
    let pe_c = c_of(4);
    assert!(
        pe_c.contains(&format!("{import}(")) && !pe_c.contains(&format!("{import}()")),
        "{import} with its arguments in {pe_c}"
    );
    let macho_c = c_of(6);
    assert!(macho_c.contains("napi_get_cb_info(param_1,"), "{macho_c}");
}
