//! A candidate set prepared for prefix queries.
//!
//! Matching always covers the complete candidate set: `total` is exact. The
//! response carries the first [`MAX_VALUES`] matches in code-point order (the
//! MCP schema caps a completion at 100 values), so the index keeps two orders:
//! values sorted by code point (the answer order) and keys sorted for binary
//! search (the match order), linked by rank. The matches of a prefix are one
//! range of keys; a range-minimum tree over their ranks yields the first
//! hundred in answer order in `O(100 log n)`, however the range is spread.

use crate::ground::hidden::MAX_VALUE_SCALARS;
use crate::ground::hidden::is_hidden;
use crate::ground::shared_name::SharedName;

use super::key as match_key;
use super::min_tree::MinTree;

/// Most values one completion response carries.
pub const MAX_VALUES: usize = 100;

/// The answer to one query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompletionPage {
    /// At most [`MAX_VALUES`] matches, in code-point order.
    pub values: Vec<String>,
    /// The exact number of matches.
    pub total: usize,
}

impl CompletionPage {
    pub fn has_more(&self) -> bool {
        self.total > self.values.len()
    }
}

/// Whether a candidate may be offered at all: non-empty, at most
/// [`MAX_VALUE_SCALARS`] scalar values, and free of control, bidi, format and
/// other invisible characters. Nothing is repaired: a hostile name is dropped.
pub fn is_offerable(candidate: &str) -> bool {
    // Fast path for the common case: in ASCII only C0 controls and DEL are
    // hidden, and length in scalars is length in bytes.
    if candidate.is_ascii() {
        return !candidate.is_empty()
            && candidate.len() <= MAX_VALUE_SCALARS
            && !candidate.bytes().any(|b| b.is_ascii_control());
    }
    !candidate.is_empty()
        && !candidate.chars().any(is_hidden)
        && candidate.chars().nth(MAX_VALUE_SCALARS).is_none()
}

#[derive(Debug, Default)]
pub struct CandidateIndex {
    /// Distinct offerable candidates in code-point order; a value's position is its rank.
    /// Shared with whoever handed them in (a procedure's name is not copied).
    values: Vec<SharedName>,
    /// `(key, rank)` sorted by key, then rank. A key equal to its value
    /// (most identifiers) shares the value's allocation.
    keys: Vec<(SharedName, u32)>,
    /// The ranks in key order, for "smallest ranks in a key range".
    ranks: MinTree,
}

impl CandidateIndex {
    /// Builds the index, dropping unofferable candidates and exact duplicates
    /// (distinct spellings such as `App` and `app` both stay).
    pub fn build<I, S>(candidates: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<SharedName>,
    {
        let mut values: Vec<SharedName> = candidates
            .into_iter()
            .map(Into::into)
            .filter(|c| is_offerable(c))
            .collect();
        values.sort_unstable();
        values.dedup();
        values.truncate(u32::MAX as usize);
        let mut keys: Vec<(SharedName, u32)> = values
            .iter()
            .enumerate()
            .map(|(rank, v)| {
                let key = match_key::key(v);
                let key = if key == **v {
                    v.clone()
                } else {
                    SharedName::from(key)
                };
                (key, rank as u32)
            })
            .collect();
        keys.sort_unstable();
        let ranks = MinTree::new(keys.iter().map(|(_, rank)| *rank).collect());
        CandidateIndex {
            values,
            keys,
            ranks,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// All candidates whose key starts with the key of `prefix`.
    pub fn query(&self, prefix: &str) -> CompletionPage {
        if prefix.chars().nth(MAX_VALUE_SCALARS).is_some() {
            return CompletionPage::default();
        }
        let wanted = match_key::key(prefix);
        let lo = self.keys.partition_point(|(k, _)| **k < *wanted);
        let len = self.keys[lo..].partition_point(|(k, _)| k.starts_with(wanted.as_str()));
        let hi = lo + len;
        let ranks = self.ranks.smallest(lo, hi, MAX_VALUES);
        CompletionPage {
            values: ranks
                .into_iter()
                .map(|r| self.values[r as usize].to_string())
                .collect(),
            total: len,
        }
    }
}

/// One-shot query over a small, freshly gathered candidate list.
pub fn complete<I, S>(candidates: I, prefix: &str) -> CompletionPage
where
    I: IntoIterator<Item = S>,
    S: Into<SharedName>,
{
    CandidateIndex::build(candidates).query(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn dedupes_case_folds_and_sorts() {
        let page = complete(["AppTests", "App", "App"], "app");
        assert_eq!(page.values, ["App", "AppTests"]);
        assert_eq!(page.total, 2);
    }

    #[test]
    fn distinct_spellings_stay_in_code_point_order() {
        let page = complete(["Ａpp", "App", "app", "Zulu"], "ＡＰ");
        assert_eq!(page.values, ["App", "app", "Ａpp"]);
    }

    #[test]
    fn hostile_candidates_are_dropped_before_counting() {
        let long = "a".repeat(MAX_VALUE_SCALARS + 1);
        let edge = "a".repeat(MAX_VALUE_SCALARS);
        let page = complete(
            [
                "a\u{202E}b",
                "a\u{0}",
                "a\u{200B}",
                long.as_str(),
                edge.as_str(),
                "ab",
                "",
            ],
            "a",
        );
        assert_eq!(page.total, 2);
        assert_eq!(page.values, [edge.as_str(), "ab"]);
    }

    #[test]
    fn over_long_prefix_matches_nothing() {
        let page = complete(["a"], &"a".repeat(MAX_VALUE_SCALARS + 1));
        assert_eq!(page, CompletionPage::default());
    }

    #[test]
    fn caps_at_one_hundred_with_exact_total() {
        let ids: Vec<String> = (0..150).map(|i| format!("ev_{i:03}")).collect();
        let page = complete(ids.iter().map(String::as_str), "EV_");
        assert_eq!(page.total, 150);
        assert_eq!(page.values.len(), 100);
        assert!(page.has_more());
        assert_eq!(page.values, ids[..100]);
    }

    fn reference(candidates: &[String], prefix: &str) -> CompletionPage {
        let wanted = match_key::key(prefix);
        let mut all: Vec<String> = candidates
            .iter()
            .filter(|c| is_offerable(c) && match_key::key(c).starts_with(&wanted))
            .cloned()
            .collect();
        all.sort();
        all.dedup();
        let total = all.len();
        all.truncate(MAX_VALUES);
        CompletionPage { values: all, total }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn index_agrees_with_a_linear_scan(
            candidates in proptest::collection::vec("[aAbBß_ǅ0x1]{0,5}", 0..400),
            prefix in "[aAbBß_ǅ0x]{0,3}",
        ) {
            let index = CandidateIndex::build(candidates.iter().map(String::as_str));
            prop_assert_eq!(index.query(&prefix), reference(&candidates, &prefix));
        }

    }

    proptest! {
        // Each case builds a 4,000+ candidate index with wide match ranges.
        #![proptest_config(ProptestConfig::with_cases(8))]
        #[test]
        fn large_ranges_agree_with_a_linear_scan(
            candidates in proptest::collection::vec("[aAb][a-c0-9]{0,6}", 4200..4600),
        ) {
            let index = CandidateIndex::build(candidates.iter().map(String::as_str));
            prop_assert_eq!(index.query(""), reference(&candidates, ""));
            prop_assert_eq!(index.query("A"), reference(&candidates, "A"));
        }
    }
}
