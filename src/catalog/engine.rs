//! The template engine every prompt renders through. Shared with build.rs.
//!
//! Templates are author-controlled, argument values are not. The environment
//! therefore
//! - is strict: an undeclared variable, filter, test or function is an error;
//! - sees each declared argument only as an [`ArgValue`] (present) or
//!   [`AbsentArg`] object: printing a present one writes its untrusted-data
//!   fence, printing an absent one is an error, and no filter accepts either,
//!   so no raw value can reach the text;
//! - names tools only through `tool("name")` or `tool("name", "param")`, which
//!   fails for a tool that is not in the tool catalog.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, ObjectRepr, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use super::fence;
use super::suggest;

/// One `tool(...)` call seen while rendering.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Citation {
    pub tool: String,
    pub param: Option<String>,
}

/// Collects citations during validation renders.
pub type CitationLog = Arc<Mutex<Vec<Citation>>>;

/// A present argument: renders as its untrusted-data fence.
#[derive(Debug)]
pub struct ArgValue {
    pub name: String,
    pub value: String,
}

impl Object for ArgValue {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
    fn is_true(self: &Arc<Self>) -> bool {
        true
    }
    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fence::block(&self.name, &self.value))
    }
}

/// An optional argument the request did not give: false in `{% if %}`, an
/// error when printed.
#[derive(Debug)]
pub struct AbsentArg {
    pub name: String,
}

impl Object for AbsentArg {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
    fn is_true(self: &Arc<Self>) -> bool {
        false
    }
    fn render(self: &Arc<Self>, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

/// The argument name if `value` is an argument object.
pub fn argument_name(value: &Value) -> Option<&str> {
    if let Some(a) = value.downcast_object_ref::<ArgValue>() {
        return Some(&a.name);
    }
    value
        .downcast_object_ref::<AbsentArg>()
        .map(|a| a.name.as_str())
}

/// The template context: every declared argument, present or absent.
/// The reserved template variable holding [`SessionFacts`]; no argument may
/// take this name.
pub const SESSION_VARIABLE: &str = "session";

/// Names of the facts about the live session a template may test as
/// `session.<name>`, in bit order. They are booleans derived from the
/// ledger (never values from it), so nothing the session holds can reach
/// the text.
pub const SESSION_FACTS: [&str; 2] = [
    // Evidence of analyze_javascript_application is in the ledger.
    "application_analysis_retained",
    // Evidence of inspect_binary_layout is in the ledger.
    "binary_layout_retained",
];

/// One value of every [`SESSION_FACTS`] entry (bit i = fact i). The
/// default (all false) is what a request renders with when no session is
/// at hand (`rea prompts render`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionFacts(u32);

impl SessionFacts {
    /// Facts from `(name, value)` pairs; unknown names are ignored.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, bool)>) -> SessionFacts {
        let mut bits = 0;
        for (name, value) in pairs {
            if let Some(i) = SESSION_FACTS.iter().position(|f| *f == name)
                && value
            {
                bits |= 1 << i;
            }
        }
        SessionFacts(bits)
    }

    /// Every combination, for validation renders.
    pub fn all() -> impl Iterator<Item = SessionFacts> {
        (0u32..(1 << SESSION_FACTS.len())).map(SessionFacts)
    }

    pub fn get(self, name: &str) -> bool {
        SESSION_FACTS
            .iter()
            .position(|f| *f == name)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    fn value(self) -> Value {
        let map: std::collections::BTreeMap<String, Value> = SESSION_FACTS
            .iter()
            .map(|f| (f.to_string(), Value::from(self.get(f))))
            .collect();
        Value::from(map)
    }
}

/// The render context: the declared arguments (see [`ArgValue`] and
/// [`AbsentArg`]) and the session facts.
pub fn render_context<'a, I>(arguments: I, session: SessionFacts) -> Value
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    let mut map = arguments_map(arguments);
    map.insert(SESSION_VARIABLE.to_string(), session.value());
    Value::from(map)
}

/// The context of a template that tests no session fact.
pub fn arguments_context<'a, I>(arguments: I) -> Value
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    render_context(arguments, SessionFacts::default())
}

fn arguments_map<'a, I>(arguments: I) -> std::collections::BTreeMap<String, Value>
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    let map: std::collections::BTreeMap<String, Value> = arguments
        .into_iter()
        .map(|(name, value)| {
            let object = match value {
                Some(v) => Value::from_object(ArgValue {
                    name: name.to_string(),
                    value: v.to_string(),
                }),
                None => Value::from_object(AbsentArg {
                    name: name.to_string(),
                }),
            };
            (name.to_string(), object)
        })
        .collect();
    map
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

fn reject_argument(filter: &str, value: &Value) -> Result<(), Error> {
    match argument_name(value) {
        Some(name) => Err(invalid(format!(
            "filter `{filter}` applied to argument `{name}`: arguments render only as \
             untrusted-data fences; print `{{{{ {name} }}}}` without a filter"
        ))),
        None => Ok(()),
    }
}

/// Builds the environment. The only filters are `lower`, `upper`, `trim`,
/// `join` and `length`, for literal text; none accepts an argument. `tools` is the tool catalog; `log`, when given,
/// records every `tool(...)` call (the validator uses it).
pub fn environment(tools: Arc<BTreeSet<String>>, log: Option<CitationLog>) -> Environment<'static> {
    let mut env = Environment::empty();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.set_formatter(|out, _state, value| {
        if let Some(arg) = value.downcast_object_ref::<ArgValue>() {
            out.write_str(&fence::block(&arg.name, &arg.value))
                .map_err(Error::from)
        } else if let Some(arg) = value.downcast_object_ref::<AbsentArg>() {
            Err(invalid(format!(
                "argument `{name}` may be absent here; print it only inside \
                 `{{% if {name} %}}`",
                name = arg.name
            )))
        } else if value.is_none() || value.is_undefined() {
            Err(invalid("printing a value that is none".to_string()))
        } else {
            write!(out, "{value}").map_err(Error::from)
        }
    });
    env.add_function(
        "tool",
        move |name: String, param: Option<String>| -> Result<Value, Error> {
            if !tools.contains(&name) {
                return Err(invalid(format!(
                    "tool `{name}` is not in the tool catalog (src/tools/catalog.toml){}",
                    suggest::hint(&name, tools.iter().map(String::as_str))
                )));
            }
            if let Some(log) = &log
                && let Ok(mut log) = log.lock()
            {
                log.push(Citation {
                    tool: name.clone(),
                    param: param.clone(),
                });
            }
            Ok(Value::from(match param {
                Some(p) => format!("`{name}` with `{p}`"),
                None => format!("`{name}`"),
            }))
        },
    );
    env.add_filter("lower", |v: Value| -> Result<String, Error> {
        reject_argument("lower", &v)?;
        Ok(v.to_string().to_lowercase())
    });
    env.add_filter("upper", |v: Value| -> Result<String, Error> {
        reject_argument("upper", &v)?;
        Ok(v.to_string().to_uppercase())
    });
    env.add_filter("trim", |v: Value| -> Result<String, Error> {
        reject_argument("trim", &v)?;
        Ok(v.to_string().trim().to_string())
    });
    env.add_filter("length", |v: Value| -> Result<usize, Error> {
        reject_argument("length", &v)?;
        v.len()
            .ok_or_else(|| invalid("`length` needs a string or a list".to_string()))
    });
    env.add_filter(
        "join",
        |v: Value, sep: Option<String>| -> Result<String, Error> {
            reject_argument("join", &v)?;
            let sep = sep.unwrap_or_default();
            let items = v
                .try_iter()
                .map_err(|_| invalid("`join` needs a list".to_string()))?;
            let mut parts = Vec::new();
            for item in items {
                reject_argument("join", &item)?;
                parts.push(item.to_string());
            }
            Ok(parts.join(&sep))
        },
    );
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, session: SessionFacts) -> Result<String, Error> {
        let mut env = environment(Arc::new(BTreeSet::new()), None);
        env.add_template_owned("t".to_string(), template.to_string())?;
        env.get_template("t")?
            .render(render_context([("feature", Some("x"))], session))
    }

    #[test]
    fn session_facts_are_booleans_templates_can_test() {
        let t = "{% if session.application_analysis_retained %}view{% else %}analyze{% endif %}";
        assert_eq!(render(t, SessionFacts::default()).unwrap(), "analyze");
        let retained = SessionFacts::from_pairs([("application_analysis_retained", true)]);
        assert_eq!(render(t, retained).unwrap(), "view");
        assert!(retained.get("application_analysis_retained"));
        assert!(!retained.get("binary_layout_retained"));
        assert_eq!(SessionFacts::all().count(), 1 << SESSION_FACTS.len());
    }

    #[test]
    fn an_unknown_session_fact_is_an_error() {
        let t = "{% if session.analysis_retained %}x{% endif %}";
        assert!(render(t, SessionFacts::default()).is_err());
    }
}
