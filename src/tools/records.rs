//! Evidence ledger tools: list and get records, export and import bundles.
//!
//! None of these records Evidence. Listing and reading are reads of the
//! session, not of the target: a record of "what the ledger held" would
//! grow the ledger it describes and make two identical listings differ.
//! Export and import are session control: the bundle's content is the
//! Evidence, and a record of a local file's path would say nothing about
//! the artifact under investigation.

use crate::tools::tool::{Call, Tool};
use std::path::Path;

use serde_json::{Value, json};

use super::inputs::{
    ExportEvidenceBundleInput, GetEvidenceInput, ImportEvidenceBundleInput, ListEvidenceInput,
};
use super::paging::PageRequest;
use super::{HandlerResult, ToolError, ToolName};

pub struct ListEvidence;

impl Tool for ListEvidence {
    const NAME: ToolName = ToolName::ListEvidence;
    type Input = ListEvidenceInput;

    fn run(input: ListEvidenceInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let page = PageRequest::new(input.offset, input.limit, 100, 500)?;
        let matching: Vec<_> = session
            .ledger()
            .records()
            .filter(|r| {
                input
                    .operation
                    .as_deref()
                    .is_none_or(|op| r.body.operation == op)
            })
            .collect();
        let items: Vec<Value> = page
            .slice(&matching)
            .iter()
            .map(|r| {
                json!({
                    "evidence_id": r.evidence_id,
                    "operation": r.body.operation,
                    "subject": r.body.subject,
                    "provider": r.body.provider,
                    "confidence": r.body.confidence,
                })
            })
            .collect();
        let mut result = json!({"operation": input.operation, "items": items});
        page.annotate(matching.len(), &mut result);
        Ok((result, None))
    }
}

pub struct GetEvidence;

impl Tool for GetEvidence {
    const NAME: ToolName = ToolName::GetEvidence;
    type Input = GetEvidenceInput;

    fn run(input: GetEvidenceInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let record = super::shared::ledger::fetch(session, "evidence_id", &input.evidence_id)?;
        Ok((json!(record), None))
    }
}

pub struct ExportEvidenceBundle;

impl Tool for ExportEvidenceBundle {
    const NAME: ToolName = ToolName::ExportEvidenceBundle;
    type Input = ExportEvidenceBundleInput;

    fn run(input: ExportEvidenceBundleInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        if !input.approved {
            return Err(ToolError::approval_required(
                ToolName::ExportEvidenceBundle.as_str(),
            ));
        }
        let summary = session.export_bundle(Path::new(&input.path), input.overwrite)?;
        Ok((json!(summary), None))
    }
}

pub struct ImportEvidenceBundle;

impl Tool for ImportEvidenceBundle {
    const NAME: ToolName = ToolName::ImportEvidenceBundle;
    type Input = ImportEvidenceBundleInput;

    fn run(input: ImportEvidenceBundleInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let summary = session.import_bundle(Path::new(&input.path))?;
        Ok((json!(summary), None))
    }
}
