use serde_json::json;

use super::*;
use crate::javascript::testkit::demo;
use crate::javascript::{InputFormat, JsError};

fn seed(kind: SeedKind, value: &str) -> FeatureSeed {
    FeatureSeed {
        kind,
        value: value.to_owned(),
        match_mode: SeedMatch::Exact,
        case_sensitive: true,
    }
}

fn names(trace: &Trace) -> Vec<(String, Layer)> {
    trace
        .paths
        .items
        .iter()
        .map(|p| (p.steps.last().unwrap().name.clone(), p.target_layer))
        .collect()
}

#[test]
fn a_channel_reaches_every_layer_by_shortest_paths() {
    let (b, ids) = demo();
    let analysis = b.build();
    let t = trace(
        &analysis,
        &seed(SeedKind::Channel, "do-thing"),
        TraceDirection::Both,
        TraceLimits::MAX,
    );
    assert_eq!(t.seed_matches.total, 1);
    assert_eq!(t.seed_matches.items[0].node_id, ids.channel);
    assert_eq!(
        names(&t),
        vec![
            ("main.js".to_owned(), Layer::Main),
            ("preload.js".to_owned(), Layer::Preload),
            ("build/Release/addon.node".to_owned(), Layer::Native),
            ("BrowserWindow".to_owned(), Layer::Main),
            ("renderer.js".to_owned(), Layer::Renderer),
            ("index.html".to_owned(), Layer::Renderer),
        ]
    );
    // The handler is reached against its ipc-handle edge.
    let to_main = &t.paths.items[0];
    assert_eq!(to_main.steps.len(), 2);
    let via = to_main.steps[1].via.as_ref().unwrap();
    assert_eq!((via.kind, via.direction), (EdgeKind::IpcHandle, "backward"));
    assert_eq!(via.detail.as_deref(), Some("ipcMain.handle"));
    // channel <- main -> addon
    let to_addon = &t.paths.items[2];
    assert_eq!(
        to_addon.layers,
        vec![Layer::Unknown, Layer::Main, Layer::Native]
    );
    assert!(to_addon.crosses_layers);
    assert_eq!(
        t.layers_reached,
        vec![
            Layer::Renderer,
            Layer::Preload,
            Layer::Main,
            Layer::Native,
            Layer::External,
            Layer::Unknown
        ]
    );
    assert_eq!(t.native_handoffs.len(), 1);
    let h = &t.native_handoffs[0];
    assert_eq!(h.node_id, ids.addon);
    assert_eq!(h.path, "build/Release/addon.node");
    assert_eq!(h.format.as_deref(), Some("elf"));
    assert_eq!(h.architectures, vec!["x86_64"]);
    assert_eq!(h.exports, vec!["doThing", "napi_register_module_v1"]);
    assert_eq!(h.next["tool"], "open_binary");
    assert_eq!(h.next["relative_to"], "the analysed directory");
    // The computed require met in main.js is reported, not followed.
    assert_eq!(t.unresolved_edges.total, 1);
    assert_eq!(
        t.unresolved_edges.items[0].reason.as_deref(),
        Some("computed specifier")
    );
    assert_eq!(t.coverage.status, "complete");
    assert!(t.coverage.limits_hit.is_empty());
    // The built-in `electron` is reached but not walked back to its other importers.
    assert!(t.subgraph.nodes.iter().any(|n| n.node_id == ids.electron));
    assert!(
        t.summary.contains("build/Release/addon.node"),
        "{}",
        t.summary
    );
}

#[test]
fn an_api_crosses_renderer_preload_main_native() {
    let (b, ids) = demo();
    let analysis = b.build();
    let t = trace(
        &analysis,
        &seed(SeedKind::Api, "api.doThing"),
        TraceDirection::Both,
        TraceLimits::MAX,
    );
    assert_eq!(t.seed_matches.items[0].node_id, ids.api);
    assert_eq!(t.seed_matches.items[0].matched, "api.doThing");
    let to_addon = t
        .paths
        .items
        .iter()
        .find(|p| p.target_layer == Layer::Native)
        .unwrap();
    let steps: Vec<(&str, Layer)> = to_addon
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.layer))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("api", Layer::Preload),
            ("preload.js", Layer::Preload),
            ("do-thing", Layer::Unknown),
            ("main.js", Layer::Main),
            ("build/Release/addon.node", Layer::Native),
        ]
    );
    assert_eq!(to_addon.steps[1].node_id, ids.preload);
    let to_renderer = t
        .paths
        .items
        .iter()
        .find(|p| p.steps.last().unwrap().node_id == ids.renderer)
        .unwrap();
    assert_eq!(to_renderer.steps.len(), 2);
}

#[test]
fn direction_limits_the_walk() {
    let (b, ids) = demo();
    let analysis = b.build();
    let forward = trace(
        &analysis,
        &seed(SeedKind::Channel, "do-thing"),
        TraceDirection::Forward,
        TraceLimits::MAX,
    );
    assert!(forward.paths.items.is_empty());
    assert_eq!(forward.subgraph.nodes.len(), 1);
    let backward = trace(
        &analysis,
        &seed(SeedKind::Module, "index.html"),
        TraceDirection::Backward,
        TraceLimits::MAX,
    );
    let reached: Vec<&str> = backward
        .subgraph
        .nodes
        .iter()
        .map(|n| n.node_id.as_str())
        .collect();
    assert_eq!(
        reached,
        vec![ids.main.as_str(), ids.page.as_str(), ids.window.as_str()]
    );
}

#[test]
fn each_limit_truncates_and_says_so() {
    let (b, _) = demo();
    let analysis = b.build();
    let run = |limits: TraceLimits| {
        trace(
            &analysis,
            &seed(SeedKind::Channel, "do-thing"),
            TraceDirection::Both,
            limits,
        )
    };
    let depth = run(TraceLimits {
        max_depth: 1,
        ..TraceLimits::MAX
    });
    assert_eq!(depth.coverage.limits_hit, vec!["max_depth"]);
    assert_eq!(depth.coverage.status, "truncated");
    assert_eq!(depth.paths.total, 2);

    let edges = run(TraceLimits {
        max_edges: 1,
        ..TraceLimits::MAX
    });
    assert_eq!(edges.coverage.limits_hit, vec!["max_edges"]);
    assert_eq!(edges.subgraph.edges.len(), 1);
    assert_eq!(edges.subgraph.nodes.len(), 2);

    let nodes = run(TraceLimits {
        max_nodes: 2,
        ..TraceLimits::MAX
    });
    assert_eq!(nodes.coverage.limits_hit, vec!["max_nodes"]);
    assert_eq!(nodes.subgraph.nodes.len(), 2);

    let paths = run(TraceLimits {
        max_paths: 1,
        ..TraceLimits::MAX
    });
    assert_eq!(paths.coverage.limits_hit, vec!["max_paths"]);
    assert_eq!((paths.paths.items.len(), paths.paths.total), (1, 6));
    assert!(paths.paths.capped);

    let mut many = seed(SeedKind::Module, ".js");
    many.match_mode = SeedMatch::Contains;
    let seeds = trace(
        &analysis,
        &many,
        TraceDirection::Both,
        TraceLimits {
            max_seed_matches: 1,
            ..TraceLimits::MAX
        },
    );
    assert_eq!(seeds.coverage.limits_hit, vec!["max_seed_matches"]);
    assert_eq!(
        (seeds.seed_matches.items.len(), seeds.seed_matches.total),
        (1, 3)
    );
    assert_eq!(seeds.seed_matches.items[0].name, "main.js");
}

#[test]
fn limits_out_of_range_are_refused() {
    for limits in [
        TraceLimits {
            max_depth: 0,
            ..TraceLimits::MAX
        },
        TraceLimits {
            max_edges: 4001,
            ..TraceLimits::MAX
        },
    ] {
        assert!(matches!(
            limits.validate(),
            Err(JsError::LimitOutOfRange { .. })
        ));
    }
    assert!(TraceLimits::default().validate().is_ok());
}

#[test]
fn seeds_match_by_kind_case_and_substring() {
    let (b, ids) = demo();
    let analysis = b.build();
    let mut folded = seed(SeedKind::Channel, "DO-THING");
    assert_eq!(seeds::matches(&analysis, &folded, 25).1, 0);
    folded.case_sensitive = false;
    assert_eq!(
        seeds::matches(&analysis, &folded, 25).0[0].node_id,
        ids.channel
    );
    // A channel seed never matches a module that shares its text.
    assert_eq!(
        seeds::matches(&analysis, &seed(SeedKind::Channel, "main.js"), 25).1,
        0
    );
    let label = seeds::matches(&analysis, &seed(SeedKind::String, "Quit Demo"), 25);
    assert_eq!(label.0[0].kind, NodeKind::Menu);
    let host = seeds::matches(&analysis, &seed(SeedKind::String, "example.com"), 25);
    assert_eq!(host.0[0].kind, NodeKind::Url);
    let route = seeds::matches(&analysis, &seed(SeedKind::Route, "index.html"), 25);
    assert_eq!(route.0[0].node_id, ids.page);
    let id = seeds::matches(&analysis, &seed(SeedKind::NodeId, &ids.window), 25);
    assert_eq!(id.0[0].node_id, ids.window);
    let export = trace(
        &analysis,
        &seed(SeedKind::NativeExport, "doThing"),
        TraceDirection::Both,
        TraceLimits::MAX,
    );
    assert_eq!(export.seed_matches.items[0].node_id, ids.addon);
    assert_eq!(export.native_handoffs[0].exports, vec!["doThing"]);
    let none = trace(
        &analysis,
        &seed(SeedKind::Channel, "nothing"),
        TraceDirection::Both,
        TraceLimits::MAX,
    );
    assert_eq!(none.seed_matches.total, 0);
    assert!(none.summary.contains("inspect_analysis_view"));
    assert_eq!(ids.orphan.len(), 68);
}

#[test]
fn asar_handoffs_say_where_the_addon_lives() {
    assert_eq!(
        next_step("a.node", InputFormat::Asar, Some(true))["relative_to"],
        json!("<archive>.asar.unpacked")
    );
    let packed = next_step("a.node", InputFormat::Asar, Some(false));
    assert_eq!(packed["extract_first"], json!(true));
    assert_eq!(packed["relative_to"], json!(null));
}
