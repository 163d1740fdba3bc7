use serde_json::json;

use super::*;
use crate::javascript::{
    Observation, ObservationKind, Severity, SourceLocation, Unknown, UnknownKind,
};
use crate::tools::javascript::testkit::{at, demo};

fn observation(severity: Severity, message: &str) -> Observation {
    Observation {
        kind: ObservationKind::Note,
        severity,
        node_id: None,
        location: None,
        message: message.to_owned(),
    }
}

#[test]
fn the_view_names_the_app_its_windows_and_ready_seeds() {
    let (mut b, ids) = demo();
    b.findings.observations = vec![
        observation(Severity::Low, "low"),
        observation(Severity::High, "high"),
        observation(Severity::Medium, "medium"),
    ];
    b.findings.unknowns = vec![
        Unknown {
            kind: UnknownKind::DynamicRequire,
            node_id: Some(ids.main.clone()),
            location: Some(SourceLocation::file_start("main.js")),
            message: "require(name)".into(),
        },
        Unknown {
            kind: UnknownKind::UnpairedChannel,
            node_id: Some(ids.orphan.clone()),
            location: None,
            message: "orphan has no handler".into(),
        },
    ];
    let analysis = b.build();
    let v = view(&analysis);
    assert_eq!(v["application"]["name"], "demo");
    assert_eq!(v["application"]["version"], "1.0.0");
    assert_eq!(
        v["application"]["graph_sha256"],
        json!(analysis.graph_sha256)
    );
    assert_eq!(v["entry_points"]["total"], 3);

    let window = &v["windows"]["items"][0];
    assert_eq!(window["node_id"], json!(ids.window));
    assert_eq!(window["created_by"], json!(["main.js"]));
    assert_eq!(window["loads"], json!(["index.html"]));
    assert_eq!(window["preload"], json!(["preload.js"]));
    assert_eq!(window["effective"]["context_isolation"], json!(true));

    let channels = &v["seeds"]["channels"]["items"];
    assert_eq!(channels[0]["value"], "do-thing");
    assert_eq!(channels[0]["kind"], "channel");
    assert_eq!(channels[0]["match"], "exact");
    let why = channels[0]["why"].as_str().unwrap();
    assert!(
        why.contains("(paired)") && why.contains("handled in main.js"),
        "{why}"
    );
    assert_eq!(channels[1]["value"], "orphan");
    assert!(
        channels[1]["why"]
            .as_str()
            .unwrap()
            .contains("one side only")
    );
    assert_eq!(v["seeds"]["apis"]["items"][0]["value"], "api");
    let routes: Vec<&str> = v["seeds"]["routes"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["value"].as_str().unwrap())
        .collect();
    assert_eq!(routes, vec!["index.html", "https://example.com/help"]);
    let native: Vec<(&str, &str)> = v["seeds"]["native"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        native,
        vec![
            ("module", "build/Release/addon.node"),
            ("native-export", "doThing"),
            ("native-export", "napi_register_module_v1"),
        ]
    );
    assert_eq!(v["seeds"]["strings"]["items"][0]["value"], "Quit Demo");

    let severities: Vec<&str> = v["observations"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["message"].as_str().unwrap())
        .collect();
    assert_eq!(severities, vec!["high", "medium", "low"]);
    assert_eq!(
        v["unknowns"]["by_kind"],
        json!({"dynamic-require": 1, "unpaired-channel": 1})
    );
    assert_eq!(v["unknowns"]["unresolved_edges"], 1);
}

#[test]
fn a_large_application_stays_compact() {
    let (mut b, ids) = demo();
    for i in 0..60 {
        let name = format!("channel-{i:02}");
        let c = b.named(
            NodeKind::IpcChannel,
            &name,
            at("main.js", 20 + i),
            json!({}),
        );
        b.edge(EdgeKind::IpcHandle, &ids.main, &c, Some("ipcMain.on"));
    }
    let v = view(&b.build());
    let channels = &v["seeds"]["channels"];
    assert_eq!(channels["total"], 62);
    assert_eq!(channels["items"].as_array().unwrap().len(), 50);
    assert_eq!(channels["capped"], true);
    // The one paired channel still comes first.
    assert_eq!(channels["items"][0]["value"], "do-thing");
}
