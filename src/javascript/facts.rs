//! What the extractor reads from one source text: the per-file facts the
//! graph builder joins across files. Positions are 1-based line and
//! character column within the text handed to the extractor (the builder
//! shifts them for inline `<script>` blocks).
//!
//! Every list is capped at [`MAX_FACTS_PER_LIST`] (the overflow is counted
//! in [`ModuleFacts::facts_omitted`]) and every string at
//! [`super::model::EXCERPT_CHARS`] characters, so a hostile file cannot
//! make the facts larger than a bounded multiple of the limits.

use std::collections::BTreeMap;

/// Most entries in one facts list of one file.
pub const MAX_FACTS_PER_LIST: usize = 5_000;

/// A 1-based (line, character column) position in the extracted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A string-valued argument as far as static reading can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StringHint {
    /// The whole value when it is static: a string literal, a template
    /// without expressions, or a `+` concatenation of those.
    pub literal: Option<String>,
    /// The static fragments of a partly computed value, in order (e.g. for
    /// `path.join(__dirname, 'index.html')`: `["index.html"]`).
    pub parts: Vec<String>,
    /// The argument's source text, bounded.
    pub excerpt: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// `import x from 's'`, `import 's'`.
    EsmImport,
    /// `export * from 's'`, `export {x} from 's'`.
    EsmExportFrom,
    /// `require('s')` (also `require.resolve('s')`).
    Require,
    /// `import('s')`.
    DynamicImport,
    /// `bindings('name')` / `require('bindings')('name')`: a native addon by name.
    Bindings,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportFact {
    pub kind: ImportKind,
    /// `literal` set when the specifier is static.
    pub specifier: StringHint,
    pub pos: Pos,
}

/// `win.loadURL(x)` / `win.loadFile(x)` (or on `win.webContents`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFact {
    /// `loadURL` or `loadFile`.
    pub method: String,
    pub target: StringHint,
    pub pos: Pos,
}

/// A boolean-ish web preference as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefValue {
    Bool(bool),
    /// A string value (e.g. `preload`, `partition`).
    Text(StringHint),
    /// Present but computed; the excerpt.
    Computed(String),
}

/// `new BrowserWindow(opts)` / `new BrowserView(opts)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowFact {
    /// `BrowserWindow` or `BrowserView`.
    pub constructor: String,
    pub pos: Pos,
    /// The variable or property the window was assigned to (`mainWindow`,
    /// `this.win`), used to join loads in the same file.
    pub binding: Option<String>,
    /// True when the options argument is an object literal rea could read
    /// (possibly through a same-file `const opts = {...}`).
    pub options_read: bool,
    /// `webPreferences` entries by name (e.g. `nodeIntegration`, `preload`).
    pub web_preferences: BTreeMap<String, PrefValue>,
    /// Loads joined to this window by binding in the same file.
    pub loads: Vec<LoadFact>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcRole {
    /// `ipcMain.handle/handleOnce/on/once` — the main process receives.
    Handle,
    /// `ipcRenderer.send/invoke/sendSync/sendTo/sendToHost`,
    /// `webContents.send`, `win.webContents.send` — a message leaves.
    Send,
    /// `ipcRenderer.on/once/addListener` — the renderer receives.
    Listen,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpcFact {
    pub role: IpcRole,
    /// The call as written, normalised to `object.method`
    /// (e.g. `ipcMain.handle`, `ipcRenderer.invoke`, `webContents.send`).
    pub api: String,
    pub channel: StringHint,
    pub pos: Pos,
}

/// `contextBridge.exposeInMainWorld(key, api)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposeFact {
    pub key: StringHint,
    /// Top-level member names of the exposed object literal, when readable.
    pub members: Vec<String>,
    pub pos: Pos,
}

/// `window.<object>.<member>` or a bare `<object>.<member>` read in this
/// file, for joining with exposed APIs (only identifiers that are not
/// declared in the file are reported bare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiUseFact {
    pub object: String,
    pub member: Option<String>,
    pub pos: Pos,
}

/// `protocol.registerFileProtocol/registerHttpProtocol/registerStringProtocol/
/// registerBufferProtocol/registerStreamProtocol/handle/interceptXProtocol`
/// and `protocol.registerSchemesAsPrivileged([{scheme}])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolFact {
    pub method: String,
    pub scheme: StringHint,
    pub pos: Pos,
}

/// `shell.openExternal(x)` / `shell.openPath(x)` / `shell.openItem(x)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenExternalFact {
    pub method: String,
    pub target: StringHint,
    pub pos: Pos,
}

/// A string literal (or template quasi) that holds a URL with a scheme
/// among http, https, ws, wss, file, ftp, or a custom `x-...:`/`app:` one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlFact {
    pub url: String,
    pub pos: Pos,
}

/// `Menu.buildFromTemplate(t)`, `new Menu()`, `Menu.setApplicationMenu(m)`,
/// `new Tray(icon)`, `menu.popup()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuFact {
    /// `build-from-template`, `new-menu`, `set-application-menu`, `tray`, `popup`.
    pub kind: String,
    /// `label` strings of the template's items (nested submenus included),
    /// when the template is a literal in the same file.
    pub labels: Vec<String>,
    pub pos: Pos,
}

/// `electron.remote`, `require('@electron/remote')`, `remote.require(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFact {
    pub api: String,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub pos: Pos,
}

/// How the parse went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParseOutcome {
    /// True when the parser produced a program (possibly with diagnostics).
    pub parsed: bool,
    /// Parser diagnostics, the first few.
    pub diagnostics: Vec<Diagnostic>,
    pub diagnostics_total: u64,
    /// Why the text was not parsed at all (too deeply nested, ...).
    pub not_parsed: Option<String>,
    /// Heuristic: long lines and few newlines.
    pub minified: bool,
    /// The `//# sourceMappingURL=` value, if present.
    pub source_map_url: Option<String>,
    /// True when a nesting guard stopped the walk of part of the tree.
    pub walk_truncated: bool,
}

/// Everything read from one source text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModuleFacts {
    pub parse: ParseOutcome,
    pub imports: Vec<ImportFact>,
    pub windows: Vec<WindowFact>,
    /// Loads that could not be joined to a window in this file.
    pub loose_loads: Vec<LoadFact>,
    pub ipc: Vec<IpcFact>,
    pub exposed: Vec<ExposeFact>,
    pub api_uses: Vec<ApiUseFact>,
    pub protocols: Vec<ProtocolFact>,
    pub open_external: Vec<OpenExternalFact>,
    pub urls: Vec<UrlFact>,
    pub menus: Vec<MenuFact>,
    pub remote: Vec<RemoteFact>,
    /// Facts dropped past [`MAX_FACTS_PER_LIST`], all lists together.
    pub facts_omitted: u64,
}

/// The source language, from the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// `.js`, `.cjs`: script or module, whichever parses.
    JavaScript,
    /// `.mjs`: an ES module.
    Module,
    Jsx,
    TypeScript,
    Tsx,
}

impl Language {
    /// Every language, for tests and fuzzing that try a text as each.
    pub const ALL: [Language; 5] = [
        Language::JavaScript,
        Language::Module,
        Language::Jsx,
        Language::TypeScript,
        Language::Tsx,
    ];

    /// The language of a logical path, or `None` when it is not source.
    pub fn of_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "js" | "cjs" => Language::JavaScript,
            "mjs" => Language::Module,
            "jsx" => Language::Jsx,
            "ts" | "mts" | "cts" => {
                if path.to_ascii_lowercase().ends_with(".d.ts") {
                    return None;
                }
                Language::TypeScript
            }
            "tsx" => Language::Tsx,
            _ => return None,
        })
    }
}
