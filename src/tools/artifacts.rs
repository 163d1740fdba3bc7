//! `inspect_artifact`: the open artifact as a content-addressed inventory
//! graph with its findings, one page of each list per call.
//!
//! The walk happens once per target and limit set (the session keeps it);
//! each call records the page it returns as Evidence, so paging to the end
//! leaves every occurrence in the ledger for completion and comparison.

use crate::tools::errors::ErrorCode;
use crate::tools::tool::{Call, Tool};
use serde_json::json;

use super::inputs::InspectArtifactInput;
use super::paging::PageRequest;
use super::{HandlerResult, ToolError, ToolName};
use crate::artifacts::{Limits, SCHEMA_VERSION};
use crate::session::artifact_records::{InspectionPage, ListPage};
use crate::session::{Confidence, EvidenceDraft, Location, native_identity};

/// Default page sizes: occurrences are what a comparison needs; nodes and
/// edges are detail (an occurrence already names its node and parent).
/// Together they keep a default answer well under 32 KiB.
const DEFAULT_OCCURRENCES: u32 = 40;
const DEFAULT_GRAPH_PAGE: u32 = 20;
const MAX_PAGE: u32 = 500;

pub struct InspectArtifact;

impl Tool for InspectArtifact {
    const NAME: ToolName = ToolName::InspectArtifact;
    type Input = InspectArtifactInput;

    fn run(input: InspectArtifactInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let limits = input.limits.unwrap_or_default();
        limits.validate()?;
        let occurrences = PageRequest::new(
            input.occurrence_offset,
            input.occurrence_limit,
            DEFAULT_OCCURRENCES,
            MAX_PAGE,
        )?;
        let nodes = PageRequest::new(
            input.node_offset,
            input.node_limit,
            DEFAULT_GRAPH_PAGE,
            MAX_PAGE,
        )?;
        let edges = PageRequest::new(
            input.edge_offset,
            input.edge_limit,
            DEFAULT_GRAPH_PAGE,
            MAX_PAGE,
        )?;
        let artifact = session.require_artifact()?.clone();
        let inspection = artifact.inspection(&limits)?;
        let page = InspectionPage {
            schema_version: SCHEMA_VERSION,
            manifest: inspection.manifest.clone(),
            nodes: list_page(&inspection.nodes, nodes),
            occurrences: list_page(&inspection.occurrences, occurrences),
            edges: list_page(&inspection.edges, edges),
            findings: inspection.findings.clone(),
            coverage: inspection.coverage.clone(),
            limits: inspection.limits,
            limitations: inspection.limitations.clone(),
        };
        let result = serde_json::to_value(&page).map_err(|e| {
            ToolError::new(
                ErrorCode::EvidenceError,
                format!("cannot encode the inspection: {e}"),
            )
        })?;
        let draft = EvidenceDraft {
            operation: ToolName::InspectArtifact.as_str().to_string(),
            subject: Some(artifact.subject(&inspection.manifest.root_sha256)),
            provider: native_identity(),
            parameters: json!({
                "limits": limits_parameters(&limits),
                "occurrences": {"offset": occurrences.offset, "limit": occurrences.limit},
                "nodes": {"offset": nodes.offset, "limit": nodes.limit},
                "edges": {"offset": edges.offset, "limit": edges.limit},
            }),
            result: result.clone(),
            confidence: Confidence::Observed,
            limitations: inspection.limitations.clone(),
            locations: page
                .occurrences
                .items
                .iter()
                .filter(|o| !o.logical_path.is_empty())
                .take(32)
                .map(|o| Location::ArtifactPath {
                    path: o.logical_path.clone(),
                })
                .collect(),
            local_path: Some(artifact.display.clone()),
        };
        let evidence = session.record(draft)?;
        Ok((result, Some(evidence)))
    }
}

/// The requested page of a list, with the continuation fields.
fn list_page<T: Clone>(all: &[T], request: PageRequest) -> ListPage<T> {
    let next_offset = request.next_offset(all.len()).map(|n| n as u64);
    ListPage {
        items: request.slice(all).to_vec(),
        offset: request.offset,
        limit: u64::from(request.limit),
        total: all.len() as u64,
        next_offset,
        has_more: next_offset.is_some(),
    }
}

/// Limits as parameters: only the fields that differ from the defaults, so
/// a default call and an explicit-default call are the same Evidence.
fn limits_parameters(limits: &Limits) -> serde_json::Value {
    let defaults = Limits::default();
    let mut out = serde_json::Map::new();
    for ((name, value, _), (_, default, _)) in limits.fields().into_iter().zip(defaults.fields()) {
        if value != default {
            out.insert(name.to_string(), json!(value));
        }
    }
    serde_json::Value::Object(out)
}
