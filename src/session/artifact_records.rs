//! Artifact inventories as retained Evidence: the page one `inspect_artifact`
//! call records, the check that such a record still validates, and the
//! union of every retained page of one manifest.
//!
//! Completion (families `manifest` and `occurrence`) and `compare_artifacts`
//! read the ledger through this module only, so "a retained inventory" means
//! the same thing to both: Evidence of operation `inspect_artifact` whose
//! result parses strictly and whose ids recompute.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::evidence::Evidence;
use crate::artifacts::{
    Coverage, CoverageStatus, Edge, Findings, Limits, Manifest, Node, Occurrence, SCHEMA_VERSION,
    edge_id, manifest_id, node_id,
};

/// The Evidence operation that holds inventory pages.
pub const INSPECT_ARTIFACT: &str = "inspect_artifact";

/// One page of one list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPage<T> {
    pub items: Vec<T>,
    pub offset: u64,
    pub limit: u64,
    /// The list's full length (the manifest's count).
    pub total: u64,
    pub next_offset: Option<u64>,
    pub has_more: bool,
}

impl<T> ListPage<T> {
    fn is_consistent(&self, total: u64) -> bool {
        let len = self.items.len() as u64;
        self.total == total
            && len <= self.limit
            && self.offset.saturating_add(len) <= total
            && self.has_more == (self.offset.saturating_add(len) < total)
            && self.next_offset == self.has_more.then(|| self.offset + len)
    }
}

/// The result of one `inspect_artifact` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectionPage {
    pub schema_version: u32,
    pub manifest: Manifest,
    pub nodes: ListPage<Node>,
    pub occurrences: ListPage<Occurrence>,
    pub edges: ListPage<Edge>,
    pub findings: Findings,
    pub coverage: Coverage,
    pub limits: Limits,
    pub limitations: Vec<String>,
}

impl InspectionPage {
    /// Whether the page is what an inspection would have recorded: the
    /// manifest id recomputes, every listed id recomputes from its content,
    /// and each page agrees with the manifest's counts. (The graph digest
    /// needs every item, so a single page cannot check it; the union does,
    /// once complete.)
    pub fn validates(&self) -> bool {
        let m = &self.manifest;
        self.schema_version == SCHEMA_VERSION
            && m.manifest_id == manifest_id(&m.root_sha256, m.root_format, &m.graph_sha256)
            && self.limits.validate().is_ok()
            && self.nodes.is_consistent(m.node_count)
            && self.occurrences.is_consistent(m.occurrence_count)
            && self.edges.is_consistent(m.edge_count)
            && self
                .nodes
                .items
                .iter()
                .all(|n| n.node_id == node_id(&n.sha256))
            && self
                .occurrences
                .items
                .iter()
                .all(|o| o.occurrence_id == o.expected_id())
            && self
                .edges
                .items
                .iter()
                .all(|e| e.edge_id == edge_id(e.kind, &e.from, &e.to, e.detail.as_deref()))
    }
}

/// The page a record holds, when it is a valid inventory page.
pub fn inventory_page(evidence: &Evidence) -> Option<InspectionPage> {
    if evidence.body.operation != INSPECT_ARTIFACT {
        return None;
    }
    let page: InspectionPage = serde_json::from_value(evidence.body.result.clone()).ok()?;
    page.validates().then_some(page)
}

/// Everything the ledger holds about one manifest.
#[derive(Debug, Clone)]
pub struct RetainedInventory {
    pub manifest: Manifest,
    /// The inspection's coverage (the same on every page of a manifest).
    pub coverage: Coverage,
    pub findings: Findings,
    /// Every retained occurrence, by id.
    pub occurrences: BTreeMap<String, Occurrence>,
    /// The records the union was built from, in ID order.
    pub evidence_ids: Vec<String>,
}

impl RetainedInventory {
    /// Every occurrence of the manifest is retained.
    pub fn all_occurrences_retained(&self) -> bool {
        self.occurrences.len() as u64 == self.manifest.occurrence_count
    }

    /// The walk itself saw everything (no limit, refusal or unhashed entry).
    pub fn walk_complete(&self) -> bool {
        self.coverage.status == CoverageStatus::Complete
    }

    /// The path of an occurrence from the root: logical paths joined with
    /// `!/` at container boundaries. `None` when an ancestor is not retained.
    pub fn display_path(&self, occurrence: &Occurrence) -> Option<String> {
        let mut parts = Vec::new();
        let mut current = occurrence;
        // Bounded: a parent chain longer than the retained set is a cycle.
        for _ in 0..=self.occurrences.len() {
            if !current.logical_path.is_empty() {
                parts.push(current.logical_path.as_str());
            }
            match &current.parent_occurrence_id {
                None => {
                    parts.reverse();
                    return Some(parts.join("!/"));
                }
                Some(parent) => current = self.occurrences.get(parent)?,
            }
        }
        None
    }
}

/// The union of every retained valid page of `manifest_id`.
pub fn retained_inventory<'a>(
    records: impl Iterator<Item = &'a Evidence>,
    manifest_id: &str,
) -> Option<RetainedInventory> {
    let mut found: Option<RetainedInventory> = None;
    for evidence in records {
        let Some(page) = inventory_page(evidence) else {
            continue;
        };
        if page.manifest.manifest_id != manifest_id {
            continue;
        }
        let inventory = found.get_or_insert_with(|| RetainedInventory {
            manifest: page.manifest.clone(),
            coverage: page.coverage.clone(),
            findings: page.findings.clone(),
            occurrences: BTreeMap::new(),
            evidence_ids: Vec::new(),
        });
        for occurrence in page.occurrences.items {
            inventory
                .occurrences
                .insert(occurrence.occurrence_id.clone(), occurrence);
        }
        inventory.evidence_ids.push(evidence.evidence_id.clone());
    }
    found
}
