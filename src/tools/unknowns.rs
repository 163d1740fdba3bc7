//! Residual-unknown tools. Mutations need `approved: true` and carry the
//! mutation's Evidence inline; listing and verification read the session.

use crate::tools::tool::{Call, Tool};
use serde_json::json;

use super::inputs::{
    ListUnknownsInput, RecordUnknownInput, UpdateUnknownInput, VerifyUnknownResolutionInput,
};
use super::paging::PageRequest;
use super::{HandlerResult, ToolError, ToolName};
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::unknowns::{RecordRequest, Status, UnknownState, UpdateRequest, is_unknown_id};

/// A malformed ID is the caller's mistake, not a missing unknown.
fn check_id(id: &str) -> Result<(), ToolError> {
    if is_unknown_id(id) {
        Ok(())
    } else {
        Err(ToolError::invalid_arguments(format!(
            "`{}` is not an unknown ID (unk_ and 64 lowercase hex digits, as list_unknowns returns)",
            excerpt(id, EXCERPT_CHARS)
        )))
    }
}

pub struct RecordUnknown;

impl Tool for RecordUnknown {
    const NAME: ToolName = ToolName::RecordUnknown;
    type Input = RecordUnknownInput;

    fn run(input: RecordUnknownInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        if !input.approved {
            return Err(ToolError::approval_required(
                ToolName::RecordUnknown.as_str(),
            ));
        }
        let request = RecordRequest {
            question: input.question,
            domain: input.domain,
            state: UnknownState {
                // Decided by record_unknown from the contradicting IDs.
                status: Status::Open,
                severity: input.severity,
                supporting_evidence_ids: input.supporting_evidence_ids,
                contradicting_evidence_ids: input.contradicting_evidence_ids,
                required_authority: input.required_authority,
                required_confidence: input.required_confidence,
                recommended_probes: input.recommended_probes,
                relationships: input.relationships,
                resolution: None,
            },
        };
        let (head, evidence) = session.record_unknown(request)?;
        Ok((json!(head), Some(evidence)))
    }
}

pub struct ListUnknowns;

impl Tool for ListUnknowns {
    const NAME: ToolName = ToolName::ListUnknowns;
    type Input = ListUnknownsInput;

    fn run(input: ListUnknownsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let page = PageRequest::new(input.offset, input.limit, 100, 500)?;
        let heads: Vec<_> = session
            .ledger()
            .unknowns()
            .heads()
            .filter(|h| input.status.is_none_or(|s| h.state.status == s))
            .filter(|h| input.severity.is_none_or(|s| h.state.severity == s))
            .filter(|h| input.domain.as_deref().is_none_or(|d| h.domain == d))
            .collect();
        let mut result = json!({"items": page.slice(&heads)});
        page.annotate(heads.len(), &mut result);
        Ok((result, None))
    }
}

pub struct UpdateUnknown;

impl Tool for UpdateUnknown {
    const NAME: ToolName = ToolName::UpdateUnknown;
    type Input = UpdateUnknownInput;

    fn run(input: UpdateUnknownInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        if !input.approved {
            return Err(ToolError::approval_required(
                ToolName::UpdateUnknown.as_str(),
            ));
        }
        check_id(&input.unknown_id)?;
        let request = UpdateRequest {
            unknown_id: input.unknown_id,
            expected_revision: input.expected_revision,
            state: UnknownState {
                status: input.status,
                severity: input.severity,
                supporting_evidence_ids: input.supporting_evidence_ids,
                contradicting_evidence_ids: input.contradicting_evidence_ids,
                required_authority: input.required_authority,
                required_confidence: input.required_confidence,
                recommended_probes: input.recommended_probes,
                relationships: input.relationships,
                resolution: input.resolution,
            },
        };
        let (head, evidence) = session.update_unknown(request)?;
        Ok((json!(head), Some(evidence)))
    }
}

pub struct VerifyUnknownResolution;

impl Tool for VerifyUnknownResolution {
    const NAME: ToolName = ToolName::VerifyUnknownResolution;
    type Input = VerifyUnknownResolutionInput;

    fn run(input: VerifyUnknownResolutionInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        check_id(&input.unknown_id)?;
        let verification = session
            .verify_unknown(&input.unknown_id)
            .map_err(crate::session::SessionError::from)?;
        Ok((json!(verification), None))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::session::Session;
    use crate::tools::{Call, ToolName, ToolOutput, call};

    fn failure(tool: ToolName, arguments: Value) -> crate::tools::ToolError {
        let Value::Object(arguments) = arguments else {
            unreachable!("arguments are an object")
        };
        match Call::on(&mut Session::default(), |c| call(tool, arguments, c)) {
            ToolOutput::Failure(error) => error,
            ToolOutput::Success { result, .. } => panic!("expected a failure, got {result}"),
        }
    }

    /// Refusals quote what they refuse, but never more than an excerpt of
    /// it: a megabyte argument does not come back in the message.
    #[test]
    fn refusals_quote_hostile_arguments_only_in_part() {
        let huge = "A".repeat(1 << 20);
        let cases = [
            (
                ToolName::RecordUnknown,
                json!({"question": "q", "domain": "d", "severity": "low", "approved": true,
                       "supporting_evidence_ids": [huge]}),
            ),
            (
                ToolName::RecordUnknown,
                json!({"question": "q", "domain": "d", "severity": "low", "approved": true,
                       "relationships": [{"type": "depends-on", "unknown_id": huge}]}),
            ),
            (
                ToolName::RecordUnknown,
                json!({"question": "q", "domain": "d", "severity": huge, "approved": true}),
            ),
            (
                ToolName::UpdateUnknown,
                json!({"unknown_id": huge, "expected_revision": 1, "status": "open",
                       "severity": "low", "approved": true}),
            ),
            (
                ToolName::VerifyUnknownResolution,
                json!({"unknown_id": huge}),
            ),
            (ToolName::ListUnknowns, json!({ huge.clone(): 1 })),
        ];
        for (tool, arguments) in cases {
            let error = failure(tool, arguments);
            assert_eq!(
                error.code, "invalid_arguments",
                "{tool:?}: {}",
                error.message
            );
            assert!(
                error.message.len() < 1024 && error.message.contains("AAAA"),
                "{tool:?} echoed {} bytes",
                error.message.len()
            );
        }
    }
}
