//! Offset/limit paging shared by every tool that returns a list: the page's
//! range, and the continuation fields (`offset`, `limit`, exact `total`,
//! `next_offset`, `has_more`) in one spelling.

use std::ops::Range;

use serde_json::{Value, json};

use super::ToolError;

#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRequest {
    pub offset: u64,
    pub limit: u32,
}

impl PageRequest {
    /// Validates `limit` against `1..=max` (default `default`).
    pub fn new(
        offset: Option<u64>,
        limit: Option<u32>,
        default: u32,
        max: u32,
    ) -> Result<PageRequest, ToolError> {
        let limit = limit.unwrap_or(default);
        if !(1..=max).contains(&limit) {
            return Err(ToolError::invalid_arguments(format!(
                "limit {limit} is outside 1-{max}"
            )));
        }
        Ok(PageRequest {
            offset: offset.unwrap_or(0),
            limit,
        })
    }

    /// The indexes of this page among `total` items.
    pub fn range(&self, total: usize) -> Range<usize> {
        let total = total as u64;
        let start = self.offset.min(total);
        let end = self.offset.saturating_add(u64::from(self.limit)).min(total);
        start as usize..end as usize
    }

    /// The page of `items`.
    pub fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        &items[self.range(items.len())]
    }

    /// Where the next page starts, when there is one.
    pub fn next_offset(&self, total: usize) -> Option<usize> {
        let end = self.range(total).end;
        (end < total).then_some(end)
    }

    /// Writes the continuation fields for `total` items into `result`.
    pub fn annotate(&self, total: usize, result: &mut Value) {
        let next = self.next_offset(total);
        result["offset"] = json!(self.offset);
        result["limit"] = json!(self.limit);
        result["total"] = json!(total);
        result["next_offset"] = json!(next);
        result["has_more"] = json!(next.is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_clamped_and_continue_exactly() {
        let page = PageRequest::new(Some(8), Some(5), 100, 500).unwrap();
        assert_eq!(page.range(10), 8..10);
        let mut result = json!({});
        page.annotate(10, &mut result);
        assert_eq!(result["has_more"], json!(false));
        assert_eq!(result["next_offset"], Value::Null);
        let first = PageRequest::new(None, Some(5), 100, 500).unwrap();
        first.annotate(10, &mut result);
        assert_eq!(result["next_offset"], json!(5));
        assert_eq!(
            PageRequest::new(Some(u64::MAX), None, 3, 5)
                .unwrap()
                .range(4),
            4..4
        );
        assert!(PageRequest::new(None, Some(0), 3, 5).is_err());
        assert!(PageRequest::new(None, Some(6), 3, 5).is_err());
    }
}
