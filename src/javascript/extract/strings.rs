//! Static reading of string-valued expressions ([`StringHint`]).
//!
//! A specifier, channel or URL is often written as a literal, but just as
//! often assembled: `path.join(__dirname, 'index.html')`,
//! `` `file://${__dirname}/index.html` ``, `url.format({...})`. The whole
//! value is kept only when every piece is static; otherwise the static
//! fragments are kept in order so the graph builder can still match a page
//! or a module by its tail. Both walks use an explicit work list with a node
//! budget: a million-term `'a' + 'a' + ...` costs no stack and bounded time.

use oxc_ast::ast::{
    Argument, BinaryOperator, Expression, ObjectPropertyKind, PropertyKey, TemplateLiteral,
};
use oxc_span::{GetSpan, Span};

use crate::ground::text::excerpt;
use crate::javascript::facts::StringHint;
use crate::javascript::model::EXCERPT_CHARS;

/// Most expression nodes one evaluation looks at.
const NODE_BUDGET: usize = 512;
/// Most static fragments kept in [`StringHint::parts`].
const MAX_PARTS: usize = 32;
/// Longest static value assembled (bytes) before it is cut.
const MAX_VALUE_BYTES: usize = 4096;

/// `text` cut to at most [`EXCERPT_CHARS`] characters (with `…` when cut).
pub(crate) fn clip(text: &str) -> String {
    excerpt(text, EXCERPT_CHARS - 1)
}

/// The bounded source text of `span`.
pub(crate) fn source_excerpt(source: &str, span: Span) -> String {
    let start = span.start as usize;
    let end = (span.end as usize).min(source.len());
    source.get(start..end).map(clip).unwrap_or_default()
}

/// What static reading can tell about a string-valued expression.
pub(crate) fn hint(expr: &Expression<'_>, source: &str) -> StringHint {
    let literal = static_value(expr);
    let parts = if literal.is_some() {
        Vec::new()
    } else {
        static_parts(expr)
    };
    StringHint {
        literal: literal.map(|value| clip(&value)),
        parts,
        excerpt: source_excerpt(source, expr.span()),
    }
}

/// The hint of a call argument (a spread has no static value).
pub(crate) fn argument_hint(argument: &Argument<'_>, source: &str) -> StringHint {
    match argument.as_expression() {
        Some(expr) => hint(expr, source),
        None => StringHint {
            literal: None,
            parts: Vec::new(),
            excerpt: source_excerpt(source, argument.span()),
        },
    }
}

/// The value of a template without substitutions.
fn plain_template(template: &TemplateLiteral<'_>) -> Option<String> {
    if !template.expressions.is_empty() {
        return None;
    }
    let mut value = String::new();
    for quasi in &template.quasis {
        value.push_str(quasi.value.cooked.as_ref()?.as_str());
    }
    Some(value)
}

/// The whole value when it is a literal, a plain template or a `+`
/// concatenation of those; `None` as soon as any piece is computed.
pub(crate) fn static_value(expr: &Expression<'_>) -> Option<String> {
    let mut value = String::new();
    let mut work = vec![expr];
    let mut budget = NODE_BUDGET;
    while let Some(expr) = work.pop() {
        budget = budget.checked_sub(1)?;
        match expr.get_inner_expression() {
            Expression::StringLiteral(literal) => push_capped(&mut value, literal.value.as_str()),
            Expression::TemplateLiteral(template) => {
                push_capped(&mut value, &plain_template(template)?);
            }
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                work.push(&binary.right);
                work.push(&binary.left);
            }
            _ => return None,
        }
    }
    Some(value)
}

fn push_capped(value: &mut String, piece: &str) {
    for c in piece.chars() {
        if value.len() + c.len_utf8() > MAX_VALUE_BYTES {
            return;
        }
        value.push(c);
    }
}

/// Calls whose static arguments become part of a path or URL.
const PATH_METHODS: &[&str] = &[
    "join",
    "resolve",
    "normalize",
    "format",
    "pathToFileURL",
    "fileURLToPath",
];
/// `url.format({...})` properties, in the order they appear in a URL.
const URL_PROPERTIES: &[&str] = &["protocol", "hostname", "host", "pathname", "search", "hash"];

enum Item<'x, 'a> {
    Expr(&'x Expression<'a>),
    Text(&'x str),
}

/// The static fragments of a partly computed string, in source order.
pub(crate) fn static_parts(expr: &Expression<'_>) -> Vec<String> {
    let mut parts = Vec::new();
    let mut work = vec![Item::Expr(expr)];
    let mut budget = NODE_BUDGET;
    while let Some(item) = work.pop() {
        if parts.len() >= MAX_PARTS || budget == 0 {
            break;
        }
        budget -= 1;
        let expr = match item {
            Item::Text(text) => {
                if !text.is_empty() {
                    parts.push(clip(text));
                }
                continue;
            }
            Item::Expr(expr) => expr.get_inner_expression(),
        };
        match expr {
            Expression::StringLiteral(literal) => work.push(Item::Text(literal.value.as_str())),
            Expression::TemplateLiteral(template) => {
                for (i, quasi) in template.quasis.iter().enumerate().rev() {
                    if let Some(expr) = template.expressions.get(i) {
                        work.push(Item::Expr(expr));
                    }
                    let text = quasi.value.cooked.as_ref().unwrap_or(&quasi.value.raw);
                    work.push(Item::Text(text.as_str()));
                }
            }
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Addition => {
                work.push(Item::Expr(&binary.right));
                work.push(Item::Expr(&binary.left));
            }
            Expression::LogicalExpression(logical) => {
                work.push(Item::Expr(&logical.right));
                work.push(Item::Expr(&logical.left));
            }
            Expression::ConditionalExpression(conditional) => {
                work.push(Item::Expr(&conditional.alternate));
                work.push(Item::Expr(&conditional.consequent));
            }
            Expression::CallExpression(call) => {
                let method = call
                    .callee
                    .get_inner_expression()
                    .as_member_expression()
                    .and_then(|member| member.static_property_name());
                if method.is_some_and(|m| PATH_METHODS.contains(&m)) {
                    push_arguments(&mut work, &call.arguments);
                }
            }
            Expression::NewExpression(new) if new.callee.is_specific_id("URL") => {
                push_arguments(&mut work, &new.arguments);
            }
            Expression::ObjectExpression(object) => {
                for key in URL_PROPERTIES.iter().rev() {
                    for property in object.properties.iter().rev() {
                        if let ObjectPropertyKind::ObjectProperty(property) = property
                            && property_name(&property.key).as_deref() == Some(*key)
                        {
                            work.push(Item::Expr(&property.value));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    parts
}

fn push_arguments<'x, 'a>(work: &mut Vec<Item<'x, 'a>>, arguments: &'x [Argument<'a>]) {
    for argument in arguments.iter().rev() {
        if let Some(expr) = argument.as_expression() {
            work.push(Item::Expr(expr));
        }
    }
}

/// The static name of a property key (`a`, `'a'`, `["a"]`).
pub(crate) fn property_name(key: &PropertyKey<'_>) -> Option<String> {
    key.static_name().map(|name| name.into_owned())
}

#[cfg(test)]
mod tests {
    use oxc_allocator::Allocator;
    use oxc_parser::Parser;
    use oxc_span::SourceType;

    use super::*;

    fn with_expr<T>(source: &str, f: impl FnOnce(&Expression<'_>) -> T) -> T {
        let allocator = Allocator::default();
        let expr = Parser::new(&allocator, source, SourceType::mjs())
            .parse_expression()
            .expect("test expression parses");
        f(&expr)
    }

    fn hint_of(source: &str) -> StringHint {
        with_expr(source, |expr| hint(expr, source))
    }

    #[test]
    fn literals_templates_and_concatenations_are_static() {
        assert_eq!(hint_of("'a'").literal.as_deref(), Some("a"));
        assert_eq!(hint_of("`a${''}b`").literal, None);
        assert_eq!(hint_of("`ab`").literal.as_deref(), Some("ab"));
        assert_eq!(hint_of("('a' + `b`) + 'c'").literal.as_deref(), Some("abc"));
        let computed = hint_of("'a' + b");
        assert_eq!(computed.literal, None);
        assert_eq!(computed.parts, vec!["a"]);
        assert_eq!(computed.excerpt, "'a' + b");
    }

    #[test]
    fn path_and_url_expressions_keep_their_static_parts() {
        assert_eq!(
            hint_of("path.join('file://', __dirname, '/index.html')").parts,
            vec!["file://", "/index.html"]
        );
        assert_eq!(hint_of("`${__dirname}/x`").parts, vec!["/x"]);
        assert_eq!(
            hint_of("'file://' + __dirname + '/index.html'").parts,
            vec!["file://", "/index.html"]
        );
        assert_eq!(
            hint_of("url.format({pathname: path.join(__dirname, 'index.html'), protocol: 'file:', slashes: true})").parts,
            vec!["file:", "index.html"]
        );
        assert_eq!(hint_of("f(x)").parts, Vec::<String>::new());
    }

    #[test]
    fn long_values_are_bounded() {
        let source = vec!["'ab'"; 100].join(" + ");
        let value = hint_of(&source).literal.expect("static");
        assert_eq!(value.chars().count(), EXCERPT_CHARS);
        assert!(value.ends_with('…'));
        // Past the node budget the value is no longer claimed to be static.
        let source = vec!["'a'"; NODE_BUDGET + 1].join("+");
        assert_eq!(hint_of(&source).literal, None);
    }
}
