//! `search_strings`: text found in a document's data sections.

use serde_json::{Value, json};

use super::inputs::SearchStringsInput;
use super::pattern::Pattern;
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::format_address;
use crate::session::Session;

pub(crate) fn search_strings(input: SearchStringsInput, session: &mut Session) -> HandlerResult {
    let limit = input.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ToolError::invalid_arguments(format!(
            "limit {limit} is outside 1-100"
        )));
    }
    let offset = input.offset.unwrap_or(0);
    let case_sensitive = input.case_sensitive.unwrap_or(false);
    let mode = input.mode.unwrap_or_default();
    let pattern = Pattern::new(&input.pattern, mode, case_sensitive)?;
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let table = target.image.strings(document)?;
    let matches: Vec<Value> = table
        .strings
        .iter()
        .filter(|s| pattern.is_match(&s.value))
        .map(|s| {
            let mut item = json!({
                "address": format_address(s.address),
                "value": s.value,
                "encoding": s.encoding,
                "section": s.section,
            });
            if s.truncated {
                item["value_truncated"] = json!(true);
            }
            item
        })
        .collect();
    let total = matches.len() as u64;
    let start = offset.min(total) as usize;
    let end = offset.saturating_add(u64::from(limit)).min(total) as usize;
    let has_more = (end as u64) < total;
    let result = json!({
        "document": name,
        "pattern": input.pattern,
        "mode": mode,
        "case_sensitive": case_sensitive,
        "items": matches[start..end],
        "offset": offset,
        "limit": limit,
        "total": total,
        "next_offset": if has_more { json!(end) } else { Value::Null },
        "has_more": has_more,
        "truncated": table.truncated,
    });
    let draft = target.observation(
        ToolName::SearchStrings.as_str(),
        target.document_subject(document),
        json!({"document": name, "pattern": input.pattern, "mode": mode, "case_sensitive": case_sensitive, "offset": offset, "limit": limit}),
        result.clone(),
        table.limitations.clone(),
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}
