//! `search_strings`: text found in a document's data sections.

use crate::tools::tool::{Call, Tool};
use serde_json::{Value, json};

use super::inputs::SearchInput;
use super::search::Search;
use super::{HandlerResult, ToolName};
use crate::providers::format_address;

pub struct SearchStrings;

impl Tool for SearchStrings {
    const NAME: ToolName = ToolName::SearchStrings;
    type Input = SearchInput;

    fn run(input: SearchInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let search = Search::new(&input)?;
        let target = session.require_target()?.clone();
        let document = session.document_index(input.document.as_deref())?;
        let name = target.image.documents()[document].name.clone();
        let table = target.image.strings(document)?;
        let matches: Vec<Value> = table
            .strings
            .iter()
            .filter(|s| search.pattern.is_match(&s.value))
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
        let result = search.page(&name, matches, table.truncated);
        let draft = target.file_observation(
            ToolName::SearchStrings.as_str(),
            target.document_subject(document),
            search.parameters(&name),
            result.clone(),
            table.limitations.clone(),
        );
        let evidence = session.record(draft)?;
        Ok((result, Some(evidence)))
    }
}
