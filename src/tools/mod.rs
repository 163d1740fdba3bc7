//! The tool catalog and its implementations.
//!
//! `catalog.toml` is the declarative source; `build.rs` turns it into
//! [`ToolName`] and the registry, which names, for every entry, the
//! [`Tool`] implementation of the same name (re-exported below). A tool's
//! input schema is derived from the very type its arguments are parsed
//! into. Every success is `{result, evidence?, context?}`, each fact once
//! (see [`ToolOutput::to_json`]); every failure is
//! `{error: {code, message, remediation, data?}}` and carries no Evidence.

mod artifacts;
mod capture;
mod code;
pub mod compare;
mod correlate;
pub mod errors;
mod inputs;
mod inventory;
mod javascript;
mod layout;
mod lifecycle;
mod paging;
mod pattern;
mod procedures;
mod pseudo_code;
mod records;
mod registry;
mod schema;
mod search;
mod shared;
mod strings;
mod tool;
mod trace;
mod unknowns;

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

pub use crate::catalog::generated::tools::{CATALOG, ToolName};
use crate::catalog::spec::{Effect, ToolSpec};
use crate::ground::canonical::without_null_members;
use crate::session::{Evidence, Session};
pub use errors::{ErrorCode, ToolError};
pub use pseudo_code::MAX_PROCEDURES as MAX_PSEUDO_CODE_PROCEDURES;
pub(crate) use shared::ledger::recorded;
pub use tool::{Call, Tool};

/// The catalog entry of a tool.
pub fn spec(tool: ToolName) -> Option<&'static ToolSpec> {
    CATALOG.iter().find(|t| t.name == tool.as_str())
}

/// The JSON schema of a tool's input, as `tools/list` serves it.
pub fn input_schema(tool: ToolName) -> Arc<JsonObject> {
    registry::input_schema(tool)
}

/// The outcome of one call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    Success {
        result: Value,
        evidence: Option<Box<Evidence>>,
    },
    Failure(ToolError),
}

impl ToolOutput {
    /// The structured content sent to the client, each fact once: the
    /// result, the Evidence header (the record without its result, which
    /// with the result recomputes the ID) and, under `context`, only what
    /// the answer says beyond the record (display paths, session state).
    /// No member is `null`.
    pub fn to_json(&self) -> Value {
        match self {
            ToolOutput::Success {
                result,
                evidence: Some(evidence),
            } => {
                let mut answer = json!({
                    "result": evidence.body.result,
                    "evidence": evidence.header(),
                });
                if let Some(context) = beyond(result, &evidence.body.result) {
                    answer["context"] = context;
                }
                answer
            }
            ToolOutput::Success {
                result,
                evidence: None,
            } => json!({"result": without_null_members(result.clone())}),
            ToolOutput::Failure(error) => without_null_members(json!({"error": error})),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutput::Failure(_))
    }
}

/// What a handler's answer says beyond its Evidence result: the members
/// that the record lacks or spells otherwise, without nulls. `None` when
/// the record says it all.
fn beyond(answer: &Value, recorded: &Value) -> Option<Value> {
    // The record was sealed without null members; compare like with like.
    let answer = without_null_members(answer.clone());
    let (Value::Object(answer), Value::Object(recorded)) = (&answer, recorded) else {
        return (&answer != recorded).then_some(answer);
    };
    let extra: serde_json::Map<String, Value> = answer
        .iter()
        .filter(|(k, v)| recorded.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!extra.is_empty()).then_some(Value::Object(extra))
}

/// Whether a tool can run now, and why not.
pub fn availability(tool: ToolName, session: &Session) -> Result<(), ErrorCode> {
    let needs_target = spec(tool).is_some_and(|s| s.requires_target);
    if needs_target && session.artifact().is_none() {
        return Err(ErrorCode::TargetRequired);
    }
    if needs_target && !artifact_tool(tool) && session.target().is_none() {
        return Err(ErrorCode::NoCodeDocuments);
    }
    // Running a process is off until the operator enables capture.
    if spec(tool).is_some_and(|s| s.effects.contains(&Effect::LaunchesProcess))
        && !session.capture_policy().is_enabled()
    {
        return Err(ErrorCode::PolicyDisabled);
    }
    // Writing is off until the operator names a write root.
    if spec(tool).is_some_and(|s| s.effects.contains(&Effect::WritesFiles))
        && !session.write_roots().is_enabled()
    {
        return Err(ErrorCode::PolicyDisabled);
    }
    Ok(())
}

/// Tools that read the opened artifact as a whole, so an archive (which has
/// no code documents) serves them.
fn artifact_tool(tool: ToolName) -> bool {
    matches!(tool, ToolName::InspectArtifact)
}

/// The most bytes of JSON any answer of any tool may have, whatever the
/// file holds and the call asks for. Each tool bounds its items so that its
/// largest answer stays below this (and its default answer below 32 KiB);
/// this ceiling is the backstop: an answer past it is refused with
/// `answer_too_large`, never sent.
pub const MAX_ANSWER_BYTES: usize = 4 << 20;

/// Runs one call of `tool`: its arguments parsed into the tool's input,
/// then its `run`, held to [`MAX_ANSWER_BYTES`].
pub fn call(tool: ToolName, arguments: JsonObject, call: &Call<'_>) -> ToolOutput {
    within_ceiling(tool, output(registry::run(tool, arguments, call)))
}

/// `output`, or `answer_too_large` when its JSON passes [`MAX_ANSWER_BYTES`]:
/// said, never cut silently.
fn within_ceiling(tool: ToolName, output: ToolOutput) -> ToolOutput {
    let bytes = json_len(&output.to_json());
    if bytes <= MAX_ANSWER_BYTES {
        return output;
    }
    ToolOutput::Failure(ToolError::new(
        ErrorCode::AnswerTooLarge,
        format!(
            "the answer of {} would be {bytes} bytes, past the ceiling of {MAX_ANSWER_BYTES} \
             bytes for one answer; nothing was cut",
            tool.as_str()
        ),
    ))
}

/// Bytes of `value` as compact JSON, counted without keeping them.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn output(outcome: HandlerResult) -> ToolOutput {
    match outcome {
        Ok((result, evidence)) => ToolOutput::Success {
            result,
            evidence: evidence.map(Box::new),
        },
        Err(error) => ToolOutput::Failure(error),
    }
}

/// What a handler returns.
pub(crate) type HandlerResult = Result<(Value, Option<Evidence>), ToolError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_past_the_ceiling_is_refused_and_one_below_passes() {
        let big = ToolOutput::Success {
            result: json!({"text": "x".repeat(MAX_ANSWER_BYTES)}),
            evidence: None,
        };
        let refused = within_ceiling(ToolName::AnalyzeFunction, big).to_json();
        assert_eq!(refused["error"]["code"], json!("answer_too_large"));
        assert!(refused.to_string().len() < 1024);
        let small = ToolOutput::Success {
            result: json!({"text": "x"}),
            evidence: None,
        };
        assert!(!within_ceiling(ToolName::AnalyzeFunction, small).is_error());
        assert_eq!(json_len(&json!({"a": [1, 2]})), r#"{"a":[1,2]}"#.len());
    }

    /// Templates are checked against the catalog's `parameters` (build.rs
    /// cannot see the schemas), so those must be exactly the schema's fields.
    #[test]
    fn catalog_parameters_are_the_input_schema_fields() {
        for tool in ToolName::ALL {
            let schema = input_schema(tool);
            let mut served: Vec<&str> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut listed: Vec<&str> = spec(tool)
                .expect("every tool has a catalog entry")
                .parameters
                .iter()
                .map(String::as_str)
                .collect();
            served.sort_unstable();
            listed.sort_unstable();
            assert_eq!(listed, served, "{}: catalog parameters", tool.as_str());
        }
    }
}
