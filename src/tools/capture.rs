//! `capture_process_scenario`: run one program under strict limits, only
//! when the operator's policy and the call's own `approved` allow it, and
//! record the capture as Evidence.
//!
//! Order matters: the policy is checked before anything else about the
//! request is looked at, so a denied call resolves no path and runs
//! nothing; then both paths are confined to the operator's roots (every
//! symlink resolved), and only the resolved paths reach the engine.
//! Secret environment values never leave this module: the recorded
//! parameters carry the redacted scenario, the engine redacts output, and
//! error messages are scrubbed of every environment value.

use crate::tools::ToolName;
use crate::tools::errors::ErrorCode;
use crate::tools::tool::{Call, Tool};
use std::os::fd::AsFd;

use crate::ground::confined::ConfinedFile;
use std::path::Path;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::inputs::{self, CaptureProcessScenarioInput};
use super::{HandlerResult, ToolError};
use crate::capture::redact::Secrets;
use crate::capture::{self, CaptureError, RunAs, Scenario};
use crate::providers::native::NativeImage;
use crate::session::capture_records::CAPTURE_PROCESS_SCENARIO;
use crate::session::{
    CapturePolicy, Confidence, EvidenceDraft, Interruption, ProviderIdentity, Subject,
};

/// Longest question, in characters.
const MAX_QUESTION_CHARS: usize = 1000;

/// The provider that answers captures: rea's own process host.
fn capture_identity() -> ProviderIdentity {
    ProviderIdentity {
        id: "rea-process".to_string(),
        name: "rea process capture".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Parses the input. A malformed request may quote an environment value in
/// serde's message (a value where another type was expected), so every
/// environment value the request holds is scrubbed from the message.
pub(crate) fn parse(arguments: JsonObject) -> Result<CaptureProcessScenarioInput, ToolError> {
    let values: Vec<String> = arguments
        .get("environment")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("value").and_then(Value::as_str))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    inputs::parse(arguments).map_err(|mut e| {
        e.message = scrub(&e.message, &values);
        e
    })
}

/// `text` with every occurrence of each of `values` (longest first)
/// replaced by `[redacted]`.
fn scrub(text: &str, values: &[String]) -> String {
    let mut sorted: Vec<&String> = values.iter().collect();
    sorted.sort_by_key(|v| std::cmp::Reverse(v.len()));
    sorted.into_iter().fold(text.to_string(), |t, v| {
        t.replace(v.as_str(), capture::types::REDACTED)
    })
}

/// Runs without holding the session while the program runs (up to its
/// timeout): the session is held only for the policy and, at the end, to
/// record the Evidence.
pub struct CaptureProcessScenario;

impl Tool for CaptureProcessScenario {
    const NAME: ToolName = ToolName::CaptureProcessScenario;
    type Input = CaptureProcessScenarioInput;

    fn parse(arguments: JsonObject) -> Result<CaptureProcessScenarioInput, ToolError> {
        parse(arguments)
    }

    fn run(input: CaptureProcessScenarioInput, call: &Call<'_>) -> HandlerResult {
        call.without_lock(
            |s| s.capture_policy().clone(),
            |policy| capture_draft(input, &policy, &*call.interrupted),
            super::recorded,
        )
    }
}

/// Runs the scenario the policy allows and describes it as Evidence.
/// The run stops early, leaving no process behind, once `interrupted`
/// says so.
fn capture_draft(
    input: CaptureProcessScenarioInput,
    policy: &CapturePolicy,
    interrupted: &dyn Fn() -> Option<Interruption>,
) -> Result<EvidenceDraft, ToolError> {
    let missing = policy.missing(input.approved);
    if !missing.is_empty() {
        return Err(ToolError::new(
            ErrorCode::CaptureNotPermitted,
            format!(
                "capture_process_scenario did not run; missing: {}",
                missing.join("; ")
            ),
        )
        .with_data(json!({"missing": missing, "policy": policy.status()})));
    }
    let values: Vec<String> = input
        .environment
        .iter()
        .map(|e| e.value.clone())
        .filter(|v| !v.is_empty())
        .collect();
    let scrubbed = |mut e: ToolError| {
        e.message = scrub(&e.message, &values);
        e
    };
    let question_chars = input.question.chars().count();
    if question_chars == 0
        || question_chars > MAX_QUESTION_CHARS
        || input.question.trim().is_empty()
    {
        return Err(ToolError::invalid_arguments(format!(
            "question has {question_chars} characters; give 1-{MAX_QUESTION_CHARS} saying what \
             the run should answer"
        )));
    }
    // Opened once beneath the operator's roots; the host runs the program
    // from these descriptors.
    let (executable, program) = policy
        .executable(&input.executable)
        .map_err(ToolError::from)?;
    let (working_directory, working_dir) = policy
        .working_directory(&input.working_directory)
        .map_err(ToolError::from)?;
    let scenario = Scenario {
        executable,
        working_directory,
        network: policy.network(),
        arguments: input.arguments,
        environment: input.environment,
        stdin: input.stdin,
        timeout_ms: input.timeout_ms.unwrap_or(30_000),
        idle_timeout_ms: input.idle_timeout_ms.unwrap_or(30_000),
        limits: input.limits.unwrap_or_default(),
        run_as: policy.run_as().map(|r| RunAs {
            uid: r.uid,
            gid: r.gid,
        }),
    };
    scenario
        .validate()
        .map_err(|e| scrubbed(ToolError::from(e)))?;
    let subject = subject_of(&program.file, &scenario.executable)?;
    let opened = capture::Opened {
        program: &program,
        working_directory: working_dir.as_fd(),
    };
    let stop = || interrupted().is_some();
    let capture = capture::run_opened(
        &scenario,
        policy.host(),
        &opened,
        capture::HOST_GRACE,
        &stop,
    )
    .map_err(|e| match (&e, interrupted()) {
        (CaptureError::Stopped { .. }, Some(Interruption::TimedOut(_))) => {
            ToolError::new(ErrorCode::CallTimeout, e.to_string())
        }
        _ => scrubbed(ToolError::from(e)),
    })?;
    let result = serde_json::to_value(&capture).map_err(|e| {
        ToolError::new(
            ErrorCode::EvidenceError,
            format!("cannot encode the capture: {e}"),
        )
    })?;
    let secrets = Secrets::of(&scenario);
    let draft = EvidenceDraft {
        operation: CAPTURE_PROCESS_SCENARIO.to_string(),
        subject: Some(subject),
        provider: capture_identity(),
        parameters: parameters(&scenario, &secrets.redact_str(&input.question)),
        result,
        confidence: Confidence::Observed,
        limitations: capture.limitations.clone(),
        locations: Vec::new(),
        local_path: Some(scenario.executable.display().to_string()),
    };
    Ok(draft)
}

/// The recorded parameters: the redacted scenario (no secret value, and
/// no secret's occurrence in arguments, other values or stdin) and the
/// question.
///
/// Unlike the static tools, the paths stay in: a capture is an experiment
/// on this machine, and where the program ran is part of what was done
/// (the working-directory listing is relative to it, and the crash module
/// map names the mapped files by path). Two runs of the same bytes from
/// different places are different experiments, so their Evidence differs.
fn parameters(scenario: &Scenario, question: &str) -> Value {
    json!({
        "scenario": scenario.redacted(),
        "question": question,
    })
}

/// The executable as a subject: its sha256 and, when it opens as a native
/// image, its format and (single-slice) architecture; otherwise `file`.
fn subject_of(file: &ConfinedFile, executable: &Path) -> Result<Subject, ToolError> {
    if let Ok(image) = NativeImage::from_file(file, executable) {
        let architecture = match image.documents() {
            [only] => Some(only.architecture.clone()),
            _ => None,
        };
        return Ok(Subject {
            sha256: image.sha256().to_string(),
            format: image.format().as_str().to_string(),
            architecture,
        });
    }
    Ok(Subject {
        sha256: file
            .sha256(&mut |_, _| true)
            .ok()
            .flatten()
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::Unreadable,
                    format!("cannot read {}", file.shown()),
                )
            })?,
        format: "file".to_string(),
        architecture: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_requests_never_quote_an_environment_value() {
        let arguments = json!({
            "executable": "/bin/true",
            "working_directory": "/",
            "environment": [{"name": "TOKEN", "value": "s3cr3t-value", "secret": true}],
            "question": "q",
            "timeout_ms": "s3cr3t-value",
        });
        let Value::Object(arguments) = arguments else {
            unreachable!("an object literal")
        };
        let message = parse(arguments)
            .expect_err("timeout_ms is not a number")
            .message;
        assert!(message.contains("[redacted]"), "{message}");
        assert!(!message.contains("s3cr3t"), "{message}");
    }

    #[test]
    fn longer_values_are_scrubbed_before_their_prefixes() {
        let values = ["ab".to_string(), "abcd".to_string()];
        assert_eq!(scrub("x abcd ab", &values), "x [redacted] [redacted]");
    }

    #[test]
    fn parameters_hold_the_redacted_scenario_and_question() {
        let scenario: Scenario = serde_json::from_value(json!({
            "executable": "/bin/true",
            "working_directory": "/",
            "environment": [{"name": "TOKEN", "value": "hidden", "secret": true}],
        }))
        .expect("scenario");
        let p = parameters(&scenario, "why?");
        assert_eq!(p["question"], json!("why?"));
        assert_eq!(
            p["scenario"]["environment"][0]["value"],
            json!("[redacted]")
        );
        assert!(!p.to_string().contains("hidden"));
    }
}
