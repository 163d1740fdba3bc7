//! `compare_functions`: two retained `analyze_function` dossiers, possibly
//! of different targets or versions, compared dimension by dimension.
//!
//! Dimensions: `instructions` (normalized so relocation is not a change,
//! see [`super::normalize`]), `blocks` (count and edge shape), `callees`
//! (by name, else by address), `strings` (the referenced strings) and
//! `data_references` (other data references, by kind). A truncated
//! listing is compared on its visible part only: a difference there is
//! `changed`, equality is `truncated`, never `unchanged`.

use crate::tools::shared::ledger::{fetch_operation, record_derived};
use crate::tools::tool::{Call, Tool};
use serde_json::{Map, Value, json};

use super::dossier::{Block, Dossier};
use super::normalize::normalized;
use super::{
    ComparisonStatus, Completeness, MultisetDelta, capped, comparison_result, dimension,
    unknown_dimension,
};
use crate::matching::align::{Hunk, align};
use crate::providers::format_address;
use crate::tools::inputs::CompareFunctionsInput;
use crate::tools::{HandlerResult, ToolName};

/// Most instructions shown per side of one hunk.
const HUNK_LINES: usize = 8;
/// Longest string value echoed in a result.
const STRING_ECHO: usize = 256;

pub struct CompareFunctions;

impl Tool for CompareFunctions {
    const NAME: ToolName = ToolName::CompareFunctions;
    type Input = CompareFunctionsInput;

    fn run(input: CompareFunctionsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let wanted = [ToolName::AnalyzeFunction.as_str()];
        let left_id = input.left_evidence_id.trim();
        let right_id = input.right_evidence_id.trim();
        let left = fetch_operation(session, "left_evidence_id", left_id, &wanted)?;
        let right = fetch_operation(session, "right_evidence_id", right_id, &wanted)?;
        let left_dossier = Dossier::read("left_evidence_id", &left)?;
        let right_dossier = Dossier::read("right_evidence_id", &right)?;
        let sides =
            [(&left_dossier, &left), (&right_dossier, &right)].map(|(dossier, evidence)| {
                json!({
                    "evidence_id": evidence.evidence_id,
                    "sha256": evidence.body.subject.as_ref().map(|s| s.sha256.clone()),
                    "document": dossier.document,
                    "procedure": dossier.procedure,
                    "instruction_count": dossier.instructions.len(),
                    "truncated": dossier.truncated,
                })
            });
        let [left_side, right_side] = sides;
        let (result, limitations) = compare(&left_dossier, &right_dossier, left_side, right_side);
        let parameters = json!({"left_evidence_id": left_id, "right_evidence_id": right_id});
        record_derived(
            session,
            ToolName::CompareFunctions,
            parameters,
            result,
            limitations,
        )
    }
}

/// The comparison result and its limitations.
fn compare(
    left: &Dossier,
    right: &Dossier,
    left_side: Value,
    right_side: Value,
) -> (Value, Vec<String>) {
    let completeness = Completeness {
        left: !left.truncated,
        right: !right.truncated,
    };
    let mut limitations = vec![
        "instructions are compared after replacing the addresses the dossiers identify (branch \
         and call targets, data references) with what they stand for; other immediates, \
         including addresses the dossier does not identify, compare literally"
            .to_owned(),
    ];
    if !completeness.both() {
        limitations.push(
            "a listing was truncated (max_instructions or its extent); only the visible part is \
             compared and nothing beyond it is claimed unchanged; re-run analyze_function with a \
             larger max_instructions for a complete comparison"
                .to_owned(),
        );
    }
    let mut dimensions = Map::new();
    let (instructions, refined) = instructions_dimension(left, right, completeness);
    if !refined {
        limitations.push(
            "the changed region was too large to align instruction by instruction and is \
             reported as one hunk"
                .to_owned(),
        );
    }
    dimensions.insert("instructions".into(), instructions);
    dimensions.insert("blocks".into(), blocks_dimension(left, right, completeness));
    let (callees, unnamed) = callees_dimension(left, right, completeness);
    if unnamed {
        limitations.push(
            "callees without a name are compared by address, which moves when code is \
             relocated; a difference among them may be relocation alone"
                .to_owned(),
        );
    }
    dimensions.insert("callees".into(), callees);
    let (strings, data) = references_dimensions(left, right, completeness);
    dimensions.insert("strings".into(), strings);
    dimensions.insert("data_references".into(), data);
    let mut extra = Map::new();
    extra.insert("left".into(), left_side);
    extra.insert("right".into(), right_side);
    // A function is one thing in two versions: its overall status is
    // unchanged | changed | truncated | unknown, while a dimension (callees,
    // strings) may still say added or removed.
    let mut result = comparison_result(dimensions, extra);
    if let Some(status) = result["status"].as_str().and_then(ComparisonStatus::parse) {
        result["status"] = json!(status.undirected());
    }
    (result, limitations)
}

/// The instruction dimension and whether its alignment was exact.
fn instructions_dimension(
    left: &Dossier,
    right: &Dossier,
    completeness: Completeness,
) -> (Value, bool) {
    let (l, r) = (normalized(left), normalized(right));
    let alignment = align(&l, &r);
    let hunks = observed(alignment.hunks, l.len(), r.len(), completeness);
    let status = if hunks.is_empty() {
        if completeness.both() {
            ComparisonStatus::Unchanged
        } else {
            ComparisonStatus::Truncated
        }
    } else {
        ComparisonStatus::Changed
    };
    let lines = |side: &[String], start: usize, len: usize| -> Vec<String> {
        side.iter()
            .skip(start)
            .take(len.min(HUNK_LINES))
            .cloned()
            .collect()
    };
    let address = |dossier: &Dossier, index: usize| {
        dossier
            .instructions
            .get(index)
            .map(|i| format_address(i.address))
    };
    let details = json!({
        "left_count": l.len(),
        "right_count": r.len(),
        "matched": alignment.matched,
        "hunks": capped(&hunks, |h| json!({
            "left_index": h.left_start,
            "left_len": h.left_len,
            "left_address": address(left, h.left_start),
            "left": lines(&l, h.left_start, h.left_len),
            "right_index": h.right_start,
            "right_len": h.right_len,
            "right_address": address(right, h.right_start),
            "right": lines(&r, h.right_start, h.right_len),
        })),
        "hunk_lines_shown": HUNK_LINES,
    });
    (dimension(status, details), alignment.refined)
}

/// Drops the final hunk when it only holds what one side lists beyond the
/// end of a truncated other side: that is unseen, not different.
fn observed(
    mut hunks: Vec<Hunk>,
    left_len: usize,
    right_len: usize,
    completeness: Completeness,
) -> Vec<Hunk> {
    if let Some(last) = hunks.last().copied() {
        let trailing = last.left_start + last.left_len == left_len
            && last.right_start + last.right_len == right_len;
        let unseen = (!completeness.left && last.left_len == 0)
            || (!completeness.right && last.right_len == 0);
        if trailing && unseen {
            hunks.pop();
        }
    }
    hunks
}

/// One block as position-independent shape: its size and its successors
/// as `(edge kind, index of the target block or "outside")`.
fn shapes(blocks: &[Block]) -> Vec<(u64, Vec<(String, String)>)> {
    let mut sorted: Vec<&Block> = blocks.iter().collect();
    sorted.sort_by_key(|b| b.start);
    let index = |target: u64| {
        sorted
            .binary_search_by_key(&target, |b| b.start)
            .map_or_else(|_| "outside".to_owned(), |i| i.to_string())
    };
    sorted
        .iter()
        .map(|b| {
            let mut successors: Vec<(String, String)> = b
                .successors
                .iter()
                .map(|(kind, target)| (kind.clone(), index(*target)))
                .collect();
            successors.sort();
            (b.instruction_count, successors)
        })
        .collect()
}

fn blocks_dimension(left: &Dossier, right: &Dossier, completeness: Completeness) -> Value {
    let edges = |d: &Dossier| d.blocks.iter().map(|b| b.successors.len()).sum::<usize>();
    let mut details = json!({
        "left_count": left.blocks.len(),
        "right_count": right.blocks.len(),
        "left_edges": edges(left),
        "right_edges": edges(right),
    });
    if !completeness.both() {
        details["reason"] = json!(
            "the block graph of a truncated listing is incomplete, so its shape is not compared"
        );
        return dimension(ComparisonStatus::Truncated, details);
    }
    let alignment = align(&shapes(&left.blocks), &shapes(&right.blocks));
    details["differences"] = capped(&alignment.hunks, |h| {
        json!({
            "left_index": h.left_start,
            "left_len": h.left_len,
            "right_index": h.right_start,
            "right_len": h.right_len,
        })
    });
    let status = if alignment.hunks.is_empty() {
        ComparisonStatus::Unchanged
    } else {
        ComparisonStatus::Changed
    };
    dimension(status, details)
}

/// Multiset differences as JSON.
fn multiset_details(delta: &MultisetDelta<String>, key: &str) -> Value {
    let entry = |(k, l, r): &(String, usize, usize)| json!({key: echo(k), "left_count": l, "right_count": r});
    json!({"added": capped(&delta.added, entry), "removed": capped(&delta.removed, entry)})
}

fn echo(text: &str) -> String {
    crate::ground::text::excerpt(text, STRING_ECHO)
}

/// The callee dimension and whether any callee had no name.
fn callees_dimension(left: &Dossier, right: &Dossier, completeness: Completeness) -> (Value, bool) {
    let keys = |d: &Dossier| -> Vec<String> {
        d.callees
            .iter()
            .map(|c| c.name.clone().unwrap_or_else(|| format_address(c.target)))
            .collect()
    };
    let unnamed = left
        .callees
        .iter()
        .chain(&right.callees)
        .any(|c| c.name.is_none());
    let delta = MultisetDelta::of(keys(left), keys(right), completeness);
    let mut details = multiset_details(&delta, "callee");
    details["left_call_sites"] = json!(left.callees.len());
    details["right_call_sites"] = json!(right.callees.len());
    (dimension(delta.status(completeness), details), unnamed)
}

/// The `strings` and `data_references` dimensions.
fn references_dimensions(
    left: &Dossier,
    right: &Dossier,
    completeness: Completeness,
) -> (Value, Value) {
    let (Some(l), Some(r)) = (&left.references, &right.references) else {
        let reason = "an analyze_function record carries no reference list, so referenced data \
                      cannot be compared";
        return (unknown_dimension(reason), unknown_dimension(reason));
    };
    let strings = |refs: &[super::dossier::Reference]| -> Vec<String> {
        refs.iter().filter_map(|r| r.string.clone()).collect()
    };
    let others = |refs: &[super::dossier::Reference]| -> Vec<String> {
        refs.iter()
            .filter(|r| r.string.is_none())
            .map(|r| r.kind.clone())
            .collect()
    };
    let (ls, rs) = (strings(l), strings(r));
    let counts = (ls.len(), rs.len());
    let delta = MultisetDelta::of(ls, rs, completeness);
    let mut string_details = multiset_details(&delta, "string");
    string_details["left_count"] = json!(counts.0);
    string_details["right_count"] = json!(counts.1);
    let (lo, ro) = (others(l), others(r));
    let counts = (lo.len(), ro.len());
    let data_delta = MultisetDelta::of(lo, ro, completeness);
    let mut data_details = multiset_details(&data_delta, "kind");
    data_details["left_count"] = json!(counts.0);
    data_details["right_count"] = json!(counts.1);
    data_details["note"] = json!(
        "references to data that is not a string are compared by kind (read, write, address) \
         and count; their addresses move with relocation and are not compared"
    );
    (
        dimension(delta.status(completeness), string_details),
        dimension(data_delta.status(completeness), data_details),
    )
}

#[cfg(test)]
mod tests;
