//! The JavaScript/Electron application tools: `analyze_javascript_application`
//! runs the [`crate::javascript`] library and records the whole analysis as
//! Evidence; `inspect_analysis_view`, `trace_application_feature` and
//! `compare_application_versions` read such records back from the ledger
//! (retained or imported), validate them, and record what they derive.
//!
//! Shared here: reading an analysis out of a record, the layer of a node,
//! and the graph indexes the view and the trace both need.

mod analyze;
mod compare;
mod native_view;
mod trace;
mod view;

#[cfg(test)]
mod testkit;

use crate::tools::errors::ErrorCode;
use serde::Serialize;

use super::ToolError;
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::javascript::Analysis;
use crate::session::{Evidence, Session};

pub use analyze::AnalyzeJavascriptApplication;
pub use compare::CompareApplicationVersions;
pub use trace::TraceApplicationFeature;
pub use view::InspectAnalysisView;

/// The operation whose Evidence holds an [`Analysis`].
pub const ANALYZE_OPERATION: &str = "analyze_javascript_application";
/// The operation of the record that holds a whole analysis (the graph,
/// every finding). `analyze_javascript_application` answers a summary
/// whose `graph_evidence_id` names it, so no answer carries the graph, yet
/// the ledger and bundles keep it for the tools that read it.
pub const GRAPH_OPERATION: &str = "javascript_application_graph";

/// The analysis `evidence_id` stands for: an `analyze_javascript_application`
/// summary (through its `graph_evidence_id`), the graph record itself, or a
/// record from before summaries that holds the whole analysis. It must
/// still validate.
pub(crate) fn fetch_analysis(
    session: &Session,
    field: &str,
    evidence_id: &str,
) -> Result<Analysis, ToolError> {
    let evidence = super::shared::ledger::fetch_operation(
        session,
        field,
        evidence_id,
        &[ANALYZE_OPERATION, GRAPH_OPERATION],
    )?;
    let graph = graph_record(session, field, evidence)?;
    analysis_of(&graph, field)
}

/// The record that holds the whole analysis `evidence` stands for.
pub(crate) fn graph_record(
    session: &Session,
    field: &str,
    evidence: std::sync::Arc<Evidence>,
) -> Result<std::sync::Arc<Evidence>, ToolError> {
    match evidence.body.result.get("graph_evidence_id") {
        Some(serde_json::Value::String(graph)) if evidence.body.operation == ANALYZE_OPERATION => {
            Ok(super::shared::ledger::fetch_operation(
                session,
                field,
                graph,
                &[GRAPH_OPERATION],
            )?)
        }
        _ => Ok(evidence),
    }
}

/// Reads and validates the analysis in a record.
pub(crate) fn analysis_of(evidence: &Evidence, field: &str) -> Result<Analysis, ToolError> {
    let invalid = |detail: String| {
        ToolError::new(
            ErrorCode::AnalysisInvalid,
            format!(
                "{field} `{}` does not hold a valid application analysis: {}",
                evidence.evidence_id,
                excerpt(&detail, 2 * EXCERPT_CHARS)
            ),
        )
    };
    let analysis: Analysis =
        serde_json::from_value(evidence.body.result.clone()).map_err(|e| invalid(e.to_string()))?;
    analysis.validate().map_err(|e| invalid(e.to_string()))?;
    Ok(analysis)
}

/// Encodes a result value; failing is a defect, reported as such.
pub(crate) fn encode<T: Serialize>(value: &T, what: &str) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(value).map_err(|e| {
        ToolError::new(
            ErrorCode::EvidenceError,
            format!("cannot encode the {what}: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(result: serde_json::Value) -> Evidence {
        testkit::record(ANALYZE_OPERATION, result, Vec::new())
    }

    #[test]
    fn a_retained_analysis_is_read_back_and_a_tampered_one_refused() {
        let analysis = testkit::demo().0.build();
        let good = record(serde_json::to_value(&analysis).unwrap());
        assert_eq!(analysis_of(&good, "evidence_id").unwrap(), analysis);

        let mut tampered = analysis.clone();
        tampered.nodes[0].name = "elsewhere.js".into();
        let bad = record(serde_json::to_value(&tampered).unwrap());
        assert_eq!(
            analysis_of(&bad, "evidence_id").unwrap_err().code,
            "analysis_invalid"
        );
        let mut extra = serde_json::to_value(&analysis).unwrap();
        extra["surprise"] = json!(1);
        assert_eq!(
            analysis_of(&record(extra), "evidence_id").unwrap_err().code,
            "analysis_invalid"
        );
    }
}
