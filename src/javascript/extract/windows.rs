//! Windows and menus: `new BrowserWindow(options)` with its
//! `webPreferences`, and menus with the labels of their templates. Options
//! and templates are read where written or through a same-file binding
//! (`const opts = {...}`), never evaluated.

use std::collections::BTreeMap;

use oxc_ast::ast::{
    Argument, ArrayExpressionElement, Expression, NewExpression, ObjectExpression,
    ObjectPropertyKind, UnaryOperator,
};

use super::names::Names;
use super::strings::{clip, property_name, static_value};
use super::walker::{Walker, add};
use crate::javascript::facts::{MAX_FACTS_PER_LIST, MenuFact, PrefValue, WindowFact};

/// Deepest `submenu` nesting read for menu labels.
const MAX_MENU_DEPTH: usize = 16;

impl<'a> Walker<'a, '_> {
    pub(crate) fn menu(&mut self, kind: &str, labels: Vec<String>, offset: u32) {
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
    pub(crate) fn menu_labels(&mut self, template: &Expression<'a>) -> Vec<String> {
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
        let text = self.value_hint(value);
        if text.literal.is_some() || !text.parts.is_empty() {
            PrefValue::Text(text)
        } else {
            PrefValue::Computed(text.excerpt)
        }
    }
}

/// The value of property `name` in an object literal (first match).
pub(crate) fn property_value<'x, 'a>(
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
pub(crate) fn object_literal<'x, 'a: 'x>(
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
