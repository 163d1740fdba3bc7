//! `compare_process_captures`: two retained process captures, dimension by
//! dimension (exit, signal, stdout, stderr, files).
//!
//! A capture is only trusted when its Evidence comes from
//! `capture_process_scenario` and its result parses as a [`Capture`] whose
//! invariants hold ([`Capture::validate`]); anything else is refused rather
//! than compared, so a tampered or foreign record never yields `unchanged`.
//!
//! Captures of one program differ in ways that say nothing about its
//! behaviour (timing, addresses under ASLR, process ids), so only the
//! observable outcome is compared. Each dimension is `unchanged`,
//! `changed`, `truncated` or `unknown`: a capture has no direction, so an
//! addition or removal is simply a change.

use crate::tools::shared::ledger::{read_capture, record_derived};
use crate::tools::tool::{Call, Tool};
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{ComparisonStatus, Completeness, KeyedDelta, capped, comparison_result, dimension};
use crate::capture::{Capture, FileEntry, Stream};
use crate::tools::inputs::CompareProcessCapturesInput;
use crate::tools::{HandlerResult, ToolName};

pub struct CompareProcessCaptures;

impl Tool for CompareProcessCaptures {
    const NAME: ToolName = ToolName::CompareProcessCaptures;
    type Input = CompareProcessCapturesInput;

    fn run(input: CompareProcessCapturesInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let left_id = input.left_evidence_id.trim();
        let right_id = input.right_evidence_id.trim();
        let left = read_capture(session, "left_evidence_id", left_id)?;
        let right = read_capture(session, "right_evidence_id", right_id)?;
        let (mut result, limitations) = compare(&left, &right);
        result["left_evidence_id"] = json!(left_id);
        result["right_evidence_id"] = json!(right_id);
        let parameters = json!({"left_evidence_id": left_id, "right_evidence_id": right_id});
        record_derived(
            session,
            ToolName::CompareProcessCaptures,
            parameters,
            result,
            limitations,
        )
    }
}

/// The comparison result of two valid captures, with its limitations.
pub fn compare(left: &Capture, right: &Capture) -> (Value, Vec<String>) {
    let mut dimensions = Map::new();
    dimensions.insert("exit".into(), exit_dimension(left, right));
    dimensions.insert("signal".into(), signal_dimension(left, right));
    dimensions.insert(
        "stdout".into(),
        stream_dimension(&left.stdout, &right.stdout),
    );
    dimensions.insert(
        "stderr".into(),
        stream_dimension(&left.stderr, &right.stderr),
    );
    dimensions.insert("files".into(), files_dimension(left, right));
    let mut limitations = vec![
        "timing, memory use, process counts and crash addresses (which move under ASLR) are not \
         compared"
            .to_owned(),
    ];
    for (name, stream) in [
        ("left stdout", &left.stdout),
        ("right stdout", &right.stdout),
        ("left stderr", &left.stderr),
        ("right stderr", &right.stderr),
    ] {
        if stream.truncated {
            limitations.push(format!(
                "{name} was cut at {} of {} bytes; only the kept prefix is compared",
                stream.stored_bytes, stream.total_bytes
            ));
        }
    }
    for (name, capture) in [("left", left), ("right", right)] {
        if capture.files.truncated {
            limitations.push(format!(
                "the {name} file listing was truncated; file changes beyond it are unknown"
            ));
        }
    }
    let result = comparison_result(dimensions, Map::new());
    (result, limitations)
}

fn status_of(equal: bool) -> ComparisonStatus {
    if equal {
        ComparisonStatus::Unchanged
    } else {
        ComparisonStatus::Changed
    }
}

fn exit_dimension(left: &Capture, right: &Capture) -> Value {
    let side = |c: &Capture| json!({"code": c.exit.code, "reason": c.exit.reason});
    let equal = left.exit.code == right.exit.code && left.exit.reason == right.exit.reason;
    dimension(
        status_of(equal),
        json!({"left": side(left), "right": side(right)}),
    )
}

fn signal_dimension(left: &Capture, right: &Capture) -> Value {
    let side = |c: &Capture| {
        json!({
            "signal": c.exit.signal,
            "signal_name": c.exit.signal_name,
            "crash": c.crash.is_some(),
        })
    };
    let equal =
        left.exit.signal == right.exit.signal && left.crash.is_some() == right.crash.is_some();
    dimension(
        status_of(equal),
        json!({"left": side(left), "right": side(right)}),
    )
}

/// The status of two captured streams. Complete streams compare by hash.
/// When a side was cut, a difference in the common kept prefix, or in how
/// many bytes each process wrote, is still an observed change; otherwise
/// the streams may differ beyond the cut, which is `truncated`.
pub fn stream_status(left: &Stream, right: &Stream) -> ComparisonStatus {
    if !left.truncated && !right.truncated {
        return status_of(left.sha256 == right.sha256);
    }
    let common = left.text.len().min(right.text.len());
    let prefix_differs = left.text.as_bytes()[..common] != right.text.as_bytes()[..common];
    if prefix_differs || left.total_bytes != right.total_bytes {
        ComparisonStatus::Changed
    } else {
        ComparisonStatus::Truncated
    }
}

fn stream_dimension(left: &Stream, right: &Stream) -> Value {
    let side = |s: &Stream| {
        json!({
            "sha256": s.sha256,
            "stored_bytes": s.stored_bytes,
            "total_bytes": s.total_bytes,
            "truncated": s.truncated,
        })
    };
    dimension(
        stream_status(left, right),
        json!({"left": side(left), "right": side(right)}),
    )
}

/// What one path did during a run: created, changed or deleted, with the
/// entry kind and content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileChange {
    change: &'static str,
    kind: String,
    sha256: Option<String>,
}

fn file_changes(capture: &Capture) -> BTreeMap<String, FileChange> {
    let mut map = BTreeMap::new();
    for (change, entries) in [
        ("created", &capture.files.created),
        ("changed", &capture.files.changed),
        ("deleted", &capture.files.deleted),
    ] {
        for entry in entries {
            map.insert(entry.path.clone(), file_change(change, entry));
        }
    }
    map
}

fn file_change(change: &'static str, entry: &FileEntry) -> FileChange {
    FileChange {
        change,
        kind: entry.kind.clone(),
        // A deleted entry's hash is of what was there before: the same
        // deletion of different contents is still the same deletion.
        sha256: (change != "deleted")
            .then(|| entry.sha256.clone())
            .flatten(),
    }
}

fn files_dimension(left: &Capture, right: &Capture) -> Value {
    let completeness = Completeness {
        left: !left.files.truncated,
        right: !right.files.truncated,
    };
    let (l, r) = (file_changes(left), file_changes(right));
    let delta = KeyedDelta::of(&l, &r, completeness);
    let status = delta.status(completeness).undirected();
    dimension(
        status,
        json!({
            "only_left": capped(&delta.removed, |p| json!(p)),
            "only_right": capped(&delta.added, |p| json!(p)),
            "differing": capped(&delta.changed, |p| json!({
                "path": p,
                "left": l.get(p).map(|c| json!({"change": c.change, "kind": c.kind, "sha256": c.sha256})),
                "right": r.get(p).map(|c| json!({"change": c.change, "kind": c.kind, "sha256": c.sha256})),
            })),
            "unseen": delta.unseen,
            "truncated": {"left": left.files.truncated, "right": right.files.truncated},
        }),
    )
}

#[cfg(test)]
#[path = "captures_tests.rs"]
mod tests;
