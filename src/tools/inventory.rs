//! Read tools over the active target: documents, overview, procedures.

use serde_json::{Value, json};

use super::inputs::{BinaryOverviewInput, ListDocumentsInput, ListProceduresInput};
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::format_address;
use crate::providers::native::MAX_PROCEDURES;
use crate::session::Session;

pub(crate) fn list_documents(_: ListDocumentsInput, session: &mut Session) -> HandlerResult {
    let target = session.require_target()?.clone();
    let names = target.document_names();
    let draft = target.observation(
        ToolName::ListDocuments.as_str(),
        target.subject(),
        json!({}),
        json!(names),
        Vec::new(),
    );
    let evidence = session.record(draft)?;
    Ok((json!(names), Some(evidence)))
}

pub(crate) fn binary_overview(input: BinaryOverviewInput, session: &mut Session) -> HandlerResult {
    let limit = input.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ToolError::invalid_arguments(format!(
            "limit {limit} is outside 1-200"
        )));
    }
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let overview = target.image.overview(document, limit as usize)?;
    let mut limitations = Vec::new();
    if overview.segment_count > overview.segments.len() {
        limitations.push(format!(
            "{} of {} segments listed; raise limit to see more",
            overview.segments.len(),
            overview.segment_count
        ));
    }
    let mut result = serde_json::to_value(&overview).unwrap_or(Value::Null);
    result["document"] = json!(name);
    let draft = target.observation(
        ToolName::BinaryOverview.as_str(),
        target.document_subject(document),
        json!({"document": name, "limit": limit}),
        result.clone(),
        limitations,
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}

pub(crate) fn list_procedures(input: ListProceduresInput, session: &mut Session) -> HandlerResult {
    let limit = input.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ToolError::invalid_arguments(format!(
            "limit {limit} is outside 1-500"
        )));
    }
    let offset = input.offset.unwrap_or(0);
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let index = target.procedure_index(document)?;
    let inventory = &index.inventory;
    let total = inventory.procedures.len() as u64;
    let start = offset.min(total) as usize;
    let end = (offset.saturating_add(u64::from(limit))).min(total) as usize;
    let items: Vec<Value> = inventory.procedures[start..end]
        .iter()
        .map(|p| {
            let mut item = json!({"address": format_address(p.address)});
            if let Some(n) = &p.name {
                item["name"] = json!(n);
            }
            if !p.aliases.is_empty() {
                item["aliases"] = json!(p.aliases);
            }
            item
        })
        .collect();
    let has_more = (end as u64) < total;
    let mut limitations = Vec::new();
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
    let result = json!({
        "document": name,
        "items": items,
        "offset": offset,
        "limit": limit,
        "total": total,
        "next_offset": if has_more { json!(end) } else { Value::Null },
        "has_more": has_more,
        "truncated": inventory.truncated,
    });
    let draft = target.observation(
        ToolName::ListProcedures.as_str(),
        target.document_subject(document),
        json!({"document": name, "offset": offset, "limit": limit}),
        result.clone(),
        limitations,
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}
