//! Prompt argument rules, used by the generated argument structs.
//!
//! Values are strings, trimmed. A required value missing or blank is an error;
//! an optional blank value is absent; a value longer than
//! [`MAX_VALUE_SCALARS`] scalar values is an error; an undeclared name is an
//! error that lists the valid names; a non-string value is an error.

use serde_json::{Map, Value};

pub use super::spec::{CompletionFamily, MAX_VALUE_SCALARS};

/// The `arguments` object of a `prompts/get` request.
pub type ArgumentMap = Map<String, Value>;

/// The compiled shape of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentShape {
    pub name: &'static str,
    pub required: bool,
    pub completion: Option<CompletionFamily>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    #[error("missing required argument `{0}`; give it a non-blank string value")]
    Missing(&'static str),
    #[error("argument `{name}` must be a string, not {found}")]
    NotAString { name: String, found: &'static str },
    #[error(
        "argument `{name}` has {count} characters; the limit is {MAX_VALUE_SCALARS}. Shorten it"
    )]
    TooLong { name: String, count: usize },
    #[error("unknown argument `{name}`{hint}; valid arguments: {valid}")]
    Undeclared {
        name: String,
        hint: String,
        valid: String,
    },
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The trimmed value, `None` when missing or blank.
fn trimmed(arguments: &ArgumentMap, name: &'static str) -> Result<Option<String>, ArgumentError> {
    match arguments.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let t = s.trim();
            let count = t.chars().count();
            if count > MAX_VALUE_SCALARS {
                Err(ArgumentError::TooLong {
                    name: name.to_string(),
                    count,
                })
            } else if t.is_empty() {
                Ok(None)
            } else {
                Ok(Some(t.to_string()))
            }
        }
        Some(other) => Err(ArgumentError::NotAString {
            name: name.to_string(),
            found: json_kind(other),
        }),
    }
}

pub fn required(arguments: &ArgumentMap, name: &'static str) -> Result<String, ArgumentError> {
    trimmed(arguments, name)?.ok_or(ArgumentError::Missing(name))
}

pub fn optional(
    arguments: &ArgumentMap,
    name: &'static str,
) -> Result<Option<String>, ArgumentError> {
    trimmed(arguments, name)
}

pub fn reject_undeclared(
    arguments: &ArgumentMap,
    shape: &[ArgumentShape],
) -> Result<(), ArgumentError> {
    // Sorted, so the first offending name reported is deterministic.
    let mut names: Vec<&String> = arguments.keys().collect();
    names.sort();
    for name in names {
        if !shape.iter().any(|s| s.name == name) {
            let valid: Vec<&str> = shape.iter().map(|s| s.name).collect();
            return Err(ArgumentError::Undeclared {
                name: name.clone(),
                hint: super::suggest::hint(name, valid.iter().copied()),
                valid: valid.join(", "),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> ArgumentMap {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn values_are_trimmed_and_blank_optional_is_absent() {
        let m = map(json!({"a": "  x  ", "b": "   "}));
        assert_eq!(required(&m, "a"), Ok("x".to_string()));
        assert_eq!(optional(&m, "b"), Ok(None));
        assert_eq!(required(&m, "b"), Err(ArgumentError::Missing("b")));
        assert_eq!(required(&m, "c"), Err(ArgumentError::Missing("c")));
    }

    #[test]
    fn length_counts_scalar_values_after_trimming() {
        let ok = format!("  {}  ", "é".repeat(MAX_VALUE_SCALARS));
        let m = map(json!({"a": ok, "b": "x".repeat(MAX_VALUE_SCALARS + 1)}));
        assert!(required(&m, "a").is_ok());
        assert!(
            matches!(required(&m, "b"), Err(ArgumentError::TooLong { count, .. }) if count == MAX_VALUE_SCALARS + 1)
        );
    }

    #[test]
    fn non_strings_and_undeclared_names_are_errors() {
        let m = map(json!({"a": 3}));
        assert!(matches!(
            optional(&m, "a"),
            Err(ArgumentError::NotAString {
                found: "a number",
                ..
            })
        ));
        let shape = [ArgumentShape {
            name: "feature",
            required: true,
            completion: None,
        }];
        let err = reject_undeclared(&map(json!({"featur": "x"})), &shape).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown argument `featur`; did you mean `feature`?; valid arguments: feature"
        );
    }
}
