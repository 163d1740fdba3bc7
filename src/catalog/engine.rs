//! The template engine every prompt renders through. Shared with build.rs.
//!
//! Templates are author-controlled, argument values are not. The environment
//! therefore
//! - is strict: an undeclared variable, filter, test or function is an error;
//! - sees each declared argument only as an [`ArgValue`] (present) or
//!   [`AbsentArg`] object: printing a present one writes its untrusted-data
//!   fence, printing an absent one is an error, and no filter accepts either,
//!   so no raw value can reach the text;
//! - names tools only through `tool("name", "param", ...)`, which renders
//!   `` `name(param, ...)` `` and fails for a tool that is not in the tool
//!   catalog or a parameter the tool does not take.

use std::fmt;
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, ObjectRepr, Rest, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use super::fence;
use super::spec::ToolIndex;
use super::suggest;

/// One `tool(...)` call seen while rendering.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Citation {
    pub tool: String,
    /// The parameters named, in the order the template gives them.
    pub params: Vec<String>,
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
pub const SESSION_FACTS: [&str; 5] = [
    // Evidence of analyze_javascript_application is in the ledger.
    "application_analysis_retained",
    // Evidence of inspect_binary_layout is in the ledger.
    "binary_layout_retained",
    // A target (a binary, bundle or archive) is active.
    "target_open",
    // The operator's policy enables process capture (each call still needs
    // the user's approval).
    "process_capture_enabled",
    // The residual-unknown registry holds at least one unknown.
    "unknowns_recorded",
];

/// One value of every [`SESSION_FACTS`] entry (bit i = fact i). The
/// default (all false) is what a request renders with when no session is
/// at hand (`rea prompts render`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionFacts(u32);

impl SessionFacts {
    /// Facts from `(name, value)` pairs. Names come from code, never from
    /// a request: an unknown one is a defect (debug builds stop on it,
    /// release builds ignore it).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, bool)>) -> SessionFacts {
        let mut bits = 0;
        for (name, value) in pairs {
            debug_assert!(SESSION_FACTS.contains(&name), "unknown session fact {name}");
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

/// Checks one `tool(...)` call against the tool catalog.
fn cite(tools: &ToolIndex, name: String, params: Vec<String>) -> Result<Citation, Error> {
    let Some(known) = tools.parameters(&name) else {
        return Err(invalid(format!(
            "tool `{name}` is not in the tool catalog (src/tools/catalog.toml){}",
            suggest::hint(&name, tools.names())
        )));
    };
    for (i, param) in params.iter().enumerate() {
        if !known.contains(param) {
            let takes = if known.is_empty() {
                "it takes none".to_string()
            } else {
                format!("it takes {}", known.join(", "))
            };
            return Err(invalid(format!(
                "tool `{name}` has no parameter `{param}` ({takes}){}",
                suggest::hint(param, known.iter().map(String::as_str))
            )));
        }
        if params[..i].contains(param) {
            return Err(invalid(format!(
                "tool `{name}` cites parameter `{param}` twice"
            )));
        }
    }
    Ok(Citation { tool: name, params })
}

impl Citation {
    /// How the citation reads in a prompt: `` `tool(a, b)` ``, or
    /// `` `tool` `` when it names no parameter.
    pub fn text(&self) -> String {
        if self.params.is_empty() {
            format!("`{}`", self.tool)
        } else {
            format!("`{}({})`", self.tool, self.params.join(", "))
        }
    }
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
/// `join` and `length`, for literal text; none accepts an argument. `tools`
/// is the tool catalog; `log`, when given, records every `tool(...)` call
/// (the validator uses it).
pub fn environment(tools: Arc<ToolIndex>, log: Option<CitationLog>) -> Environment<'static> {
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
        move |name: String, Rest(params): Rest<String>| -> Result<Value, Error> {
            let citation = cite(&tools, name, params)?;
            let text = citation.text();
            if let Some(log) = &log
                && let Ok(mut log) = log.lock()
            {
                log.push(citation);
            }
            Ok(Value::from(text))
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
        let mut env = environment(Arc::new(ToolIndex::new(&tools())), None);
        env.add_template_owned("t".to_string(), template.to_string())?;
        env.get_template("t")?
            .render(render_context([("feature", Some("x"))], session))
    }

    fn tools() -> Vec<super::super::spec::ToolSpec> {
        let tool = |name: &str, parameters: &[&str]| super::super::spec::ToolSpec {
            name: name.to_string(),
            module: String::new(),
            title: String::new(),
            description: String::new(),
            effects: Vec::new(),
            requires_target: false,
            parameters: parameters.iter().map(|p| p.to_string()).collect(),
        };
        vec![
            tool("binary_session", &[]),
            tool("build_call_path", &["start", "goal", "max_depth"]),
        ]
    }

    #[test]
    fn a_citation_reads_as_a_call_with_its_parameters() {
        let t = "{{ tool('binary_session') }} {{ tool('build_call_path', 'start', 'goal') }}";
        assert_eq!(
            render(t, SessionFacts::default()).unwrap(),
            "`binary_session` `build_call_path(start, goal)`"
        );
    }

    #[test]
    fn a_citation_of_an_unknown_tool_or_parameter_is_an_error() {
        for (template, expected) in [
            (
                "{{ tool('binary_sesion') }}",
                "did you mean `binary_session`",
            ),
            (
                "{{ tool('build_call_path', 'goall') }}",
                "has no parameter `goall` (it takes start, goal, max_depth)",
            ),
            ("{{ tool('binary_session', 'x') }}", "(it takes none)"),
            ("{{ tool('build_call_path', 'start', 'start') }}", "twice"),
        ] {
            let error = render(template, SessionFacts::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{template}: {error}");
        }
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
