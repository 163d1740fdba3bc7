//! A tool's side of the ledger: recording what it observed or derived, and
//! fetching retained records by ID with typed failures.

use crate::tools::errors::ErrorCode;
use std::sync::Arc;

use serde_json::Value;

use crate::capture::Capture;
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::capture_records::CAPTURE_PROCESS_SCENARIO;
use crate::session::evidence::is_evidence_id;
use crate::session::{Confidence, Evidence, EvidenceDraft, Session, native_identity};
use crate::tools::{HandlerResult, ToolError, ToolName};

/// Records `draft` and answers with its result and Evidence.
pub(crate) fn recorded(session: &mut Session, draft: EvidenceDraft) -> HandlerResult {
    let result = draft.result.clone();
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}

/// Records Evidence computed from other records (a comparison, a
/// verification): `operation` is the tool name, confidence derived,
/// `parameters` name the input Evidence ids (ids are identity; local paths
/// never are). Such a record spans several subjects, so it has none of its
/// own.
pub fn record_derived(
    session: &mut Session,
    tool: ToolName,
    parameters: Value,
    result: Value,
    limitations: Vec<String>,
) -> HandlerResult {
    let draft = EvidenceDraft {
        operation: tool.as_str().to_owned(),
        subject: None,
        provider: native_identity(),
        parameters,
        result,
        confidence: Confidence::Derived,
        limitations,
        locations: Vec::new(),
        local_path: None,
    };
    recorded(session, draft)
}

/// Why a retained record cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{field} `{id}` is not an Evidence ID (ev_ followed by 64 lowercase hex digits)")]
    Malformed { field: String, id: String },
    #[error("{field} `{id}` is not retained in this session's Evidence ledger")]
    NotRetained { field: String, id: String },
    #[error("{field} `{id}` is {found} Evidence; this needs {expected} Evidence")]
    WrongKind {
        field: String,
        id: String,
        found: String,
        expected: String,
    },
}

/// The retained record `id`, named `field` in messages.
pub fn fetch(session: &Session, field: &str, id: &str) -> Result<Arc<Evidence>, FetchError> {
    if !is_evidence_id(id) {
        return Err(FetchError::Malformed {
            field: field.to_owned(),
            id: excerpt(id, EXCERPT_CHARS),
        });
    }
    session
        .ledger()
        .get(id)
        .cloned()
        .ok_or_else(|| FetchError::NotRetained {
            field: field.to_owned(),
            id: id.to_owned(),
        })
}

/// The retained record `id`, which must come from one of `operations`.
pub fn fetch_operation(
    session: &Session,
    field: &str,
    id: &str,
    operations: &[&str],
) -> Result<Arc<Evidence>, FetchError> {
    let evidence = fetch(session, field, id)?;
    if operations.contains(&evidence.body.operation.as_str()) {
        Ok(evidence)
    } else {
        Err(FetchError::WrongKind {
            field: field.to_owned(),
            id: id.to_owned(),
            found: excerpt(&evidence.body.operation, EXCERPT_CHARS),
            expected: operations.join(" or "),
        })
    }
}

/// The capture held by the retained record `id` (named `field` in
/// messages): the record must be capture Evidence whose result validates.
pub(crate) fn read_capture(session: &Session, field: &str, id: &str) -> Result<Capture, ToolError> {
    let evidence = fetch_operation(session, field, id, &[CAPTURE_PROCESS_SCENARIO])?;
    let invalid = |reason: String| {
        ToolError::new(
            ErrorCode::InvalidCapture,
            format!("{field} `{id}` is not a valid process capture: {reason}"),
        )
    };
    let capture: Capture =
        serde_json::from_value(evidence.body.result.clone()).map_err(|e| invalid(e.to_string()))?;
    capture.validate().map_err(|e| invalid(e.to_string()))?;
    Ok(capture)
}
