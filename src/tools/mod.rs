//! The tool catalog and its handlers.
//!
//! `catalog.toml` is the declarative source; `build.rs` turns it into
//! [`ToolName`], and [`call`] matches on it exhaustively, so a tool listed in
//! the catalog without a handler does not compile. Input schemas come from the
//! typed input structs (schemars). Every success is `{result, evidence}` with
//! the Evidence record inline (`null` for pure session-control tools); every
//! failure is `{error: {code, message, remediation}}` and carries no Evidence.

mod artifacts;
mod capture;
mod code;
pub mod compare;
mod correlate;
mod errors;
mod inputs;
mod inventory;
mod javascript;
mod layout;
mod lifecycle;
mod paging;
mod pattern;
mod procedures;
mod records;
mod schema;
mod search;
mod strings;
mod trace;
mod unknowns;

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

pub use crate::catalog::generated::tools::{CATALOG, ToolName};
use crate::catalog::spec::{Effect, ToolSpec};
use crate::ground::canonical::without_null_members;
use crate::providers::native::Progress;
use crate::session::{Evidence, EvidenceDraft, Session};
pub use errors::ToolError;

/// The catalog entry of a tool.
pub fn spec(tool: ToolName) -> Option<&'static ToolSpec> {
    CATALOG.iter().find(|t| t.name == tool.as_str())
}

/// The JSON schema of a tool's input, as `tools/list` serves it.
pub fn input_schema(tool: ToolName) -> Arc<JsonObject> {
    Arc::new(schema::lean(derived_schema(tool).as_ref().clone()))
}

/// The schema schemars derives from a tool's typed input.
fn derived_schema(tool: ToolName) -> Arc<JsonObject> {
    use rmcp::handler::server::tool::schema_for_type;
    match tool {
        ToolName::BinarySession => schema_for_type::<inputs::BinarySessionInput>(),
        ToolName::OpenBinary => schema_for_type::<inputs::OpenBinaryInput>(),
        ToolName::CloseBinary => schema_for_type::<inputs::CloseBinaryInput>(),
        ToolName::ListDocuments => schema_for_type::<inputs::ListDocumentsInput>(),
        ToolName::SetCurrentDocument => schema_for_type::<inputs::SetCurrentDocumentInput>(),
        ToolName::BinaryOverview => schema_for_type::<inputs::BinaryOverviewInput>(),
        ToolName::ListProcedures => schema_for_type::<inputs::ListProceduresInput>(),
        ToolName::SearchProcedures => schema_for_type::<inputs::SearchInput>(),
        ToolName::ProcedureAddress => schema_for_type::<inputs::ProcedureAddressInput>(),
        ToolName::InspectBinaryLayout => schema_for_type::<inputs::InspectBinaryLayoutInput>(),
        ToolName::SearchStrings => schema_for_type::<inputs::SearchInput>(),
        ToolName::ResolveContainingProcedure => {
            schema_for_type::<inputs::ResolveContainingProcedureInput>()
        }
        ToolName::AnalyzeFunction => schema_for_type::<inputs::AnalyzeFunctionInput>(),
        ToolName::Xrefs => schema_for_type::<inputs::XrefsInput>(),
        ToolName::ProcedureCallers | ToolName::ProcedureCallees => {
            schema_for_type::<inputs::ProcedureCallsInput>()
        }
        ToolName::TraceFeature => schema_for_type::<inputs::TraceFeatureInput>(),
        ToolName::BuildCallPath => schema_for_type::<inputs::BuildCallPathInput>(),
        ToolName::CompareFunctions => schema_for_type::<inputs::CompareFunctionsInput>(),
        ToolName::VerifyReconstruction => schema_for_type::<inputs::VerifyReconstructionInput>(),
        ToolName::InspectArtifact => schema_for_type::<inputs::InspectArtifactInput>(),
        ToolName::CompareArtifacts => schema_for_type::<inputs::CompareArtifactsInput>(),
        ToolName::CompareProcessCaptures => {
            schema_for_type::<inputs::CompareProcessCapturesInput>()
        }
        ToolName::CorrelateStaticAndRuntime => {
            schema_for_type::<inputs::CorrelateStaticAndRuntimeInput>()
        }
        ToolName::ListEvidence => schema_for_type::<inputs::ListEvidenceInput>(),
        ToolName::GetEvidence => schema_for_type::<inputs::GetEvidenceInput>(),
        ToolName::ExportEvidenceBundle => schema_for_type::<inputs::ExportEvidenceBundleInput>(),
        ToolName::ImportEvidenceBundle => schema_for_type::<inputs::ImportEvidenceBundleInput>(),
        ToolName::RecordUnknown => schema_for_type::<inputs::RecordUnknownInput>(),
        ToolName::ListUnknowns => schema_for_type::<inputs::ListUnknownsInput>(),
        ToolName::UpdateUnknown => schema_for_type::<inputs::UpdateUnknownInput>(),
        ToolName::VerifyUnknownResolution => {
            schema_for_type::<inputs::VerifyUnknownResolutionInput>()
        }
        ToolName::CaptureProcessScenario => {
            schema_for_type::<inputs::CaptureProcessScenarioInput>()
        }
        ToolName::AnalyzeJavascriptApplication => {
            schema_for_type::<inputs::AnalyzeJavascriptApplicationInput>()
        }
        ToolName::InspectAnalysisView => schema_for_type::<inputs::InspectAnalysisViewInput>(),
        ToolName::TraceApplicationFeature => {
            schema_for_type::<inputs::TraceApplicationFeatureInput>()
        }
        ToolName::CompareApplicationVersions => {
            schema_for_type::<inputs::CompareApplicationVersionsInput>()
        }
    }
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
pub fn availability(tool: ToolName, session: &Session) -> Result<(), &'static str> {
    let needs_target = spec(tool).is_some_and(|s| s.requires_target);
    if needs_target && session.artifact().is_none() {
        return Err("target_required");
    }
    if needs_target && !artifact_tool(tool) && session.target().is_none() {
        return Err("no_code_documents");
    }
    // Running a process is off until the operator enables capture.
    if spec(tool).is_some_and(|s| s.effects.contains(&Effect::LaunchesProcess))
        && !session.capture_policy().is_enabled()
    {
        return Err("policy_disabled");
    }
    // Writing is off until the operator names a write root.
    if spec(tool).is_some_and(|s| s.effects.contains(&Effect::WritesFiles))
        && !session.write_roots().is_enabled()
    {
        return Err("policy_disabled");
    }
    Ok(())
}

/// Tools that read the opened artifact as a whole, so an archive (which has
/// no code documents) serves them.
fn artifact_tool(tool: ToolName) -> bool {
    matches!(tool, ToolName::InspectArtifact)
}

/// Runs one tool against the session. `progress` receives `(done, total)`
/// while a whole-document index is being built.
pub fn call(
    tool: ToolName,
    arguments: JsonObject,
    session: &mut Session,
    progress: Progress<'_>,
) -> ToolOutput {
    let outcome = match tool {
        ToolName::BinarySession => {
            inputs::parse(arguments).and_then(|i| lifecycle::binary_session(i, session))
        }
        ToolName::OpenBinary => {
            inputs::parse(arguments).and_then(|i| lifecycle::open_binary(i, session))
        }
        ToolName::CloseBinary => {
            inputs::parse(arguments).and_then(|i| lifecycle::close_binary(i, session))
        }
        ToolName::ListDocuments => {
            inputs::parse(arguments).and_then(|i| inventory::list_documents(i, session))
        }
        ToolName::SetCurrentDocument => {
            inputs::parse(arguments).and_then(|i| lifecycle::set_current_document(i, session))
        }
        ToolName::BinaryOverview => {
            inputs::parse(arguments).and_then(|i| inventory::binary_overview(i, session))
        }
        ToolName::ListProcedures => {
            inputs::parse(arguments).and_then(|i| inventory::list_procedures(i, session, progress))
        }
        ToolName::SearchProcedures => {
            inputs::parse(arguments).and_then(|i| procedures::search_procedures(i, session))
        }
        ToolName::ProcedureAddress => {
            inputs::parse(arguments).and_then(|i| procedures::procedure_address(i, session))
        }
        ToolName::InspectBinaryLayout => {
            inputs::parse(arguments).and_then(|i| layout::inspect_binary_layout(i, session))
        }
        ToolName::SearchStrings => {
            inputs::parse(arguments).and_then(|i| strings::search_strings(i, session))
        }
        ToolName::ResolveContainingProcedure => inputs::parse(arguments)
            .and_then(|i| code::resolve_containing_procedure(i, session, progress)),
        ToolName::AnalyzeFunction => {
            inputs::parse(arguments).and_then(|i| code::analyze_function(i, session, progress))
        }
        ToolName::Xrefs => inputs::parse(arguments).and_then(|i| code::xrefs(i, session, progress)),
        ToolName::ProcedureCallers => {
            inputs::parse(arguments).and_then(|i| code::procedure_callers(i, session, progress))
        }
        ToolName::ProcedureCallees => {
            inputs::parse(arguments).and_then(|i| code::procedure_callees(i, session, progress))
        }
        ToolName::TraceFeature => {
            inputs::parse(arguments).and_then(|i| trace::trace_feature(i, session, progress))
        }
        ToolName::BuildCallPath => {
            inputs::parse(arguments).and_then(|i| trace::build_call_path(i, session, progress))
        }
        ToolName::CompareFunctions => {
            inputs::parse(arguments).and_then(|i| compare::compare_functions(i, session))
        }
        ToolName::VerifyReconstruction => {
            inputs::parse(arguments).and_then(|i| compare::verify_reconstruction(i, session))
        }
        ToolName::InspectArtifact => {
            inputs::parse(arguments).and_then(|i| artifacts::inspect_artifact(i, session))
        }
        ToolName::CompareArtifacts => {
            inputs::parse(arguments).and_then(|i| compare::artifacts::compare_artifacts(i, session))
        }
        ToolName::CompareProcessCaptures => inputs::parse(arguments)
            .and_then(|i| compare::captures::compare_process_captures(i, session)),
        ToolName::CorrelateStaticAndRuntime => inputs::parse(arguments)
            .and_then(|i| correlate::correlate_static_and_runtime(i, session, progress)),
        ToolName::ListEvidence => {
            inputs::parse(arguments).and_then(|i| records::list_evidence(i, session))
        }
        ToolName::GetEvidence => {
            inputs::parse(arguments).and_then(|i| records::get_evidence(i, session))
        }
        ToolName::ExportEvidenceBundle => {
            inputs::parse(arguments).and_then(|i| records::export_evidence_bundle(i, session))
        }
        ToolName::ImportEvidenceBundle => {
            inputs::parse(arguments).and_then(|i| records::import_evidence_bundle(i, session))
        }
        ToolName::RecordUnknown => {
            inputs::parse(arguments).and_then(|i| unknowns::record_unknown(i, session))
        }
        ToolName::ListUnknowns => {
            inputs::parse(arguments).and_then(|i| unknowns::list_unknowns(i, session))
        }
        ToolName::UpdateUnknown => {
            inputs::parse(arguments).and_then(|i| unknowns::update_unknown(i, session))
        }
        ToolName::VerifyUnknownResolution => {
            inputs::parse(arguments).and_then(|i| unknowns::verify_unknown_resolution(i, session))
        }
        ToolName::CaptureProcessScenario => {
            capture::parse(arguments).and_then(|i| capture::capture(i, session))
        }
        ToolName::AnalyzeJavascriptApplication => {
            inputs::parse(arguments).and_then(|i| javascript::analyze(i, session, progress))
        }
        ToolName::InspectAnalysisView => {
            inputs::parse(arguments).and_then(|i| javascript::view(i, session))
        }
        ToolName::TraceApplicationFeature => {
            inputs::parse(arguments).and_then(|i| javascript::trace(i, session))
        }
        ToolName::CompareApplicationVersions => {
            inputs::parse(arguments).and_then(|i| javascript::compare(i, session))
        }
    };
    output(outcome)
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

/// Tools whose first call on a document builds its code index and
/// procedure inventory (seconds on a large binary).
fn builds_index(tool: ToolName) -> bool {
    matches!(
        tool,
        ToolName::ListProcedures
            | ToolName::SearchProcedures
            | ToolName::ProcedureAddress
            | ToolName::ResolveContainingProcedure
            | ToolName::AnalyzeFunction
            | ToolName::Xrefs
            | ToolName::ProcedureCallers
            | ToolName::ProcedureCallees
            | ToolName::TraceFeature
            | ToolName::BuildCallPath
            | ToolName::CorrelateStaticAndRuntime
    )
}

/// Builds what `tool` will need of the open target (the document's code
/// index and procedure inventory, cached on the target) without holding
/// the session, reporting progress, so other requests are answered
/// meanwhile; the tool, run next under the lock, finds it built. Anything
/// that goes wrong here is left for the tool itself to report.
pub fn prepare(
    tool: ToolName,
    arguments: &JsonObject,
    session: &std::sync::Mutex<Session>,
    progress: Progress<'_>,
) {
    if !builds_index(tool) {
        return;
    }
    let document = arguments.get("document").and_then(Value::as_str);
    let (target, index) = {
        let session = session.lock().unwrap_or_else(|p| p.into_inner());
        match (session.target().cloned(), session.document_index(document)) {
            (Some(target), Ok(index)) => (target, index),
            _ => return,
        }
    };
    let _ = target.procedure_index_with_progress(index, progress);
}

/// Records `draft` and answers with its result and Evidence.
pub(crate) fn recorded(session: &mut Session, draft: EvidenceDraft) -> HandlerResult {
    let result = draft.result.clone();
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}

/// Runs `work` on what `take` copies out of the session without holding
/// the session meanwhile, then `record`s what it drafted with the session
/// held again: for tools whose work is long (reading an application,
/// running a capture).
pub(crate) fn without_lock<T, D>(
    session: &std::sync::Mutex<Session>,
    take: impl FnOnce(&Session) -> T,
    work: impl FnOnce(T) -> Result<D, ToolError>,
    record: impl FnOnce(&mut Session, D) -> HandlerResult,
) -> HandlerResult {
    let lock = || session.lock().unwrap_or_else(|p| p.into_inner());
    let taken = take(&lock());
    let draft = work(taken)?;
    record(&mut lock(), draft)
}

/// `capture_process_scenario` without holding the session while the
/// program runs (see `capture::capture_unlocked`).
pub fn call_capture_unlocked(
    arguments: JsonObject,
    session: &std::sync::Mutex<Session>,
) -> ToolOutput {
    output(capture::parse(arguments).and_then(|i| capture::capture_unlocked(i, session)))
}

/// `analyze_javascript_application` without holding the session while it
/// reads and parses the application (see `javascript::analyze_unlocked`).
pub fn call_analyze_unlocked(
    arguments: JsonObject,
    session: &std::sync::Mutex<Session>,
    progress: Progress<'_>,
) -> ToolOutput {
    output(
        inputs::parse(arguments).and_then(|i| javascript::analyze_unlocked(i, session, progress)),
    )
}

/// `open_binary` without holding the session while it works: the session
/// is locked only to take its opener and, at the end, to install the
/// target and record the Evidence. Mapping and hashing (which a huge file
/// makes long) report progress through `watch` and stop when it says so,
/// leaving the previous target active; meanwhile every other request is
/// answered.
pub fn call_open_binary(
    arguments: JsonObject,
    session: &std::sync::Mutex<Session>,
    watch: &crate::session::Watch<'_>,
) -> ToolOutput {
    let lock = || session.lock().unwrap_or_else(|p| p.into_inner());
    let outcome = inputs::parse(arguments).and_then(|input: inputs::OpenBinaryInput| {
        let opener = lock().opener();
        let opened = opener
            .open(
                std::path::Path::new(&input.path),
                input.provider_id.as_deref(),
                watch,
            )
            .map_err(ToolError::from)?;
        lifecycle::installed(input, &opened, &mut lock())
    });
    output(outcome)
}

/// What a handler returns.
pub(crate) type HandlerResult = Result<(Value, Option<Evidence>), ToolError>;

#[cfg(test)]
mod tests {
    use super::*;

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
