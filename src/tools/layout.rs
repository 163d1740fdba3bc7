//! `inspect_binary_layout`: the load-relevant structure of one document,
//! summary first. Without `list`, the answer has every scalar fact and the
//! first few items of each list (segments, sections, imports, exports,
//! needed libraries, rpaths, TLS callbacks) with its total and where the
//! next page starts; `list` pages one of them. Each call is its own
//! Evidence, as a page of `inspect_artifact` is.
//!
//! Sizes: names from the file may be 4 KiB each, so pages are cut by bytes
//! as well as by count ([`PageRequest::slice_within`]): the summary holds at
//! most [`SUMMARY_LIST_BYTES`] of each list (the default answer stays under
//! 32 KiB), a page of one list at most [`PAGE_BYTES`].

use crate::tools::errors::ErrorCode;
use crate::tools::tool::{Call, Tool};
use serde_json::{Map, Value, json};

use super::inputs::{InspectBinaryLayoutInput, LayoutList};
use super::paging::PageRequest;
use super::shared::document::Document;
use super::{HandlerResult, ToolName};

/// Items of each long list in the summary (unless `limit` says otherwise).
const SUMMARY_ITEMS: u32 = 20;
/// Items of a page of one list.
const DEFAULT_PAGE: u32 = 200;
const MAX_PAGE: u32 = 1000;
/// Bytes of JSON each list may take in the summary.
const SUMMARY_LIST_BYTES: usize = 2560;
/// Bytes of JSON a page of one list may take.
const PAGE_BYTES: usize = 1 << 20;

pub struct InspectBinaryLayout;

impl Tool for InspectBinaryLayout {
    const NAME: ToolName = ToolName::InspectBinaryLayout;
    type Input = InspectBinaryLayoutInput;

    fn run(input: InspectBinaryLayoutInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let default = if input.list.is_some() {
            DEFAULT_PAGE
        } else {
            SUMMARY_ITEMS
        };
        let page = PageRequest::new(input.offset, input.limit, default, MAX_PAGE)?;
        let doc = Document::open(session, input.document.as_deref())?;
        let layout = doc.target.image.layout(doc.index)?;
        let limitations = layout.limitations.clone();
        let Value::Object(mut whole) = serde_json::to_value(&layout).unwrap_or_default() else {
            return Err(super::ToolError::new(
                ErrorCode::EvidenceError,
                "the layout did not encode as an object",
            ));
        };
        let mut result = Map::new();
        result.insert("document".into(), json!(doc.name));
        let mut parameters = json!({"document": doc.name});
        match input.list {
            None => {
                for list in LayoutList::ALL {
                    let items = whole.remove(list.as_str()).unwrap_or_default();
                    result.insert(list.as_str().into(), paged(items, page, SUMMARY_LIST_BYTES));
                }
                result.extend(whole);
                if page.limit != SUMMARY_ITEMS || page.offset != 0 {
                    parameters["offset"] = json!(page.offset);
                    parameters["limit"] = json!(page.limit);
                }
            }
            Some(list) => {
                let items = whole.remove(list.as_str()).unwrap_or_default();
                result.insert("list".into(), json!(list.as_str()));
                result.insert(list.as_str().into(), paged(items, page, PAGE_BYTES));
                parameters["list"] = json!(list.as_str());
                parameters["offset"] = json!(page.offset);
                parameters["limit"] = json!(page.limit);
            }
        }
        doc.observe_file(
            session,
            ToolName::InspectBinaryLayout,
            parameters,
            Value::Object(result),
            limitations,
        )
    }
}

/// One page of a list: its items (cut where their JSON would pass
/// `budget` bytes), exact total, where the next page starts (absent on the
/// last page) and, when the budget cut the page, how many items it held.
fn paged(items: Value, page: PageRequest, budget: usize) -> Value {
    let items = match items {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    let shown = page.slice_within(&items, budget);
    let mut out = json!({"total": items.len(), "items": shown});
    if page.offset != 0 {
        out["offset"] = json!(page.offset);
    }
    let start = page.range(items.len()).start;
    let end = start + shown.len();
    if end < items.len() {
        out["next_offset"] = json!(end);
    }
    if shown.len() < page.range(items.len()).len() {
        out["cut"] = json!(format!(
            "{} of the {} items asked for fit this answer; continue at next_offset",
            shown.len(),
            page.range(items.len()).len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_of_long_names_is_cut_by_bytes_and_continues_exactly() {
        let names: Vec<Value> = (0..50)
            .map(|i| json!(format!("{i:04}{}", "x".repeat(4000))))
            .collect();
        let page = PageRequest::new(None, None, SUMMARY_ITEMS, MAX_PAGE).unwrap();
        let out = paged(Value::Array(names), page, SUMMARY_LIST_BYTES);
        assert_eq!(out["total"], 50);
        assert_eq!(
            out["items"].as_array().unwrap().len(),
            1,
            "one item always goes"
        );
        assert_eq!(out["next_offset"], 1);
        assert!(out["cut"].as_str().unwrap().starts_with("1 of the 20"));
        assert!(out.to_string().len() < SUMMARY_LIST_BYTES + 4200);
    }
}
