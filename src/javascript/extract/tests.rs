//! Fact extraction on small inline sources (exact positions) and on the
//! real electron-api-demos and electron-log fixtures.

use std::path::{Path, PathBuf};

use super::*;
use crate::javascript::facts::{ImportKind, IpcRole, Pos, PrefValue, StringHint};

fn js(source: &str) -> ModuleFacts {
    let facts = extract(source, Language::JavaScript);
    assert!(facts.parse.parsed, "not parsed: {:?}", facts.parse);
    assert_eq!(facts.parse.diagnostics, vec![], "diagnostics for {source}");
    facts
}

fn at(line: u32, column: u32) -> Pos {
    Pos { line, column }
}

fn literal(hint: &StringHint) -> Option<&str> {
    hint.literal.as_deref()
}

#[test]
fn imports_of_every_kind() {
    let facts = js(
        "import a from 'a';\nexport * from \"b\";\nexport { c } from './c';\n\
                    const d = require('d'); require.resolve('e');\nimport('f'); require(x + '.js');",
    );
    let got: Vec<(ImportKind, Option<&str>, Pos)> = facts
        .imports
        .iter()
        .map(|i| (i.kind, literal(&i.specifier), i.pos))
        .collect();
    assert_eq!(
        got,
        vec![
            (ImportKind::EsmImport, Some("a"), at(1, 1)),
            (ImportKind::EsmExportFrom, Some("b"), at(2, 1)),
            (ImportKind::EsmExportFrom, Some("./c"), at(3, 1)),
            (ImportKind::Require, Some("d"), at(4, 11)),
            (ImportKind::Require, Some("e"), at(4, 25)),
            (ImportKind::DynamicImport, Some("f"), at(5, 1)),
            (ImportKind::Require, None, at(5, 14)),
        ]
    );
    let computed = &facts.imports[6].specifier;
    assert_eq!(computed.parts, vec![".js"]);
    assert_eq!(computed.excerpt, "x + '.js'");
}

#[test]
fn native_addons_through_bindings() {
    let facts = js(
        "const b = require('bindings');\nb('addon');\nrequire('bindings')({ bindings: 'other' });\nbindings('third')",
    );
    let native: Vec<(Option<&str>, Pos)> = facts
        .imports
        .iter()
        .filter(|i| i.kind == ImportKind::Bindings)
        .map(|i| (literal(&i.specifier), i.pos))
        .collect();
    assert_eq!(
        native,
        vec![
            (Some("addon"), at(2, 1)),
            (Some("other"), at(3, 1)),
            (Some("third"), at(4, 1))
        ]
    );
}

#[test]
fn windows_with_preferences_bindings_and_loads() {
    let source = "const { BrowserWindow } = require('electron')\n\
        const opts = { width: 1, webPreferences: { nodeIntegration: true, contextIsolation: false, preload: path.join(__dirname, 'preload.js'), sandbox: flag } }\n\
        let win = new BrowserWindow(opts)\n\
        win.loadURL(`file://${__dirname}/index.html`)\n\
        this.other = new electron.BrowserView({ webPreferences: { nodeIntegration: !0, webviewTag: !1 } })\n\
        this.other.webContents.loadFile('view.html')\n\
        unknown.loadURL('https://example.com')\n";
    let facts = js(source);
    assert_eq!(facts.windows.len(), 2);
    let win = &facts.windows[0];
    assert_eq!(win.constructor, "BrowserWindow");
    assert_eq!(win.pos, at(3, 11));
    assert_eq!(win.binding.as_deref(), Some("win"));
    assert!(win.options_read);
    let prefs = &win.web_preferences;
    assert_eq!(prefs["nodeIntegration"], PrefValue::Bool(true));
    assert_eq!(prefs["contextIsolation"], PrefValue::Bool(false));
    match &prefs["preload"] {
        PrefValue::Text(hint) => assert_eq!(hint.parts, vec!["preload.js"]),
        other => panic!("preload is {other:?}"),
    }
    assert_eq!(prefs["sandbox"], PrefValue::Computed("flag".into()));
    assert_eq!(win.loads.len(), 1);
    assert_eq!(win.loads[0].method, "loadURL");
    assert_eq!(win.loads[0].pos, at(4, 1));
    assert_eq!(win.loads[0].target.parts, vec!["file://", "/index.html"]);

    let view = &facts.windows[1];
    assert_eq!(view.constructor, "BrowserView");
    assert_eq!(view.binding.as_deref(), Some("this.other"));
    assert_eq!(
        view.web_preferences["nodeIntegration"],
        PrefValue::Bool(true)
    );
    assert_eq!(view.web_preferences["webviewTag"], PrefValue::Bool(false));
    assert_eq!(view.loads.len(), 1);
    assert_eq!(literal(&view.loads[0].target), Some("view.html"));

    assert_eq!(facts.loose_loads.len(), 1);
    assert_eq!(facts.loose_loads[0].pos, at(7, 1));
    assert_eq!(
        facts
            .urls
            .iter()
            .map(|u| u.url.as_str())
            .collect::<Vec<_>>(),
        vec!["file://", "https://example.com"]
    );
}

#[test]
fn loads_join_the_nearest_preceding_window_of_their_binding() {
    let facts = js(
        "let w = new BrowserWindow()\nw.loadURL('a')\nw = new BrowserWindow({})\nw.loadURL('b')\n",
    );
    assert_eq!(facts.windows.len(), 2);
    assert!(!facts.windows[0].options_read);
    assert!(facts.windows[1].options_read);
    assert_eq!(literal(&facts.windows[0].loads[0].target), Some("a"));
    assert_eq!(literal(&facts.windows[1].loads[0].target), Some("b"));
}

#[test]
fn ipc_roles_apis_and_aliases() {
    let source = "const { ipcMain: m, ipcRenderer } = require('electron')\n\
        m.handle('get', () => 1)\n\
        require('electron').ipcMain.once('boot', f)\n\
        electron.ipcMain.on(CHANNEL, f)\n\
        ipcRenderer.invoke('get'); ipcRenderer.sendTo(1, 'to'); ipcRenderer.on('push', f)\n\
        win.webContents.send('push', 1); event.reply('r'); event.sender.send('s')\n";
    let facts = js(source);
    let got: Vec<(IpcRole, &str, Option<&str>, Pos)> = facts
        .ipc
        .iter()
        .map(|i| (i.role, i.api.as_str(), literal(&i.channel), i.pos))
        .collect();
    assert_eq!(
        got,
        vec![
            (IpcRole::Handle, "ipcMain.handle", Some("get"), at(2, 1)),
            (IpcRole::Handle, "ipcMain.once", Some("boot"), at(3, 1)),
            (IpcRole::Handle, "ipcMain.on", None, at(4, 1)),
            (IpcRole::Send, "ipcRenderer.invoke", Some("get"), at(5, 1)),
            (IpcRole::Send, "ipcRenderer.sendTo", Some("to"), at(5, 28)),
            (IpcRole::Listen, "ipcRenderer.on", Some("push"), at(5, 57)),
            (IpcRole::Send, "webContents.send", Some("push"), at(6, 1)),
            (IpcRole::Send, "event.reply", Some("r"), at(6, 34)),
            (IpcRole::Send, "event.sender.send", Some("s"), at(6, 52)),
        ]
    );
    assert_eq!(facts.ipc[2].channel.excerpt, "CHANNEL");
}

#[test]
fn exposed_apis_and_their_uses() {
    let preload =
        js("contextBridge.exposeInMainWorld('api', { send, ping() {}, version: 1, ...rest })");
    assert_eq!(preload.exposed.len(), 1);
    assert_eq!(literal(&preload.exposed[0].key), Some("api"));
    assert_eq!(preload.exposed[0].members, vec!["send", "ping", "version"]);
    assert_eq!(preload.exposed[0].pos, at(1, 1));

    let renderer = js(
        "const local = 1\nwindow.api.ping()\nconst a = window.api\nlocal.x; api.send(); console.log(1)",
    );
    let uses: Vec<(&str, Option<&str>, Pos)> = renderer
        .api_uses
        .iter()
        .map(|u| (u.object.as_str(), u.member.as_deref(), u.pos))
        .collect();
    assert_eq!(
        uses,
        vec![
            ("api", Some("ping"), at(2, 1)),
            ("api", None, at(3, 11)),
            ("api", Some("send"), at(4, 10)),
        ]
    );
}

#[test]
fn protocols_shell_and_remote() {
    let source = "protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: {} }])\n\
        protocol.registerFileProtocol('app', h); session.protocol.handle('x', h)\n\
        shell.openExternal(url); shell.openPath('/tmp')\n\
        const { remote } = require('electron'); electron.remote.getGlobal('g')\n\
        require('@electron/remote'); remote.require('fs')\n";
    let facts = js(source);
    let protocols: Vec<(&str, Option<&str>, Pos)> = facts
        .protocols
        .iter()
        .map(|p| (p.method.as_str(), literal(&p.scheme), p.pos))
        .collect();
    assert_eq!(
        protocols,
        vec![
            ("registerSchemesAsPrivileged", Some("app"), at(1, 1)),
            ("registerFileProtocol", Some("app"), at(2, 1)),
            ("handle", Some("x"), at(2, 42)),
        ]
    );
    assert_eq!(facts.open_external.len(), 2);
    assert_eq!(facts.open_external[0].target.literal, None);
    assert_eq!(facts.open_external[1].method, "openPath");
    let remote: Vec<(&str, Pos)> = facts
        .remote
        .iter()
        .map(|r| (r.api.as_str(), r.pos))
        .collect();
    assert_eq!(
        remote,
        vec![
            ("electron.remote", at(4, 9)),
            ("remote.getGlobal", at(4, 41)),
            ("electron.remote", at(4, 41)),
            ("@electron/remote", at(5, 1)),
            ("remote.require", at(5, 30)),
        ]
    );
}

#[test]
fn menus_with_labels_submenus_and_popups() {
    let source = "const sub = [{ label: 'Undo' }, { role: 'copy' }]\n\
        const template = [{ label: 'Edit', submenu: sub }, { label: 'View', submenu: [{ label: 'Reload' }] }]\n\
        const menu = Menu.buildFromTemplate(template)\n\
        Menu.setApplicationMenu(menu); menu.popup(); other.popup()\n\
        new Menu(); new Tray('icon.png')\n";
    let facts = js(source);
    let menus: Vec<(&str, Pos)> = facts
        .menus
        .iter()
        .map(|m| (m.kind.as_str(), m.pos))
        .collect();
    assert_eq!(
        menus,
        vec![
            ("build-from-template", at(3, 14)),
            ("set-application-menu", at(4, 1)),
            ("popup", at(4, 32)),
            ("new-menu", at(5, 1)),
            ("tray", at(5, 13)),
        ]
    );
    assert_eq!(
        facts.menus[0].labels,
        vec!["Edit", "Undo", "View", "Reload"]
    );
}

#[test]
fn esm_typescript_and_jsx() {
    let module = extract(
        "import { ipcRenderer as r } from 'electron'\nr.send('x')\nawait 1",
        Language::Module,
    );
    assert_eq!(module.parse.diagnostics, vec![]);
    assert_eq!(module.ipc[0].api, "ipcRenderer.send");

    let ts = extract(
        "import type { T } from 't'\nconst w: BrowserWindow = new BrowserWindow({ webPreferences: { sandbox: true } as Prefs })\nipcMain.handle('a' as const, (e: T): void => {})",
        Language::TypeScript,
    );
    assert_eq!(ts.parse.diagnostics, vec![]);
    assert!(ts.imports.is_empty(), "type-only imports are not edges");
    assert_eq!(ts.windows[0].binding.as_deref(), Some("w"));
    assert_eq!(
        ts.windows[0].web_preferences["sandbox"],
        PrefValue::Bool(true)
    );
    assert_eq!(literal(&ts.ipc[0].channel), Some("a"));

    let jsx = extract(
        "const App = () => <a href=\"https://x.org\">{window.api.v}</a>",
        Language::Jsx,
    );
    assert_eq!(jsx.parse.diagnostics, vec![]);
    assert_eq!(jsx.urls[0].url, "https://x.org");
    assert_eq!(jsx.api_uses[0].object, "api");

    // A `.js` file with JSX still parses (third configuration).
    let js_jsx = extract(
        "import React from 'react'\nexport default () => <div/>",
        Language::JavaScript,
    );
    assert_eq!(js_jsx.parse.diagnostics, vec![]);
}

#[test]
fn minified_code_and_source_maps() {
    let chunk = "var a=new BrowserWindow({webPreferences:{nodeIntegration:!0,contextIsolation:!1}});a.loadURL(\"app://index.html\");";
    let body = chunk.repeat(60);
    let source = format!("{body}\n//# sourceMappingURL=bundle.js.map\n");
    let facts = js(&source);
    assert!(facts.parse.minified);
    assert_eq!(facts.parse.source_map_url.as_deref(), Some("bundle.js.map"));
    assert_eq!(facts.windows.len(), 60);
    assert_eq!(facts.windows[1].pos, at(1, chunk.len() as u32 + 7));
    assert_eq!(
        facts.windows[0].web_preferences["contextIsolation"],
        PrefValue::Bool(false)
    );
    assert_eq!(facts.windows[59].loads.len(), 1);
    assert!(!js("a()\nb()\n").parse.minified);
}

#[test]
fn syntax_errors_are_reported_with_positions() {
    let facts = extract("ipcMain.on('a', f)\nlet = = ;\n", Language::JavaScript);
    assert!(facts.parse.parsed);
    assert!(facts.parse.diagnostics_total >= 1);
    assert_eq!(facts.parse.diagnostics[0].pos.line, 2);
    assert!(facts.parse.diagnostics.len() <= MAX_DIAGNOSTICS);
}

#[test]
fn lists_are_capped_and_the_overflow_counted() {
    use crate::javascript::facts::MAX_FACTS_PER_LIST;
    let source = format!(
        "const {{ ipcMain }} = require('electron');{}",
        "ipcMain.on('c', f);".repeat(MAX_FACTS_PER_LIST + 7)
    );
    let facts = js(&source);
    assert_eq!(facts.ipc.len(), MAX_FACTS_PER_LIST);
    assert_eq!(facts.facts_omitted, 7);
}

fn fixture(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} is absent; run tests/fixtures/fetch.sh",
            dir.display()
        );
        None
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn electron_api_demos_surfaces() {
    let Some(dir) = fixture("electron-api-demos-2.0.1") else {
        return;
    };
    let result = run_with_stack(move || {
        let async_msg = extract(
            &read(&dir.join("main-process/communication/async-msg.js")),
            Language::JavaScript,
        );
        let menu = extract(
            &read(&dir.join("main-process/menus/application-menu.js")),
            Language::JavaScript,
        );
        let main = extract(&read(&dir.join("main.js")), Language::JavaScript);
        (async_msg, menu, main)
    });
    let (async_msg, menu, main) = result.expect("extraction thread");

    // `grep -n ipcMain.on async-msg.js` → 3:ipcMain.on('asynchronous-message', ...
    let handle = &async_msg.ipc[0];
    assert_eq!(handle.role, IpcRole::Handle);
    assert_eq!(handle.api, "ipcMain.on");
    assert_eq!(literal(&handle.channel), Some("asynchronous-message"));
    assert_eq!(handle.pos, at(3, 1));
    // `event.sender.send('asynchronous-reply', 'pong')` on line 4, column 3.
    assert_eq!(async_msg.ipc[1].api, "event.sender.send");
    assert_eq!(async_msg.ipc[1].pos, at(4, 3));

    let built = menu
        .menus
        .iter()
        .find(|m| m.kind == "build-from-template")
        .expect("a menu built from a template");
    assert!(
        built.labels.iter().any(|l| l == "Edit"),
        "{:?}",
        built.labels
    );
    assert!(
        built.labels.iter().any(|l| l == "View"),
        "{:?}",
        built.labels
    );
    assert_eq!(built.pos, at(228, 16));

    assert_eq!(main.windows.len(), 1);
    let window = &main.windows[0];
    assert_eq!(window.binding.as_deref(), Some("mainWindow"));
    assert_eq!(window.pos, at(35, 18));
    assert!(window.options_read);
    assert_eq!(window.loads.len(), 1);
    assert!(
        window.loads[0]
            .target
            .parts
            .iter()
            .any(|p| p == "/index.html")
    );
    let glob_require = main
        .imports
        .iter()
        .find(|i| i.kind == ImportKind::Require && i.specifier.excerpt == "file")
        .expect("the glob-based require(file)");
    assert_eq!(glob_require.specifier.literal, None);
    assert_eq!(glob_require.pos, at(90, 29));
}

fn js_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            js_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "js") {
            out.push(path);
        }
    }
}

#[test]
fn real_world_files_parse_without_diagnostics() {
    let mut files = Vec::new();
    for name in ["electron-api-demos-2.0.1", "electron-log-5.0.0"] {
        if let Some(dir) = fixture(name) {
            js_files(&dir, &mut files);
        }
    }
    if files.is_empty() {
        return;
    }
    let failures = run_with_stack(move || {
        let mut failures = Vec::new();
        for file in &files {
            let facts = extract(&read(file), Language::JavaScript);
            if !facts.parse.parsed
                || facts.parse.diagnostics_total > 0
                || facts.parse.walk_truncated
            {
                failures.push(format!("{}: {:?}", file.display(), facts.parse));
            }
        }
        (files.len(), failures)
    });
    let (count, failures) = failures.expect("extraction thread");
    assert!(count > 20, "only {count} files");
    assert!(failures.is_empty(), "{failures:#?}");
}
