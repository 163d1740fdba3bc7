//! `search_strings`: text found in a document's data sections.

use crate::tools::tool::{Call, Tool};
use serde_json::json;

use super::inputs::SearchInput;
use super::search::Search;
use super::shared::document::Document;
use super::{HandlerResult, ToolName};
use crate::providers::format_address;
use crate::providers::native::FoundString;

pub struct SearchStrings;

impl Tool for SearchStrings {
    const NAME: ToolName = ToolName::SearchStrings;
    type Input = SearchInput;

    fn run(input: SearchInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let search = Search::new(&input)?;
        let doc = Document::open(session, input.document.as_deref())?;
        let table = doc.target.image.strings(doc.index)?;
        let matches: Vec<_> = table
            .strings
            .iter()
            .filter(|s| search.pattern.is_match(&s.value))
            .collect();
        let item = |s: &&FoundString| {
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
        };
        let result = search.page(&doc.name, &matches, item, table.truncated);
        doc.observe_file(
            session,
            ToolName::SearchStrings,
            search.parameters(&doc.name),
            result,
            table.limitations.clone(),
        )
    }
}
