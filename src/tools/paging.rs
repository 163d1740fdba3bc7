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

    /// The page of `items`, cut short where their JSON would pass `budget`
    /// bytes (never below one item), so that a page of long values cannot
    /// outgrow what a reader should pay for one answer. The continuation
    /// fields of [`PageRequest::annotate_returned`] say where it stopped.
    pub fn slice_within<'a>(&self, items: &'a [Value], budget: usize) -> &'a [Value] {
        PageRequest::within(self.slice(items), budget)
    }

    /// The leading items of `page` whose JSON fits in `budget` bytes (never
    /// fewer than one), for a page already sliced.
    pub fn within(page: &[Value], budget: usize) -> &[Value] {
        let mut used = 0;
        let fits = page
            .iter()
            .take_while(|item| {
                used += item.to_string().len() + 1;
                used <= budget
            })
            .count();
        &page[..fits.max(page.len().min(1))]
    }

    /// Writes the continuation fields for a page that returned `returned`
    /// of `total` items (fewer than `limit` when a byte budget cut it,
    /// which `cut` then says).
    pub fn annotate_returned(&self, total: usize, returned: usize, result: &mut Value) {
        self.annotate(total, result);
        let full = self.range(total).len();
        if returned < full {
            let next = self.range(total).start + returned;
            result["next_offset"] = json!(next);
            result["has_more"] = json!(true);
            result["cut"] = json!(format!(
                "{returned} of the {full} items asked for fit this answer; continue at next_offset"
            ));
        }
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
    fn a_byte_budget_cuts_a_page_and_says_where_to_go_on() {
        let items: Vec<Value> = (0..10).map(|i| json!("x".repeat(100 + i))).collect();
        let page = PageRequest::new(Some(2), Some(5), 20, 100).unwrap();
        let cut = page.slice_within(&items, 250);
        assert_eq!(cut.len(), 2, "two 100-odd-byte items fit 250 bytes");
        let mut result = json!({});
        page.annotate_returned(items.len(), cut.len(), &mut result);
        assert_eq!(result["next_offset"], json!(4));
        assert_eq!(result["has_more"], json!(true));
        assert!(result["cut"].as_str().unwrap().starts_with("2 of the 5"));
        // One item always goes, however long.
        assert_eq!(page.slice_within(&items, 1).len(), 1);
        // Within the budget nothing changes.
        let whole = page.slice_within(&items, 1 << 20);
        assert_eq!(whole.len(), 5);
        let mut result = json!({});
        page.annotate_returned(items.len(), whole.len(), &mut result);
        assert_eq!(result["next_offset"], json!(7));
        assert!(result.get("cut").is_none());
    }

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
