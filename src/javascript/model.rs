//! The application-graph data model: what [`super::analyze`] returns, what
//! `analyze_javascript_application` records as Evidence, and what the view,
//! trace and comparison tools read back from the ledger.
//!
//! Everything is content-addressed and location-relative: ids are SHA-256
//! digests of RFC 8785 canonical JSON (`session::canonical`) over logical
//! paths (relative POSIX paths inside the application root), contents and
//! source positions. No absolute path appears, so the same application read
//! from a directory or from its `.asar` gives the same `graph_sha256`.
//!
//! List orders (stable; relied on by ids, paging and comparison):
//! - `nodes`: by (`kind`, `name`, `node_id`);
//! - `edges`: by (`kind`, `from`, `to`, `location`, `edge_id`);
//! - `entry_points`: by (`kind`, `path`);
//! - findings lists: by (`kind`, `location`, `message`), capped at
//!   [`FINDINGS_CAP`] with the omitted count kept.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::artifacts::model::canonical_sha256;
use crate::ground::canonical::without_null_members;
use crate::ground::digest::sha256_hex;

/// Current `Analysis::schema_version`.
pub const SCHEMA_VERSION: u32 = 1;
/// How many items each findings list keeps; the rest are counted.
pub const FINDINGS_CAP: usize = 200;
/// Longest source excerpt kept in a fact, edge detail or message (chars).
pub const EXCERPT_CHARS: usize = 160;

/// What the analysed input was.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    /// An application directory (e.g. an unpacked npm package or `resources/app`).
    Directory,
    /// An Electron `.asar` archive (with its `.asar.unpacked/` sibling, if any).
    Asar,
}

impl InputFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            InputFormat::Directory => "directory",
            InputFormat::Asar => "asar",
        }
    }
}

/// Analysis limits. Every field is optional on input (defaults below) and
/// may not exceed its default, which is also its hard maximum, or be zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Most files listed (every kind, directories excluded). Default and maximum 20000.
    pub max_files: u64,
    /// Most bytes read in total. Default and maximum 512 MiB.
    pub max_total_bytes: u64,
    /// Largest source file parsed; larger ones are listed, not parsed. Default and maximum 8 MiB.
    pub max_file_bytes: u64,
    /// Deepest directory nesting walked. Default and maximum 32.
    pub max_depth: u64,
    /// Most graph nodes. Default and maximum 50000.
    pub max_nodes: u64,
    /// Most graph edges. Default and maximum 200000.
    pub max_edges: u64,
}

impl Limits {
    pub const MAX: Limits = Limits {
        max_files: 20_000,
        max_total_bytes: 512 << 20,
        max_file_bytes: 8 << 20,
        max_depth: 32,
        max_nodes: 50_000,
        max_edges: 200_000,
    };

    /// Each field with its hard maximum, in declaration order.
    pub fn fields(&self) -> [(&'static str, u64, u64); 6] {
        let m = Limits::MAX;
        [
            ("max_files", self.max_files, m.max_files),
            ("max_total_bytes", self.max_total_bytes, m.max_total_bytes),
            ("max_file_bytes", self.max_file_bytes, m.max_file_bytes),
            ("max_depth", self.max_depth, m.max_depth),
            ("max_nodes", self.max_nodes, m.max_nodes),
            ("max_edges", self.max_edges, m.max_edges),
        ]
    }

    /// Zero or over-the-maximum values are refused, never clamped.
    pub fn validate(&self) -> Result<(), JsError> {
        match crate::ground::limits::out_of_range(self.fields()) {
            Some((field, value, max)) => Err(JsError::LimitOutOfRange { field, value, max }),
            None => Ok(()),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::MAX
    }
}

/// How the analysis runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub limits: Limits,
    /// Read `sourceMappingURL` maps beside minified files (opt-in: maps can
    /// name original sources and hosts the analyst did not ask to read).
    pub read_source_maps: bool,
}

/// Typed failures of the analysis library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsError {
    #[error("limit {field} = {value} is out of range (1..={max})")]
    LimitOutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error(transparent)]
    Open(#[from] crate::ground::confined::OpenError),
    #[error("{path} is neither a directory nor an .asar archive")]
    NotAnApplication { path: String },
    #[error("the asar archive is malformed: {detail}")]
    MalformedAsar { detail: String },
    #[error("the analysis does not validate: {detail}")]
    Invalid { detail: String },
}

impl JsError {}

/// The whole result of one analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Analysis {
    pub schema_version: u32,
    /// `jsa_` + sha256(canonical {format, root_sha256, graph_sha256}).
    pub analysis_id: String,
    pub format: InputFormat,
    /// The `.asar` file's sha256; for a directory, the sha256 of the
    /// canonical listing `[{path, sha256}]` of the files read.
    pub root_sha256: String,
    /// sha256 of canonical {nodes, edges} as listed: equal for a directory
    /// and its packed `.asar`.
    pub graph_sha256: String,
    /// The root `package.json`, when there is one.
    pub package: Option<PackageInfo>,
    pub entry_points: Vec<EntryPoint>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub findings: Findings,
    pub coverage: Coverage,
    pub statistics: Statistics,
    pub limits: Limits,
    pub limitations: Vec<String>,
}

/// The facts rea reads from a `package.json` (never its scripts' effects).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageInfo {
    /// Logical path of the file ("package.json" for the root).
    pub path: String,
    pub name: Option<String>,
    pub product_name: Option<String>,
    pub version: Option<String>,
    /// The `main` field as written.
    pub main: Option<String>,
    pub dependencies: BTreeMap<String, String>,
    pub dev_dependencies: BTreeMap<String, String>,
    pub optional_dependencies: BTreeMap<String, String>,
}

/// A 1-based position in a file of the application. Columns count Unicode
/// scalar values (characters), not bytes.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct SourceLocation {
    /// Logical path inside the application root.
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl SourceLocation {
    /// The start of `file` (for whole-file nodes).
    pub fn file_start(file: &str) -> SourceLocation {
        SourceLocation {
            file: file.to_owned(),
            line: 1,
            column: 1,
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum NodeKind {
    /// A JavaScript/TypeScript file of the application. Key {path, sha256}.
    Module,
    /// An HTML page (renderer). Key {path, sha256}.
    HtmlPage,
    /// A package required by name (resolved in `node_modules/` or not). Key {name}.
    Package,
    /// A Node.js built-in or `electron` (and its sub-modules). Key {name}.
    Builtin,
    /// A native addon (`.node`) file; open it with `open_binary`. Key {path, sha256}.
    NativeModule,
    /// A `new BrowserWindow(...)` / `new BrowserView(...)` site. Key {location}.
    Window,
    /// An IPC channel name. Key {name}; location = its first site.
    IpcChannel,
    /// A `contextBridge.exposeInMainWorld` key. Key {name}; location = its first site.
    ExposedApi,
    /// A custom protocol scheme registered or privileged. Key {name}.
    Protocol,
    /// A URL found in a string literal or opened. Key {name}.
    Url,
    /// A menu or tray built from a template. Key {location}.
    Menu,
    /// A `<webview>` tag or a window with `webviewTag` on. Key {location}.
    Webview,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Module => "module",
            NodeKind::HtmlPage => "html-page",
            NodeKind::Package => "package",
            NodeKind::Builtin => "builtin",
            NodeKind::NativeModule => "native-module",
            NodeKind::Window => "window",
            NodeKind::IpcChannel => "ipc-channel",
            NodeKind::ExposedApi => "exposed-api",
            NodeKind::Protocol => "protocol",
            NodeKind::Url => "url",
            NodeKind::Menu => "menu",
            NodeKind::Webview => "webview",
        }
    }
}

/// One node of the application graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// `jsn_` + sha256(canonical {kind, key}) — see [`node_id`].
    pub node_id: String,
    pub kind: NodeKind,
    /// What the node is called: a logical path, a package or channel name,
    /// an API key, a scheme, a URL, or a short label for site nodes.
    pub name: String,
    /// Where it is defined (whole-file nodes: line 1, column 1; named nodes
    /// such as channels: their first site in list order).
    pub location: SourceLocation,
    /// Kind-specific facts (see ARCHITECTURE.md, "src/javascript/"), e.g.
    /// `sha256`, `size`, `process` (main|preload|renderer|unknown),
    /// `web_preferences`, `members`, `host`, `version`.
    pub attributes: BTreeMap<String, Value>,
}

impl Node {
    /// Drops null attributes and null members inside them. Evidence loses
    /// null members when it is sealed, so an attribute is present or absent
    /// from the start and the graph digest is the digest of what the ledger
    /// keeps ("csp": unknown is an absent `csp`).
    pub fn drop_null_attributes(&mut self) {
        let attributes = std::mem::take(&mut self.attributes);
        self.attributes = attributes
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k, without_null_members(v)))
            .collect();
    }

    /// The documented list order: (`kind`, `name`, `node_id`).
    pub fn list_order(a: &Node, b: &Node) -> std::cmp::Ordering {
        (a.kind, &a.name, &a.node_id).cmp(&(b.kind, &b.name, &b.node_id))
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// `import`/`export from`/`require` with a literal specifier.
    Imports,
    /// `import()` or `require` of a computed value: usually unresolved.
    DynamicImport,
    /// An HTML page runs a module (`<script src>` or a `require` in an inline script).
    HtmlScript,
    /// An HTML page imports another page (`<link rel="import">`, `<iframe src>`).
    HtmlImport,
    /// A module creates a window.
    CreatesWindow,
    /// A window loads a page (`loadURL`/`loadFile`).
    LoadsPage,
    /// A window's `webPreferences.preload` script.
    Preload,
    /// `ipcMain.handle/on/once` (main receives) on a channel.
    IpcHandle,
    /// `ipcRenderer.send/invoke/sendSync` or `webContents.send` on a channel.
    IpcSend,
    /// `ipcRenderer.on/once` (renderer receives) on a channel.
    IpcListen,
    /// `contextBridge.exposeInMainWorld` of an API.
    ExposesApi,
    /// A renderer module reads `window.<api>` of an exposed API.
    UsesApi,
    /// `protocol.register*Protocol/handle/registerSchemesAsPrivileged`.
    RegistersProtocol,
    /// `shell.openExternal/openPath` of a URL or path.
    OpensExternal,
    /// A URL in a string literal.
    ReferencesUrl,
    /// A module loads a native addon (`require('x.node')`, `bindings('x')`),
    /// or a package ships one.
    LoadsNative,
    /// A module builds a menu or tray.
    BuildsMenu,
    /// A page or window embeds a webview.
    EmbedsWebview,
    /// Use of the `remote` module (`electron.remote`, `@electron/remote`).
    UsesRemote,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Imports => "imports",
            EdgeKind::DynamicImport => "dynamic-import",
            EdgeKind::HtmlScript => "html-script",
            EdgeKind::HtmlImport => "html-import",
            EdgeKind::CreatesWindow => "creates-window",
            EdgeKind::LoadsPage => "loads-page",
            EdgeKind::Preload => "preload",
            EdgeKind::IpcHandle => "ipc-handle",
            EdgeKind::IpcSend => "ipc-send",
            EdgeKind::IpcListen => "ipc-listen",
            EdgeKind::ExposesApi => "exposes-api",
            EdgeKind::UsesApi => "uses-api",
            EdgeKind::RegistersProtocol => "registers-protocol",
            EdgeKind::OpensExternal => "opens-external",
            EdgeKind::ReferencesUrl => "references-url",
            EdgeKind::LoadsNative => "loads-native",
            EdgeKind::BuildsMenu => "builds-menu",
            EdgeKind::EmbedsWebview => "embeds-webview",
            EdgeKind::UsesRemote => "uses-remote",
        }
    }
}

/// One edge. An edge whose target could not be determined keeps `to: null`
/// and says why in `unresolved`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// `jse_` + sha256(canonical {kind, from, to, location, detail}) — see [`edge_id`].
    pub edge_id: String,
    pub kind: EdgeKind,
    pub from: String,
    pub to: Option<String>,
    /// The site in the source (null for structural edges such as a
    /// package shipping a native module).
    pub location: Option<SourceLocation>,
    /// The specifier, API call (`ipcMain.handle`) or other short detail.
    pub detail: Option<String>,
    /// Why `to` is null (computed specifier, no such file, ...).
    pub unresolved: Option<String>,
}

impl Edge {
    /// The documented list order: (`kind`, `from`, `to`, `location`, `edge_id`).
    pub fn list_order(a: &Edge, b: &Edge) -> std::cmp::Ordering {
        (a.kind, &a.from, &a.to, &a.location, &a.edge_id).cmp(&(
            b.kind,
            &b.from,
            &b.to,
            &b.location,
            &b.edge_id,
        ))
    }

    pub fn new(
        kind: EdgeKind,
        from: String,
        to: Option<String>,
        location: Option<SourceLocation>,
        detail: Option<String>,
        unresolved: Option<String>,
    ) -> Edge {
        let edge_id = edge_id(
            kind,
            &from,
            to.as_deref(),
            location.as_ref(),
            detail.as_deref(),
        );
        Edge {
            edge_id,
            kind,
            from,
            to,
            location,
            detail,
            unresolved,
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// `package.json` `main` (or `index.js` when `main` is absent).
    Main,
    /// A window's preload script.
    Preload,
    /// An HTML page a window loads.
    RendererPage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryPoint {
    pub kind: EntryKind,
    pub node_id: String,
    pub path: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    High,
    Medium,
    Low,
    Info,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ObservationKind {
    /// A window with `nodeIntegration: true`.
    NodeIntegrationEnabled,
    /// A window with `contextIsolation: false`.
    ContextIsolationDisabled,
    /// A window with `sandbox: false`.
    SandboxDisabled,
    /// A window with `webSecurity: false` or `allowRunningInsecureContent: true`.
    WebSecurityDisabled,
    /// A window with `webviewTag: true`, or a `<webview>` tag.
    WebviewEnabled,
    /// The `remote` module is used.
    RemoteModule,
    /// `shell.openExternal` of a value rea cannot see (computed).
    OpenExternalDynamic,
    /// A plain `http:` URL is loaded or opened.
    InsecureUrl,
    /// A custom protocol is registered or privileged.
    CustomProtocol,
    /// A native addon ships with the application.
    NativeModule,
    /// An asar entry's integrity record disagrees with its bytes.
    IntegrityMismatch,
    /// A renderer page without a Content-Security-Policy meta tag.
    NoContentSecurityPolicy,
    /// Anything else worth telling the analyst.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    pub kind: ObservationKind,
    pub severity: Severity,
    pub node_id: Option<String>,
    pub location: Option<SourceLocation>,
    pub message: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RelationshipKind {
    /// A renderer sends on a channel a main-process handler receives.
    RendererToMain,
    /// The main process sends on a channel a renderer listens to.
    MainToRenderer,
    /// A renderer uses an API a preload script exposes.
    RendererToPreload,
    /// A window runs a preload script and loads a page.
    WindowPreloadPage,
}

/// A relationship rea derived by joining facts from different files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relationship {
    pub kind: RelationshipKind,
    /// Node ids (e.g. the sending module, the handling module).
    pub from: String,
    pub to: String,
    /// The joining node (channel, exposed API or window), if any.
    pub via: Option<String>,
    pub message: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum UnknownKind {
    /// A `require`/`import()` of a computed value.
    DynamicRequire,
    /// An IPC channel, API key or protocol given by a computed value.
    ComputedName,
    /// A relative import that names no file of the application.
    UnresolvedImport,
    /// A minified file without a readable source map.
    MinifiedWithoutSourceMap,
    /// A file the parser could not read completely.
    ParseError,
    /// A file not parsed (too large, too deeply nested, not UTF-8).
    NotParsed,
    /// A channel with senders but no handler, or handlers but no sender.
    UnpairedChannel,
    /// A limit stopped the analysis.
    LimitReached,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unknown {
    pub kind: UnknownKind,
    pub node_id: Option<String>,
    pub location: Option<SourceLocation>,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingsOmitted {
    pub observations: u64,
    pub relationships: u64,
    pub unknowns: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Findings {
    pub observations: Vec<Observation>,
    pub relationships: Vec<Relationship>,
    pub unknowns: Vec<Unknown>,
    pub omitted: FindingsOmitted,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageStatus {
    /// Every file was listed and every source file parsed without error.
    Complete,
    /// Something was skipped, unparsable or unresolved.
    Partial,
    /// A limit stopped the analysis.
    Truncated,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub status: CoverageStatus,
    /// Files listed (any kind).
    pub files_seen: u64,
    /// JavaScript/TypeScript files and HTML pages parsed.
    pub files_parsed: u64,
    /// Source files read but not parsed (encoding, nesting, parser failure).
    pub files_not_parsed: u64,
    /// Files parsed with at least one parser diagnostic.
    pub files_with_errors: u64,
    pub bytes_read: u64,
    /// Entries refused (escaping paths, out-of-archive data, symlinks), and
    /// source files refused reading (a size limit, an unsafe location).
    pub entries_refused: u64,
    /// The limit that stopped the analysis, if one did.
    pub stopped_by: Option<String>,
}

/// Counts for a quick look (all derivable from the graph).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statistics {
    /// Node count per [`NodeKind`] name.
    pub nodes_by_kind: BTreeMap<String, u64>,
    /// Edge count per [`EdgeKind`] name.
    pub edges_by_kind: BTreeMap<String, u64>,
    pub unresolved_edges: u64,
    pub source_bytes: u64,
}

/// `jsn_` id of a node: sha256 of canonical {kind, key}.
pub fn node_id(kind: NodeKind, key: &Value) -> String {
    format!(
        "jsn_{}",
        canonical_sha256(&json!({"kind": kind.as_str(), "key": key}))
    )
}

/// `jse_` id of an edge: sha256 of canonical {kind, from, to, location, detail}.
pub fn edge_id(
    kind: EdgeKind,
    from: &str,
    to: Option<&str>,
    location: Option<&SourceLocation>,
    detail: Option<&str>,
) -> String {
    format!(
        "jse_{}",
        canonical_sha256(&json!({
            "kind": kind.as_str(),
            "from": from,
            "to": to,
            "location": location,
            "detail": detail,
        }))
    )
}

/// sha256 of canonical {nodes, edges}.
pub fn graph_sha256(nodes: &[Node], edges: &[Edge]) -> String {
    canonical_sha256(&json!({"nodes": nodes, "edges": edges}))
}

/// `jsa_` id of an analysis.
pub fn analysis_id(format: InputFormat, root_sha256: &str, graph_sha256: &str) -> String {
    format!(
        "jsa_{}",
        canonical_sha256(&json!({
            "format": format.as_str(),
            "root_sha256": root_sha256,
            "graph_sha256": graph_sha256,
        }))
    )
}

/// sha256 of a directory's canonical listing of `(path, sha256)` pairs.
pub fn directory_root_sha256<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let listing: Vec<Value> = files
        .map(|(path, sha)| json!({"path": path, "sha256": sha}))
        .collect();
    canonical_sha256(&Value::Array(listing))
}

/// sha256 of bytes, as lowercase hex.
pub fn content_sha256(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}
