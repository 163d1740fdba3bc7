//! Routing of JavaScript/Electron applications and `rea analyze`, through
//! the real binary and an in-process MCP client: a directory that is not an
//! `.app` bundle is refused by `open_binary` and `rea doctor --target` with
//! the analysis that does apply (or a plain "none applies"), an `.asar`
//! opens as an artifact and names the analysis, and `rea analyze` gives the
//! same graph for the real electron-api-demos directory and its `.asar`.

mod common;

use std::process::Command;
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use common::{Era, call, connect, fixture};
use serde_json::{Value, json};

const RUN_TIMEOUT: Duration = Duration::from_secs(120);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn rea(args: &[&std::ffi::OsStr]) -> Run {
    let mut cmd = Command::cargo_bin("rea").expect("the rea binary is built");
    cmd.args(args).env_remove("REA_LOG");
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(RUN_TIMEOUT)
        .output()
        .expect("rea runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    }
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[tokio::test]
async fn open_binary_names_the_analysis_for_an_application_directory() {
    let Some(app) = fixture("electron-api-demos-2.0.1") else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let (value, failed) = call(&client, "open_binary", json!({"path": app})).await;
    assert!(failed, "{value}");
    let error = &value["error"];
    assert_eq!(error["code"], "not_a_binary_target", "{value}");
    let action = &error["data"]["available_action"];
    assert_eq!(action["tool"], "analyze_javascript_application");
    assert_eq!(action["arguments"]["input_path"], app.display().to_string());
    assert_eq!(action["cli"], format!("rea analyze {}", app.display()));
    for text in [&error["message"], &error["remediation"]] {
        assert!(
            text.as_str()
                .unwrap()
                .contains("analyze_javascript_application"),
            "{value}"
        );
    }
    assert!(value.get("evidence").is_none());

    // A directory with nothing analysable says so plainly.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.txt"), "x").unwrap();
    let (value, failed) = call(&client, "open_binary", json!({"path": empty.path()})).await;
    assert!(failed);
    assert_eq!(value["error"]["code"], "not_a_binary_target");
    assert_eq!(value["error"]["data"]["available_action"], Value::Null);
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no analysis applies"),
        "{value}"
    );
}

#[tokio::test]
async fn an_asar_opens_as_an_artifact_and_names_the_analysis() {
    let Some(asar) = fixture("electron-api-demos-2.0.1.asar") else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let (value, failed) = call(&client, "open_binary", json!({"path": asar})).await;
    assert!(!failed, "{value}");
    let context = &value["context"];
    assert_eq!(context["artifact_format"], "asar");
    assert_eq!(context["next"], "inspect_artifact");
    let action = &context["available_actions"][0];
    assert_eq!(action["tool"], "analyze_javascript_application");
    assert_eq!(
        action["arguments"]["input_path"],
        asar.display().to_string()
    );
}

#[test]
fn doctor_routes_directories_and_asar_files() {
    let (Some(app), Some(asar)) = (
        fixture("electron-api-demos-2.0.1"),
        fixture("electron-api-demos-2.0.1.asar"),
    ) else {
        return;
    };
    let target_line = |out: &Run| {
        out.stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some("target"))
            .unwrap_or_else(|| panic!("no target line: {}", out.stdout))
            .to_string()
    };
    let out = rea(&[os("doctor"), os("--target"), app.as_os_str()]);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    let line = target_line(&out);
    assert!(
        line.starts_with("FAIL") && line.contains("[not_a_binary_target]"),
        "{line}"
    );
    assert!(
        line.contains(&format!("rea analyze {}", app.display())),
        "{line}"
    );
    assert!(
        out.stdout.contains("Call analyze_javascript_application"),
        "{}",
        out.stdout
    );

    let out = rea(&[os("doctor"), os("--target"), asar.as_os_str()]);
    let line = target_line(&out);
    assert!(line.starts_with("ok"), "{line}");
    assert!(line.contains("analyze_javascript_application"), "{line}");
}

/// `rea analyze --json` of a path, parsed.
fn analyze_json(path: &std::path::Path) -> Value {
    let out = rea(&[os("analyze"), os("--json"), path.as_os_str()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.is_empty(),
        "no progress bar without a terminal: {}",
        out.stderr
    );
    serde_json::from_str(&out.stdout).expect("one JSON object")
}

#[test]
fn rea_analyze_summarises_the_real_demo_app_and_its_asar_alike() {
    let (Some(app), Some(asar)) = (
        fixture("electron-api-demos-2.0.1"),
        fixture("electron-api-demos-2.0.1.asar"),
    ) else {
        return;
    };
    let dir = analyze_json(&app);
    let packed = analyze_json(&asar);
    assert_eq!(dir["format"], "directory");
    assert_eq!(packed["format"], "asar");
    assert_eq!(dir["graph_sha256"], packed["graph_sha256"]);
    assert_eq!(dir["nodes"], packed["nodes"]);
    assert_eq!(dir["package"]["name"], "electron-api-demos");

    let out = rea(&[os("analyze"), app.as_os_str()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let text = &out.stdout;
    for expected in [
        "Electron API Demos 2.0.1",
        "Entry points",
        "main.js",
        "Windows (",
        "IPC channels (",
        "asynchronous-message",
        "main-process/communication/async-msg.js:3:1",
        "renderer-process/communication/async-msg.js:6:3",
        "Menus and trays (",
        "Select All",
        "Unknowns (",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(text.contains(dir["analysis_id"].as_str().unwrap()));
}

#[test]
fn rea_analyze_obeys_read_roots_and_reports_failures() {
    let Some(app) = fixture("electron-api-demos-2.0.1") else {
        return;
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let out = rea(&[
        os("analyze"),
        os("--read-root"),
        elsewhere.path().as_os_str(),
        app.as_os_str(),
    ]);
    assert_ne!(out.code, Some(0));
    assert!(
        out.stderr.contains("outside the operator's read roots"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());

    let bad = elsewhere.path().join("broken.asar");
    std::fs::write(&bad, b"\x04\x00\x00\x00\xff\xff\xff\x7fnot an archive").unwrap();
    let out = rea(&[os("analyze"), bad.as_os_str()]);
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains("rea: "), "{}", out.stderr);
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn investigate_feature_suggests_the_analysis_view_once_an_analysis_is_retained() {
    let Some(app) = fixture("electron-api-demos-2.0.1") else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let args = json!({"feature": "open file dialog", "target_path": app});
    let before = common::prompt_text(&client, "investigate_feature", args.clone()).await;
    assert!(
        before.contains("`analyze_javascript_application(input_path)`"),
        "{before}"
    );
    let retained = "This session already retains an application analysis: start here.";
    assert!(!before.contains(retained), "{before}");

    let (analysis, failed) = call(
        &client,
        "analyze_javascript_application",
        json!({"input_path": app}),
    )
    .await;
    assert!(!failed, "{analysis}");
    let after = common::prompt_text(&client, "investigate_feature", args).await;
    let at = |s: &str| {
        after
            .find(s)
            .unwrap_or_else(|| panic!("missing {s} in {after}"))
    };
    assert!(at(retained) < at("`trace_application_feature(evidence_id, seed)`"));
    // Nothing from the session is printed: the prompt holds no Evidence ID.
    let id = analysis["evidence"]["evidence_id"].as_str().unwrap();
    assert!(!after.contains(id));

    // Closing the session clears the ledger, and the suggestion goes with it.
    let (_, failed) = call(&client, "close_binary", json!({})).await;
    assert!(!failed);
    let cleared =
        common::prompt_text(&client, "investigate_feature", json!({"feature": "x"})).await;
    assert!(!cleared.contains(retained), "{cleared}");
}

#[tokio::test]
async fn compare_application_versions_prompt_names_the_javascript_path() {
    let (client, _server, _) = connect(Era::Modern).await;
    let text = common::prompt_text(
        &client,
        "compare_application_versions",
        json!({"left_target_path": "/apps/v1", "right_target_path": "/apps/v2"}),
    )
    .await;
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("missing {s} in {text}"))
    };
    assert!(
        at("`analyze_javascript_application(input_path)`")
            < at("`compare_application_versions(left_evidence_id, right_evidence_id)`")
    );
}
