//! End-to-end tests of [`super::analyze`]: hand-made facts through the
//! builder, the real electron-api-demos application as a directory and as
//! an asar, hostile archives, limits and a synthetic Electron app.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::facts::*;
use super::graph::Parsed;
use super::model::*;
use super::source::{Listing, SourceFile};
use super::{Silent, analyze, finish};
use crate::artifacts::asar::{MAX_HEADER_BYTES, MAX_NESTING, build};

fn demo(name: &str) -> Option<PathBuf> {
    crate::providers::native::fixtures::fixture(name)
}

fn run(path: &Path) -> Analysis {
    analyze(path, &Options::default(), &Silent).unwrap()
}

fn node<'a>(a: &'a Analysis, kind: NodeKind, name: &str) -> &'a Node {
    a.nodes
        .iter()
        .find(|n| n.kind == kind && n.name == name)
        .unwrap_or_else(|| panic!("no {kind:?} node {name}"))
}

fn edges(a: &Analysis, kind: EdgeKind) -> impl Iterator<Item = &Edge> {
    a.edges.iter().filter(move |e| e.kind == kind)
}

fn hint(s: &str) -> StringHint {
    StringHint {
        literal: Some(s.into()),
        parts: vec![],
        excerpt: format!("'{s}'"),
    }
}

fn at(line: u32, column: u32) -> Pos {
    Pos { line, column }
}

/// A listing of in-memory files plus facts by path, through the builder.
fn built(files: &[(&str, &str)], facts: Vec<(&str, Parsed)>, package: Option<&str>) -> Analysis {
    let listing = Listing {
        format: InputFormat::Directory,
        root_sha256: "0".repeat(64),
        files: files
            .iter()
            .map(|(p, c)| SourceFile {
                path: (*p).into(),
                size: c.len() as u64,
                bytes: Some(c.as_bytes().to_vec()),
                sha256: Some(content_sha256(c.as_bytes())),
                unpacked: false,
                not_read: None,
                integrity_mismatch: None,
            })
            .collect(),
        refused: vec![],
        stopped_by: None,
        bytes_read: 0,
        limitations: vec![],
    };
    let by_path: BTreeMap<&str, Parsed> = facts.into_iter().collect();
    let parsed = listing
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((i, by_path.get(f.path.as_str())?.clone())))
        .collect();
    let pkg = package.and_then(|p| super::package::parse("package.json", p.as_bytes()));
    finish::analysis(&listing, &parsed, pkg.as_ref(), &Options::default())
}

fn parsed_ok() -> ModuleFacts {
    ModuleFacts {
        parse: ParseOutcome {
            parsed: true,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn hand_made() -> Analysis {
    let mut main = parsed_ok();
    main.imports.push(ImportFact {
        kind: ImportKind::Require,
        specifier: hint("electron"),
        pos: at(1, 20),
    });
    main.imports.push(ImportFact {
        kind: ImportKind::Require,
        specifier: hint("./missing"),
        pos: at(2, 1),
    });
    main.imports.push(ImportFact {
        kind: ImportKind::Require,
        specifier: StringHint {
            literal: None,
            parts: vec![],
            excerpt: "name".into(),
        },
        pos: at(3, 1),
    });
    main.windows.push(WindowFact {
        constructor: "BrowserWindow".into(),
        pos: at(5, 7),
        binding: Some("win".into()),
        options_read: true,
        web_preferences: BTreeMap::from([(
            "preload".to_owned(),
            PrefValue::Text(StringHint {
                literal: None,
                parts: vec!["preload.js".into()],
                excerpt: "path.join(__dirname, 'preload.js')".into(),
            }),
        )]),
        loads: vec![LoadFact {
            method: "loadFile".into(),
            target: hint("index.html"),
            pos: at(6, 1),
        }],
    });
    for (line, ch) in [(8, "go"), (9, "go"), (10, "lonely")] {
        main.ipc.push(IpcFact {
            role: IpcRole::Handle,
            api: "ipcMain.handle".into(),
            channel: hint(ch),
            pos: at(line, 1),
        });
    }
    main.ipc.push(IpcFact {
        role: IpcRole::Handle,
        api: "ipcMain.on".into(),
        channel: StringHint {
            literal: None,
            parts: vec![],
            excerpt: "prefix + x".into(),
        },
        pos: at(11, 1),
    });
    let mut preload = parsed_ok();
    preload.exposed.push(ExposeFact {
        key: hint("api"),
        members: vec!["go".into()],
        pos: at(1, 1),
    });
    preload.ipc.push(IpcFact {
        role: IpcRole::Send,
        api: "ipcRenderer.invoke".into(),
        channel: hint("go"),
        pos: at(2, 3),
    });
    let mut renderer = parsed_ok();
    renderer.api_uses.push(ApiUseFact {
        object: "api".into(),
        member: Some("go".into()),
        pos: at(1, 1),
    });
    let page = super::html::PageFacts {
        refs: vec![
            super::html::PageRef {
                kind: super::html::RefKind::Script,
                target: Some("renderer.js".into()),
                pos: at(3, 1),
            },
            super::html::PageRef {
                kind: super::html::RefKind::Iframe,
                target: Some("http://example.com/".into()),
                pos: at(4, 1),
            },
        ],
        ..Default::default()
    };
    built(
        &[
            ("package.json", "{}"),
            ("main.js", "main"),
            ("preload.js", "preload"),
            ("renderer.js", "renderer"),
            ("index.html", "<script src=renderer.js></script>"),
        ],
        vec![
            ("main.js", Parsed::Module(main)),
            ("preload.js", Parsed::Module(preload)),
            ("renderer.js", Parsed::Module(renderer)),
            ("index.html", Parsed::Page(page)),
        ],
        Some(r#"{"name":"t","main":"main.js","devDependencies":{"electron":"^22.0.0"}}"#),
    )
}

#[test]
fn builder_joins_hand_made_facts() {
    let a = hand_made();
    a.validate().unwrap();
    assert_eq!(a, hand_made(), "deterministic");
    let main = node(&a, NodeKind::Module, "main.js");
    assert_eq!(
        main.node_id,
        node_id(
            NodeKind::Module,
            &json!({"path": "main.js", "sha256": content_sha256(b"main")})
        )
    );
    assert_eq!(main.attributes["process"], json!("main"));
    assert_eq!(
        node(&a, NodeKind::Module, "preload.js").attributes["process"],
        json!("preload")
    );
    let r = node(&a, NodeKind::Module, "renderer.js");
    assert_eq!(r.attributes["process"], json!("renderer"));
    assert_eq!(r.attributes["process_basis"], json!("reachable"));
    let kinds: Vec<_> = a
        .entry_points
        .iter()
        .map(|e| (e.kind, e.path.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (EntryKind::Main, "main.js"),
            (EntryKind::Preload, "preload.js"),
            (EntryKind::RendererPage, "index.html")
        ]
    );
    // Sorted, deduplicated, unresolved edges kept with their reason.
    let mut sorted = a.edges.clone();
    sorted.sort_by(|x, y| {
        (x.kind, &x.from, &x.to, &x.location, &x.edge_id).cmp(&(
            y.kind,
            &y.from,
            &y.to,
            &y.location,
            &y.edge_id,
        ))
    });
    assert_eq!(sorted, a.edges);
    let names: Vec<_> = a.nodes.iter().map(|n| (n.kind, n.name.clone())).collect();
    let mut sorted_names = names.clone();
    sorted_names.sort();
    assert_eq!(names, sorted_names);
    let missing = edges(&a, EdgeKind::Imports)
        .find(|e| e.detail.as_deref() == Some("./missing"))
        .unwrap();
    assert!(missing.to.is_none() && missing.unresolved.is_some());
    assert_eq!(edges(&a, EdgeKind::DynamicImport).count(), 1);
    // The channel "go" has one node whose location is its first site.
    let go = node(&a, NodeKind::IpcChannel, "go");
    assert_eq!(
        go.location,
        SourceLocation {
            file: "main.js".into(),
            line: 8,
            column: 1
        }
    );
    assert_eq!(
        edges(&a, EdgeKind::IpcHandle)
            .filter(|e| e.to.as_deref() == Some(&go.node_id))
            .count(),
        2
    );
    let rel = |k| a.findings.relationships.iter().filter(move |r| r.kind == k);
    let r2m: Vec<_> = rel(RelationshipKind::RendererToMain).collect();
    assert_eq!(r2m.len(), 1);
    assert_eq!(
        r2m[0].from,
        node(&a, NodeKind::Module, "preload.js").node_id
    );
    assert_eq!(r2m[0].to, main.node_id);
    assert_eq!(r2m[0].via.as_deref(), Some(go.node_id.as_str()));
    assert_eq!(rel(RelationshipKind::RendererToPreload).count(), 1);
    assert_eq!(rel(RelationshipKind::WindowPreloadPage).count(), 1);
    let unknown = |k| {
        a.findings
            .unknowns
            .iter()
            .filter(move |u| u.kind == k)
            .count()
    };
    assert_eq!(unknown(UnknownKind::UnresolvedImport), 1);
    assert_eq!(unknown(UnknownKind::DynamicRequire), 1);
    assert_eq!(unknown(UnknownKind::ComputedName), 1);
    assert_eq!(
        unknown(UnknownKind::UnpairedChannel),
        1,
        "{:?}",
        a.findings.unknowns
    );
    // Electron 22 defaults: all safe, so no window observation; the page lacks a CSP.
    let w = a.nodes.iter().find(|n| n.kind == NodeKind::Window).unwrap();
    assert_eq!(
        w.attributes["effective"],
        json!({"node_integration": false, "context_isolation": true, "sandbox": true})
    );
    let obs: Vec<_> = a.findings.observations.iter().map(|o| o.kind).collect();
    assert_eq!(
        obs,
        [
            ObservationKind::InsecureUrl,
            ObservationKind::NoContentSecurityPolicy
        ]
    );
    let url = node(&a, NodeKind::Url, "http://example.com/");
    assert_eq!(
        (&url.attributes["scheme"], &url.attributes["host"]),
        (&json!("http"), &json!("example.com"))
    );
    assert_eq!(a.coverage.status, CoverageStatus::Partial);
}

#[test]
fn effective_settings_follow_the_electron_version() {
    let w = |prefs: &[(&str, PrefValue)], read| WindowFact {
        constructor: "BrowserWindow".into(),
        pos: at(1, 1),
        binding: None,
        options_read: read,
        web_preferences: prefs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        loads: vec![],
    };
    let e = |w: &WindowFact, m| {
        let e = super::graph::effective(w, m);
        (
            e["node_integration"].clone(),
            e["context_isolation"].clone(),
            e["sandbox"].clone(),
        )
    };
    let none = w(&[], true);
    assert_eq!(e(&none, Some(4)), (json!(true), json!(false), json!(false)));
    assert_eq!(
        e(&none, Some(11)),
        (json!(false), json!(false), json!(false))
    );
    assert_eq!(e(&none, Some(20)), (json!(false), json!(true), json!(true)));
    assert_eq!(
        e(&none, None),
        (json!("unknown"), json!("unknown"), json!("unknown"))
    );
    let on = w(&[("nodeIntegration", PrefValue::Bool(true))], true);
    assert_eq!(e(&on, Some(25)), (json!(true), json!(true), json!(false)));
    let unread = w(&[], false);
    assert_eq!(e(&unread, Some(25)).0, json!("unknown"));
}

fn fixture_pair() -> Option<(Analysis, Analysis)> {
    let dir = demo("electron-api-demos-2.0.1")?;
    let asar = demo("electron-api-demos-2.0.1.asar")?;
    Some((run(&dir), run(&asar)))
}

#[test]
fn the_demo_app_gives_the_same_graph_from_its_directory_and_its_asar() {
    let Some((d, a)) = fixture_pair() else { return };
    d.validate().unwrap();
    a.validate().unwrap();
    assert_eq!(d.format, InputFormat::Directory);
    assert_eq!(a.format, InputFormat::Asar);
    assert_eq!(d.graph_sha256, a.graph_sha256);
    assert_eq!(d.nodes, a.nodes);
    assert_eq!(d.edges, a.edges);
    assert_ne!(d.analysis_id, a.analysis_id);
    let p = d.package.as_ref().unwrap();
    assert_eq!(p.name.as_deref(), Some("electron-api-demos"));
    assert_eq!(p.version.as_deref(), Some("2.0.1"));
    assert_eq!(p.main.as_deref(), Some("main.js"));
    assert!(
        a.findings
            .observations
            .iter()
            .all(|o| o.kind != ObservationKind::IntegrityMismatch),
        "the packed archive's integrity records hold"
    );
    assert!(
        d.entry_points
            .iter()
            .any(|e| e.kind == EntryKind::Main && e.path == "main.js")
    );
}

/// The (line, column) of `needle` in a fixture file, found by search.
fn position(file: &Path, needle: &str) -> (u32, u32) {
    let text = std::fs::read_to_string(file).unwrap();
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(needle) {
            return (i as u32 + 1, line[..at].chars().count() as u32 + 1);
        }
    }
    panic!("{needle} not in {}", file.display());
}

#[test]
fn the_demo_app_main_window_channels_and_menu_are_where_the_source_says() {
    let Some(dir) = demo("electron-api-demos-2.0.1") else {
        return;
    };
    let a = run(&dir);
    let (line, column) = position(&dir.join("main.js"), "new BrowserWindow");
    let win = a
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Window && n.location.file == "main.js")
        .expect("the main window");
    assert_eq!((win.location.line, win.location.column), (line, column));
    let index = node(&a, NodeKind::HtmlPage, "index.html");
    let load = edges(&a, EdgeKind::LoadsPage)
        .find(|e| e.from == win.node_id)
        .unwrap();
    assert_eq!(load.to.as_deref(), Some(index.node_id.as_str()), "{load:?}");
    assert!(
        a.entry_points
            .iter()
            .any(|e| e.kind == EntryKind::RendererPage && e.path == "index.html")
    );
    let channel = node(&a, NodeKind::IpcChannel, "asynchronous-message");
    let main_mod = node(
        &a,
        NodeKind::Module,
        "main-process/communication/async-msg.js",
    );
    let renderer_mod = node(
        &a,
        NodeKind::Module,
        "renderer-process/communication/async-msg.js",
    );
    let handle = edges(&a, EdgeKind::IpcHandle)
        .find(|e| e.to.as_deref() == Some(&channel.node_id))
        .unwrap();
    assert_eq!(handle.from, main_mod.node_id);
    let (l, c) = position(
        &dir.join("main-process/communication/async-msg.js"),
        "ipcMain.on('asynchronous-message'",
    );
    let loc = handle.location.as_ref().unwrap();
    assert_eq!((loc.line, loc.column), (l, c));
    assert!(
        edges(&a, EdgeKind::IpcSend)
            .any(|e| e.from == renderer_mod.node_id && e.to.as_deref() == Some(&channel.node_id))
    );
    assert!(
        a.findings
            .relationships
            .iter()
            .any(|r| r.kind == RelationshipKind::RendererToMain
                && r.from == renderer_mod.node_id
                && r.to == main_mod.node_id
                && r.via.as_deref() == Some(&channel.node_id))
    );
    assert_eq!(renderer_mod.attributes["process"], json!("renderer"));
    let menu = edges(&a, EdgeKind::BuildsMenu)
        .filter_map(|e| a.nodes.iter().find(|n| Some(&n.node_id) == e.to.as_ref()))
        .find(|n| {
            n.location.file == "main-process/menus/application-menu.js"
                && n.attributes["menu_kind"] == json!("build-from-template")
        })
        .expect("the application menu");
    let labels = menu.attributes["labels"].as_array().unwrap();
    assert!(labels.contains(&json!("Edit")), "{menu:?}");
    let (l, c) = position(
        &dir.join("main-process/menus/application-menu.js"),
        "Menu.buildFromTemplate(template)",
    );
    assert_eq!((menu.location.line, menu.location.column), (l, c));
}

#[test]
fn a_flipped_byte_in_the_asar_is_an_integrity_mismatch() {
    let Some(asar) = demo("electron-api-demos-2.0.1.asar") else {
        return;
    };
    let mut bytes = std::fs::read(&asar).unwrap();
    let header = crate::artifacts::asar::read_header(&bytes, 100_000).unwrap();
    let (offset, size) = header
        .entries
        .iter()
        .find_map(|e| match (&e.raw_path[..], &e.kind) {
            ("main.js", crate::artifacts::asar::AsarEntryKind::File { offset, size, .. }) => {
                Some(((*offset)?, *size))
            }
            _ => None,
        })
        .unwrap();
    let at = (header.bounds.data_offset + offset + size / 2) as usize;
    bytes[at] ^= 0x20;
    let t = tempfile::tempdir().unwrap();
    let copy = t.path().join("app.asar");
    std::fs::write(&copy, bytes).unwrap();
    let a = run(&copy);
    let bad: Vec<_> = a
        .findings
        .observations
        .iter()
        .filter(|o| o.kind == ObservationKind::IntegrityMismatch)
        .collect();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].severity, Severity::High);
    assert_eq!(bad[0].location.as_ref().unwrap().file, "main.js");
    assert!(
        a.nodes.iter().any(|n| n.name == "main.js"),
        "still analysed"
    );
}

fn write_asar(dir: &Path, json: &str, data: &[u8]) -> PathBuf {
    let p = dir.join("x.asar");
    std::fs::write(&p, build(json, data)).unwrap();
    p
}

#[test]
fn hostile_asars_are_refused_cleanly() {
    let t = tempfile::tempdir().unwrap();
    let malformed = |bytes: Vec<u8>| {
        let p = t.path().join("m.asar");
        std::fs::write(&p, bytes).unwrap();
        match analyze(&p, &Options::default(), &Silent) {
            Err(JsError::MalformedAsar { detail }) => detail,
            other => panic!("expected MalformedAsar, got {other:?}"),
        }
    };
    let mut bad_size = build(r#"{"files":{}}"#, b"");
    bad_size[12..16].copy_from_slice(&9999u32.to_le_bytes());
    assert!(malformed(bad_size).contains("JSON length"));
    assert!(malformed(build(r#"{"files":{"a":}}"#, b"")).contains("does not parse"));
    let not_json = malformed(build("{not json at all}", b""));
    assert!(not_json.contains("does not parse"), "{not_json}");
    let no_files = malformed(build(r#"{"nope":{}}"#, b""));
    assert!(no_files.contains("files"), "{no_files}");
    let deep = format!(
        r#"{{"files":{}{}}}"#,
        "{\"a\":{\"files\":".repeat(MAX_NESTING / 2 + 1),
        "{}".to_owned() + &"}}".repeat(MAX_NESTING / 2 + 1)
    );
    assert!(malformed(build(&deep, b"")).contains("nests deeper"));
    let mut huge = build(r#"{"files":{}}"#, b"");
    huge[4..8].copy_from_slice(&((MAX_HEADER_BYTES + 8) as u32).to_le_bytes());
    assert!(malformed(huge).contains("limit"));
    assert!(malformed(vec![4, 0, 0]).contains("short"));

    // Out-of-archive data and escaping names are refused; the rest is analysed.
    let json = r#"{"files":{"ok.js":{"size":3,"offset":"0"},"far.js":{"size":3,"offset":"999"},"..":{"files":{"evil.js":{"size":3,"offset":"0"}}},"l.js":{"link":"../../etc/passwd"}}}"#;
    let p = write_asar(t.path(), json, b"abc");
    let a = run(&p);
    a.validate().unwrap();
    // far.js, the `..` directory, its child and the link.
    assert_eq!(a.coverage.entries_refused, 4, "{:?}", a.findings.unknowns);
    let names: Vec<_> = a.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["ok.js"]);
    assert_eq!(a.coverage.status, CoverageStatus::Partial);
}

#[cfg(unix)]
#[test]
fn directory_symlinks_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.js"), "require('x')").unwrap();
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("index.js"), "1").unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.js"), t.path().join("s.js")).unwrap();
    let a = run(t.path());
    assert_eq!(a.coverage.entries_refused, 2);
    assert!(
        a.nodes
            .iter()
            .all(|n| !n.name.contains("secret") && n.name != "s.js")
    );
    assert_eq!(a.coverage.files_seen, 1);
}

#[test]
fn limits_truncate_and_say_which() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..6 {
        std::fs::write(t.path().join(format!("f{i}.js")), "x").unwrap();
    }
    let options = Options {
        limits: Limits {
            max_files: 3,
            ..Limits::default()
        },
        read_source_maps: false,
    };
    let a = analyze(t.path(), &options, &Silent).unwrap();
    assert_eq!(a.coverage.status, CoverageStatus::Truncated);
    assert_eq!(a.coverage.stopped_by.as_deref(), Some("max_files"));
    assert_eq!(a.coverage.files_seen, 3);
    assert!(
        a.findings
            .unknowns
            .iter()
            .any(|u| u.kind == UnknownKind::LimitReached)
    );
    assert!(!a.limitations.is_empty());
    let zero = Options {
        limits: Limits {
            max_nodes: 0,
            ..Limits::default()
        },
        read_source_maps: false,
    };
    assert!(matches!(
        analyze(t.path(), &zero, &Silent),
        Err(JsError::LimitOutOfRange { .. })
    ));
}

#[test]
fn validate_rejects_edited_results() {
    let a = hand_made();
    let mut b = a.clone();
    b.edges[0].detail = Some("edited".into());
    assert!(b.validate().is_err());
    let mut c = a.clone();
    c.nodes[0].name = "renamed".into();
    assert!(c.validate().is_err());
    let mut d = a.clone();
    d.findings.observations[0].node_id = Some("jsn_missing".into());
    assert!(d.validate().is_err());
}

const ADDON: &str = "build/Release/addon.node";

fn synthetic_app(dir: &Path) -> Option<()> {
    let addon = demo("watcher-linux-x64.node")?;
    std::fs::create_dir_all(dir.join("build/Release")).unwrap();
    std::fs::copy(addon, dir.join(ADDON)).unwrap();
    let write = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
    write(
        "package.json",
        r#"{"name":"synthetic","version":"0.1.0","main":"main.js","devDependencies":{"electron":"^30.0.0"}}"#,
    );
    write(
        "main.js",
        "const { app, BrowserWindow, ipcMain } = require('electron')\nconst path = require('path')\nconst addon = require('./build/Release/addon.node')\n\nfunction create () {\n  const win = new BrowserWindow({\n    webPreferences: {\n      preload: path.join(__dirname, 'preload.js'),\n      nodeIntegration: true,\n      contextIsolation: false\n    }\n  })\n  win.loadFile('index.html')\n}\n\nipcMain.handle('do-thing', async () => addon.run())\napp.whenReady().then(create)\n",
    );
    write(
        "preload.js",
        "const { contextBridge, ipcRenderer } = require('electron')\n\ncontextBridge.exposeInMainWorld('api', {\n  doThing: () => ipcRenderer.invoke('do-thing')\n})\n",
    );
    write(
        "index.html",
        "<!doctype html>\n<html>\n<body>\n<script>\n  window.api.doThing()\n</script>\n</body>\n</html>\n",
    );
    Some(())
}

#[test]
fn a_synthetic_electron_app_shows_its_layers_and_risks() {
    let t = tempfile::tempdir().unwrap();
    if synthetic_app(t.path()).is_none() {
        return;
    }
    let a = run(t.path());
    a.validate().unwrap();
    let win = a.nodes.iter().find(|n| n.kind == NodeKind::Window).unwrap();
    assert_eq!(
        (win.location.file.as_str(), win.location.line),
        ("main.js", 6)
    );
    let preload = node(&a, NodeKind::Module, "preload.js");
    assert!(
        edges(&a, EdgeKind::Preload)
            .any(|e| e.from == win.node_id && e.to.as_deref() == Some(&preload.node_id))
    );
    assert_eq!(preload.attributes["process"], json!("preload"));
    let page = node(&a, NodeKind::HtmlPage, "index.html");
    let api = node(&a, NodeKind::ExposedApi, "api");
    assert_eq!(api.attributes["members"], json!(["doThing"]));
    assert!(
        edges(&a, EdgeKind::UsesApi)
            .any(|e| e.from == page.node_id && e.to.as_deref() == Some(&api.node_id))
    );
    assert!(edges(&a, EdgeKind::ExposesApi).any(|e| e.from == preload.node_id));
    let rel = |k| a.findings.relationships.iter().filter(move |r| r.kind == k);
    assert!(
        rel(RelationshipKind::RendererToPreload)
            .any(|r| r.from == page.node_id && r.to == preload.node_id)
    );
    let main = node(&a, NodeKind::Module, "main.js");
    assert!(
        rel(RelationshipKind::RendererToMain)
            .any(|r| r.from == preload.node_id && r.to == main.node_id)
    );
    let native = node(&a, NodeKind::NativeModule, ADDON);
    assert!(
        edges(&a, EdgeKind::LoadsNative)
            .any(|e| e.from == main.node_id && e.to.as_deref() == Some(&native.node_id))
    );
    assert_eq!(native.attributes["format"], json!("elf"));
    assert!(
        native.attributes["exports"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    let high: Vec<_> = a
        .findings
        .observations
        .iter()
        .filter(|o| o.severity == Severity::High)
        .map(|o| o.kind)
        .collect();
    assert_eq!(
        high,
        [
            ObservationKind::NodeIntegrationEnabled,
            ObservationKind::ContextIsolationDisabled
        ]
    );
    assert!(
        a.findings
            .observations
            .iter()
            .any(|o| o.kind == ObservationKind::NativeModule)
    );
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn analyze_never_panics_on_small_asars(
            names in proptest::collection::vec("[a-z./]{0,6}", 0..5),
            sizes in proptest::collection::vec(0u64..40, 0..5),
            offsets in proptest::collection::vec(0u64..40, 0..5),
            data in proptest::collection::vec(any::<u8>(), 0..48),
            raw in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let t = tempfile::tempdir().unwrap();
            let files: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .zip(sizes.iter().zip(&offsets))
                .map(|(n, (s, o))| (format!("{n}.js"), json!({"size": s, "offset": o.to_string()})))
                .collect();
            let header = json!({"files": files}).to_string();
            let p = write_asar(t.path(), &header, &data);
            if let Ok(a) = analyze(&p, &Options::default(), &Silent) {
                prop_assert!(a.validate().is_ok());
            }
            let q = t.path().join("raw.asar");
            std::fs::write(&q, &raw).unwrap();
            let _ = analyze(&q, &Options::default(), &Silent);
        }
    }
}

#[test]
fn source_maps_are_read_only_when_asked() {
    let t = tempfile::tempdir().unwrap();
    let long = format!(
        "var a=[{}];\n//# sourceMappingURL=app.min.js.map\n",
        "1,".repeat(4000)
    );
    std::fs::write(t.path().join("app.min.js"), long).unwrap();
    std::fs::write(
        t.path().join("app.min.js.map"),
        r#"{"version":3,"sources":["src/a.ts","src/b.ts"],"mappings":""}"#,
    )
    .unwrap();
    let minified = |a: &Analysis| {
        a.findings
            .unknowns
            .iter()
            .filter(|u| u.kind == UnknownKind::MinifiedWithoutSourceMap)
            .map(|u| u.message.clone())
            .collect::<Vec<_>>()
    };
    let off = run(t.path());
    let m = node(&off, NodeKind::Module, "app.min.js");
    assert_eq!(m.attributes["minified"], json!(true));
    assert_eq!(m.attributes["source_map"], json!("app.min.js.map"));
    assert!(!m.attributes.contains_key("source_map_sources"));
    let msgs = minified(&off);
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("opt-in"), "{msgs:?}");
    let options = Options {
        read_source_maps: true,
        ..Options::default()
    };
    let on = analyze(t.path(), &options, &Silent).unwrap();
    let m = node(&on, NodeKind::Module, "app.min.js");
    assert_eq!(
        m.attributes["source_map_sources"],
        json!(["src/a.ts", "src/b.ts"])
    );
    assert!(minified(&on).is_empty());
}

#[cfg(unix)]
#[test]
fn unpacked_asar_files_are_read_beside_the_archive_and_confined() {
    let t = tempfile::tempdir().unwrap();
    let json = r#"{"files":{"main.js":{"size":21,"offset":"0"},"lib":{"files":{"inside.js":{"size":2,"unpacked":true},"escape.js":{"size":6,"unpacked":true},"gone.js":{"size":1,"unpacked":true}}}}}"#;
    let p = write_asar(t.path(), json, b"require('./lib/inside')");
    std::fs::create_dir_all(t.path().join("x.asar.unpacked/lib")).unwrap();
    std::fs::write(t.path().join("x.asar.unpacked/lib/inside.js"), "42").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        t.path().join("x.asar.unpacked/lib/escape.js"),
    )
    .unwrap();
    let a = run(&p);
    a.validate().unwrap();
    let inside = node(&a, NodeKind::Module, "lib/inside.js");
    assert_eq!(inside.attributes["sha256"], json!(content_sha256(b"42")));
    let escape = node(&a, NodeKind::Module, "lib/escape.js");
    assert_eq!(
        escape.attributes.get("sha256"),
        None,
        "the symlink was not read"
    );
    assert_eq!(escape.attributes["parse"], json!("not-parsed"));
    let not_parsed: Vec<_> = a
        .findings
        .unknowns
        .iter()
        .filter(|u| u.kind == UnknownKind::NotParsed)
        .collect();
    assert_eq!(not_parsed.len(), 2, "{not_parsed:?}");
    // Both were refused reading, so coverage counts them as refused.
    assert_eq!(a.coverage.files_not_parsed, 0);
    assert!(a.coverage.entries_refused >= 2, "{:?}", a.coverage);
}

#[test]
fn truncated_directory_and_asar_still_agree() {
    let (Some(dir), Some(asar)) = (
        demo("electron-api-demos-2.0.1"),
        demo("electron-api-demos-2.0.1.asar"),
    ) else {
        return;
    };
    let options = Options {
        limits: Limits {
            max_files: 40,
            ..Limits::default()
        },
        read_source_maps: false,
    };
    let d = analyze(&dir, &options, &Silent).unwrap();
    let a = analyze(&asar, &options, &Silent).unwrap();
    assert_eq!(d.coverage.status, CoverageStatus::Truncated);
    assert_eq!(d.coverage.files_seen, 40);
    assert_eq!(d.graph_sha256, a.graph_sha256);
}

#[test]
fn progress_counts_every_parsed_file_and_odd_inputs_are_refused() {
    use std::cell::Cell;
    struct Count(Cell<u64>, Cell<u64>);
    impl super::Progress for Count {
        fn total(&self, files: u64) {
            self.0.set(files);
        }
        fn advance(&self, _path: &str) {
            self.1.set(self.1.get() + 1);
        }
    }
    let t = tempfile::tempdir().unwrap();
    for name in ["a.js", "b.ts", "c.html", "d.png", "e.json"] {
        std::fs::write(t.path().join(name), "x").unwrap();
    }
    let c = Count(Cell::new(0), Cell::new(0));
    let a = analyze(t.path(), &Options::default(), &c).unwrap();
    assert_eq!((c.0.get(), c.1.get()), (3, 3));
    assert_eq!(a.coverage.files_seen, 5);
    assert_eq!(a.coverage.files_parsed, 3);
    assert_eq!(
        node(&a, NodeKind::HtmlPage, "c.html").attributes["csp"],
        json!(false)
    );
    let not_app = analyze(&t.path().join("d.png"), &Options::default(), &Silent);
    assert!(matches!(not_app, Err(JsError::NotAnApplication { .. })));
    let missing = analyze(&t.path().join("nope"), &Options::default(), &Silent);
    assert!(matches!(
        missing,
        Err(JsError::Open(
            crate::ground::confined::OpenError::NotFound { .. }
        ))
    ));
}

#[test]
fn integrity_is_checked_for_files_that_are_not_read() {
    let t = tempfile::tempdir().unwrap();
    let good = content_sha256(b"abc");
    let json = format!(
        r#"{{"files":{{"a.png":{{"size":3,"offset":"0","integrity":{{"algorithm":"SHA256","hash":"{}","blockSize":4194304,"blocks":["{}"]}}}},"b.js":{{"size":3,"offset":"0","integrity":{{"algorithm":"SHA256","hash":"{good}","blockSize":4194304,"blocks":["{good}"]}}}}}}}}"#,
        "0".repeat(64),
        "0".repeat(64)
    );
    let a = run(&write_asar(t.path(), &json, b"abc"));
    let bad: Vec<_> = a
        .findings
        .observations
        .iter()
        .filter(|o| o.kind == ObservationKind::IntegrityMismatch)
        .collect();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].node_id, None);
    assert_eq!(bad[0].location.as_ref().unwrap().file, "a.png");
}

#[test]
fn a_main_that_names_no_file_is_unknown() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("package.json"), r#"{"main":"dist/nope.js"}"#).unwrap();
    std::fs::write(t.path().join("other.js"), "1").unwrap();
    let a = run(t.path());
    assert!(a.entry_points.is_empty());
    let u: Vec<_> = a
        .findings
        .unknowns
        .iter()
        .filter(|u| u.kind == UnknownKind::UnresolvedImport)
        .collect();
    assert_eq!(u.len(), 1);
    assert!(u[0].message.contains("dist/nope.js"), "{u:?}");
    assert_eq!(a.coverage.status, CoverageStatus::Partial);
}

#[test]
fn a_crowded_channel_is_counted_not_multiplied() {
    let names: Vec<String> = (0..600).map(|i| format!("m{i:03}.js")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), n.as_str())).collect();
    let facts = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut f = parsed_ok();
            let (role, api) = if i % 2 == 0 {
                (IpcRole::Send, "ipcRenderer.send")
            } else {
                (IpcRole::Handle, "ipcMain.on")
            };
            f.ipc.push(IpcFact {
                role,
                api: api.into(),
                channel: hint("busy"),
                pos: at(1, 1),
            });
            (n.as_str(), Parsed::Module(f))
        })
        .collect();
    let started = std::time::Instant::now();
    let a = built(&files, facts, None);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    a.validate().unwrap();
    assert_eq!(a.findings.relationships.len(), FINDINGS_CAP);
    assert_eq!(
        a.findings.omitted.relationships,
        300 * 300 - FINDINGS_CAP as u64
    );
}

#[test]
fn an_extractor_failure_costs_one_file_not_the_analysis() {
    fn flaky(text: &str, language: Language) -> ModuleFacts {
        if text.contains("boom") {
            panic!("extractor bug");
        }
        super::extract::extract(text, language)
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.js"), "boom").unwrap();
    std::fs::write(t.path().join("b.js"), "require('./a')").unwrap();
    let extractor = super::Extractor {
        run: flaky,
        stack_bytes: super::extract::EXTRACT_STACK_BYTES,
    };
    let input = super::Input::open(&crate::ground::confined::Roots::default(), t.path()).unwrap();
    let a = super::analyze_with(&input, &Options::default(), &Silent, extractor).unwrap();
    assert_eq!(a.coverage.files_parsed, 1);
    assert_eq!(a.coverage.files_not_parsed, 1);
    assert!(
        a.findings
            .unknowns
            .iter()
            .any(|u| u.kind == UnknownKind::NotParsed && u.message.contains("extractor failed"))
    );
}

#[test]
fn an_unreadable_page_has_no_csp_verdict() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("main.js"),
        "const { BrowserWindow } = require('electron')\nconst w = new BrowserWindow({})\nw.loadFile('index.html')\n",
    )
    .unwrap();
    std::fs::write(t.path().join("index.html"), b"\xff\xfe<html></html>").unwrap();
    let a = run(t.path());
    let page = node(&a, NodeKind::HtmlPage, "index.html");
    assert_eq!(page.attributes.get("csp"), None, "no CSP could be read");
    assert!(
        a.entry_points
            .iter()
            .any(|e| e.kind == EntryKind::RendererPage)
    );
    assert!(
        a.findings
            .observations
            .iter()
            .all(|o| o.kind != ObservationKind::NoContentSecurityPolicy)
    );
    assert!(
        a.findings
            .unknowns
            .iter()
            .any(|u| u.kind == UnknownKind::NotParsed && u.message.contains("index.html"))
    );
}
