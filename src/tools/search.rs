//! What every search tool shares: a validated request (pattern, mode, case,
//! page) and the shape of its answer (the requested page of matches with an
//! exact total and continuation fields).

use serde_json::{Value, json};

use super::ToolError;
use super::inputs::SearchInput;
use super::paging::PageRequest;
use super::pattern::{Pattern, SearchMode};

/// Most bytes of items one page of search results carries (strings run
/// to 4,096 characters; twenty of them would be an 80 KB answer).
const PAGE_BYTES: usize = 24 * 1024;

pub(crate) struct Search {
    pub pattern: Pattern,
    text: String,
    mode: SearchMode,
    case_sensitive: bool,
    page: PageRequest,
}

impl Search {
    pub fn new(input: &SearchInput) -> Result<Search, ToolError> {
        let page = PageRequest::new(input.offset, input.limit, 20, 100)?;
        let mode = input.mode.unwrap_or_default();
        let case_sensitive = input.case_sensitive.unwrap_or(false);
        Ok(Search {
            pattern: Pattern::new(&input.pattern, mode, case_sensitive)?,
            text: input.pattern.clone(),
            mode,
            case_sensitive,
            page,
        })
    }

    /// The request as Evidence records it.
    pub fn parameters(&self, document: &str) -> Value {
        json!({
            "document": document,
            "pattern": self.text,
            "mode": self.mode,
            "case_sensitive": self.case_sensitive,
            "offset": self.page.offset,
            "limit": self.page.limit,
        })
    }

    /// The requested page of `matches` (all matches, in order), with the
    /// exact total, `next_offset`/`has_more`, and whether the searched data
    /// itself was truncated. Only the page's matches become JSON (`item`),
    /// so a search matching 400,000 long names costs one page, not all.
    pub fn page<T>(
        &self,
        document: &str,
        matches: &[T],
        item: impl Fn(&T) -> Value,
        truncated: bool,
    ) -> Value {
        let mut result = self.parameters(document);
        let page: Vec<Value> = self.page.slice(matches).iter().map(item).collect();
        let items = PageRequest::within(&page, PAGE_BYTES);
        result["items"] = json!(items);
        self.page
            .annotate_returned(matches.len(), items.len(), &mut result);
        result["truncated"] = json!(truncated);
        result
    }
}
