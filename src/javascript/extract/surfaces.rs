//! Pass 2: the facts themselves, read node by node as the walk enters them.
//! Everything is recognised by name through member chains (see
//! [`Names::tail`](super::names::Names::tail)), never by type: rea reads code
//! it cannot run or type-check.

use oxc_ast::ast::{
    Argument, BindingPattern, CallExpression, Expression, ImportDeclaration, ImportExpression,
    ObjectPropertyKind, StaticMemberExpression, StringLiteral, TSImportEqualsDeclaration,
    TSModuleReference, VariableDeclarator,
};
use oxc_span::GetSpan;

use super::names::{path_of, required_call_module};
use super::strings::{argument_hint, clip, hint, property_name, source_excerpt};
use super::urls::find_urls;
use super::walker::{PendingLoad, Walker, add};
use super::windows::{object_literal, property_value};
use crate::javascript::facts::{
    ApiUseFact, ExposeFact, ImportFact, ImportKind, IpcFact, IpcRole, LoadFact, OpenExternalFact,
    ProtocolFact, RemoteFact, StringHint, UrlFact,
};

/// Globals whose members are never an exposed API (keeps `api_uses` useful).
const GLOBALS: &[&str] = &[
    "console",
    "process",
    "Math",
    "JSON",
    "Object",
    "Array",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "Promise",
    "Reflect",
    "Date",
    "RegExp",
    "Error",
    "Intl",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "Buffer",
    "document",
    "navigator",
    "location",
    "history",
    "module",
    "exports",
    "require",
    "global",
    "globalThis",
    "self",
    "window",
    "__dirname",
    "__filename",
    "localStorage",
    "sessionStorage",
    "performance",
    "crypto",
    "URL",
    "Atomics",
    "BigInt",
    "Proxy",
];

const IPC_MAIN_RECEIVE: &[&str] = &["handle", "handleOnce", "on", "once", "addListener"];
const IPC_RENDERER_SEND: &[&str] = &["send", "invoke", "sendSync", "sendToHost", "postMessage"];
const IPC_RENDERER_LISTEN: &[&str] = &["on", "once", "addListener"];
/// `window` members of the platform, never an exposed API.
const WINDOW_BUILTINS: &[&str] = &[
    "addEventListener",
    "removeEventListener",
    "dispatchEvent",
    "location",
    "document",
    "navigator",
    "history",
    "localStorage",
    "sessionStorage",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "requestAnimationFrame",
    "cancelAnimationFrame",
    "innerWidth",
    "innerHeight",
    "outerWidth",
    "outerHeight",
    "devicePixelRatio",
    "open",
    "close",
    "alert",
    "confirm",
    "prompt",
    "postMessage",
    "getComputedStyle",
    "matchMedia",
    "scrollTo",
    "scrollX",
    "scrollY",
    "fetch",
    "crypto",
    "performance",
    "console",
    "screen",
    "onload",
    "onerror",
    "onbeforeunload",
    "onresize",
    "opener",
    "parent",
    "top",
    "self",
    "frames",
    "origin",
    "isSecureContext",
    "indexedDB",
    "caches",
    "Notification",
];
/// Identifiers commonly naming the IPC event argument (`event.reply`).
const EVENT_NAMES: &[&str] = &["event", "e", "ev", "evt", "_event", "_e", "ipcEvent"];

fn is_protocol_method(method: &str) -> bool {
    method == "handle"
        || method == "registerSchemesAsPrivileged"
        || (method.starts_with("register") || method.starts_with("intercept"))
            && method.ends_with("Protocol")
}

impl<'a> Walker<'a, '_> {
    fn import(&mut self, kind: ImportKind, specifier: StringHint, offset: u32) {
        let pos = self.pos(offset);
        let facts = &mut self.facts;
        add(
            &mut facts.imports,
            &mut facts.facts_omitted,
            ImportFact {
                kind,
                specifier,
                pos,
            },
        );
    }

    fn remote(&mut self, api: &str, offset: u32) {
        let pos = self.pos(offset);
        let facts = &mut self.facts;
        add(
            &mut facts.remote,
            &mut facts.facts_omitted,
            RemoteFact {
                api: api.to_owned(),
                pos,
            },
        );
    }

    /// The hint of a value; a name bound once by `const` is read through
    /// to its initializer (one step), keeping the name as the excerpt.
    pub(crate) fn value_hint(&self, expr: &Expression<'a>) -> StringHint {
        if let Expression::Identifier(id) = expr.get_inner_expression()
            && let Some(init) = self.names.constant(id.name.as_str())
        {
            return StringHint {
                excerpt: source_excerpt(self.source, expr.span()),
                ..hint(init, self.source)
            };
        }
        hint(expr, self.source)
    }

    fn arg_hint(&self, argument: &Argument<'a>) -> StringHint {
        match argument.as_expression() {
            Some(expr) => self.value_hint(expr),
            None => argument_hint(argument, self.source),
        }
    }

    fn literal_hint(&self, literal: &StringLiteral<'_>) -> StringHint {
        StringHint {
            literal: Some(clip(literal.value.as_str())),
            parts: Vec::new(),
            excerpt: source_excerpt(self.source, literal.span),
        }
    }

    pub(crate) fn import_declaration(&mut self, import: &ImportDeclaration<'a>) {
        if import.import_kind.is_type() {
            return;
        }
        let module = import.source.value.as_str();
        if module.starts_with("@electron/remote") {
            self.remote("@electron/remote", import.span.start);
        }
        if module == "electron"
            && let Some(specifiers) = &import.specifiers
        {
            for specifier in specifiers {
                if let oxc_ast::ast::ImportDeclarationSpecifier::ImportSpecifier(named) = specifier
                    && named.imported.name().as_str() == "remote"
                {
                    self.remote("electron.remote", named.span.start);
                }
            }
        }
        let hint = self.literal_hint(&import.source);
        self.import(ImportKind::EsmImport, hint, import.span.start);
    }

    pub(crate) fn esm_export(&mut self, source: &StringLiteral<'a>, offset: u32) {
        let hint = self.literal_hint(source);
        self.import(ImportKind::EsmExportFrom, hint, offset);
    }

    /// TypeScript's `import x = require('m')`: a CommonJS require.
    pub(crate) fn import_equals(&mut self, import: &TSImportEqualsDeclaration<'a>) {
        if let TSModuleReference::ExternalModuleReference(reference) = &import.module_reference
            && !import.import_kind.is_type()
        {
            let hint = self.literal_hint(&reference.expression);
            self.import(ImportKind::Require, hint, import.span.start);
        }
    }

    pub(crate) fn dynamic_import(&mut self, import: &ImportExpression<'a>) {
        let hint = hint(&import.source, self.source);
        self.import(ImportKind::DynamicImport, hint, import.span.start);
    }

    /// `const { remote } = require('electron')`.
    pub(crate) fn destructured_remote(&mut self, declarator: &VariableDeclarator<'a>) {
        let (BindingPattern::ObjectPattern(pattern), Some(init)) =
            (&declarator.id, &declarator.init)
        else {
            return;
        };
        if !self.names.stands_for_electron(init) {
            return;
        }
        for property in &pattern.properties {
            if property_name(&property.key).as_deref() == Some("remote") {
                self.remote("electron.remote", property.span.start);
            }
        }
    }

    pub(crate) fn call(&mut self, call: &CallExpression<'a>) {
        let callee = call.callee.get_inner_expression();
        let first = call.arguments.first();
        match callee {
            Expression::Identifier(id) => {
                let name = self.names.canonical(id.name.as_str());
                if name == "require" && first.is_some() {
                    self.require(call, ImportKind::Require);
                } else if name == "bindings" && first.is_some() {
                    self.bindings(call);
                }
                return;
            }
            Expression::CallExpression(inner)
                if required_call_module(inner).as_deref() == Some("bindings") =>
            {
                // `require('bindings')('addon')`
                self.bindings(call);
                return;
            }
            _ => {}
        }
        let Some(member) = callee.as_member_expression() else {
            return;
        };
        let Some(method) = member.static_property_name() else {
            return;
        };
        let object = member.object();
        if method == "resolve" && object.is_specific_id("require") && first.is_some() {
            self.require(call, ImportKind::Require);
            return;
        }
        let tail = self.names.tail(object).map(str::to_owned);
        let tail = tail.as_deref();
        let start = call.span.start;
        match (tail, method) {
            (Some("ipcMain"), m) if IPC_MAIN_RECEIVE.contains(&m) => {
                self.ipc(IpcRole::Handle, format!("ipcMain.{m}"), call, 0);
            }
            (Some("ipcRenderer"), m) if IPC_RENDERER_SEND.contains(&m) => {
                self.ipc(IpcRole::Send, format!("ipcRenderer.{m}"), call, 0);
            }
            (Some("ipcRenderer"), "sendTo") => {
                self.ipc(IpcRole::Send, "ipcRenderer.sendTo".to_owned(), call, 1);
            }
            (Some("ipcRenderer"), m) if IPC_RENDERER_LISTEN.contains(&m) => {
                self.ipc(IpcRole::Listen, format!("ipcRenderer.{m}"), call, 0);
            }
            (Some("webContents"), "send") => {
                self.ipc(IpcRole::Send, "webContents.send".to_owned(), call, 0);
            }
            (Some("sender"), "send") => {
                self.ipc(IpcRole::Send, "event.sender.send".to_owned(), call, 0);
            }
            (Some(name), "reply") if EVENT_NAMES.contains(&name) => {
                self.ipc(IpcRole::Send, "event.reply".to_owned(), call, 0);
            }
            (Some("contextBridge"), "exposeInMainWorld") => self.expose(call),
            (Some("protocol"), m) if is_protocol_method(m) => self.protocol(call, m),
            (Some("shell"), "openExternal" | "openPath" | "openItem") => {
                let target = first.map(|a| self.arg_hint(a)).unwrap_or_default();
                let pos = self.pos(start);
                let facts = &mut self.facts;
                let fact = OpenExternalFact {
                    method: method.to_owned(),
                    target,
                    pos,
                };
                add(&mut facts.open_external, &mut facts.facts_omitted, fact);
            }
            (Some("remote"), "require" | "getGlobal") => {
                self.remote(&format!("remote.{method}"), start);
            }
            (Some("Menu"), "buildFromTemplate") => {
                let labels = first
                    .and_then(Argument::as_expression)
                    .map(|template| self.menu_labels(template))
                    .unwrap_or_default();
                self.menu("build-from-template", labels, start);
            }
            (Some("Menu"), "setApplicationMenu") => {
                self.menu("set-application-menu", Vec::new(), start);
            }
            (_, "popup") if path_of(object).is_some_and(|p| self.names.menus.contains(&p)) => {
                self.menu("popup", Vec::new(), start);
            }
            (_, "loadURL" | "loadFile") => {
                let target = first.map(|a| self.arg_hint(a)).unwrap_or_default();
                let window = match object.get_inner_expression().as_member_expression() {
                    Some(inner) if inner.static_property_name() == Some("webContents") => {
                        inner.object()
                    }
                    _ => object,
                };
                let load = LoadFact {
                    method: method.to_owned(),
                    target,
                    pos: self.pos(start),
                };
                self.loads.push(PendingLoad {
                    binding: path_of(window),
                    load,
                });
            }
            _ => {}
        }
    }

    fn require(&mut self, call: &CallExpression<'a>, kind: ImportKind) {
        let Some(argument) = call.arguments.first() else {
            return;
        };
        let specifier = self.arg_hint(argument);
        if specifier
            .literal
            .as_deref()
            .is_some_and(|m| m.starts_with("@electron/remote"))
        {
            self.remote("@electron/remote", call.span.start);
        }
        self.import(kind, specifier, call.span.start);
    }

    /// `bindings('addon')` or `bindings({ bindings: 'addon' })`.
    fn bindings(&mut self, call: &CallExpression<'a>) {
        let Some(argument) = call.arguments.first() else {
            return;
        };
        let specifier = match argument
            .as_expression()
            .map(Expression::get_inner_expression)
        {
            Some(Expression::ObjectExpression(object)) => object
                .properties
                .iter()
                .find_map(|property| match property {
                    ObjectPropertyKind::ObjectProperty(p)
                        if property_name(&p.key).as_deref() == Some("bindings") =>
                    {
                        Some(hint(&p.value, self.source))
                    }
                    _ => None,
                })
                .unwrap_or_else(|| argument_hint(argument, self.source)),
            _ => argument_hint(argument, self.source),
        };
        self.import(ImportKind::Bindings, specifier, call.span.start);
    }

    fn ipc(&mut self, role: IpcRole, api: String, call: &CallExpression<'a>, index: usize) {
        let channel = call
            .arguments
            .get(index)
            .map(|a| self.arg_hint(a))
            .unwrap_or_default();
        let pos = self.pos(call.span.start);
        let facts = &mut self.facts;
        add(
            &mut facts.ipc,
            &mut facts.facts_omitted,
            IpcFact {
                role,
                api,
                channel,
                pos,
            },
        );
    }

    fn expose(&mut self, call: &CallExpression<'a>) {
        let key = call
            .arguments
            .first()
            .map(|a| self.arg_hint(a))
            .unwrap_or_default();
        let mut members = Vec::new();
        let object = call
            .arguments
            .get(1)
            .and_then(Argument::as_expression)
            .and_then(|api| object_literal(&self.names, api));
        if let Some(object) = object {
            for property in &object.properties {
                if let ObjectPropertyKind::ObjectProperty(p) = property
                    && let Some(name) = property_name(&p.key)
                {
                    add(&mut members, &mut self.facts.facts_omitted, clip(&name));
                }
            }
        }
        let pos = self.pos(call.span.start);
        let facts = &mut self.facts;
        add(
            &mut facts.exposed,
            &mut facts.facts_omitted,
            ExposeFact { key, members, pos },
        );
    }

    fn protocol(&mut self, call: &CallExpression<'a>, method: &str) {
        let pos = self.pos(call.span.start);
        let mut schemes = Vec::new();
        if method == "registerSchemesAsPrivileged" {
            // `[{ scheme: 'app', privileges: {...} }, ...]`
            if let Some(Expression::ArrayExpression(array)) = call
                .arguments
                .first()
                .and_then(Argument::as_expression)
                .map(Expression::get_inner_expression)
            {
                for element in &array.elements {
                    if let Some(Expression::ObjectExpression(object)) = element
                        .as_expression()
                        .map(Expression::get_inner_expression)
                        && let Some(value) = property_value(object, "scheme")
                    {
                        schemes.push(self.value_hint(value));
                    }
                }
            }
        } else if let Some(first) = call.arguments.first() {
            schemes.push(self.arg_hint(first));
        }
        for scheme in schemes {
            let fact = ProtocolFact {
                method: method.to_owned(),
                scheme,
                pos,
            };
            let facts = &mut self.facts;
            add(&mut facts.protocols, &mut facts.facts_omitted, fact);
        }
    }

    /// `window.X.Y` / `window.X`, and `X.Y` for undeclared `X`.
    pub(crate) fn member(&mut self, member: &StaticMemberExpression<'a>) {
        let property = member.property.name.as_str();
        let object = member.object.get_inner_expression();
        let use_of = match object {
            Expression::StaticMemberExpression(inner)
                if inner.object.is_specific_id("window")
                    && !WINDOW_BUILTINS.contains(&inner.property.name.as_str()) =>
            {
                self.consumed_member = Some(inner.span.start);
                Some((inner.property.name.as_str(), Some(property)))
            }
            Expression::Identifier(id) if id.name.as_str() == "window" => {
                if self.consumed_member == Some(member.span.start)
                    || WINDOW_BUILTINS.contains(&property)
                {
                    None
                } else {
                    Some((property, None))
                }
            }
            Expression::Identifier(id) => {
                let name = id.name.as_str();
                (!self.names.declared.contains_key(name) && !GLOBALS.contains(&name))
                    .then_some((name, Some(property)))
            }
            _ => None,
        };
        if let Some((object, member_name)) = use_of {
            let fact = ApiUseFact {
                object: clip(object),
                member: member_name.map(clip),
                pos: self.pos(member.span.start),
            };
            let facts = &mut self.facts;
            add(&mut facts.api_uses, &mut facts.facts_omitted, fact);
        }
        // `electron.remote`, `require('electron').remote`
        if property == "remote" && self.names.stands_for_electron(&member.object) {
            self.remote("electron.remote", member.span.start);
        }
    }

    pub(crate) fn urls_in(&mut self, text: &str, offset: u32) {
        if !text.contains("://") {
            return;
        }
        let pos = self.pos(offset);
        for url in find_urls(text) {
            let facts = &mut self.facts;
            add(
                &mut facts.urls,
                &mut facts.facts_omitted,
                UrlFact {
                    url: clip(url),
                    pos,
                },
            );
        }
    }
}
