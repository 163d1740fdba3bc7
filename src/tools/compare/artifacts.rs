//! `compare_artifacts`: two retained artifact inventories, occurrence by
//! occurrence.
//!
//! Occurrences are matched by their path from the root (logical paths
//! joined with `!/` at container boundaries), never by id: an occurrence id
//! covers its content, so the same place in two versions has two ids.
//! Content is compared by sha256 (with the entry kind and a symlink's
//! target). The containers' own roots are not compared: their bytes differ
//! whenever any member does, which the members already say. A plain-file
//! artifact is the exception: its root is all there is.
//!
//! Status: when either side's occurrences are not all retained (pages of
//! `inspect_artifact` missing from the ledger) the comparison is `unknown`,
//! whatever was observed; otherwise the shared rules of [`super`] apply,
//! with each walk's coverage as the side's completeness.

use crate::tools::errors::ErrorCode;
use crate::tools::shared::ledger::{fetch_operation, record_derived};
use crate::tools::tool::{Call, Tool};
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{ComparisonStatus, Completeness, KeyedDelta, capped, delta_status, dimension};
use crate::artifacts::{ArtifactFormat, CoverageStatus, EntryKind, Occurrence};
use crate::session::Session;
use crate::session::artifact_records::{RetainedInventory, inventory_page, retained_inventory};
use crate::session::evidence::is_evidence_id;
use crate::tools::inputs::CompareArtifactsInput;
use crate::tools::paging::PageRequest;
use crate::tools::{HandlerResult, ToolError, ToolName};

const DEFAULT_PAGE: u32 = 100;
const MAX_PAGE: u32 = 500;

/// What is compared at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Content {
    kind: EntryKind,
    sha256: Option<String>,
    symlink_target: Option<String>,
}

/// One side, indexed by path.
struct Side {
    inventory: RetainedInventory,
    by_path: BTreeMap<String, Occurrence>,
    /// Occurrences that cannot be matched: paths that two retained
    /// occurrences share, or whose parent chain is not retained.
    ambiguous: usize,
}

pub struct CompareArtifacts;

impl Tool for CompareArtifacts {
    const NAME: ToolName = ToolName::CompareArtifacts;
    type Input = CompareArtifactsInput;

    fn run(input: CompareArtifactsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let page = PageRequest::new(input.offset, input.limit, DEFAULT_PAGE, MAX_PAGE)?;
        let left = side(session, "left", &input.left)?;
        let right = side(session, "right", &input.right)?;
        let retained =
            left.inventory.all_occurrences_retained() && right.inventory.all_occurrences_retained();
        let walked = Completeness {
            left: left.inventory.walk_complete() && left.ambiguous == 0,
            right: right.inventory.walk_complete() && right.ambiguous == 0,
        };
        let completeness = Completeness {
            left: walked.left && left.inventory.all_occurrences_retained(),
            right: walked.right && right.inventory.all_occurrences_retained(),
        };

        let contents = |s: &Side, native_only: bool| -> BTreeMap<String, Content> {
            s.by_path
                .iter()
                .filter(|(_, o)| !native_only || o.architecture.is_some())
                .map(|(path, o)| (path.clone(), content(o)))
                .collect()
        };
        let all = KeyedDelta::of(
            &contents(&left, false),
            &contents(&right, false),
            completeness,
        );
        let native = KeyedDelta::of(
            &contents(&left, true),
            &contents(&right, true),
            completeness,
        );
        let unchanged = left
            .by_path
            .iter()
            .filter(|(p, o)| {
                right
                    .by_path
                    .get(*p)
                    .is_some_and(|r| content(r) == content(o))
            })
            .count();

        let occurrences_status = side_status(&all, completeness, retained, &left, &right);
        let native_status = side_status(&native, completeness, retained, &left, &right);
        let mut dimensions = Map::new();
        dimensions.insert(
            "occurrences".into(),
            dimension(
                occurrences_status,
                json!({
                    "added": all.added.len(),
                    "removed": all.removed.len(),
                    "changed": all.changed.len(),
                    "unchanged": unchanged,
                    "unseen": all.unseen,
                }),
            ),
        );
        dimensions.insert(
            "native_code".into(),
            dimension(
                native_status,
                json!({
                    "added": capped(&native.added, |p| json!(p)),
                    "removed": capped(&native.removed, |p| json!(p)),
                    "changed": capped(&native.changed, |p| json!(p)),
                }),
            ),
        );

        let mut changes: Vec<Value> = Vec::new();
        for (change, paths) in [
            ("added", &all.added),
            ("removed", &all.removed),
            ("changed", &all.changed),
        ] {
            for path in paths {
                changes.push(change_item(path, change, &left, &right));
            }
        }
        changes.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
        let mut changes_page = json!({"items": page.slice(&changes)});
        page.annotate(changes.len(), &mut changes_page);

        let mut limitations = Vec::new();
        for (name, s) in [("left", &left), ("right", &right)] {
            limitations.extend(side_limitations(name, s));
        }
        let status = if retained {
            occurrences_status
        } else {
            ComparisonStatus::Unknown
        };
        let result = json!({
            "status": status,
            "dimensions": dimensions,
            "summary": {
                "added": all.added.len(),
                "removed": all.removed.len(),
                "changed": all.changed.len(),
                "unchanged": unchanged,
                "unseen": all.unseen,
            },
            "left": side_summary(&left),
            "right": side_summary(&right),
            "changes": changes_page,
            "limitations": limitations,
        });
        let parameters = json!({
            "left_manifest_id": left.inventory.manifest.manifest_id,
            "right_manifest_id": right.inventory.manifest.manifest_id,
            "left_evidence_ids": left.inventory.evidence_ids,
            "right_evidence_ids": right.inventory.evidence_ids,
            "offset": page.offset,
            "limit": page.limit,
        });
        record_derived(
            session,
            ToolName::CompareArtifacts,
            parameters,
            result,
            limitations,
        )
    }
}

/// The status of one dimension: the shared delta rules, except that a side
/// whose pages are not all retained makes it `unknown`, and an incomplete
/// walk with no observed difference is `truncated` only when a limit cut
/// it (anything else left out — refusals, unhashed entries — is `unknown`).
fn side_status(
    delta: &KeyedDelta<String>,
    completeness: Completeness,
    retained: bool,
    left: &Side,
    right: &Side,
) -> ComparisonStatus {
    if !retained {
        return ComparisonStatus::Unknown;
    }
    match delta_status(
        delta.added.len(),
        delta.removed.len(),
        delta.changed.len(),
        completeness,
    ) {
        ComparisonStatus::Truncated
            if ![left, right]
                .iter()
                .any(|s| s.inventory.coverage.status == CoverageStatus::Truncated) =>
        {
            ComparisonStatus::Unknown
        }
        status => status,
    }
}

fn content(o: &Occurrence) -> Content {
    Content {
        kind: o.entry_kind,
        sha256: o.sha256.clone(),
        symlink_target: o.symlink_target.clone(),
    }
}

/// Resolves a side (`agm_…` manifest id, or the `ev_…` id of one of its
/// inventory pages) to its retained inventory, indexed by path.
fn side(session: &Session, field: &str, id: &str) -> Result<Side, ToolError> {
    let manifest_id = if is_evidence_id(id) {
        let evidence = fetch_operation(session, field, id, &["inspect_artifact"])?;
        inventory_page(&evidence)
            .map(|p| p.manifest.manifest_id)
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotAnInventoryPage,
                    format!("{field} `{id}` does not hold a valid artifact inventory page"),
                )
            })?
    } else if is_manifest_id(id) {
        id.to_string()
    } else {
        return Err(ToolError::invalid_arguments(format!(
            "{field} must be a manifest id (agm_ followed by 64 lowercase hex digits) or an \
             Evidence ID (ev_…)"
        )));
    };
    let inventory = retained_inventory(session.ledger().records().map(|e| &**e), &manifest_id)
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ManifestNotRetained,
                format!("{field} manifest {manifest_id} has no retained inventory in this session"),
            )
        })?;
    let include_root = inventory.manifest.root_format == ArtifactFormat::File;
    let mut by_path = BTreeMap::new();
    let mut ambiguous = 0;
    let mut seen_twice = Vec::new();
    for occurrence in inventory.occurrences.values() {
        if occurrence.is_root() && !include_root {
            continue;
        }
        // Without a retained parent chain (only a forged record lacks one
        // once every occurrence is retained) the place is unknown.
        let Some(path) = inventory.display_path(occurrence) else {
            ambiguous += 1;
            continue;
        };
        if by_path.insert(path.clone(), occurrence.clone()).is_some() {
            seen_twice.push(path);
        }
    }
    seen_twice.sort();
    seen_twice.dedup();
    for path in seen_twice {
        by_path.remove(&path);
        ambiguous += 1;
    }
    Ok(Side {
        inventory,
        by_path,
        ambiguous,
    })
}

fn is_manifest_id(id: &str) -> bool {
    id.strip_prefix("agm_")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

fn change_item(path: &str, change: &str, left: &Side, right: &Side) -> Value {
    let brief = |s: &Side| {
        s.by_path.get(path).map(|o| {
            json!({
                "occurrence_id": o.occurrence_id,
                "entry_kind": o.entry_kind,
                "size": o.size,
                "sha256": o.sha256,
                "architecture": o.architecture,
            })
        })
    };
    json!({"path": path, "change": change, "left": brief(left), "right": brief(right)})
}

fn side_summary(s: &Side) -> Value {
    let inventory = &s.inventory;
    json!({
        "manifest_id": inventory.manifest.manifest_id,
        "root_format": inventory.manifest.root_format,
        "root_sha256": inventory.manifest.root_sha256,
        "coverage": inventory.coverage.status,
        "occurrence_count": inventory.manifest.occurrence_count,
        "occurrences_retained": inventory.occurrences.len(),
        "ambiguous_paths": s.ambiguous,
        "evidence_ids": inventory.evidence_ids,
    })
}

fn side_limitations(name: &str, s: &Side) -> Vec<String> {
    let inventory = &s.inventory;
    let mut out = Vec::new();
    if !inventory.all_occurrences_retained() {
        out.push(format!(
            "{name}: {} of {} occurrences are retained; page inspect_artifact to the end \
             (occurrence_offset) to compare them all",
            inventory.occurrences.len(),
            inventory.manifest.occurrence_count
        ));
    }
    if !inventory.walk_complete() {
        out.push(format!(
            "{name}: the inventory's coverage is {}; entries it did not list or hash cannot be \
             compared (see its findings and limits_hit)",
            json!(inventory.coverage.status)
                .as_str()
                .unwrap_or("incomplete")
        ));
    }
    if s.ambiguous > 0 {
        out.push(format!(
            "{name}: {} occurrence(s) have a path shared with another or no retained parent \
             chain, and were not matched",
            s.ambiguous
        ));
    }
    out
}
