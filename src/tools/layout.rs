//! `inspect_binary_layout`: the load-relevant structure of one document,
//! summary first. Without `list`, the answer has every scalar fact, the
//! needed libraries, rpaths and TLS callbacks, and the first few items of
//! each long list (segments, sections, imports, exports) with its total and
//! where the next page starts; `list` pages one of them. Each call is its
//! own Evidence, as a page of `inspect_artifact` is.

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
                    result.insert(list.as_str().into(), paged(items, page));
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
                result.insert(list.as_str().into(), paged(items, page));
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

/// One page of a list: its items, exact total and where the next page
/// starts (absent on the last page).
fn paged(items: Value, page: PageRequest) -> Value {
    let items = match items {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    let mut out = json!({"total": items.len(), "items": page.slice(&items)});
    if page.offset != 0 {
        out["offset"] = json!(page.offset);
    }
    if let Some(next) = page.next_offset(items.len()) {
        out["next_offset"] = json!(next);
    }
    out
}
