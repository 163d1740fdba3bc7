//! The AST walk: a depth-guarded [`Visit`] run twice over the program,
//! first to collect names ([`super::names`]), then to read facts
//! ([`super::surfaces`]).
//!
//! oxc's `Visit` recurses once per AST level. The pre-scan bounds what the
//! parser nests, but left-associative chains (`a+a+…`, `a.b.c…`, `f()()…`)
//! are built by loops and can be a million levels deep, so every recursive
//! entry point here counts depth and stops descending past
//! [`MAX_WALK_DEPTH`], recording `walk_truncated`. TypeScript types are not
//! walked at all: they hold no facts.

use std::collections::HashMap;

use oxc_ast::AstKind;
use oxc_ast::ast::{
    AssignmentTarget, BindingPattern, Expression, JSXElement, JSXMemberExpression, Statement,
    TSNamespaceDeclaration, TSQualifiedName, TSType, TSTypeAnnotation, TSTypeParameterDeclaration,
    TSTypeParameterInstantiation,
};
use oxc_ast_visit::{Visit, walk};

use super::lines::LineIndex;
use super::names::{Names, is_build_from_template, path_of};
use crate::javascript::facts::{LoadFact, MAX_FACTS_PER_LIST, ModuleFacts, Pos};

/// Deepest AST nesting walked; deeper subtrees are skipped (`walk_truncated`).
pub(crate) const MAX_WALK_DEPTH: usize = 1_500;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Names,
    Facts,
}

/// A load waiting to be joined to a window by binding.
pub(crate) struct PendingLoad {
    pub binding: Option<String>,
    pub load: LoadFact,
}

pub(crate) struct Walker<'a, 's> {
    pub phase: Phase,
    pub source: &'s str,
    pub lines: &'s LineIndex<'s>,
    pub names: Names<'a>,
    pub facts: ModuleFacts,
    pub loads: Vec<PendingLoad>,
    /// `new BrowserWindow` span start → the binding it is assigned to.
    pub window_bindings: HashMap<u32, String>,
    /// The `window.X` member already reported as part of `window.X.Y`.
    pub consumed_member: Option<u32>,
    depth: usize,
    pub truncated: bool,
}

/// Appends to a capped facts list, counting what does not fit.
pub(crate) fn add<T>(list: &mut Vec<T>, omitted: &mut u64, item: T) {
    if list.len() < MAX_FACTS_PER_LIST {
        list.push(item);
    } else {
        *omitted += 1;
    }
}

impl<'a, 's> Walker<'a, 's> {
    pub(crate) fn new(source: &'s str, lines: &'s LineIndex<'s>) -> Self {
        Walker {
            phase: Phase::Names,
            source,
            lines,
            names: Names::default(),
            facts: ModuleFacts::default(),
            loads: Vec::new(),
            window_bindings: HashMap::new(),
            consumed_member: None,
            depth: 0,
            truncated: false,
        }
    }

    pub(crate) fn pos(&self, offset: u32) -> Pos {
        self.lines.pos(offset)
    }

    /// Enters one recursive level; false (and truncated) when too deep.
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_WALK_DEPTH {
            self.truncated = true;
            return false;
        }
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn names_node(&mut self, kind: AstKind<'a>) {
        match kind {
            AstKind::BindingIdentifier(id) => {
                self.names.declared.insert(id.name.as_str());
            }
            AstKind::VariableDeclarator(declarator) => self.names.declarator(declarator),
            AstKind::ImportDeclaration(import) => self.names.import(import),
            AstKind::AssignmentExpression(assignment) => {
                if is_build_from_template(&assignment.right, &self.names)
                    && let Some(target) = assignment_path(&assignment.left)
                {
                    self.names.menus.insert(target);
                }
            }
            _ => {}
        }
    }

    fn facts_node(&mut self, kind: AstKind<'a>) {
        match kind {
            AstKind::VariableDeclarator(declarator) => {
                if let (BindingPattern::BindingIdentifier(id), Some(init)) =
                    (&declarator.id, &declarator.init)
                {
                    self.bind_window(init, id.name.as_str().to_owned());
                }
                self.destructured_remote(declarator);
            }
            AstKind::AssignmentExpression(assignment) => {
                if let Some(target) = assignment_path(&assignment.left) {
                    self.bind_window(&assignment.right, target);
                }
            }
            AstKind::ImportDeclaration(import) => self.import_declaration(import),
            AstKind::ExportAllDeclaration(export) => {
                self.esm_export(&export.source, export.span.start);
            }
            AstKind::ExportFromDeclaration(export) => {
                self.esm_export(&export.source, export.span.start);
            }
            AstKind::ImportExpression(import) => self.dynamic_import(import),
            AstKind::CallExpression(call) => self.call(call),
            AstKind::NewExpression(new) => self.new_expression(new),
            AstKind::StaticMemberExpression(member) => self.member(member),
            AstKind::StringLiteral(literal) => {
                self.urls_in(literal.value.as_str(), literal.span.start);
            }
            AstKind::TemplateLiteral(template) => {
                for quasi in &template.quasis {
                    let text = quasi.value.cooked.as_ref().unwrap_or(&quasi.value.raw);
                    self.urls_in(text.as_str(), quasi.span.start);
                }
            }
            _ => {}
        }
    }

    /// Remembers the binding of a `new BrowserWindow(...)` being assigned.
    fn bind_window(&mut self, value: &Expression<'a>, binding: String) {
        if let Expression::NewExpression(new) = value.get_inner_expression() {
            self.window_bindings.insert(new.span.start, binding);
        }
    }

    /// Joins each load to the window with its binding (the nearest one
    /// before it when several share the binding); the rest stay loose.
    pub(crate) fn join_loads(&mut self) {
        let loads = std::mem::take(&mut self.loads);
        for PendingLoad { binding, load } in loads {
            let candidates: Vec<usize> = self
                .facts
                .windows
                .iter()
                .enumerate()
                .filter(|(_, w)| binding.is_some() && w.binding == binding)
                .map(|(i, _)| i)
                .collect();
            let chosen = candidates
                .iter()
                .rev()
                .find(|&&i| self.facts.windows[i].pos <= load.pos)
                .or(candidates.first())
                .copied();
            let facts = &mut self.facts;
            match chosen {
                Some(i) => add(&mut facts.windows[i].loads, &mut facts.facts_omitted, load),
                None => add(&mut facts.loose_loads, &mut facts.facts_omitted, load),
            }
        }
    }
}

/// The dotted path of an assignment target (`win`, `this.win`).
pub(crate) fn assignment_path(target: &AssignmentTarget<'_>) -> Option<String> {
    match target {
        AssignmentTarget::AssignmentTargetIdentifier(id) => Some(id.name.as_str().to_owned()),
        other => {
            let member = other.as_member_expression()?;
            let object = path_of(member.object())?;
            Some(format!("{object}.{}", member.static_property_name()?))
        }
    }
}

impl<'a> Visit<'a> for Walker<'a, '_> {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        match self.phase {
            Phase::Names => self.names_node(kind),
            Phase::Facts => self.facts_node(kind),
        }
    }

    fn visit_expression(&mut self, it: &Expression<'a>) {
        if self.enter() {
            walk::walk_expression(self, it);
        }
        self.leave();
    }

    fn visit_statement(&mut self, it: &Statement<'a>) {
        if self.enter() {
            walk::walk_statement(self, it);
        }
        self.leave();
    }

    fn visit_binding_pattern(&mut self, it: &BindingPattern<'a>) {
        if self.enter() {
            walk::walk_binding_pattern(self, it);
        }
        self.leave();
    }

    fn visit_assignment_target(&mut self, it: &AssignmentTarget<'a>) {
        if self.enter() {
            walk::walk_assignment_target(self, it);
        }
        self.leave();
    }

    fn visit_jsx_element(&mut self, it: &JSXElement<'a>) {
        if self.enter() {
            walk::walk_jsx_element(self, it);
        }
        self.leave();
    }

    fn visit_jsx_member_expression(&mut self, it: &JSXMemberExpression<'a>) {
        if self.enter() {
            walk::walk_jsx_member_expression(self, it);
        }
        self.leave();
    }

    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        if self.enter() {
            walk::walk_ts_namespace_declaration(self, it);
        }
        self.leave();
    }

    fn visit_ts_qualified_name(&mut self, it: &TSQualifiedName<'a>) {
        if self.enter() {
            walk::walk_ts_qualified_name(self, it);
        }
        self.leave();
    }

    // Types hold no facts; not walking them also skips their nesting.
    fn visit_ts_type(&mut self, _it: &TSType<'a>) {}
    fn visit_ts_type_annotation(&mut self, _it: &TSTypeAnnotation<'a>) {}
    fn visit_ts_type_parameter_instantiation(&mut self, _it: &TSTypeParameterInstantiation<'a>) {}
    fn visit_ts_type_parameter_declaration(&mut self, _it: &TSTypeParameterDeclaration<'a>) {}
}
