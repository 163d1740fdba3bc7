//! Pass 1: what the file declares, before any fact is read.
//!
//! Electron surfaces are recognised by name (`ipcMain.on`), but code renames
//! them (`const { ipcMain: m } = require('electron')`, `import * as e from
//! 'electron'`) and keeps window options and menu templates in variables.
//! A first walk collects, file-wide and without scopes (a cheap, documented
//! approximation): every declared name, the local aliases of Electron
//! exports, the object and array literals bound to names, and the names
//! menus built from templates are assigned to.

use std::collections::{HashMap, HashSet};

use oxc_ast::ast::{
    BindingPattern, CallExpression, Expression, ImportDeclaration, ImportDeclarationSpecifier,
    VariableDeclarator,
};

use super::strings::{property_name, static_value};

/// What pass 1 learned about names.
#[derive(Default)]
pub(crate) struct Names<'a> {
    /// Every binding identifier of the file.
    pub declared: HashSet<&'a str>,
    /// Local name → the export it stands for (`m` → `ipcMain`,
    /// `electron` namespace → `electron`, `@electron/remote` → `remote`).
    pub aliases: HashMap<&'a str, String>,
    /// Name → the object or array literal first bound to it.
    pub literals: HashMap<&'a str, &'a Expression<'a>>,
    /// Bindings (`menu`, `this.menu`) of `Menu.buildFromTemplate(...)` results.
    pub menus: HashSet<String>,
}

/// The module name of `require('x')` with a static argument.
pub(crate) fn required_module(expr: &Expression<'_>) -> Option<String> {
    match expr.get_inner_expression() {
        Expression::CallExpression(call) => required_call_module(call),
        _ => None,
    }
}

/// The module name of a `require('x')` call with a static argument.
pub(crate) fn required_call_module(call: &CallExpression<'_>) -> Option<String> {
    if !call.callee.is_specific_id("require") || call.arguments.len() != 1 {
        return None;
    }
    static_value(call.arguments[0].as_expression()?)
}

/// What a module stands for when it is bound to a name.
fn module_alias(module: &str) -> Option<&'static str> {
    match module {
        "electron" | "electron/main" | "electron/renderer" | "electron/common" => Some("electron"),
        "@electron/remote" | "@electron/remote/main" | "@electron/remote/renderer" => {
            Some("remote")
        }
        "bindings" => Some("bindings"),
        _ => None,
    }
}

impl<'a> Names<'a> {
    /// The export an identifier stands for: its alias, else its own name.
    pub(crate) fn canonical<'n>(&'n self, name: &'n str) -> &'n str {
        self.aliases.get(name).map_or(name, String::as_str)
    }

    pub(crate) fn declarator(&mut self, declarator: &'a VariableDeclarator<'a>) {
        let Some(init) = &declarator.init else {
            return;
        };
        let init = init.get_inner_expression();
        match &declarator.id {
            BindingPattern::BindingIdentifier(id) => {
                let name = id.name.as_str();
                if matches!(
                    init,
                    Expression::ObjectExpression(_) | Expression::ArrayExpression(_)
                ) {
                    self.literals.entry(name).or_insert(init);
                }
                if let Some(alias) = required_module(init).as_deref().and_then(module_alias) {
                    self.aliases.insert(name, alias.to_owned());
                } else if let Some(member) = init.as_member_expression()
                    && let Some(property) = member.static_property_name()
                    && self.stands_for_electron(member.object())
                {
                    // `const ipc = electron.ipcMain`, `const r = require('electron').remote`.
                    self.aliases.insert(name, property.to_owned());
                }
                if is_build_from_template(init, self) {
                    self.menus.insert(name.to_owned());
                }
            }
            BindingPattern::ObjectPattern(pattern) => {
                // `const { ipcMain: m } = ...`: `m` stands for `ipcMain`,
                // whatever the object (recognition is by name).
                for property in &pattern.properties {
                    if let (Some(key), BindingPattern::BindingIdentifier(local)) =
                        (property_name(&property.key), &property.value)
                        && key != local.name.as_str()
                    {
                        self.aliases.insert(local.name.as_str(), key);
                    }
                }
            }
            BindingPattern::ArrayPattern(_) | BindingPattern::AssignmentPattern(_) => {}
        }
    }

    pub(crate) fn import(&mut self, import: &'a ImportDeclaration<'a>) {
        let module = import.source.value.as_str();
        let Some(specifiers) = &import.specifiers else {
            return;
        };
        for specifier in specifiers {
            match specifier {
                ImportDeclarationSpecifier::ImportSpecifier(named) => {
                    let imported = named.imported.name();
                    if imported.as_str() != named.local.name.as_str() {
                        self.aliases
                            .insert(named.local.name.as_str(), imported.as_str().to_owned());
                    }
                }
                ImportDeclarationSpecifier::ImportDefaultSpecifier(default) => {
                    if let Some(alias) = module_alias(module) {
                        self.aliases
                            .insert(default.local.name.as_str(), alias.to_owned());
                    }
                }
                ImportDeclarationSpecifier::ImportNamespaceSpecifier(namespace) => {
                    if let Some(alias) = module_alias(module) {
                        self.aliases
                            .insert(namespace.local.name.as_str(), alias.to_owned());
                    }
                }
            }
        }
    }

    /// `electron`, an alias of it, or `require('electron')`.
    pub(crate) fn stands_for_electron(&self, expr: &Expression<'_>) -> bool {
        match expr.get_inner_expression() {
            Expression::Identifier(id) => self.canonical(id.name.as_str()) == "electron",
            other => required_module(other).as_deref().and_then(module_alias) == Some("electron"),
        }
    }

    /// The name an expression is recognised by: an identifier's canonical
    /// name, a member's property (`electron.ipcMain` → `ipcMain`), or what a
    /// `require` of a known module stands for.
    pub(crate) fn tail<'x>(&'x self, expr: &'x Expression<'_>) -> Option<&'x str> {
        match expr.get_inner_expression() {
            Expression::Identifier(id) => Some(self.canonical(id.name.as_str())),
            Expression::CallExpression(_) => {
                required_module(expr).as_deref().and_then(module_alias)
            }
            other => other
                .as_member_expression()
                .and_then(|member| member.static_property_name()),
        }
    }
}

/// `Menu.buildFromTemplate(...)` (by name).
pub(crate) fn is_build_from_template(expr: &Expression<'_>, names: &Names<'_>) -> bool {
    let Expression::CallExpression(call) = expr.get_inner_expression() else {
        return false;
    };
    call.callee
        .get_inner_expression()
        .as_member_expression()
        .is_some_and(|member| {
            member.static_property_name() == Some("buildFromTemplate")
                && names.tail(member.object()) == Some("Menu")
        })
}

/// A dotted path for a binding: `win`, `this.win`, `app.windows.main`.
pub(crate) fn path_of(expr: &Expression<'_>) -> Option<String> {
    let mut segments = Vec::new();
    let mut expr = expr.get_inner_expression();
    loop {
        if segments.len() > 8 {
            return None;
        }
        match expr {
            Expression::Identifier(id) => segments.push(id.name.as_str()),
            Expression::ThisExpression(_) => segments.push("this"),
            other => {
                let member = other.as_member_expression()?;
                segments.push(member.static_property_name()?);
                expr = member.object().get_inner_expression();
                continue;
            }
        }
        break;
    }
    segments.reverse();
    Some(segments.join("."))
}
