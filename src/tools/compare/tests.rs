//! Status rules, observable deltas and the comparison reader.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::session::{Confidence, EvidenceDraft, ProviderIdentity, Session};
use crate::tools::ToolError;
use crate::tools::shared::ledger::{FetchError, fetch, fetch_operation};

use ComparisonStatus::{Added, Changed, Removed, Truncated, Unchanged, Unknown};

const LEFT_CUT: Completeness = Completeness {
    left: false,
    right: true,
};
const RIGHT_CUT: Completeness = Completeness {
    left: true,
    right: false,
};

#[test]
fn statuses_serialize_lowercase_and_parse_back() {
    for status in ComparisonStatus::ALL {
        assert_eq!(json!(status), json!(status.as_str()));
        assert_eq!(ComparisonStatus::parse(status.as_str()), Some(status));
    }
    assert_eq!(ComparisonStatus::parse("Unchanged"), None);
    assert_eq!(ComparisonStatus::parse("pass"), None);
}

#[test]
fn combine_lets_observed_differences_win_and_never_reports_an_incomplete_whole_unchanged() {
    assert_eq!(ComparisonStatus::combine([]), Unknown);
    assert_eq!(ComparisonStatus::combine([Unchanged, Unchanged]), Unchanged);
    assert_eq!(ComparisonStatus::combine([Unchanged, Truncated]), Truncated);
    assert_eq!(ComparisonStatus::combine([Truncated, Unknown]), Unknown);
    assert_eq!(ComparisonStatus::combine([Unknown, Changed]), Changed);
    assert_eq!(ComparisonStatus::combine([Truncated, Added]), Added);
    assert_eq!(ComparisonStatus::combine([Unchanged, Removed]), Removed);
    assert_eq!(ComparisonStatus::combine([Added, Removed]), Changed);
    assert_eq!(ComparisonStatus::combine([Added, Added, Unchanged]), Added);
    assert_eq!(Added.undirected(), Changed);
    assert_eq!(Removed.undirected(), Changed);
    assert_eq!(Truncated.undirected(), Truncated);
}

#[test]
fn delta_status_follows_the_rules() {
    let complete = Completeness::COMPLETE;
    assert_eq!(delta_status(0, 0, 0, complete), Unchanged);
    assert_eq!(delta_status(0, 0, 0, LEFT_CUT), Truncated);
    assert_eq!(delta_status(0, 0, 1, LEFT_CUT), Changed);
    assert_eq!(delta_status(2, 0, 0, complete), Added);
    assert_eq!(delta_status(0, 1, 0, RIGHT_CUT), Removed);
    assert_eq!(delta_status(1, 1, 0, complete), Changed);
}

#[test]
fn keyed_delta_counts_only_what_an_incomplete_side_lets_us_see() {
    let left: BTreeMap<&str, u32> = [("a", 1), ("b", 2), ("c", 3)].into();
    let right: BTreeMap<&str, u32> = [("a", 1), ("b", 9), ("d", 4)].into();
    let full = KeyedDelta::of(&left, &right, Completeness::COMPLETE);
    assert_eq!(full.added, ["d"]);
    assert_eq!(full.removed, ["c"]);
    assert_eq!(full.changed, ["b"]);
    assert_eq!(full.unseen, 0);
    assert_eq!(full.status(Completeness::COMPLETE), Changed);

    // The right side was cut: `c` may be there unseen; `d` is a real addition.
    let cut = KeyedDelta::of(&left, &right, RIGHT_CUT);
    assert_eq!(cut.added, ["d"]);
    assert!(cut.removed.is_empty());
    assert_eq!(cut.unseen, 1);

    // Equal visible parts of a cut side: truncated, never unchanged.
    let same = KeyedDelta::of(&left, &left, LEFT_CUT);
    assert_eq!(same.status(LEFT_CUT), Truncated);
    let partial: BTreeMap<&str, u32> = [("a", 1)].into();
    let seen = KeyedDelta::of(&partial, &left, LEFT_CUT);
    assert_eq!((seen.unseen, seen.status(LEFT_CUT)), (2, Truncated));
}

#[test]
fn multiset_delta_respects_completeness() {
    let left = ["f", "f", "g"];
    let right = ["f", "h"];
    let full = MultisetDelta::of(left, right, Completeness::COMPLETE);
    assert_eq!(full.added, [("h", 0, 1)]);
    assert_eq!(full.removed, [("f", 2, 1), ("g", 1, 0)]);
    assert_eq!(full.status(Completeness::COMPLETE), Changed);
    // Left cut: more on the right may be unseen on the left.
    let cut = MultisetDelta::of(left, right, LEFT_CUT);
    assert!(cut.added.is_empty());
    assert_eq!(cut.status(LEFT_CUT), Removed);
    let prefix = MultisetDelta::of(["f"], ["f", "g"], LEFT_CUT);
    assert_eq!(prefix.status(LEFT_CUT), Truncated);
}

#[test]
fn capped_lists_say_what_was_left_out() {
    let items: Vec<usize> = (0..LIST_CAP + 3).collect();
    let list = capped(&items, |i| json!(i));
    assert_eq!(list["items"].as_array().unwrap().len(), LIST_CAP);
    assert_eq!(list["total"], json!(LIST_CAP + 3));
    assert_eq!(list["capped"], json!(true));
    assert_eq!(capped(&items[..2], |i| json!(i))["capped"], json!(false));
}

pub(super) fn evidence(operation: &str, result: serde_json::Value) -> Evidence {
    EvidenceDraft {
        operation: operation.into(),
        subject: None,
        provider: ProviderIdentity {
            id: "native".into(),
            name: "native".into(),
            version: "0".into(),
        },
        parameters: json!({}),
        result,
        confidence: Confidence::Derived,
        limitations: vec![],
        locations: vec![],
        local_path: None,
    }
    .seal()
    .unwrap()
}

#[test]
fn comparison_results_read_back_per_dimension() {
    let mut dimensions = Map::new();
    dimensions.insert(
        "instructions".into(),
        dimension(Unchanged, json!({"left": 3})),
    );
    dimensions.insert("strings".into(), unknown_dimension("no strings"));
    let result = comparison_result(dimensions, Map::new());
    assert_eq!(result["status"], json!("unknown"));
    let view = read_comparison(&evidence("compare_functions", result)).unwrap();
    assert_eq!(view.status, Unknown);
    assert_eq!(view.dimensions["instructions"], Unchanged);
    assert_eq!(view.dimensions["strings"], Unknown);
    assert_eq!(view.operation, "compare_functions");
}

#[test]
fn reading_refuses_non_comparisons_and_malformed_results() {
    let good = json!({"status": "changed", "dimensions": {"a": {"status": "changed"}}});
    assert!(matches!(
        read_comparison(&evidence("analyze_function", good.clone())),
        Err(ComparisonReadError::NotAComparison(op)) if op == "analyze_function"
    ));
    assert!(read_comparison(&evidence("compare_artifacts", good)).is_ok());
    for bad in [
        json!(null),
        json!({"dimensions": {}}),
        json!({"status": "same", "dimensions": {}}),
        json!({"status": "changed", "dimensions": []}),
        json!({"status": "changed", "dimensions": {"a": {"status": 3}}}),
        json!({"status": "changed", "dimensions": {"a": "changed"}}),
    ] {
        assert!(
            matches!(
                read_comparison(&evidence("compare_functions", bad.clone())),
                Err(ComparisonReadError::Malformed(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn fetching_distinguishes_malformed_missing_and_wrong_kind() {
    let mut session = Session::default();
    let held = session
        .record(evidence("analyze_function", json!({})).body)
        .unwrap();
    let err = fetch(&session, "left_evidence_id", "ev_nope").unwrap_err();
    assert!(matches!(err, FetchError::Malformed { .. }));
    assert_eq!(ToolError::from(err).code, "invalid_arguments");
    let missing = format!("ev_{}", "0".repeat(64));
    let err = ToolError::from(fetch(&session, "left_evidence_id", &missing).unwrap_err());
    assert_eq!(err.code, "evidence_not_found");
    assert!(err.message.contains(&missing), "{}", err.message);
    let ok = fetch_operation(&session, "x", &held.evidence_id, &["analyze_function"]).unwrap();
    assert_eq!(ok.evidence_id, held.evidence_id);
    let err =
        fetch_operation(&session, "x", &held.evidence_id, &COMPARISON_OPERATIONS).unwrap_err();
    let err = ToolError::from(err);
    assert_eq!(err.code, "wrong_evidence_kind");
    assert!(err.message.contains("analyze_function"), "{}", err.message);
    assert!(
        err.remediation.contains("compare_functions"),
        "{}",
        err.remediation
    );
    let long = "x".repeat(10_000);
    let err = fetch(&session, "x", &long).unwrap_err().to_string();
    assert!(err.len() < 300, "{err}");
    // A record from a bundle may name a megabyte-long operation.
    let odd = session
        .record(evidence(&"y".repeat(1 << 20), json!({})).body)
        .unwrap();
    let err = fetch_operation(&session, "x", &odd.evidence_id, &COMPARISON_OPERATIONS)
        .unwrap_err()
        .to_string();
    assert!(err.len() < 1024, "echoed {} bytes", err.len());
}

#[test]
fn a_dossier_that_does_not_validate_is_refused_not_half_read() {
    use super::dossier::Dossier;
    let complete = json!({
        "instructions": [{"address": "0x10", "bytes": "c3", "mnemonic": "ret", "operands": ""}],
        "blocks": [{"start": "0x10", "end": "0x11", "instruction_count": 1, "successors": []}],
        "callees": [], "references": [], "unresolved": [], "truncated": false,
        "document": "a", "procedure": {"address": "0x10"},
    });
    let read = Dossier::read(
        "left_evidence_id",
        &evidence("analyze_function", complete.clone()),
    );
    assert_eq!(read.unwrap().instructions[0].address, 0x10);
    let mut bad_address = complete.clone();
    bad_address["blocks"][0]["start"] = json!("sixteen");
    let mut missing = complete;
    missing.as_object_mut().unwrap().remove("truncated");
    for bad in [bad_address, missing, json!({"instructions": "ret"})] {
        let err =
            Dossier::read("left_evidence_id", &evidence("analyze_function", bad)).unwrap_err();
        let err = ToolError::from(err);
        assert_eq!(err.code, "invalid_evidence");
        assert!(err.message.contains("left_evidence_id"), "{}", err.message);
    }
}

/// A dossier from a bundle may hold megabytes where an address belongs;
/// the refusal quotes only an excerpt.
#[test]
fn a_dossier_refusal_quotes_hostile_text_only_in_part() {
    use super::dossier::Dossier;
    let huge = "D".repeat(1 << 20);
    let bad_address = json!({
        "instructions": [{"address": huge, "mnemonic": "ret", "operands": ""}],
        "blocks": [], "callees": [], "references": [], "truncated": false,
    });
    let bad_type = json!({
        "instructions": [], "callees": [], "references": [], "truncated": false,
        "blocks": [{"start": "0x1", "instruction_count": huge, "successors": []}],
    });
    for bad in [bad_address, bad_type] {
        let err =
            Dossier::read("left_evidence_id", &evidence("analyze_function", bad)).unwrap_err();
        let message = ToolError::from(err).message;
        assert!(message.len() < 1024, "echoed {} bytes", message.len());
    }
}
