//! Pass 2: the facts themselves, read node by node as the walk enters them.
//! Everything is recognised by name through member chains (see
//! [`Names::tail`](super::names::Names::tail)), never by type: rea reads code
//! it cannot run or type-check.

use std::collections::BTreeMap;

use oxc_ast::ast::{
    Argument, ArrayExpressionElement, BindingPattern, CallExpression, Expression,
    ImportDeclaration, ImportExpression, NewExpression, ObjectExpression, ObjectPropertyKind,
    StaticMemberExpression, StringLiteral, UnaryOperator, VariableDeclarator,
};

use super::names::{Names, path_of, required_call_module};
use super::strings::{argument_hint, clip, hint, property_name, source_excerpt, static_value};
use super::urls::find_urls;
use super::walker::{PendingLoad, Walker, add};
use crate::javascript::facts::{
    ApiUseFact, ExposeFact, ImportFact, ImportKind, IpcFact, IpcRole, LoadFact, MAX_FACTS_PER_LIST,
    MenuFact, OpenExternalFact, PrefValue, ProtocolFact, RemoteFact, StringHint, UrlFact,
    WindowFact,
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

/// Deepest `submenu` nesting read for menu labels.
const MAX_MENU_DEPTH: usize = 16;

const IPC_MAIN_RECEIVE: &[&str] = &["handle", "handleOnce", "on", "once", "addListener"];
const IPC_RENDERER_SEND: &[&str] = &["send", "invoke", "sendSync", "sendToHost", "postMessage"];
const IPC_RENDERER_LISTEN: &[&str] = &["on", "once", "addListener"];
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
                let target = first
                    .map(|a| argument_hint(a, self.source))
                    .unwrap_or_default();
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
                let target = first
                    .map(|a| argument_hint(a, self.source))
                    .unwrap_or_default();
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
        let specifier = argument_hint(argument, self.source);
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
            .map(|a| argument_hint(a, self.source))
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
            .map(|a| argument_hint(a, self.source))
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
                        schemes.push(hint(value, self.source));
                    }
                }
            }
        } else if let Some(first) = call.arguments.first() {
            schemes.push(argument_hint(first, self.source));
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

    fn menu(&mut self, kind: &str, labels: Vec<String>, offset: u32) {
        let pos = self.pos(offset);
        let facts = &mut self.facts;
        let fact = MenuFact {
            kind: kind.to_owned(),
            labels,
            pos,
        };
        add(&mut facts.menus, &mut facts.facts_omitted, fact);
    }

    /// `label`s of a template (literal or same-file array), submenus
    /// included, in source order (depth first, as the menu shows them).
    fn menu_labels(&mut self, template: &Expression<'a>) -> Vec<String> {
        enum Work<'x, 'a> {
            Template(&'x Expression<'a>, usize),
            Item(&'x ObjectExpression<'a>, usize),
        }
        let mut labels = Vec::new();
        let mut work = vec![Work::Template(template, 0)];
        while let Some(next) = work.pop() {
            match next {
                Work::Template(expr, depth) => {
                    if depth > MAX_MENU_DEPTH {
                        continue;
                    }
                    let array = match expr.get_inner_expression() {
                        Expression::ArrayExpression(array) => array,
                        Expression::Identifier(id) => {
                            match self.names.literals.get(id.name.as_str()) {
                                Some(Expression::ArrayExpression(array)) => array,
                                _ => continue,
                            }
                        }
                        _ => continue,
                    };
                    for element in array.elements.iter().rev() {
                        if let ArrayExpressionElement::ObjectExpression(item) = element {
                            work.push(Work::Item(item, depth));
                        }
                    }
                }
                Work::Item(item, depth) => {
                    if let Some(label) = property_value(item, "label").and_then(static_value) {
                        add(&mut labels, &mut self.facts.facts_omitted, clip(&label));
                    }
                    if let Some(submenu) = property_value(item, "submenu") {
                        work.push(Work::Template(submenu, depth + 1));
                    }
                }
            }
        }
        labels
    }

    pub(crate) fn new_expression(&mut self, new: &NewExpression<'a>) {
        let Some(constructor) = self.names.tail(&new.callee).map(str::to_owned) else {
            return;
        };
        let start = new.span.start;
        match constructor.as_str() {
            "BrowserWindow" | "BrowserView" => self.window(new, constructor),
            "Menu" => self.menu("new-menu", Vec::new(), start),
            "Tray" => self.menu("tray", Vec::new(), start),
            _ => {}
        }
    }

    fn window(&mut self, new: &NewExpression<'a>, constructor: String) {
        let options = new
            .arguments
            .first()
            .and_then(Argument::as_expression)
            .and_then(|options| object_literal(&self.names, options));
        let mut web_preferences = BTreeMap::new();
        if let Some(preferences) = options
            .and_then(|options| property_value(options, "webPreferences"))
            .and_then(|value| object_literal(&self.names, value))
        {
            for property in &preferences.properties {
                let ObjectPropertyKind::ObjectProperty(p) = property else {
                    continue;
                };
                let Some(name) = property_name(&p.key) else {
                    continue;
                };
                if web_preferences.len() >= MAX_FACTS_PER_LIST {
                    self.facts.facts_omitted += 1;
                    continue;
                }
                web_preferences.insert(clip(&name), self.pref_value(&p.value));
            }
        }
        let fact = WindowFact {
            constructor,
            pos: self.pos(new.span.start),
            binding: self.window_bindings.get(&new.span.start).map(|b| clip(b)),
            options_read: options.is_some(),
            web_preferences,
            loads: Vec::new(),
        };
        let facts = &mut self.facts;
        add(&mut facts.windows, &mut facts.facts_omitted, fact);
    }

    /// A preference value as written (`!0`/`!1` are minified booleans).
    fn pref_value(&self, value: &Expression<'a>) -> PrefValue {
        match value.get_inner_expression() {
            Expression::BooleanLiteral(b) => return PrefValue::Bool(b.value),
            Expression::UnaryExpression(unary) if unary.operator == UnaryOperator::LogicalNot => {
                if let Expression::NumericLiteral(n) = unary.argument.get_inner_expression() {
                    return PrefValue::Bool(n.value == 0.0);
                }
            }
            _ => {}
        }
        let text = hint(value, self.source);
        if text.literal.is_some() || !text.parts.is_empty() {
            PrefValue::Text(text)
        } else {
            PrefValue::Computed(text.excerpt)
        }
    }

    /// `window.X.Y` / `window.X`, and `X.Y` for undeclared `X`.
    pub(crate) fn member(&mut self, member: &StaticMemberExpression<'a>) {
        let property = member.property.name.as_str();
        let object = member.object.get_inner_expression();
        let use_of = match object {
            Expression::StaticMemberExpression(inner) if inner.object.is_specific_id("window") => {
                self.consumed_member = Some(inner.span.start);
                Some((inner.property.name.as_str(), Some(property)))
            }
            Expression::Identifier(id) if id.name.as_str() == "window" => {
                if self.consumed_member == Some(member.span.start) {
                    None
                } else {
                    Some((property, None))
                }
            }
            Expression::Identifier(id) => {
                let name = id.name.as_str();
                (!self.names.declared.contains(name) && !GLOBALS.contains(&name))
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

/// The value of property `name` in an object literal (first match).
fn property_value<'x, 'a>(
    object: &'x ObjectExpression<'a>,
    name: &str,
) -> Option<&'x Expression<'a>> {
    object
        .properties
        .iter()
        .find_map(|property| match property {
            ObjectPropertyKind::ObjectProperty(p)
                if property_name(&p.key).as_deref() == Some(name) =>
            {
                Some(&p.value)
            }
            _ => None,
        })
}

/// An object literal written in place or bound to a same-file name.
fn object_literal<'x, 'a: 'x>(
    names: &Names<'a>,
    expr: &'x Expression<'a>,
) -> Option<&'x ObjectExpression<'a>> {
    match expr.get_inner_expression() {
        Expression::ObjectExpression(object) => Some(object),
        Expression::Identifier(id) => match names.literals.get(id.name.as_str()) {
            Some(Expression::ObjectExpression(object)) => Some(object),
            _ => None,
        },
        _ => None,
    }
}
