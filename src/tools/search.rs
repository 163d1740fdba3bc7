//! What every search tool shares: a validated request (pattern, mode, case,
//! page) and the shape of its answer (the requested page of matches with an
//! exact total and continuation fields).

use serde_json::{Value, json};

use super::ToolError;
use super::inputs::SearchInput;
use super::pattern::{Pattern, SearchMode};

pub(crate) struct Search {
    pub pattern: Pattern,
    text: String,
    mode: SearchMode,
    case_sensitive: bool,
    offset: u64,
    limit: u32,
}

impl Search {
    pub fn new(input: &SearchInput) -> Result<Search, ToolError> {
        let limit = input.limit.unwrap_or(20);
        if !(1..=100).contains(&limit) {
            return Err(ToolError::invalid_arguments(format!(
                "limit {limit} is outside 1-100"
            )));
        }
        let mode = input.mode.unwrap_or_default();
        let case_sensitive = input.case_sensitive.unwrap_or(false);
        Ok(Search {
            pattern: Pattern::new(&input.pattern, mode, case_sensitive)?,
            text: input.pattern.clone(),
            mode,
            case_sensitive,
            offset: input.offset.unwrap_or(0),
            limit,
        })
    }

    /// The request as Evidence records it.
    pub fn parameters(&self, document: &str) -> Value {
        json!({
            "document": document,
            "pattern": self.text,
            "mode": self.mode,
            "case_sensitive": self.case_sensitive,
            "offset": self.offset,
            "limit": self.limit,
        })
    }

    /// The requested page of `matches` (all matches, in order), with the
    /// exact total, `next_offset`/`has_more`, and whether the searched data
    /// itself was truncated.
    pub fn page(&self, document: &str, matches: Vec<Value>, truncated: bool) -> Value {
        let total = matches.len() as u64;
        let start = self.offset.min(total) as usize;
        let end = self.offset.saturating_add(u64::from(self.limit)).min(total) as usize;
        let has_more = (end as u64) < total;
        let mut result = self.parameters(document);
        result["items"] = json!(matches[start..end]);
        result["total"] = json!(total);
        result["next_offset"] = if has_more { json!(end) } else { Value::Null };
        result["has_more"] = json!(has_more);
        result["truncated"] = json!(truncated);
        result
    }
}
