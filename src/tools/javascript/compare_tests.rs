use serde_json::json;

use super::*;
use crate::javascript::{CoverageStatus, NodeKind};
use crate::tools::javascript::testkit::{at, demo};

fn status(result: &Value, dimension: &str) -> String {
    result["dimensions"][dimension]["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_same_analysis_twice_has_no_differences() {
    let (b, _) = demo();
    let a = b.build();
    let (result, limitations) = compare(&a, &a);
    assert_eq!(result["status"], "unchanged");
    for (name, d) in result["dimensions"].as_object().unwrap() {
        assert_eq!(d["status"], "unchanged", "{name}");
    }
    assert!(limitations.is_empty());
}

#[test]
fn a_new_version_shows_what_moved() {
    let (b, _) = demo();
    let left = b.build();
    let (mut b, ids) = demo();
    if let Some(p) = b.package.as_mut() {
        p.version = Some("1.1.0".into());
        p.dependencies
            .insert("electron-log".into(), "^5.0.0".into());
        p.dev_dependencies.insert("electron".into(), "^30".into());
    }
    let main = b.nodes.iter_mut().find(|n| n.node_id == ids.main).unwrap();
    main.attributes
        .insert("sha256".into(), json!("00".repeat(32)));
    let api = b.nodes.iter_mut().find(|n| n.node_id == ids.api).unwrap();
    api.attributes
        .insert("members".into(), json!(["doThing", "undo"]));
    b.module("extra.js", "main", "extra");
    let channel = b.named(
        NodeKind::IpcChannel,
        "new-channel",
        at("main.js", 30),
        json!({}),
    );
    b.edge(EdgeKind::IpcHandle, &ids.main, &channel, Some("ipcMain.on"));
    let url = b.named(
        NodeKind::Url,
        "https://api.example.org/",
        at("main.js", 31),
        json!({"scheme": "https", "host": "api.example.org"}),
    );
    b.edge(EdgeKind::ReferencesUrl, &ids.main, &url, None);
    let right = b.build();

    let (result, _) = compare(&left, &right);
    assert_eq!(result["status"], "changed");
    let d = &result["dimensions"];
    assert_eq!(
        d["package"]["version"],
        json!({"left": "1.0.0", "right": "1.1.0"})
    );
    assert_eq!(status(&result, "package"), "changed");
    assert_eq!(d["modules"]["added"]["items"], json!(["extra.js"]));
    assert_eq!(d["modules"]["changed"]["items"][0]["key"], "main.js");
    assert_eq!(d["dependencies"]["added"]["items"], json!(["electron"]));
    assert_eq!(
        d["dependencies"]["changed"]["items"][0]["key"],
        "electron-log"
    );
    assert_eq!(
        d["dependencies"]["changed"]["items"][0]["right"],
        json!(["dependencies", "^5.0.0"])
    );
    assert_eq!(d["ipc_channels"]["added"]["items"], json!(["new-channel"]));
    assert_eq!(status(&result, "ipc_channels"), "added");
    assert_eq!(
        d["exposed_apis"]["changed"]["items"][0]["members_added"],
        json!(["undo"])
    );
    assert_eq!(d["url_hosts"]["added"]["items"], json!(["api.example.org"]));
    assert_eq!(status(&result, "windows"), "unchanged");
    assert_eq!(status(&result, "native_modules"), "unchanged");
    assert_eq!(status(&result, "entry_points"), "unchanged");
}

#[test]
fn an_incomplete_side_never_yields_removals() {
    let (mut b, _) = demo();
    b.module("only-left.js", "main", "left");
    let left = b.build();
    let (mut b, _) = demo();
    b.coverage = CoverageStatus::Partial;
    let right = b.build();
    let (result, limitations) = compare(&left, &right);
    assert_eq!(status(&result, "modules"), "truncated");
    assert_eq!(result["dimensions"]["modules"]["unseen"], 1);
    assert_eq!(result["dimensions"]["modules"]["removed"]["total"], 0);
    assert_eq!(result["status"], "truncated");
    assert_eq!(limitations.len(), 1);
    assert!(limitations[0].starts_with("right:"));
}

#[test]
fn ambiguous_windows_stay_unmatched() {
    let (b, _) = demo();
    let left = b.build();
    let (mut b, ids) = demo();
    let twin = b.site(
        NodeKind::Window,
        "BrowserWindow",
        at("main.js", 40),
        json!({"constructor": "BrowserWindow", "binding": "win",
               "effective": {"node_integration": true, "context_isolation": false, "sandbox": false}}),
    );
    b.edge(
        EdgeKind::CreatesWindow,
        &ids.main,
        &twin,
        Some("new BrowserWindow"),
    );
    let right = b.build();
    let (result, _) = compare(&left, &right);
    let windows = &result["dimensions"]["windows"];
    assert_eq!(windows["status"], "unknown");
    assert_eq!(windows["added"]["total"], 0);
    assert_eq!(windows["changed"]["total"], 0);
    assert_eq!(
        windows["unmatched"]["items"],
        json!([{"side": "right", "key": "main.js#win#BrowserWindow", "count": 2}])
    );
}

#[test]
fn a_matched_window_compares_its_settings() {
    let (b, _) = demo();
    let left = b.build();
    let (mut b, ids) = demo();
    let w = b
        .nodes
        .iter_mut()
        .find(|n| n.node_id == ids.window)
        .unwrap();
    w.attributes.insert(
        "effective".into(),
        json!({"node_integration": true, "context_isolation": false, "sandbox": false}),
    );
    let right = b.build();
    let (result, _) = compare(&left, &right);
    let windows = &result["dimensions"]["windows"];
    assert_eq!(windows["status"], "changed");
    let change = &windows["changed"]["items"][0];
    assert_eq!(change["key"], "main.js#win#BrowserWindow");
    assert_eq!(change["right"]["effective"]["node_integration"], true);
}
