//! The JavaScript application tools end to end over MCP: a real Electron
//! application no one here wrote (electron-api-demos 2.0.1, as a directory
//! and packed into an `.asar`), two real releases of electron-log, and a
//! small Electron app written in the test whose native addon is a real
//! `.node` file, traced from the renderer to native code and then opened
//! with the native tools.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{Client, Era, call, connect_to};
use rea::catalog::render::LoadedCatalog;
use rea::server::hub::Hub;
use rea::session::{DeepProviders, Policies, ReadRoots, WriteRoots};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fixtures")
}

/// A pinned fixture (file or directory), or a skip.
fn fixture_path(name: &str) -> Option<PathBuf> {
    let path = fixtures().join(name);
    if path.exists() {
        Some(path)
    } else {
        common::skip(&format!(
            "fixture {name} is missing; run tests/fixtures/fetch.sh"
        ));
        None
    }
}

/// A scratch directory inside the crate's `target/` (a read root below).
fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/js-tests");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("app-")
        .tempdir_in(base)
        .unwrap()
}

/// A server whose read roots are the fixtures and the scratch area.
async fn server() -> Option<Client> {
    let fixtures = fixtures();
    if !fixtures.exists() {
        common::skip("target/fixtures is missing; run tests/fixtures/fetch.sh");
        return None;
    }
    let scratch = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/js-tests");
    std::fs::create_dir_all(&scratch).unwrap();
    let roots = ReadRoots::new(&[fixtures, scratch]).unwrap();
    let hub: Arc<Hub> = Hub::new(LoadedCatalog::embedded().unwrap(), roots);
    let (client, _, _) = connect_to(&hub, Era::Legacy).await;
    Some(client)
}

async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let (out, failed) = call(client, tool, args).await;
    assert!(!failed, "{tool} failed: {out}");
    assert_eq!(out["evidence"]["operation"], tool, "{out}");
    out
}

async fn analyze(client: &Client, path: &Path) -> Value {
    ok(
        client,
        "analyze_javascript_application",
        json!({"input_path": path.display().to_string()}),
    )
    .await
}

fn evidence_id(out: &Value) -> String {
    out["evidence"]["evidence_id"].as_str().unwrap().to_owned()
}

fn seed_values(view: &Value, category: &str) -> Vec<String> {
    view["result"]["seeds"][category]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["value"].as_str().unwrap().to_owned())
        .collect()
}

/// A comparison of an analysis with itself: nothing added, removed or
/// changed (an incomplete side may leave a dimension truncated).
fn assert_no_differences(compared: &Value) {
    for (name, d) in compared["result"]["dimensions"].as_object().unwrap() {
        assert!(
            matches!(d["status"].as_str(), Some("unchanged" | "truncated")),
            "{name}: {d}"
        );
    }
}

fn target_layers(trace: &Value) -> Vec<(String, String)> {
    trace["result"]["paths"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let last = p["steps"].as_array().unwrap().last().unwrap();
            (
                last["name"].as_str().unwrap().to_owned(),
                last["layer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn electron_api_demos_directory_and_asar_trace_a_channel() {
    let (Some(dir), Some(asar)) = (
        fixture_path("electron-api-demos-2.0.1"),
        fixture_path("electron-api-demos-2.0.1.asar"),
    ) else {
        return;
    };
    let Some(client) = server().await else { return };

    let from_dir = analyze(&client, &dir).await;
    let from_asar = analyze(&client, &asar).await;
    assert_eq!(from_dir["result"]["format"], "directory");
    assert_eq!(from_asar["result"]["format"], "asar");
    assert_eq!(
        from_dir["result"]["graph_sha256"],
        from_asar["result"]["graph_sha256"]
    );
    // The Evidence is the analysis, about the application, without paths.
    let evidence = &from_dir["evidence"];
    common::assert_said_once(&from_dir);
    assert_eq!(
        evidence["subject"]["sha256"],
        from_dir["result"]["root_sha256"]
    );
    assert_eq!(evidence["subject"]["format"], "javascript-directory");
    assert_eq!(evidence["confidence"], "observed");
    assert!(!evidence["parameters"].to_string().contains("/"));
    // No target was opened or changed.
    let (session, _) = call(&client, "binary_session", json!({})).await;
    assert_eq!(session["result"]["target"], Value::Null);

    // A mismatched format is a typed error.
    let (err, failed) = call(
        &client,
        "analyze_javascript_application",
        json!({"input_path": asar.display().to_string(), "format": "directory"}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "input_format_mismatch");

    let dir_id = evidence_id(&from_dir);
    let view = ok(
        &client,
        "inspect_analysis_view",
        json!({"evidence_id": dir_id}),
    )
    .await;
    assert_eq!(view["result"]["kind"], "javascript-application");
    assert_eq!(view["result"]["application"]["version"], "2.0.1");
    assert!(
        seed_values(&view, "channels").contains(&"asynchronous-message".to_owned()),
        "{}",
        view["result"]["seeds"]["channels"]
    );
    assert_eq!(view["evidence"]["confidence"], "derived");
    assert_eq!(view["evidence"]["parameters"]["evidence_id"], json!(dir_id));
    assert_eq!(view["result"]["trace_with"]["evidence_id"], json!(dir_id));

    let trace = ok(
        &client,
        "trace_application_feature",
        json!({"evidence_id": dir_id, "seed": {"kind": "channel", "value": "asynchronous-message"}}),
    )
    .await;
    let reached = target_layers(&trace);
    assert!(
        reached.contains(&(
            "main-process/communication/async-msg.js".to_owned(),
            "main".to_owned()
        )),
        "{reached:?}"
    );
    assert!(
        reached.contains(&(
            "renderer-process/communication/async-msg.js".to_owned(),
            "renderer".to_owned()
        )),
        "{reached:?}"
    );
    assert_eq!(trace["result"]["seed_matches"]["total"], 1);

    // The view of a view is refused with the operations it accepts.
    let (err, failed) = call(
        &client,
        "inspect_analysis_view",
        json!({"evidence_id": evidence_id(&view)}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "wrong_evidence_kind");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("analyze_javascript_application"),
        "{err}"
    );

    // The same analysis twice differs in nothing.
    let same = ok(
        &client,
        "compare_application_versions",
        json!({"left_evidence_id": dir_id, "right_evidence_id": dir_id}),
    )
    .await;
    assert_no_differences(&same);
}

#[tokio::test]
async fn paths_outside_the_read_roots_are_refused() {
    let Some(client) = server().await else { return };
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("package.json"), r#"{"name":"x"}"#).unwrap();
    std::fs::write(outside.path().join("index.js"), "require('electron')").unwrap();
    let (err, failed) = call(
        &client,
        "analyze_javascript_application",
        json!({"input_path": outside.path().display().to_string()}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "outside_read_roots", "{err}");
    assert!(err.get("evidence").is_none());
    let (err, failed) = call(
        &client,
        "analyze_javascript_application",
        json!({"input_path": "relative/app"}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "invalid_arguments");
    let (err, failed) = call(
        &client,
        "analyze_javascript_application",
        json!({"input_path": "/x", "limits": {"max_files": 0}}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "limit_out_of_range");
}

#[tokio::test]
async fn two_electron_log_releases_compare() {
    let (Some(old), Some(new)) = (
        fixture_path("electron-log-4.4.8"),
        fixture_path("electron-log-5.0.0"),
    ) else {
        return;
    };
    let Some(client) = server().await else { return };
    let left = evidence_id(&analyze(&client, &old).await);
    let right = evidence_id(&analyze(&client, &new).await);
    let compared = ok(
        &client,
        "compare_application_versions",
        json!({"left_evidence_id": left, "right_evidence_id": right}),
    )
    .await;
    let result = &compared["result"];
    assert_eq!(result["status"], "changed", "{result}");
    let d = &result["dimensions"];
    assert_eq!(
        d["package"]["version"],
        json!({"left": "4.4.8", "right": "5.0.0"})
    );
    assert_eq!(d["package"]["status"], "changed");
    let added_apis: Vec<&str> = d["exposed_apis"]["added"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        added_apis.contains(&"__electronLog"),
        "{}",
        d["exposed_apis"]
    );
    assert!(
        d["modules"]["added"]["total"].as_u64().unwrap() > 0,
        "{}",
        d["modules"]
    );
    assert!(
        d["modules"]["removed"]["total"].as_u64().unwrap() > 0,
        "{}",
        d["modules"]
    );
    let params = &compared["evidence"]["parameters"];
    assert_eq!(params["left_evidence_id"], json!(left));
    assert_eq!(params["right_evidence_id"], json!(right));
}

const MAIN_JS: &str = r#"const { app, BrowserWindow, ipcMain } = require('electron');
const path = require('path');
const addon = require('./build/Release/addon.node');

function createWindow() {
  const win = new BrowserWindow({
    webPreferences: {
      preload: path.join(__dirname, 'preload.js'),
      contextIsolation: true,
      nodeIntegration: false,
    },
  });
  win.loadFile('index.html');
}

ipcMain.handle('do-thing', async () => addon.doThing());
app.whenReady().then(createWindow);
"#;

const PRELOAD_JS: &str = r#"const { contextBridge, ipcRenderer } = require('electron');
contextBridge.exposeInMainWorld('api', {
  doThing: () => ipcRenderer.invoke('do-thing'),
});
"#;

const INDEX_HTML: &str = r#"<!DOCTYPE html>
<html>
<head><meta http-equiv="Content-Security-Policy" content="default-src 'self'"></head>
<body>
<script>
  window.api.doThing().then((r) => console.log(r));
</script>
</body>
</html>
"#;

#[tokio::test]
async fn a_feature_crosses_from_the_renderer_to_native_code() {
    let Some(addon) = fixture_path("watcher-linux-x64.node") else {
        return;
    };
    let Some(client) = server().await else { return };
    let app = scratch();
    let root = app.path();
    std::fs::write(
        root.join("package.json"),
        r#"{"name": "synthetic", "version": "1.0.0", "main": "main.js"}"#,
    )
    .unwrap();
    std::fs::write(root.join("main.js"), MAIN_JS).unwrap();
    std::fs::write(root.join("preload.js"), PRELOAD_JS).unwrap();
    std::fs::write(root.join("index.html"), INDEX_HTML).unwrap();
    std::fs::create_dir_all(root.join("build/Release")).unwrap();
    let native = root.join("build/Release/addon.node");
    std::fs::copy(&addon, &native).unwrap();

    let analysis = analyze(&client, root).await;
    let id = evidence_id(&analysis);
    for seed in [
        json!({"kind": "api", "value": "api"}),
        json!({"kind": "channel", "value": "do-thing"}),
    ] {
        let trace = ok(
            &client,
            "trace_application_feature",
            json!({"evidence_id": id, "seed": seed}),
        )
        .await;
        let result = &trace["result"];
        let layers: Vec<&str> = result["layers_reached"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for layer in ["renderer", "preload", "main", "native"] {
            assert!(layers.contains(&layer), "{seed}: {layers:?}");
        }
        let reached = target_layers(&trace);
        for expected in [
            ("main.js", "main"),
            ("preload.js", "preload"),
            ("index.html", "renderer"),
            ("build/Release/addon.node", "native"),
        ] {
            assert!(
                reached.contains(&(expected.0.to_owned(), expected.1.to_owned())),
                "{seed}: {reached:?}"
            );
        }
        let handoff = &result["native_handoffs"][0];
        assert_eq!(handoff["path"], "build/Release/addon.node");
        assert_eq!(
            handoff["sha256"].as_str(),
            Some(common::sha256_file(&native).as_str())
        );
        assert_eq!(handoff["next"]["tool"], "open_binary");
        assert_eq!(handoff["next"]["relative_to"], "the analysed directory");
        assert_eq!(result["coverage"]["status"], "complete");
    }

    // The native tools continue where the trace hands off.
    let opened = ok(
        &client,
        "open_binary",
        json!({"path": root.join("build/Release/addon.node").display().to_string()}),
    )
    .await;
    assert_eq!(
        opened["evidence"]["subject"]["sha256"].as_str(),
        Some(common::sha256_file(&native).as_str())
    );
    let layout = ok(&client, "inspect_binary_layout", json!({})).await;
    let native_view = ok(
        &client,
        "inspect_analysis_view",
        json!({"evidence_id": evidence_id(&layout)}),
    )
    .await;
    assert_eq!(native_view["result"]["kind"], "native-binary");
    assert!(
        native_view["result"]["seeds"]["exports"]["total"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// Tools and prompts are separate namespaces: `compare_application_versions`
/// is served as both, and each answers as itself.
#[tokio::test]
async fn compare_application_versions_is_a_tool_and_a_prompt() {
    let (client, _, _) = common::connect(Era::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    let prompts = client.list_all_prompts().await.unwrap();
    let name = "compare_application_versions";
    assert_eq!(tools.iter().filter(|t| t.name == name).count(), 1);
    assert_eq!(prompts.iter().filter(|p| p.name == name).count(), 1);
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    let properties = tool.input_schema["properties"].as_object().unwrap();
    assert!(properties.contains_key("left_evidence_id"));
    // The tool refuses an id that is not held, as a tool.
    let (err, failed) = call(
        &client,
        name,
        json!({"left_evidence_id": format!("ev_{}", "0".repeat(64)), "right_evidence_id": format!("ev_{}", "0".repeat(64))}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "evidence_not_found", "{err}");
}

/// An analysis survives a bundle: exported, imported into a fresh session,
/// it is viewed, traced and compared from the ledger alone.
#[tokio::test]
async fn an_imported_analysis_is_viewed_traced_and_compared() {
    let Some(app) = fixture_path("electron-log-5.0.0") else {
        return;
    };
    let bundles = scratch();
    let scratch_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/js-tests");
    let hub = Hub::with_policies(
        LoadedCatalog::embedded().unwrap(),
        Policies {
            read_roots: ReadRoots::new(&[fixtures(), scratch_root]).unwrap(),
            write_roots: WriteRoots::new(&[bundles.path().to_path_buf()]).unwrap(),
            ..Policies::default()
        },
        DeepProviders::none(),
    );
    let (first, _, _) = connect_to(&hub, Era::Legacy).await;
    let analysis = analyze(&first, &app).await;
    let id = evidence_id(&analysis);
    let bundle = bundles.path().join("analysis.json");
    let (exported, failed) = call(
        &first,
        "export_evidence_bundle",
        json!({"path": bundle.display().to_string(), "approved": true}),
    )
    .await;
    assert!(!failed, "{exported}");

    let (second, _, _) = connect_to(&hub, Era::Legacy).await;
    let (err, failed) = call(&second, "inspect_analysis_view", json!({"evidence_id": id})).await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "evidence_not_found");
    let (imported, failed) = call(
        &second,
        "import_evidence_bundle",
        json!({"path": bundle.display().to_string()}),
    )
    .await;
    assert!(!failed, "{imported}");
    let view = ok(&second, "inspect_analysis_view", json!({"evidence_id": id})).await;
    assert_eq!(view["result"]["application"]["version"], "5.0.0");
    assert_eq!(
        view["result"]["application"]["analysis_id"],
        analysis["result"]["analysis_id"]
    );
    let trace = ok(
        &second,
        "trace_application_feature",
        json!({"evidence_id": id, "seed": {"kind": "module", "value": "main.js"}}),
    )
    .await;
    assert_eq!(trace["result"]["seed_matches"]["total"], 1);
    assert_eq!(
        trace["result"]["seed_matches"]["items"][0]["name"],
        "main.js"
    );
    let same = ok(
        &second,
        "compare_application_versions",
        json!({"left_evidence_id": id, "right_evidence_id": id}),
    )
    .await;
    assert_no_differences(&same);
}
