//! Read tools over the active target: documents, overview, procedures.

use crate::tools::tool::{Call, Tool};
use serde_json::{Value, json};

use super::inputs::{BinaryOverviewInput, ListDocumentsInput, ListProceduresInput};
use super::paging::PageRequest;
use super::shared::document::Document;
use super::shared::procedures::{Scope, name_facts};
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::format_address;
use crate::providers::native::MAX_PROCEDURES;

pub struct ListDocuments;

impl Tool for ListDocuments {
    const NAME: ToolName = ToolName::ListDocuments;
    type Input = ListDocumentsInput;

    fn run(_: ListDocumentsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let target = session.require_target()?.clone();
        let names = target.document_names();
        let draft = target.file_observation(
            ToolName::ListDocuments.as_str(),
            target.subject(),
            json!({}),
            json!(names),
            Vec::new(),
        );
        let evidence = session.record(draft)?;
        Ok((json!(names), Some(evidence)))
    }
}

pub struct BinaryOverview;

impl Tool for BinaryOverview {
    const NAME: ToolName = ToolName::BinaryOverview;
    type Input = BinaryOverviewInput;

    fn run(input: BinaryOverviewInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let limit = input.limit.unwrap_or(50);
        if !(1..=200).contains(&limit) {
            return Err(ToolError::invalid_arguments(format!(
                "limit {limit} is outside 1-200"
            )));
        }
        let doc = Document::open(session, input.document.as_deref())?;
        let overview = doc.target.image.overview(doc.index, limit as usize)?;
        let mut limitations = Vec::new();
        if overview.segment_count > overview.segments.len() {
            limitations.push(format!(
                "{} of {} segments listed; raise limit to see more",
                overview.segments.len(),
                overview.segment_count
            ));
        }
        let mut result = serde_json::to_value(&overview).unwrap_or(Value::Null);
        result["document"] = json!(doc.name);
        doc.observe_file(
            session,
            ToolName::BinaryOverview,
            json!({"document": doc.name, "limit": limit}),
            result,
            limitations,
        )
    }
}

/// Most bytes of items one page of `list_procedures` carries: a hundred
/// ordinary procedures take about 10 KB; a page of long names stops early
/// and says where to go on (`next_offset`).
const PAGE_BYTES: usize = 24 * 1024;

pub struct ListProcedures;

impl Tool for ListProcedures {
    const NAME: ToolName = ToolName::ListProcedures;
    const BUILDS_INDEX: bool = true;
    type Input = ListProceduresInput;

    fn run(input: ListProceduresInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let page = PageRequest::new(input.offset, input.limit, 100, 500)?;
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let index = &scope.index;
        let inventory = &index.inventory;
        let items: Vec<Value> = page
            .slice(&inventory.procedures)
            .iter()
            .map(|p| {
                let mut item = json!({
                    "address": format_address(p.address),
                    "found_by": p.sources.names(),
                });
                name_facts(p, &mut item);
                if let Some(size) = p.size {
                    item["size"] = json!(size);
                }
                if let Some(library) = &p.library {
                    item["library"] = json!(library);
                }
                if let Some(parent) = p.part_of {
                    item["part_of"] = json!(format_address(parent));
                }
                item
            })
            .collect();
        let mut limitations = inventory.limitations.clone();
        if inventory.truncated {
            limitations.push(format!(
            "the inventory stops at its cap of {MAX_PROCEDURES} procedures (lowest addresses kept); \
             procedures above the last listed address were not enumerated, and names are not \
             offered for completion because uniqueness cannot be proven"
        ));
        }
        if inventory.non_utf8_names > 0 {
            limitations.push(format!(
                "{} symbol names were not valid UTF-8 and are not listed",
                inventory.non_utf8_names
            ));
        }
        let items = PageRequest::within(&items, PAGE_BYTES);
        let mut result =
            json!({"document": scope.name, "items": items, "truncated": inventory.truncated});
        page.annotate_returned(inventory.procedures.len(), items.len(), &mut result);
        let parameters =
            json!({"document": scope.name, "offset": page.offset, "limit": page.limit});
        scope.observe(
            session,
            ToolName::ListProcedures,
            parameters,
            result,
            limitations,
        )
    }
}
