//! The shared vocabulary of comparisons: statuses and how they combine,
//! observable deltas between two sides that may be incomplete, the shape of
//! every comparison result, and how comparison tools fetch and read retained
//! Evidence.
//!
//! Every comparison result (the Evidence `result` of `compare_functions`,
//! `compare_artifacts` and `compare_process_captures`) is an object
//! with a top-level `"status"` and `"dimensions": {<name>: {"status": ..,
//! ..}}`. [`read_comparison`] validates that shape, so
//! `verify_reconstruction` reads any of them the same way.
//!
//! Status rules (one dimension or a whole comparison):
//! * `changed` whenever a real difference is observed, even if a side was
//!   cut short: a difference in the visible part is a fact.
//! * `added` / `removed` when every observed difference is an addition
//!   (only on the right) or every one a removal (only on the left).
//! * `truncated` when the visible parts are equal but a side was cut.
//! * `unknown` when a dimension could not be compared at all.
//! * `unchanged` only when both sides were seen completely and are equal.
//!   An incomplete side never yields `unchanged`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

mod dossier;
mod functions;
mod normalize;
mod verify;

use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::Evidence;

pub use artifacts::CompareArtifacts;
pub use captures::CompareProcessCaptures;
pub use dossier::DossierError;
pub use functions::CompareFunctions;
pub use verify::VerifyReconstruction;

/// The operations whose Evidence is a comparison readable by
/// [`read_comparison`].
pub const COMPARISON_OPERATIONS: [&str; 3] = [
    "compare_functions",
    "compare_artifacts",
    "compare_process_captures",
];

/// Most entries any list in a comparison result holds; the totals are
/// always given and a capped list says so.
pub const LIST_CAP: usize = 50;

/// The outcome of comparing one dimension, or a whole comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComparisonStatus {
    /// Both sides seen completely and equal.
    Unchanged,
    /// Every observed difference is something only the right side has.
    Added,
    /// Every observed difference is something only the left side has.
    Removed,
    /// A difference was observed.
    Changed,
    /// The visible parts are equal but a side was cut short.
    Truncated,
    /// Could not be compared.
    Unknown,
}

impl ComparisonStatus {
    pub const ALL: [ComparisonStatus; 6] = [
        ComparisonStatus::Unchanged,
        ComparisonStatus::Added,
        ComparisonStatus::Removed,
        ComparisonStatus::Changed,
        ComparisonStatus::Truncated,
        ComparisonStatus::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ComparisonStatus::Unchanged => "unchanged",
            ComparisonStatus::Added => "added",
            ComparisonStatus::Removed => "removed",
            ComparisonStatus::Changed => "changed",
            ComparisonStatus::Truncated => "truncated",
            ComparisonStatus::Unknown => "unknown",
        }
    }

    pub fn parse(text: &str) -> Option<ComparisonStatus> {
        ComparisonStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
    }

    /// Whether this status reports an observed difference.
    pub fn is_difference(self) -> bool {
        matches!(
            self,
            ComparisonStatus::Added | ComparisonStatus::Removed | ComparisonStatus::Changed
        )
    }

    /// Whether this status is final knowledge (not truncated or unknown).
    pub fn is_conclusive(self) -> bool {
        !matches!(
            self,
            ComparisonStatus::Truncated | ComparisonStatus::Unknown
        )
    }

    /// For a comparison whose whole has no direction (two versions of one
    /// function), `added` and `removed` are both simply `changed`.
    pub fn undirected(self) -> ComparisonStatus {
        match self {
            ComparisonStatus::Added | ComparisonStatus::Removed => ComparisonStatus::Changed,
            other => other,
        }
    }

    /// The status of a whole made of parts: observed differences win
    /// (all additions → `added`, all removals → `removed`, anything else
    /// → `changed`); without one, `unknown` if any part is unknown, then
    /// `truncated` if any is truncated; `unchanged` only when every part
    /// is. No parts at all is `unknown`: nothing was compared.
    pub fn combine(parts: impl IntoIterator<Item = ComparisonStatus>) -> ComparisonStatus {
        let mut seen = [false; 6];
        let mut any = false;
        for part in parts {
            seen[part as usize] = true;
            any = true;
        }
        let has = |s: ComparisonStatus| seen[s as usize];
        if !any {
            return ComparisonStatus::Unknown;
        }
        let added = has(ComparisonStatus::Added);
        let removed = has(ComparisonStatus::Removed);
        if has(ComparisonStatus::Changed) || (added && removed) {
            ComparisonStatus::Changed
        } else if added {
            ComparisonStatus::Added
        } else if removed {
            ComparisonStatus::Removed
        } else if has(ComparisonStatus::Unknown) {
            ComparisonStatus::Unknown
        } else if has(ComparisonStatus::Truncated) {
            ComparisonStatus::Truncated
        } else {
            ComparisonStatus::Unchanged
        }
    }
}

/// Whether each side of a comparison was seen completely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completeness {
    pub left: bool,
    pub right: bool,
}

impl Completeness {
    pub const COMPLETE: Completeness = Completeness {
        left: true,
        right: true,
    };

    pub fn both(self) -> bool {
        self.left && self.right
    }
}

/// The status of a delta whose counts hold only *observed* differences:
/// see [`ComparisonStatus`] for the rules.
pub fn delta_status(
    added: usize,
    removed: usize,
    changed: usize,
    completeness: Completeness,
) -> ComparisonStatus {
    if changed > 0 || (added > 0 && removed > 0) {
        ComparisonStatus::Changed
    } else if added > 0 {
        ComparisonStatus::Added
    } else if removed > 0 {
        ComparisonStatus::Removed
    } else if completeness.both() {
        ComparisonStatus::Unchanged
    } else {
        ComparisonStatus::Truncated
    }
}

/// Differences between two keyed collections (occurrences by path with a
/// content hash, callees by name with a count...), counting only what is
/// observable: a key missing from an incomplete side may simply not have
/// been seen, so it is neither added nor removed; a key on both sides with
/// different values is always a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedDelta<K> {
    /// Keys only on the right (the left side is complete).
    pub added: Vec<K>,
    /// Keys only on the left (the right side is complete).
    pub removed: Vec<K>,
    /// Keys on both sides with different values.
    pub changed: Vec<K>,
    /// Keys on one side only that the other, incomplete side may hold.
    pub unseen: usize,
}

impl<K: Ord + Clone> KeyedDelta<K> {
    pub fn of<V: PartialEq>(
        left: &BTreeMap<K, V>,
        right: &BTreeMap<K, V>,
        completeness: Completeness,
    ) -> KeyedDelta<K> {
        let mut delta = KeyedDelta {
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            unseen: 0,
        };
        for (key, value) in left {
            match right.get(key) {
                Some(other) if other != value => delta.changed.push(key.clone()),
                Some(_) => {}
                None if completeness.right => delta.removed.push(key.clone()),
                None => delta.unseen += 1,
            }
        }
        for key in right.keys().filter(|k| !left.contains_key(*k)) {
            if completeness.left {
                delta.added.push(key.clone());
            } else {
                delta.unseen += 1;
            }
        }
        delta
    }

    pub fn status(&self, completeness: Completeness) -> ComparisonStatus {
        delta_status(
            self.added.len(),
            self.removed.len(),
            self.changed.len(),
            completeness,
        )
    }
}

/// Differences between two multisets (how often each key occurs), counting
/// only observable ones: more on the right is an addition only if the left
/// was complete, more on the left a removal only if the right was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultisetDelta<K> {
    /// `(key, left count, right count)` with more on the right.
    pub added: Vec<(K, usize, usize)>,
    /// `(key, left count, right count)` with more on the left.
    pub removed: Vec<(K, usize, usize)>,
}

impl<K: Ord + Clone> MultisetDelta<K> {
    pub fn of(
        left: impl IntoIterator<Item = K>,
        right: impl IntoIterator<Item = K>,
        completeness: Completeness,
    ) -> MultisetDelta<K> {
        let mut counts: BTreeMap<K, (usize, usize)> = BTreeMap::new();
        for key in left {
            counts.entry(key).or_default().0 += 1;
        }
        for key in right {
            counts.entry(key).or_default().1 += 1;
        }
        let mut delta = MultisetDelta {
            added: Vec::new(),
            removed: Vec::new(),
        };
        for (key, (l, r)) in counts {
            if r > l && completeness.left {
                delta.added.push((key, l, r));
            } else if l > r && completeness.right {
                delta.removed.push((key, l, r));
            }
        }
        delta
    }

    pub fn status(&self, completeness: Completeness) -> ComparisonStatus {
        delta_status(self.added.len(), self.removed.len(), 0, completeness)
    }
}

/// A bounded JSON list: at most [`LIST_CAP`] items of `items`, with
/// `{"items", "total", "capped"}` so a reader knows what was left out.
pub fn capped<T>(items: &[T], to_json: impl Fn(&T) -> Value) -> Value {
    json!({
        "items": items.iter().take(LIST_CAP).map(to_json).collect::<Vec<_>>(),
        "total": items.len(),
        "capped": items.len() > LIST_CAP,
    })
}

/// One dimension of a comparison result: `{"status", ...details}`.
pub fn dimension(status: ComparisonStatus, details: Value) -> Value {
    let mut value = match details {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    value.insert("status".to_owned(), json!(status));
    Value::Object(value)
}

/// A dimension that could not be compared, with the reason.
pub fn unknown_dimension(reason: impl Into<String>) -> Value {
    dimension(ComparisonStatus::Unknown, json!({"reason": reason.into()}))
}

/// The result of a comparison from its dimensions: the overall status is
/// [`ComparisonStatus::combine`] of theirs. `extra` members (summaries,
/// the compared ids) are added at top level.
pub fn comparison_result(dimensions: Map<String, Value>, extra: Map<String, Value>) -> Value {
    let status = ComparisonStatus::combine(dimensions.values().map(|d| {
        d.get("status")
            .and_then(Value::as_str)
            .and_then(ComparisonStatus::parse)
            .unwrap_or(ComparisonStatus::Unknown)
    }));
    let mut result = extra;
    result.insert("status".to_owned(), json!(status));
    result.insert("dimensions".to_owned(), Value::Object(dimensions));
    Value::Object(result)
}

/// What a comparison Evidence record says, per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonView {
    pub operation: String,
    pub status: ComparisonStatus,
    pub dimensions: BTreeMap<String, ComparisonStatus>,
}

/// Why a record cannot be read as a comparison.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComparisonReadError {
    #[error("`{0}` Evidence is not a comparison (comparisons come from {ops})", ops = COMPARISON_OPERATIONS.join(", "))]
    NotAComparison(String),
    #[error("the comparison result is malformed: {0}")]
    Malformed(String),
}

/// Reads (dimension → status) out of a retained comparison record of any
/// comparison operation, validating the shared result shape.
pub fn read_comparison(evidence: &Evidence) -> Result<ComparisonView, ComparisonReadError> {
    let operation = evidence.body.operation.as_str();
    if !COMPARISON_OPERATIONS.contains(&operation) {
        return Err(ComparisonReadError::NotAComparison(excerpt(
            operation,
            EXCERPT_CHARS,
        )));
    }
    let malformed = |what: &str| ComparisonReadError::Malformed(what.to_owned());
    let result = &evidence.body.result;
    let status = result
        .get("status")
        .and_then(Value::as_str)
        .and_then(ComparisonStatus::parse)
        .ok_or_else(|| malformed("top-level status is missing or not a comparison status"))?;
    let dimensions = result
        .get("dimensions")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("dimensions is missing or not an object"))?;
    let mut read = BTreeMap::new();
    for (name, value) in dimensions {
        let dimension_status = value
            .get("status")
            .and_then(Value::as_str)
            .and_then(ComparisonStatus::parse)
            .ok_or_else(|| {
                ComparisonReadError::Malformed(format!(
                    "dimension `{}` has no valid comparison status",
                    excerpt(name, EXCERPT_CHARS)
                ))
            })?;
        read.insert(name.clone(), dimension_status);
    }
    Ok(ComparisonView {
        operation: operation.to_owned(),
        status,
        dimensions: read,
    })
}

pub(crate) mod artifacts;
pub(crate) mod captures;

#[cfg(test)]
mod tests;
