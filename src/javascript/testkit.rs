//! Hand-built analyses for the unit tests (the engine's and the tools'): a
//! builder that keeps the model's invariants (content-addressed ids, list
//! orders, statistics, digests) so the values validate like the engine's
//! own, and a small Electron app.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::javascript::{
    Analysis, Coverage, CoverageStatus, Edge, EdgeKind, EntryKind, EntryPoint, Findings,
    InputFormat, Limits, Node, NodeKind, PackageInfo, SCHEMA_VERSION, SourceLocation, Statistics,
    analysis_id, content_sha256, graph_sha256, node_id,
};

pub(crate) struct Builder {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub entry_points: Vec<EntryPoint>,
    pub package: Option<PackageInfo>,
    pub findings: Findings,
    pub coverage: CoverageStatus,
    pub format: InputFormat,
}

pub(crate) fn at(file: &str, line: u32) -> SourceLocation {
    SourceLocation {
        file: file.to_owned(),
        line,
        column: 1,
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            nodes: Vec::new(),
            edges: Vec::new(),
            entry_points: Vec::new(),
            package: None,
            findings: Findings::default(),
            coverage: CoverageStatus::Complete,
            format: InputFormat::Directory,
        }
    }

    fn push(
        &mut self,
        kind: NodeKind,
        key: Value,
        name: &str,
        location: SourceLocation,
        attributes: Value,
    ) -> String {
        let id = node_id(kind, &key);
        let attributes: BTreeMap<String, Value> = match attributes {
            Value::Object(map) => map.into_iter().collect(),
            _ => BTreeMap::new(),
        };
        self.nodes.push(Node {
            node_id: id.clone(),
            kind,
            name: name.to_owned(),
            location,
            attributes,
        });
        id
    }

    /// A whole-file node (module, page or native addon) with `content`.
    pub fn file(&mut self, kind: NodeKind, path: &str, content: &str, attributes: Value) -> String {
        let sha = content_sha256(content.as_bytes());
        let mut attributes = attributes;
        attributes["sha256"] = json!(sha);
        attributes["size"] = json!(content.len());
        self.push(
            kind,
            json!({"path": path, "sha256": sha}),
            path,
            SourceLocation::file_start(path),
            attributes,
        )
    }

    pub fn module(&mut self, path: &str, process: &str, content: &str) -> String {
        self.file(
            NodeKind::Module,
            path,
            content,
            json!({"language": "javascript", "process": process}),
        )
    }

    /// A node keyed by its name (channels, APIs, packages, URLs...).
    pub fn named(
        &mut self,
        kind: NodeKind,
        name: &str,
        site: SourceLocation,
        attributes: Value,
    ) -> String {
        self.push(kind, json!({"name": name}), name, site, attributes)
    }

    /// A node keyed by its site (windows, menus, webviews).
    pub fn site(
        &mut self,
        kind: NodeKind,
        name: &str,
        site: SourceLocation,
        attributes: Value,
    ) -> String {
        let key = json!({"location": site});
        self.push(kind, key, name, site, attributes)
    }

    pub fn edge(&mut self, kind: EdgeKind, from: &str, to: &str, detail: Option<&str>) {
        self.push_edge(kind, from, Some(to), Some(detail.unwrap_or_default()), None);
    }

    pub fn unresolved(&mut self, kind: EdgeKind, from: &str, detail: &str, why: &str) {
        self.push_edge(kind, from, None, Some(detail), Some(why));
    }

    /// An edge located at its source node's site.
    fn push_edge(
        &mut self,
        kind: EdgeKind,
        from: &str,
        to: Option<&str>,
        detail: Option<&str>,
        why: Option<&str>,
    ) {
        let location = self
            .nodes
            .iter()
            .find(|n| n.node_id == from)
            .map(|n| n.location.clone());
        self.edges.push(Edge::new(
            kind,
            from.to_owned(),
            to.map(str::to_owned),
            location,
            detail.filter(|d| !d.is_empty()).map(str::to_owned),
            why.map(str::to_owned),
        ));
    }

    pub fn entry(&mut self, kind: EntryKind, node: &str) {
        let path = self
            .nodes
            .iter()
            .find(|n| n.node_id == node)
            .map(|n| n.name.clone())
            .unwrap_or_default();
        self.entry_points.push(EntryPoint {
            kind,
            node_id: node.to_owned(),
            path,
        });
    }

    pub fn build(mut self) -> Analysis {
        self.nodes.sort_by(Node::list_order);
        self.edges.sort_by(Edge::list_order);
        self.entry_points
            .sort_by(|a, b| (a.kind, &a.path).cmp(&(b.kind, &b.path)));
        let mut statistics = Statistics::default();
        for node in &self.nodes {
            *statistics
                .nodes_by_kind
                .entry(node.kind.as_str().to_owned())
                .or_default() += 1;
            if matches!(node.kind, NodeKind::Module | NodeKind::HtmlPage) {
                statistics.source_bytes += node.attributes["size"].as_u64().unwrap_or(0);
            }
        }
        for edge in &self.edges {
            *statistics
                .edges_by_kind
                .entry(edge.kind.as_str().to_owned())
                .or_default() += 1;
            if edge.to.is_none() {
                statistics.unresolved_edges += 1;
            }
        }
        let files = self
            .nodes
            .iter()
            .filter(|n| {
                matches!(
                    n.kind,
                    NodeKind::Module | NodeKind::HtmlPage | NodeKind::NativeModule
                )
            })
            .count() as u64;
        let root = content_sha256(format!("{:?}", self.package).as_bytes());
        let mut nodes = self.nodes;
        nodes.iter_mut().for_each(Node::drop_null_attributes);
        let graph = graph_sha256(&nodes, &self.edges);
        Analysis {
            schema_version: SCHEMA_VERSION,
            analysis_id: analysis_id(self.format, &root, &graph),
            format: self.format,
            root_sha256: root,
            graph_sha256: graph,
            package: self.package,
            entry_points: self.entry_points,
            nodes,
            edges: self.edges,
            findings: self.findings,
            coverage: Coverage {
                status: self.coverage,
                files_seen: files,
                files_parsed: files,
                files_not_parsed: 0,
                files_with_errors: 0,
                bytes_read: statistics.source_bytes,
                entries_refused: 0,
                stopped_by: None,
            },
            statistics,
            limits: Limits::default(),
            limitations: Vec::new(),
        }
    }
}

/// Ids of the demo app's interesting nodes.
pub(crate) struct Demo {
    pub main: String,
    pub preload: String,
    pub renderer: String,
    pub page: String,
    pub addon: String,
    pub window: String,
    pub channel: String,
    pub orphan: String,
    pub api: String,
    pub electron: String,
}

/// A small Electron app: main creates a window (preload + page), handles
/// `do-thing` and loads a native addon; the preload exposes `api` and
/// invokes `do-thing`; the page runs a renderer module that uses `api` and
/// sends on `orphan` (which nothing handles).
pub(crate) fn demo() -> (Builder, Demo) {
    let mut b = Builder::new();
    b.package = Some(PackageInfo {
        path: "package.json".into(),
        name: Some("demo".into()),
        version: Some("1.0.0".into()),
        main: Some("main.js".into()),
        dependencies: BTreeMap::from([("electron-log".into(), "^4.4.8".into())]),
        ..PackageInfo::default()
    });
    let main = b.module("main.js", "main", "main v1");
    let preload = b.module("preload.js", "preload", "preload v1");
    let renderer = b.module("renderer.js", "renderer", "renderer v1");
    let page = b.file(
        NodeKind::HtmlPage,
        "index.html",
        "<html>",
        json!({"process": "renderer", "csp": null}),
    );
    let addon = b.file(
        NodeKind::NativeModule,
        "build/Release/addon.node",
        "\x7fELF",
        json!({"format": "elf", "architectures": ["x86_64"], "exports": ["doThing", "napi_register_module_v1"], "exports_total": 2, "unpacked": false, "package": null}),
    );
    let window = b.site(
        NodeKind::Window,
        "BrowserWindow",
        at("main.js", 5),
        json!({"constructor": "BrowserWindow", "binding": "win",
               "web_preferences": {"preload": "preload.js", "contextIsolation": true},
               "effective": {"node_integration": false, "context_isolation": true, "sandbox": true},
               "electron_major": null}),
    );
    let channel = b.named(
        NodeKind::IpcChannel,
        "do-thing",
        at("main.js", 9),
        json!({}),
    );
    let orphan = b.named(
        NodeKind::IpcChannel,
        "orphan",
        at("renderer.js", 3),
        json!({}),
    );
    let api = b.named(
        NodeKind::ExposedApi,
        "api",
        at("preload.js", 2),
        json!({"members": ["doThing"]}),
    );
    let electron = b.named(NodeKind::Builtin, "electron", at("main.js", 1), json!({}));
    let url = b.named(
        NodeKind::Url,
        "https://example.com/help",
        at("main.js", 12),
        json!({"scheme": "https", "host": "example.com"}),
    );
    let menu = b.site(
        NodeKind::Menu,
        "menu",
        at("main.js", 14),
        json!({"menu_kind": "application", "labels": ["Quit Demo"]}),
    );
    b.edge(EdgeKind::Imports, &main, &electron, Some("electron"));
    b.edge(EdgeKind::Imports, &preload, &electron, Some("electron"));
    b.edge(
        EdgeKind::CreatesWindow,
        &main,
        &window,
        Some("new BrowserWindow"),
    );
    b.edge(EdgeKind::LoadsPage, &window, &page, Some("loadFile"));
    b.edge(
        EdgeKind::Preload,
        &window,
        &preload,
        Some("webPreferences.preload"),
    );
    b.edge(EdgeKind::HtmlScript, &page, &renderer, Some("renderer.js"));
    b.edge(
        EdgeKind::UsesApi,
        &renderer,
        &api,
        Some("window.api.doThing"),
    );
    b.edge(
        EdgeKind::ExposesApi,
        &preload,
        &api,
        Some("contextBridge.exposeInMainWorld"),
    );
    b.edge(
        EdgeKind::IpcSend,
        &preload,
        &channel,
        Some("ipcRenderer.invoke"),
    );
    b.edge(EdgeKind::IpcHandle, &main, &channel, Some("ipcMain.handle"));
    b.edge(
        EdgeKind::IpcSend,
        &renderer,
        &orphan,
        Some("ipcRenderer.send"),
    );
    b.edge(
        EdgeKind::LoadsNative,
        &main,
        &addon,
        Some("./build/Release/addon.node"),
    );
    b.edge(EdgeKind::ReferencesUrl, &main, &url, None);
    b.edge(
        EdgeKind::BuildsMenu,
        &main,
        &menu,
        Some("Menu.buildFromTemplate"),
    );
    b.unresolved(
        EdgeKind::DynamicImport,
        &main,
        "require(name)",
        "computed specifier",
    );
    b.entry(EntryKind::Main, &main);
    b.entry(EntryKind::Preload, &preload);
    b.entry(EntryKind::RendererPage, &page);
    let ids = Demo {
        main,
        preload,
        renderer,
        page,
        addon,
        window,
        channel,
        orphan,
        api,
        electron,
    };
    (b, ids)
}
