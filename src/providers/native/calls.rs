//! The direct call graph of one document, answered from the code index and
//! the procedure extents without materializing it.
//!
//! An instruction belongs to the procedure whose extent covers it
//! ([`Extents::containing`]); callers and callees both use that one
//! assignment, so `callers(f)` contains `g` exactly when `callees(g)`
//! contains `f`.

use super::code_index::CodeIndex;
use super::extents::Extents;
use crate::providers::code::{CallEdge, RefKind};

/// Calls to the procedure starting at `entry`, in call-site order.
pub(super) fn callers(index: &CodeIndex, extents: &Extents, entry: u64) -> Vec<CallEdge> {
    let mut edges: Vec<CallEdge> = index
        .xrefs_to(entry, entry.saturating_add(1))
        .filter(|xref| xref.kind == RefKind::Call)
        .map(|xref| CallEdge {
            caller: extents
                .containing(xref.from)
                .and_then(|i| extents.extent(i))
                .map(|(start, _)| start),
            at: xref.from,
            callee: entry,
        })
        .collect();
    edges.sort_unstable_by_key(|edge| edge.at);
    edges
}

/// Calls made by the procedure with inventory index `procedure`, in
/// call-site order. Calls to addresses where no procedure starts are left
/// out (the inventory adds every direct call target in code, so these are
/// calls into data or outside the document).
pub(super) fn callees(index: &CodeIndex, extents: &Extents, procedure: usize) -> Vec<CallEdge> {
    let Some((start, end)) = extents.extent(procedure) else {
        return Vec::new();
    };
    index
        .xrefs_from(start, end)
        .iter()
        .filter(|xref| xref.kind == RefKind::Call)
        .filter(|xref| extents.containing(xref.from) == Some(procedure))
        .filter(|xref| extents.index_of_start(xref.to).is_some())
        .map(|xref| CallEdge {
            caller: Some(start),
            at: xref.from,
            callee: xref.to,
        })
        .collect()
}
